"""The command line: errors (exit code 2, one `error:` line, never a traceback), --version, kinds."""

from __future__ import annotations

import importlib.metadata
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import sanlab
from conftest import with_hosts
from sanlab import _core
from sanlab.cli import main
from sanlab.commands import run as run_command
from sanlab.results import JSON_OMITTED_KEYS, json_summary

CliRunner = Callable[..., subprocess.CompletedProcess[str]]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "x.toml", "--set", "no_equals_sign"], "expected KEY=VALUE"),
        (["run", "x.toml", "--set", "=1"], "expected KEY=VALUE"),
        (["run", "x.toml", "--seed", "-1"], "--seed"),
        (["run", "x.toml", "--seed", "abc"], "--seed"),
        (["validate", "x.toml", "--set", "novalue"], "expected KEY=VALUE"),
        (["run"], "SCENARIO"),
        (["simulate", "x.toml"], "invalid choice"),
        ([], "COMMAND"),
    ],
)
def test_bad_arguments_exit_2(cli: CliRunner, args: list[str], message: str) -> None:
    result = cli(*args)
    assert result.returncode == 2
    assert "error:" in result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_non_empty_out_folder_is_refused_before_running(cli: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("x")
    result = cli("run", str(tmp_path / "never_read.toml"), "--out", str(out))
    assert result.returncode == 2
    assert result.stderr.startswith("error: output folder")
    assert "Traceback" not in result.stderr


def test_json_summary_drops_bulky_keys(doc: dict[str, Any]) -> None:
    summary = json_summary(doc)
    assert set(summary) == set(doc)
    for variant, original in zip(summary["variants"], doc["variants"], strict=True):
        assert set(variant) == set(original) - set(JSON_OMITTED_KEYS)
    assert "timeseries" in doc["variants"][0]


@pytest.mark.parametrize("controlled", [("latency",), ()])
def test_run_prints_the_hosts_table_after_the_variants_table(
    doc: dict[str, Any],
    controlled: tuple[str, ...],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with_hosts(doc, controlled)
    monkeypatch.setattr(run_command, "_run_engine", lambda args, show, *replications: (doc, False))
    assert main(["run", "unused.toml", "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert out.index("tiny_metro: variants") < out.index("\nhosts") < out.index("paths: I/O share")
    assert ("window" in out) == bool(controlled)


def test_run_prints_no_hosts_table_for_one_uncontrolled_host(
    doc: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for variant in with_hosts(doc, controlled=())["variants"]:
        del variant["hosts"][1]
    monkeypatch.setattr(run_command, "_run_engine", lambda args, show, *replications: (doc, False))
    assert main(["run", "unused.toml", "--out", str(tmp_path / "run")]) == 0
    assert "\nhosts" not in capsys.readouterr().out


def test_version_names_the_package_and_the_engine(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    expected = f"sanlab {importlib.metadata.version('sanlab')} (engine {_core.__version__})"
    assert capsys.readouterr().out.strip() == expected


def _kinds(capsys: pytest.CaptureFixture[str], *args: str) -> list[list[str]]:
    assert main(["kinds", *args]) == 0
    return [line.split() for line in capsys.readouterr().out.splitlines()]


def test_kinds_takes_an_extension_point_a_kind_or_part_of_a_name(capsys: pytest.CaptureFixture[str]) -> None:
    points = {kind["extension_point"] for kind in sanlab.kinds()}
    every = _kinds(capsys)
    psp = _kinds(capsys, "psp")
    assert [row for row in psp if len(row) == 1 and row[0] in points] == [["psp"]], "the psp table alone"
    assert ["rr", "ESXi", "NMP", "VMW_PSP_RR:"] in [row[:4] for row in psp], "a selector beside its platform"
    assert len(psp) < len(every) / 4
    rr = _kinds(capsys, "RR")  # a kind, not every kind whose name holds `rr`
    assert [row[0] for row in rr if row and row[0].startswith(("rr", "mpio_round"))] == ["rr"]
    mpio = {row[0] for row in _kinds(capsys, "mpio") if row and row[0].startswith("mpio")}
    assert mpio >= {"mpio_round_robin", "mpio_least_queue_depth", "mpio_failover_only"}


def test_an_unknown_kinds_filter_gets_one_line_with_the_nearest_name(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["kinds", "pssp"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith("error: kinds pssp: no extension point or kind matches")
    assert captured.err.rstrip().endswith("did you mean `psp`?")


ROOT = Path(__file__).resolve().parents[2]


def test_a_run_no_seed_can_change_says_so_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The metro study's delays are fixed and its arrays ignore offsets: a note says the seed does not
    matter; on noisy links it does, and nothing is said."""
    metro = str(ROOT / "scenarios/studies/metro_cluster_psp.toml")
    assert main(["run", metro, "--duration", "3s", "--variant", "alua_rr", "--out", str(tmp_path / "fixed")]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note: nothing random")]
    assert len(notes) == 1 and "every --seed gives the same figures" in notes[0] and " in " not in notes[0][:40]
    noisy = ["--set", 'path[0].link.latency={ kind = "exponential", mean = "50us" }']
    assert main(["run", metro, "--duration", "3s", "--variant", "alua_rr", *noisy, "--out", str(tmp_path / "noisy")]) == 0
    assert "note: nothing random" not in capsys.readouterr().out


def test_the_note_names_the_seedless_variants_when_not_all_are(doc: dict[str, Any]) -> None:
    doc["variants"][0]["seed_matters"] = False
    doc["variants"][1]["seed_matters"] = True
    note = run_command.seedless_note(doc)
    assert note is not None and note.startswith(f"note: nothing random shaped the figures in {doc['variants'][0]['name']} (")
    doc["variants"][0]["seed_matters"] = True
    assert run_command.seedless_note(doc) is None
