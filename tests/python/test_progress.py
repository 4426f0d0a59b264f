"""Progress and Ctrl-C: a bar on a terminal, plain lines elsewhere, nothing with --quiet; an
interrupt keeps what finished. Time is a test clock or a monkeypatched delay: nothing here waits
for the machine to be fast or slow."""

from __future__ import annotations

import io
import json
import os
import pty
import queue
import re
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from sanlab import progress
from sanlab.cli import main
from sanlab.progress import LINE_EVERY_S, SHOW_AFTER_S, RunProgress, progress_mode

ROOT = Path(__file__).resolve().parents[2]
METRO_STUDY = ROOT / "scenarios" / "studies" / "metro_cluster_psp.toml"
SANLAB = [sys.executable, "-m", "sanlab.cli"]
SHORT_RUN = ["--variant", "rr_iops1", "--duration", "5s"]
TIMEOUT_S = 120


@pytest.mark.parametrize(
    ("quiet", "stdout_tty", "stderr_tty", "expected"),
    [
        (False, True, True, "bar"),
        (True, True, True, "off"),
        (False, False, True, "lines"),
        (False, True, False, "lines"),
        (True, False, False, "off"),
    ],
)
def test_a_bar_on_a_terminal_lines_elsewhere_nothing_when_quiet(
    monkeypatch: pytest.MonkeyPatch, quiet: bool, stdout_tty: bool, stderr_tty: bool, expected: str
) -> None:
    monkeypatch.setattr(sys.stdout, "isatty", lambda: stdout_tty)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: stderr_tty)
    assert progress_mode(quiet) == expected


@dataclass
class Engine:
    """The engine's `Progress` as the CLI reads it: the running variant's simulated and end
    seconds, and the variants done."""

    sim_s: float = 0.0
    end_s: float = 1500.0
    variants_done: int = 0


class Clock:
    """A test's `time.perf_counter`: seconds that pass only when the test says so."""

    def __init__(self) -> None:
        self.now_s = 100.0

    def __call__(self) -> float:
        return self.now_s


def test_the_bar_shows_the_variant_simulated_time_wall_time_and_eta() -> None:
    engine, clock, shown = Engine(), Clock(), io.StringIO()
    with RunProgress(engine, ["rr_iops1", "fixed"], "bar", shown, clock) as bar:  # type: ignore[arg-type]
        clock.now_s += SHOW_AFTER_S / 2
        bar.update()
        assert shown.getvalue() == "", "no bar for a run that may end within SHOW_AFTER_S"
        clock.now_s += SHOW_AFTER_S + 1
        engine.sim_s = 500.0
        bar.update()
    bar = r"rr_iops1 \(1/2\).*sim 500/1,500 s wall 0:00:0\d ETA"
    assert re.search(bar, shown.getvalue()), shown.getvalue()


def test_lines_name_each_variant_done_and_a_long_one_now_and_then() -> None:
    engine, clock, shown = Engine(), Clock(), io.StringIO()
    with RunProgress(engine, ["a", "b", "c"], "lines", shown, clock) as lines:  # type: ignore[arg-type]
        clock.now_s += SHOW_AFTER_S / 2
        engine.variants_done = 1
        lines.update()
        assert shown.getvalue() == "", "nothing for a run that may end within SHOW_AFTER_S"
        clock.now_s += 1.5
        lines.update()
        engine.sim_s = 500.0
        clock.now_s += LINE_EVERY_S
        lines.update()
        lines.update()
        clock.now_s += 1.0
        engine.variants_done = 3
        lines.finish("writing the run folder")
    assert shown.getvalue().splitlines() == [
        "[1/3] a done in 2.0 s",
        f"[2/3] b: 500/1,500 s simulated in {LINE_EVERY_S:.1f} s",
        f"[2/3] b done in {(LINE_EVERY_S + 1) / 2:.1f} s",  # b and c finished within one poll
        f"[3/3] c done in {(LINE_EVERY_S + 1) / 2:.1f} s",
        f"[3/3] all done in {2.0 + LINE_EVERY_S + 1:.1f} s; writing the run folder",
    ]


def _on_a_terminal(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> tuple[int, str]:
    """Runs `sanlab ARGS` with stdout and stderr on a pseudo-terminal; returns its exit code and what
    the terminal showed."""
    main_fd, terminal_fd = pty.openpty()
    shown = bytearray()

    def read() -> None:
        while True:
            try:
                chunk = os.read(main_fd, 65536)
            except OSError:  # the terminal closed
                return
            if not chunk:
                return
            shown.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    with open(terminal_fd, "w", encoding="utf-8") as terminal, monkeypatch.context() as patch:
        patch.setattr(sys, "stdout", terminal)
        patch.setattr(sys, "stderr", terminal)
        code = main(args)
    reader.join(TIMEOUT_S)
    os.close(main_fd)
    return code, shown.decode(errors="replace")


@pytest.mark.e2e
def test_a_run_on_a_terminal_shows_the_bar_and_quiet_shows_only_the_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The bar shows from the start, so that a short run shows it however fast the machine.
    monkeypatch.setattr(progress, "SHOW_AFTER_S", 0.0)
    run = ["run", str(METRO_STUDY), *SHORT_RUN]
    code, shown = _on_a_terminal(monkeypatch, [*run, "--out", str(tmp_path / "a")])
    assert code == 0, shown
    bar = r"(rr_iops1 \(1/1\)|1/1 variants).*sim [\d,]+/5 s wall \d:\d\d:\d\d ETA"
    assert re.search(bar, shown), shown[-2000:]
    assert "run folder:" in shown

    out = tmp_path / "b"
    code, shown = _on_a_terminal(monkeypatch, [*run, "--quiet", "--out", str(out)])
    assert code == 0, shown
    assert shown.strip() == f"run folder: {out}"


@pytest.mark.e2e
def test_piped_output_gets_progress_lines_without_terminal_codes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(progress, "SHOW_AFTER_S", 0.0)
    assert main(["run", str(METRO_STUDY), *SHORT_RUN, "--out", str(tmp_path / "a")]) == 0
    captured = capsys.readouterr()
    assert re.search(r"^\[1/1\] rr_iops1 done in [\d.]+ s$", captured.err, re.MULTILINE), captured.err
    assert re.search(r"^\[1/1\] all done in [\d.]+ s; writing the run folder$", captured.err, re.MULTILINE)
    assert "\x1b" not in captured.err + captured.out
    assert "ETA" not in captured.err

    assert main(["run", str(METRO_STUDY), *SHORT_RUN, "--quiet", "--out", str(tmp_path / "b")]) == 0
    assert capsys.readouterr().err == ""


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
    lines: queue.Queue[str] = queue.Queue()
    command = [*SANLAB, "run", str(scenario), "--out", str(out)]
    # Ctrl-C as a terminal sends it, even when the tests run in a background job, which a
    # shell starts with SIGINT ignored (and Python keeps it so).
    def default_sigint() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        stderr_pipe = process.stderr

        def read() -> None:
            for line in stderr_pipe:
                lines.put(line)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        # stderr is a pipe: a line says when `quick` is done; `endless` then runs for hours.
        seen = [lines.get(timeout=TIMEOUT_S)]
        while not seen[-1].startswith("[1/2] quick done"):
            seen.append(lines.get(timeout=TIMEOUT_S))
        process.send_signal(signal.SIGINT)
        stdout = process.stdout.read()  # to the end: the process has exited
        process.wait(timeout=TIMEOUT_S)
        reader.join(TIMEOUT_S)
    stderr = "".join(seen) + "".join(lines.queue)
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
