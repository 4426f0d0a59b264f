"""Issue 27, round 3: a name read from a file (VM, host, path, variant, job...) with an ESC
sequence or another control character reaches the terminal escaped by one rule, the engine's for
names in messages, in every table, summary, progress line and message; and rich markup in a name
(`[red]`, `[/]`) is text."""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from conftest import ONE_VM
from sanlab import _core
from sanlab.commands import run as run_command
from sanlab.commands import terminal
from sanlab.cli import main
from sanlab.formatting import shown_name
from sanlab.progress import SHOW_AFTER_S, RunProgress
from sanlab.runs import entity_table
from sanlab.sweep import SweepSpec, _PartWriter, run_sweep, summary_rich_table
from sanlab.views.names import shown_document

HOSTILE = "\x1b[2J\x1b]0;owned\x07[/][red]"
"""Clears the screen and sets the window's title; `[/]` made rich raise MarkupError."""
SHOWN = "\\u{1b}[2J\\u{1b}]0;owned\\u{7}[/][red]"

RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")
"""Any control character but the newline that ends a line."""


def test_the_rule_is_the_engines_for_every_control_character() -> None:
    controls = [chr(code) for code in [*range(0x20), *range(0x7F, 0xA0)]]
    for char in controls:
        name = char + "x" * 200  # too long: the engine's message shows its first 20 characters escaped
        with pytest.raises(_core.ScenarioError) as refused:
            _core.file_name(name)
        assert f"name `{shown_name(name[:20])}…`" in str(refused.value), repr(char)
        assert not RAW_CONTROL.search(shown_name(name))
    assert shown_name("a\nb\tc\rd\x1b") == "a\\nb\\tc\\rd\\u{1b}"
    assert shown_name("vm-é [bold]\u00a0") == "vm-é [bold]\u00a0"  # not control characters: as they are
    assert shown_name(HOSTILE) == SHOWN


def _hostile(doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` with a hostile VM, host, path, device and variant name, in its time series too."""
    variant = doc["variants"][0]
    old_vm = variant["vms"][0]["name"]
    variant["name"] = f"v{HOSTILE}"
    variant["vms"][0]["name"] = f"vm{HOSTILE}\nsecond line"
    variant["vms"][0]["host"] = f"h{HOSTILE}"
    variant["paths"][0]["name"] = f"p{HOSTILE}"
    variant["devices"][0]["name"] = f"d{HOSTILE}"
    series = variant["timeseries"]
    series["entity"] = [
        f"vm/vm{HOSTILE}\nsecond line" if e == f"vm/{old_vm}" else e for e in series["entity"]
    ]
    return doc


def _assert_escaped(text: str) -> None:
    assert not RAW_CONTROL.search(text), repr(RAW_CONTROL.search(text))
    assert "\\u{1b}[2J" in text
    assert "[/][red]" in text, "markup in a name is text"


@pytest.mark.parametrize("layout", ["tables", "summary"])
def test_sanlab_run_prints_hostile_names_escaped(
    doc: dict[str, Any],
    layout: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    hostile = _hostile(doc)
    monkeypatch.setattr(run_command, "_run_engine", lambda args, mode, *replications: (hostile, False))
    monkeypatch.setattr(run_command, "fits_a_screen", lambda tables: layout == "tables")
    # The ESC sequences reached the terminal raw, and `[/]` raised rich's MarkupError.
    assert main(["run", "unused.toml", "--out", str(tmp_path / "run")]) == 0
    captured = capsys.readouterr()
    _assert_escaped(captured.out)
    if layout == "tables":  # the summary of one VM a variant names the variants only
        assert f"vm{SHOWN}\\nsecond line" in captured.out, "a newline in a name keeps its row on one line"
    assert captured.err == ""
    # The run folder keeps the names as they are: only the terminal escapes them.
    results = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    assert results["variants"][0]["name"] == f"v{HOSTILE}"


def test_the_escaped_document_keeps_its_lookups(doc: dict[str, Any]) -> None:
    plain = json.loads(json.dumps(doc))
    assert shown_document(doc) is doc, "a document without control characters is not copied"
    shown = shown_document(_hostile(doc))
    variant = shown["variants"][0]
    assert variant["vms"][0]["name"] == f"vm{SHOWN}\\nsecond line"
    assert f"vm/vm{SHOWN}\\nsecond line" in variant["timeseries"]["entity"], "time series match their VM"
    assert doc["variants"][0]["name"] == f"v{HOSTILE}", "the document itself is left as it is"
    assert shown["variants"][1] == plain["variants"][1]


def test_compare_prints_hostile_names_escaped(
    doc: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = _hostile(doc)
    monkeypatch.setattr(run_command, "_run_engine", lambda args, mode, *replications: (hostile, False))
    for name in ("a", "b"):
        assert main(["run", "unused.toml", "--quiet", "--out", str(tmp_path / name)]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "c.html")]) == 0
    _assert_escaped(capsys.readouterr().out)


@dataclass
class _Engine:
    """The engine's `Progress`: each variant's name, and its state, simulated seconds and wall seconds."""

    states: list[tuple[str, float, float, float]]
    names: list[str]

    def variants(self) -> list[tuple[str, str, float, float, float]]:
        return [(name, *state) for name, state in zip(self.names, self.states, strict=True)]


class _Clock:
    def __init__(self) -> None:
        self.now_s = 0.0

    def __call__(self) -> float:
        return self.now_s


@pytest.mark.parametrize("mode", ["lines", "bar"])
def test_progress_shows_hostile_variant_names_escaped(mode: str) -> None:
    engine = _Engine([("running", 10.0, 100.0, 1.0), ("waiting", 0.0, 0.0, 0.0)], [f"a{HOSTILE}", f"b{HOSTILE}"])
    clock, shown = _Clock(), io.StringIO()
    with RunProgress(engine, mode, shown, clock) as progress:  # type: ignore[arg-type]
        clock.now_s += SHOW_AFTER_S + 1
        progress.update()
        engine.states = [("done", 100.0, 100.0, 2.0), ("running", 10.0, 100.0, 0.5)]
        progress.update()
        progress.finish("writing the run folder")
    text = shown.getvalue()
    if mode == "lines":
        assert text.splitlines()[0] == f"[1/2] a{SHOWN} done in 2.0 s"
        _assert_escaped(text)
    else:
        # The bar draws with terminal codes of its own; the names' codes are escaped, their markup text.
        assert f"b{SHOWN} (2/2)" in re.sub("\x1b\\[[0-9;?]*[A-Za-z]", "", text)
        assert "\x1b[2J" not in text and "\x1b]0;owned" not in text


def test_validate_prints_hostile_names_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = tmp_path / "hostile.toml"
    name = json.dumps(f"v{HOSTILE}")  # a TOML basic string: JSON's escapes are TOML's
    scenario.write_text(
        f'base = "{ONE_VM.as_posix()}"\nname = {json.dumps("s" + HOSTILE)}\n'
        f'[run]\nduration = "10ms"\n[[variant]]\nname = {name}\n',
        encoding="utf-8",
    )
    assert main(["validate", str(scenario)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"ok: s{SHOWN} (1 variant: v{SHOWN})\n")
    _assert_escaped(out)


def test_the_sweep_table_shows_hostile_names_escaped(doc: dict[str, Any], tmp_path: Path) -> None:
    spec = SweepSpec.create(ONE_VM, ["run.duration=1s,2s"])
    out = tmp_path / "sweep"
    (out / "parts").mkdir(parents=True)
    (out / "sweep.json").write_text(json.dumps(spec.to_json()), encoding="utf-8")
    hostile = _hostile(doc)
    # Two variants with different VMs: the table's rows were every variant x VM, NaN for the
    # pairs that do not exist (int(NaN) raised ValueError).
    tables = [entity_table(hostile, task.point, task.seed) for task in spec.tasks()]
    writer = _PartWriter(out)
    writer.add(pa.concat_tables(tables))
    writer.flush()
    run_sweep(spec, out)
    console = terminal.console()
    with console.capture() as captured:
        console.print(summary_rich_table(out))
    _assert_escaped(captured.get())


def test_a_line_of_names_shows_a_few_and_counts_the_rest() -> None:
    from sanlab.formatting import few_names

    assert few_names(["a", "b\x1b[2J"]) == "a, b\\u{1b}[2J"
    assert few_names([f"v{i}" for i in range(4096)]) == "v0, v1, v2, v3, v4, v5, v6, v7 and 4,088 more"
