"""`sanlab lint` on hostile input: a device or a FIFO as the benchmark, names that drive the
terminal or read as rich markup, includes planted where the fixed copy is read, a lint killed
mid-run, and job reports that change what a figure means (docs/robustness.md, "sanlab lint")."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from sanlab.commands.lint import _print
from sanlab.lint import LintResult
from sanlab.lint.rules import Finding
from sanlab.lint.source import Benchmark

ROOT = Path(__file__).resolve().parents[2]
HITAREA = ROOT / "scenarios/studies/vdbench_hitarea.toml"

HOSTILE = "\x1b[2J[/][red]"
"""Clears the screen; `[/]` made rich raise MarkupError, `[red]` was read as a style."""
SHOWN = "\\u{1b}[2J[/][red]"


def _sanlab(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    # Its own timeout: a FIFO blocked `lint` for ever.
    return subprocess.run(
        [sys.executable, "-m", "sanlab.cli", "lint", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, **(env or {})},
    )


def _json(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    result = _sanlab(*args, "--json", env=env)
    assert result.returncode == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def _one_error_line(result: subprocess.CompletedProcess[str], message: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: "), result.stderr
    assert message in result.stderr


@pytest.mark.parametrize("rd", [[], ["--rd", "r1"]])
def test_a_device_or_a_fifo_is_refused_before_it_is_read(tmp_path: Path, rd: list[str]) -> None:
    # /dev/zero was read whole (MemoryError); a FIFO blocked for ever, with --rd too.
    fifo = tmp_path / "jobs.fio"
    os.mkfifo(fifo)
    for path in ("/dev/zero", str(fifo)):
        _one_error_line(
            _sanlab(path, *rd, timeout=60),
            f"{path}: not a regular file (a device, a FIFO or a folder): expected a fio job file",
        )
    big = tmp_path / "big.fio"
    with open(big, "wb") as file:
        file.truncate(17 << 20)
    _one_error_line(_sanlab(str(big), *rd), "above the limit of 16,777,216 bytes")


def test_a_path_that_is_not_utf8_is_one_error_line(tmp_path: Path) -> None:
    # It reached the engine's scenario text: UnicodeEncodeError.
    path = Path(os.fsdecode(os.fsencode(tmp_path) + b"/\xff.fio"))
    path.write_text("[t]\nrw=randread\n", encoding="utf-8")
    _one_error_line(_sanlab(str(path)), "\\udcff.fio: its path is not UTF-8 text")


def test_run_names_from_a_parameter_file_are_text_escaped(tmp_path: Path) -> None:
    parm = tmp_path / "runs.vdb"
    parm.write_text(
        "sd=sd1,lun=/dev/sdb,size=100g,threads=4\n"
        "wd=w1,sd=sd1,xfersize=8k,rdpct=100,rhpct=75\n"
        "rd=a[/],wd=w1,iorate=max,elapsed=60,interval=1\n"
        f"rd=b{HOSTILE},wd=w1,iorate=max,elapsed=60,interval=1\n",
        encoding="utf-8",
    )
    for args, linted, other in (([], "a[/]", f"b{SHOWN}"), (["--rd", f"b{HOSTILE}"], f"b{SHOWN}", "a[/]")):
        result = _sanlab(str(parm), *args)
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
        assert "\x1b" not in result.stdout
        assert f"run {linted} of 2 linted; the others ({other}) with --rd NAME" in result.stdout


def test_a_terminal_gets_lints_styles_and_a_files_names_escaped() -> None:
    """On a terminal rich writes its own styles (bold, dim); every other ESC is the file's, escaped."""
    benchmark = Benchmark("fio", "fio --name=t", None)
    finding = Finding("group-hides-slow-job", "group_reporting", 3, f"job x{HOSTILE} what", "effect", "fix")
    result = LintResult(benchmark, None, None, [finding], [f"job x{HOSTILE} counted no I/O"])
    out = io.StringIO()
    _print(result, Console(file=out, force_terminal=True, color_system="standard", markup=False, width=200))
    text = out.getvalue()
    assert "\x1b[1mgroup-hides-slow-job" in text, "the rule in bold"
    assert f"job x{SHOWN} what" in text and f"job x{SHOWN} counted no I/O" in text
    assert not re.search(r"\x1b(?!\[[0-9;]*m)", text), "only rich's style sequences"


@pytest.mark.parametrize(
    ("benchmark", "text", "included", "planted"),
    [
        (
            "kit/jobs/jobs.fio",
            "[t]\ninclude ../common.fio\nrandom_distribution=zipf:1.2\n",
            "ioengine=libaio\ndirect=1\nrw=randread\nbs=8k\niodepth=32\ntime_based\n",
            "ioengine=libaio\ndirect=1\nrw=randread\nbs=8k\niodepth=32\ntime_based\nrate_iops=500\n",
        ),
        (
            "vd kit/parm/p.vdb",  # a blank in the folder: vdbench cuts a line at its first blank
            "include=../sd.vdb\nwd=w1,sd=sd1,xfersize=8k,rdpct=100,rhpct=75\nrd=r1,wd=w1,iorate=max,elapsed=600\n",
            "sd=sd1,lun=/dev/sdb,size=100g,threads=64\n",
            "sd=sd1,lun=/dev/sdb,size=100g,threads=1\n",
        ),
    ],
)
def test_a_fixed_copy_reads_the_includes_beside_the_original(
    tmp_path: Path, benchmark: str, text: str, included: str, planted: str
) -> None:
    """The fix was simulated on a copy in $TMPDIR/sanlab-lint-*/, whose `include ../x` read
    $TMPDIR/x: anyone could plant it there (a planted rate_iops=500 made the fio figure 500)."""
    path = tmp_path / benchmark
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    include_name = "common.fio" if path.suffix == ".fio" else "sd.vdb"
    (path.parent.parent / include_name).write_text(included, encoding="utf-8")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    (scratch / include_name).write_text(planted, encoding="utf-8")
    doc = _json(str(path), "--scenario", str(HITAREA), "--duration", "1s", env={"TMPDIR": str(scratch)})
    (finding,) = [f for f in doc["findings"] if f["evidence"]]
    written, fixed = (
        finding["evidence"]["as written"]["VM IOPS"],
        finding["evidence"]["with the fix"]["VM IOPS"],
    )
    # The fixes spread the I/Os (skewed-offsets: 0.6 times as written; hit-area: 2.5 times); the
    # planted files held the fio job to 500 IOPS and the vdbench SD to one thread.
    assert fixed > 0.4 * written > 10_000, (written, fixed)
    assert [p.name for p in scratch.iterdir()] == [include_name], "nothing written to $TMPDIR"


def test_a_killed_lint_leaves_nothing_behind(tmp_path: Path) -> None:
    """The fixed copy lives in memory: killed while its fix ran, lint left its temporary folder."""
    jobs = tmp_path / "seq.fio"
    # Ends early as written (64 MiB, 0.2 s); its fix (time_based) runs two minutes, killed on the way.
    jobs.write_text(
        "[t]\nioengine=libaio\ndirect=1\nrw=read\nbs=4k\niodepth=32\nsize=64m\n", encoding="utf-8"
    )
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    lint = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sanlab.cli",
            "lint",
            str(jobs),
            "--scenario",
            str(HITAREA),
            "--duration",
            "120s",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    try:
        deadline = time.monotonic() + 120
        while not _holds_copy(lint.pid, "seq.fio"):
            assert lint.poll() is None, "lint ended before its fix was simulated"
            assert time.monotonic() < deadline, "the fixed copy never appeared"
            time.sleep(0.05)
        assert list(scratch.iterdir()) == []
        lint.send_signal(signal.SIGTERM)
        assert lint.wait(timeout=30) == -signal.SIGTERM
    finally:
        if lint.poll() is None:
            lint.kill()
            lint.wait()
    assert list(scratch.iterdir()) == []


def _holds_copy(pid: int, name: str) -> bool:
    """Whether the process holds the in-memory copy of `name` (a memfd)."""
    fds = Path(f"/proc/{pid}/fd")
    try:
        links = [os.readlink(fd) for fd in fds.iterdir()]
    except OSError:  # an fd closed while listed
        return False
    return any(link.startswith(f"/memfd:{name}") for link in links)


CMDLINE = "fio --name=t --ioengine=libaio --direct=1 --rw=randread --iodepth=8 --time_based"


@pytest.mark.parametrize(
    ("options", "note"),
    [
        # 0 IOPS without a word: the job starts, or starts counting, after the 1 s run ends.
        ("--startdelay=5s", "job lint.t (VM vdbench) completed no I/O in the measured time"),
        ("--ramp_time=3s", "job lint.t (VM vdbench) completed no I/O in the measured time"),
        (
            "--max_latency=50us",
            "job lint.t ended at 0.000212 s of the 1 s simulated "
            "(fio's error 110: max latency exceeded: 212 us above the max_latency of 50 us)",
        ),
        (
            "--runtime=300ms",
            "job lint.t ended at 0.3 s of the 1 s simulated (runtime=300ms): its figures cover that time",
        ),
        # The search starts at depth 1: that was taken for a synchronous engine's depth.
        (
            "--latency_target=2ms --latency_window=100ms",
            "job lint.t: latency_target=2 ms makes fio search its depth; it ended at depth 8",
        ),
    ],
)
def test_a_job_report_that_changes_a_figures_meaning_is_noted(options: str, note: str) -> None:
    doc = _json("--cmdline", f"{CMDLINE} {options}", "--scenario", str(HITAREA), "--duration", "1s")
    assert [f["rule"] for f in doc["findings"]] == ["reads-unwritten"]
    assert any(n.startswith(note) for n in doc["notes"]), doc["notes"]


def test_without_memfd_the_copies_live_in_a_private_folder_removed_after(monkeypatch: pytest.MonkeyPatch) -> None:
    """Off Linux there is no memfd: the copy is a file in a private temporary folder, gone after."""
    import os

    from sanlab.lint.source import in_memory

    monkeypatch.delattr(os, "memfd_create")
    with in_memory("job.fio", "[job]\nrw=read\n") as path:
        assert path.read_text(encoding="utf-8") == "[job]\nrw=read\n"
        folder = path.parent
    assert not folder.exists()
