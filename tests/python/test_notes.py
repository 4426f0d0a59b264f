"""What changes what a figure means is said where the figure is shown: on the terminal, in
report.html and in the JSON (it was in results.json's job options only, or nowhere)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from sanlab.notes import figure_notes

ONE_VM = Path(__file__).resolve().parents[1] / "data" / "scenarios" / "one_vm.toml"


def _late_start(tmp_path: Path) -> Path:
    scenario = tmp_path / "late.toml"
    scenario.write_text(
        f'schema_version = 1\nname = "late"\nbase = "{ONE_VM.as_posix()}"\n'
        '[[vm]]\nname = "vm"\nhost = "h"\nvolume = "lun"\nadapter = { kind = "ideal" }\n'
        '[[vm.job]]\nkind = "fio"\ncmdline = "--name=late --rw=randread --bs=4k --startdelay=10s"\n'
        '[[variant]]\nname = "late"\nset = {}\n'
        '[[variant]]\nname = "now"\nset = { "vm[0].job" = [{ kind = "fio", cmdline = "--name=late --rw=randread --bs=4k" }] }\n',
        encoding="utf-8",
    )
    return scenario


def _sanlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sanlab.cli", *args], capture_output=True, text=True, timeout=300, check=False)


def test_a_job_that_starts_after_the_run_is_said_on_the_terminal_in_the_report_and_the_json(tmp_path: Path) -> None:
    scenario = _late_start(tmp_path)
    out = tmp_path / "run"
    done = _sanlab("run", str(scenario), "--out", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    said = "note: job vm-0.late (VM vm) completed no I/O in the measured time"
    assert said in done.stderr and "(in late)" in done.stderr, done.stderr
    assert "What the figures mean here" in (out / "report.html").read_text(encoding="utf-8")
    assert any("completed no I/O" in note for note in json.loads((out / "results.json").read_text())["notes"])
    printed = json.loads(_sanlab("run", str(scenario), "--json").stdout)
    assert printed["notes"] == [note.removeprefix("note: ") for note in done.stderr.splitlines() if note.startswith("note: ")]


def test_a_trace_not_replayed_as_written_is_noted_once_for_every_variant() -> None:
    job: dict[str, Any] = {
        "name": "t", "vm": "vm", "options": {"out_of_order": "3 records earlier than one before them"},
        "read": {"total_ios": 5}, "write": {"total_ios": 0},
    }  # fmt: skip
    doc: Any = {"variants": [{"name": "a", "jobs": [job]}, {"name": "b", "jobs": [job]}]}
    assert figure_notes(doc) == ["job t (VM vm): 3 records earlier than one before them"]
    doc["variants"][1]["jobs"] = []
    assert figure_notes(doc) == ["job t (VM vm): 3 records earlier than one before them (in a)"]
