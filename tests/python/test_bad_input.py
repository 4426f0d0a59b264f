"""Bad input and damaged run folders: exit 2 and one `error:` line, never a traceback; a Rust
panic is an internal error, exit 3."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from sanlab import _core
from sanlab import cli as sanlab_cli

CliRunner = Callable[..., subprocess.CompletedProcess[str]]

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "scenarios" / "examples" / "ioping.toml"


def _one_error_line(result: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert result.returncode == code, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def _main_error_line(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Runs the CLI in this process (faster than a subprocess); it must return 2 with one line."""
    assert sanlab_cli.main(list(args)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err


@pytest.mark.parametrize(
    ("variants", "message"),
    [
        ('"a b", "a_b"', "variant[1].name: variants `a b` and `a_b` would share the file name `a_b`"),
        ('"ok", ""', "variant[1].name: name `` gives no file name"),
        ('"x\\ny", "x_y"', "variants `x\\ny` and `x_y` would share the file name `x_y`"),
    ],
)
def test_variant_names_that_clash_as_file_names_are_refused_before_running(
    cli: CliRunner, tmp_path: Path, variants: str, message: str
) -> None:
    scenario = tmp_path / "s.toml"
    names = variants.split(", ")
    scenario.write_text(EXAMPLE.read_text() + "".join(f"[[variant]]\nname = {n}\nset = {{}}\n" for n in names))
    assert message in _one_error_line(cli("validate", str(scenario)))
    assert message in _one_error_line(cli("run", str(scenario), "--out", str(tmp_path / "out")))
    # Refused before anything is written; the --out folder sanlab made for the run is removed.
    assert not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "ok"
    code = sanlab_cli.main(["run", str(EXAMPLE), "--duration", "2s", "--out", str(out), "--quiet"])
    assert code == 0
    return out


@pytest.mark.parametrize(
    ("file", "content", "message"),
    [
        ("manifest.json", b"null", "manifest.json: expected a JSON object, found null"),
        ("manifest.json", b"[1, 2]", "manifest.json: expected a JSON object, found an array"),
        ("results.json", b"\xff\xfe{}", "results.json: not UTF-8 text (byte 0)"),
        ("results.json", b'{"variants": [{"name": "x"}]}', "results.json: variants[0].vms: expected a list"),
        ("results.json", b'{"variants": 3}', "results.json: expected `variants`, a list of objects"),
        ("timeseries.parquet", b"PAR1 truncated", "timeseries.parquet: not a Parquet table"),
        ("results.json", None, "has no results.json"),
        ("manifest.json", None, "has no manifest.json"),
    ],
)
def test_damaged_run_folders_get_one_line(
    capsys: pytest.CaptureFixture[str], run_folder: Path, tmp_path: Path, file: str, content: bytes | None, message: str
) -> None:
    damaged = tmp_path / "damaged"
    shutil.copytree(run_folder, damaged)
    if content is None:
        (damaged / file).unlink()
    else:
        (damaged / file).write_bytes(content)
    for args in (("report", str(damaged)), ("compare", str(damaged), str(run_folder), "--out", str(tmp_path / "c.html"))):
        assert message in _main_error_line(capsys, *args)


def test_a_results_document_missing_deeper_keys_is_a_damaged_folder(
    capsys: pytest.CaptureFixture[str], run_folder: Path, tmp_path: Path
) -> None:
    damaged = tmp_path / "damaged"
    shutil.copytree(run_folder, damaged)
    text = (damaged / "results.json").read_text()
    (damaged / "results.json").write_text(text.replace('"iops"', '"iops_renamed"'))
    assert "results.json lacks what the report reads" in _main_error_line(capsys, "report", str(damaged))


def test_a_rust_panic_is_an_internal_error_exit_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def panics(*_: object) -> int:
        raise _core.InternalError("panicked at crates/x.rs:1:1: boom")

    import sanlab.commands.validate as validate_command

    monkeypatch.setattr(validate_command, "main", panics)
    assert sanlab_cli.main(["validate", "x.toml"]) == 3
    err = capsys.readouterr().err
    assert err == "error: internal error in sanlab, please report: panicked at crates/x.rs:1:1: boom\n"


def test_control_characters_in_messages_are_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    assert sanlab_cli.main(["validate", "no\nsuch\tfile.toml"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no\\nsuch\\tfile.toml" in err


@pytest.mark.parametrize("scenario", ["/dev/zero", "fifo"])
def test_a_scenario_that_is_not_a_regular_file_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, scenario: str
) -> None:
    if scenario == "fifo":
        scenario = str(tmp_path / "fifo.toml")
        os.mkfifo(scenario)
    for command in ("validate", "run"):
        assert "cannot read the scenario: not a regular file" in _main_error_line(capsys, command, scenario)
