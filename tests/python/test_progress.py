"""Progress and Ctrl-C: a bar only on a terminal and without --quiet; an interrupt keeps what finished."""

from __future__ import annotations

import json
import os
import pty
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sanlab.progress import wanted

ROOT = Path(__file__).resolve().parents[2]
METRO_STUDY = ROOT / "scenarios" / "studies" / "metro_cluster_psp.toml"
SANLAB = [sys.executable, "-m", "sanlab.cli"]
LONG_RUN = ["--variant", "rr_iops1", "--duration", "1500s"]  # about 4 s of wall time
TIMEOUT_S = 120


@pytest.mark.parametrize(
    ("quiet", "stdout_tty", "stderr_tty", "expected"),
    [
        (False, True, True, True),
        (True, True, True, False),
        (False, False, True, False),
        (False, True, False, False),
    ],
)
def test_bar_only_on_a_terminal_without_quiet(
    monkeypatch: pytest.MonkeyPatch, quiet: bool, stdout_tty: bool, stderr_tty: bool, expected: bool
) -> None:
    monkeypatch.setattr(sys.stdout, "isatty", lambda: stdout_tty)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: stderr_tty)
    assert wanted(quiet) is expected


def _run_on_a_terminal(args: list[str], cwd: Path) -> tuple[int, str]:
    """Runs sanlab with stdout and stderr on a pseudo-terminal; returns the exit code and what it showed."""
    main_fd, terminal_fd = pty.openpty()
    process = subprocess.Popen([*SANLAB, *args], stdout=terminal_fd, stderr=terminal_fd, cwd=cwd)
    os.close(terminal_fd)
    shown = b""
    while True:
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:  # the terminal closed: the process has exited
            break
        if not chunk:
            break
        shown += chunk
    os.close(main_fd)
    return process.wait(timeout=TIMEOUT_S), shown.decode(errors="replace")


@pytest.mark.e2e
def test_long_run_shows_simulated_time_wall_time_and_eta(tmp_path: Path) -> None:
    code, shown = _run_on_a_terminal(
        ["run", str(METRO_STUDY), *LONG_RUN, "--out", str(tmp_path / "a")], tmp_path
    )
    assert code == 0, shown
    assert re.search(r"rr_iops1 \(1/1\).*sim \d+/1,500 s wall 0:00:0\d ETA", shown), shown[-2000:]
    assert "run folder:" in shown

    code, shown = _run_on_a_terminal(
        ["run", str(METRO_STUDY), *LONG_RUN, "--quiet", "--out", str(tmp_path / "b")], tmp_path
    )
    assert code == 0, shown
    assert "ETA" not in shown
    assert shown.strip() == f"run folder: {tmp_path / 'b'}"


@pytest.mark.e2e
def test_no_bar_when_output_is_not_a_terminal(tmp_path: Path) -> None:
    result = subprocess.run(
        [*SANLAB, "run", str(METRO_STUDY), *LONG_RUN, "--out", str(tmp_path / "a")],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert "ETA" not in result.stdout


@pytest.mark.e2e
def test_ctrl_c_keeps_the_variants_that_finished(tmp_path: Path) -> None:
    text = METRO_STUDY.read_text()
    scenario = tmp_path / "two_lengths.toml"
    scenario.write_text(
        text[: text.index("[[variant]]")]
        + '[[variant]]\nname = "quick"\ndescription = "done in a blink"\nset = { "run.duration" = "3s" }\n\n'
        + '[[variant]]\nname = "endless"\ndescription = "runs for hours"\n'
        + 'set = { "run.duration" = "1000000s" }\n'
    )
    out = tmp_path / "run"
    process = subprocess.Popen(
        [*SANLAB, "run", str(scenario), "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(6.0)  # `quick` is done in milliseconds (after start-up); `endless` runs for hours
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=TIMEOUT_S)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "interrupted: kept the variants that finished (quick)" in stderr
    assert f"run folder: {out}" in stdout
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["cancelled"] is True
    assert [variant["name"] for variant in manifest["variants"]] == ["quick"]
    assert (out / "report.html").stat().st_size > 1_000_000
    assert (out / "quick" / "fio").is_dir()
    assert not (out / "endless").exists()
