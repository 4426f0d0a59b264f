"""Command-line errors: exit code 2, `error:` on stderr, never a traceback."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import with_hosts
from sanlab import cli as sanlab_cli
from sanlab.cli import JSON_OMITTED_KEYS, json_summary, main

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
    monkeypatch.setattr(sanlab_cli, "_run_engine", lambda args, show: (doc, False))
    assert main(["run", "unused.toml", "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert out.index("tiny_metro: variants") < out.index("\nhosts") < out.index("paths: I/O share")
    assert ("window" in out) == bool(controlled)


def test_run_prints_no_hosts_table_for_one_uncontrolled_host(
    doc: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for variant in with_hosts(doc, controlled=())["variants"]:
        del variant["hosts"][1]
    monkeypatch.setattr(sanlab_cli, "_run_engine", lambda args, show: (doc, False))
    assert main(["run", "unused.toml", "--out", str(tmp_path / "run")]) == 0
    assert "\nhosts" not in capsys.readouterr().out
