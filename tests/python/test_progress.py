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
    """The engine's `Progress` as the CLI reads it: each variant's name, and its state, simulated
    seconds reached and to run, and wall seconds."""

    states: list[tuple[str, float, float, float]]
    names: list[str]

    def variants(self) -> list[tuple[str, str, float, float, float]]:
        return [(name, *state) for name, state in zip(self.names, self.states, strict=True)]


class Clock:
    """A test's `time.perf_counter`: seconds that pass only when the test says so."""

    def __init__(self) -> None:
        self.now_s = 100.0

    def __call__(self) -> float:
        return self.now_s


WAITING = ("waiting", 0.0, 0.0, 0.0)


def test_the_bar_shows_the_variant_simulated_time_wall_time_and_eta() -> None:
    engine, clock, shown = Engine([("running", 0.0, 1500.0, 0.0), WAITING], ["rr_iops1", "fixed"]), Clock(), io.StringIO()
    with RunProgress(engine, "bar", shown, clock) as bar:  # type: ignore[arg-type]
        clock.now_s += SHOW_AFTER_S / 2
        bar.update()
        assert shown.getvalue() == "", "no bar for a run that may end within SHOW_AFTER_S"
        clock.now_s += SHOW_AFTER_S + 1
        engine.states[0] = ("running", 500.0, 1500.0, 2.0)
        bar.update()
    bar = r"rr_iops1 \(1/2\).*sim 500/1,500 s wall 0:00:02 ETA"
    assert re.search(bar, shown.getvalue()), shown.getvalue()
    assert re.search(r"0/2 variants, 1 running.*wall 0:00:0\d ETA", shown.getvalue()), shown.getvalue()


def test_the_bars_show_each_variant_running_at_once() -> None:
    running = [("done", 60.0, 60.0, 5.0), ("running", 30.0, 60.0, 3.0), ("running", 12.0, 60.0, 1.0), WAITING]
    engine, clock, shown = Engine(running, ["a", "b", "c", "d"]), Clock(), io.StringIO()
    with RunProgress(engine, "bar", shown, clock) as bar:  # type: ignore[arg-type]
        clock.now_s += SHOW_AFTER_S + 1
        bar.update()
        text = shown.getvalue()
        assert re.search(r"b \(2/4\).*sim 30/60 s wall 0:00:03", text), text
        assert re.search(r"c \(3/4\).*sim 12/60 s wall 0:00:01", text), text
        assert re.search(r"1/4 variants, 2 running", text), text
        assert "a (1/4)" not in text and "d (4/4)" not in text, "only the variants running get a bar"


def test_lines_name_each_variant_done_and_those_running_now_and_then() -> None:
    engine, clock, shown = Engine([("running", 0.0, 1500.0, 0.0), WAITING, WAITING], ["a", "b", "c"]), Clock(), io.StringIO()
    with RunProgress(engine, "lines", shown, clock) as lines:  # type: ignore[arg-type]
        clock.now_s += SHOW_AFTER_S / 2
        engine.states[0] = ("done", 1500.0, 1500.0, 0.4)
        lines.update()
        assert shown.getvalue() == "", "nothing for a run that may end within SHOW_AFTER_S"
        clock.now_s += 1.5
        engine.states[1:] = [("running", 0.0, 1500.0, 1.0), ("running", 0.0, 1500.0, 1.0)]
        lines.update()
        engine.states[1:] = [("running", 500.0, 1500.0, 10.0), ("running", 900.0, 1500.0, 10.0)]
        clock.now_s += LINE_EVERY_S
        lines.update()
        lines.update()
        clock.now_s += 1.0
        engine.states[1:] = [("done", 1500.0, 1500.0, 21.0), ("done", 1500.0, 1500.0, 19.5)]
        lines.finish("writing the run folder")
    assert shown.getvalue().splitlines() == [
        "[1/3] a done in 0.4 s",
        "[2/3] b: 500/1,500 s simulated in 10.0 s",
        "[3/3] c: 900/1,500 s simulated in 10.0 s",
        "[2/3] b done in 21.0 s",  # b and c finished within one poll: in scenario order
        "[3/3] c done in 19.5 s",
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
    # The variant's bar while it runs (it may end within one refresh), the run's at its end.
    bar = r"(rr_iops1 \(1/1\).*sim [\d,]+/5 s|1/1 variants).*wall \d:\d\d:\d\d ETA"
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
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_keeps_the_variants_that_finished(tmp_path: Path, jobs: str) -> None:
    # One job: `quick`, first, is done before `endless` starts. Two: `endless`, first, runs beside
    # `quick`, which finishes after it started.
    variants = {
        "quick": '[[variant]]\nname = "quick"\ndescription = "done in a blink"\nset = { "run.duration" = "3s" }\n\n',
        "endless": '[[variant]]\nname = "endless"\ndescription = "runs for hours"\nset = { "run.duration" = "1000000s" }\n\n',
    }
    order = ["quick", "endless"] if jobs == "1" else ["endless", "quick"]
    text = METRO_STUDY.read_text()
    scenario = tmp_path / "two_lengths.toml"
    scenario.write_text(text[: text.index("[[variant]]")] + "".join(variants[name] for name in order))
    out = tmp_path / "run"
    lines: queue.Queue[str] = queue.Queue()
    command = [*SANLAB, "run", str(scenario), "--jobs", jobs, "--out", str(out)]
    # Memory as large as it takes: `endless` alone is bounded at more than most machines have,
    # and would otherwise run alone (sanlab's tests set the machine's memory this way).
    env = {**os.environ, "SANLAB_TEST_MEMORY_BYTES": str(10**18)}
    # Ctrl-C as a terminal sends it, even when the tests run in a background job, which a
    # shell starts with SIGINT ignored (and Python keeps it so).
    def default_sigint() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint, env=env
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        stderr_pipe = process.stderr

        def read() -> None:
            for line in stderr_pipe:
                lines.put(line)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        # stderr is a pipe: a line says when `quick` is done; `endless` runs for hours.
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
