"""Issue 27, round 3: a run folder handed over by someone else is untrusted input. Damaged or
hostile files get one line naming the file and what is wrong (exit 2), never a traceback."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import ONE_VM
from sanlab.commands import run as run_command
from sanlab.cli import main
from sanlab.export import runfolder
from sanlab.export.files import (
    MAX_JSON_DEPTH,
    JsonBoundError,
    LinkInFolderError,
    current_umask,
    loads_bounded,
    replace_file,
    replace_text,
)
from sanlab.export.runfolder import write_run_folder
from sanlab.runs import entity_table
from sanlab.sweep import SweepError, SweepSpec, _PartWriter, run_sweep

STARTED = datetime(2026, 11, 26, 3, 0, 0, tzinfo=UTC)


def _write(doc: dict[str, Any], tmp_path: Path) -> Path:
    out = tmp_path / "run"
    out.mkdir()
    write_run_folder(doc, out, argv=["sanlab", "run", "x.toml"], started=STARTED, wall_s=0.1)
    return out


def _replace_first_iops(text: str, literal: str) -> str:
    key = '"iops": '
    start = text.index(key) + len(key)
    end = min(text.index(",", start), text.index("}", start))
    return text[:start] + literal + text[end:]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        # A 401-digit integer parsed, then overflowed float(): an OverflowError traceback.
        (lambda text: _replace_first_iops(text, "1" * 401), "is out of range: expected at most 20 digits"),
        (lambda text: _replace_first_iops(text, str(2**64)), "expected a 64-bit count"),
        (lambda text: _replace_first_iops(text, "1e400"), "number 1e400 is out of range"),
        # 100,000 nested arrays: a RecursionError traceback from the JSON parser.
        (lambda text: _replace_first_iops(text, "[" * 100_000 + "]" * 100_000), "nested more than 64 deep"),
        # Deep enough to pass the parser (about 1,000), not a recursive walk of the document.
        (lambda text: _replace_first_iops(text, "[" * 900 + "]" * 900), "nested more than 64 deep"),
    ],
)
def test_hostile_numbers_and_nesting_in_results_json_are_one_line(
    doc: dict[str, Any], tmp_path: Path, damage: Any, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _write(doc, tmp_path)
    results = out / "results.json"
    results.write_text(damage(results.read_text(encoding="utf-8")), encoding="utf-8")
    assert main(["report", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {results}: line 1 column ")
    assert message in err
    assert err.endswith("the file is damaged\n")
    assert err.count("\n") == 1


def test_a_hostile_manifest_is_named_too(
    doc: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _write(doc, tmp_path)
    manifest = out / "manifest.json"
    manifest.write_text('{"wall_s":\n  ' + "9" * 5000 + "}", encoding="utf-8")
    assert main(["report", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"error: {manifest}: line 2 column 3: number 999999999999…(5000 characters) is out of range"
    )


def test_the_bounds_keep_what_sanlab_writes() -> None:
    nested = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert loads_bounded(nested) == json.loads(nested)
    with pytest.raises(JsonBoundError, match="line 1 column 65"):
        loads_bounded("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1))
    edge = {
        "most": 2**64 - 1,
        "least": -(2**64 - 1),
        "float": 1.7976931348623157e308,
        "text": "[[[[",
        "nan": None,
    }
    assert loads_bounded(json.dumps(edge)) == edge


def test_report_refuses_a_planted_link_and_leaves_its_target(
    doc: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _write(doc, tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file\n", encoding="utf-8")
    (out / "report.html").unlink()
    (out / "report.html").symlink_to(victim)
    # `sanlab report` wrote the page through the link: the victim became the report.
    assert main(["report", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"error: {out / 'report.html'} is a symbolic link; sanlab does not write through links in a "
        "folder it is handed: remove the link, or copy the folder's files\n"
    )
    assert victim.read_text(encoding="utf-8") == "the user's file\n"
    assert (out / "report.html").is_symlink()


def test_report_replaces_the_page_by_renaming_a_new_file(
    doc: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _write(doc, tmp_path)
    (out / "report.html").write_text("old", encoding="utf-8")
    hard = tmp_path / "hard_link_to_report.html"
    hard.hardlink_to(out / "report.html")
    assert main(["report", str(out)]) == 0
    assert (out / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    # A new file renamed over the name: another name of the old file keeps the old content.
    assert hard.read_text(encoding="utf-8") == "old"
    assert not [path.name for path in out.iterdir() if path.name.endswith(".tmp")]


def test_a_failed_write_leaves_neither_the_name_nor_a_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "results.parquet"
    target.write_text("before", encoding="utf-8")

    def fail(file: Any) -> None:
        file.write(b"half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        replace_file(target, fail)
    assert target.read_text(encoding="utf-8") == "before"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["results.parquet"]
    replace_text(target, "after")
    assert target.read_text(encoding="utf-8") == "after"
    assert target.stat().st_mode & 0o777 == 0o666 & ~current_umask()


def _complete_sweep(doc: dict[str, Any], tmp_path: Path) -> tuple[SweepSpec, Path]:
    """A sweep folder whose runs are all done, as a resume finds it: no Dask needed to finish it."""
    spec = SweepSpec.create(ONE_VM, ["run.duration=1s,2s"])
    out = tmp_path / "sweep"
    (out / "parts").mkdir(parents=True)
    (out / "sweep.json").write_text(json.dumps(spec.to_json()), encoding="utf-8")
    tables = [entity_table({"variants": doc["variants"][:1]}, task.point, task.seed) for task in spec.tasks()]
    writer = _PartWriter(out)  # as the sweep writes its parts: a new file renamed to its name
    writer.add(pa.concat_tables(tables))
    writer.flush()
    assert sorted(path.name for path in (out / "parts").iterdir()) == ["part-00000.parquet"]
    return spec, out


@pytest.mark.parametrize("name", ["results.parquet", "summary.parquet", "failures.json", "parts"])
def test_a_resumed_sweep_refuses_planted_links(
    doc: dict[str, Any], tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, out = _complete_sweep(doc, tmp_path)
    assert run_sweep(spec, out).skipped == 2  # resumed: both runs done, the folder's files written
    assert pq.read_table(out / "results.parquet").num_rows > 0
    victim = tmp_path / "victim"
    if name == "parts":
        (out / "parts").rename(victim)
    else:
        victim.write_text("the user's file\n", encoding="utf-8")
        (out / name).unlink()
    (out / name).symlink_to(victim)
    with pytest.raises(LinkInFolderError, match=f"{out / name} is a symbolic link"):
        run_sweep(spec, out)
    if name != "parts":
        assert victim.read_text(encoding="utf-8") == "the user's file\n"
    # The command: one line, exit 2, before any run.
    args = ["sweep", str(ONE_VM), "--vary", "run.duration=1s,2s", "--out", str(out), "--quiet"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {out / name} is a symbolic link") and err.count("\n") == 1


def test_a_resumed_sweep_refuses_a_linked_part_and_a_damaged_definition(
    doc: dict[str, Any], tmp_path: Path
) -> None:
    spec, out = _complete_sweep(doc, tmp_path)
    (out / "parts" / "part-00001.parquet").symlink_to(out / "parts" / "part-00000.parquet")
    with pytest.raises(LinkInFolderError, match=r"part-00001\.parquet is a symbolic link"):
        run_sweep(spec, out)
    (out / "parts" / "part-00001.parquet").unlink()
    (out / "sweep.json").write_text("[" * 100_000, encoding="utf-8")
    with pytest.raises(SweepError, match=r"sweep\.json: not a sweep definition .*nested more than 64 deep"):
        run_sweep(spec, out)


def _fail_in_the_report(*args: Any, **kwargs: Any) -> str:
    raise OSError(28, "No space left on device")


@pytest.mark.parametrize("out", ["given", "default"])
def test_a_run_that_fails_while_writing_leaves_no_folder(
    doc: dict[str, Any],
    tmp_path: Path,
    out: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The simulation is done; writing its folder fails after the tables and results are written
    # (the report is written after them): a half-written folder, without report and manifest, was left.
    monkeypatch.setattr(run_command, "_run_engine", lambda args, mode, *replications: (doc, False))
    monkeypatch.setattr(runfolder, "render_report", _fail_in_the_report)
    monkeypatch.chdir(tmp_path)
    args = ["run", "unused.toml", "--quiet", *(["--out", "nested/run"] if out == "given" else [])]
    assert main(args) == 1
    assert capsys.readouterr().err == "error: [Errno 28] No space left on device\n"
    left = sorted(str(path.relative_to(tmp_path)) for path in tmp_path.rglob("*"))
    assert left == (["nested"] if out == "given" else ["runs"])  # the parents stay, nothing in them


def test_a_run_folder_appears_whole_under_its_name(
    doc: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_command, "_run_engine", lambda args, mode, *replications: (doc, False))
    (tmp_path / "empty").mkdir()
    assert main(["run", "unused.toml", "--quiet", "--out", str(tmp_path / "empty")]) == 0
    assert (tmp_path / "empty" / "manifest.json").is_file()
    page = (tmp_path / "empty" / "report.html").read_text(encoding="utf-8")
    assert not re.search(r"\.empty\.\w+\.partial", page), "the report is labelled by the folder's name"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["empty"], "no staging folder left"
    assert (tmp_path / "empty").stat().st_mode & 0o777 == 0o777 & ~current_umask()


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (
            lambda out: (out / "parts" / "part-00000.parquet").write_bytes(b"garbage"),
            "the file is damaged: remove it",
        ),
        (lambda out: (out / "sweep.json").write_text("[1, 2]", encoding="utf-8"), "expected a JSON object"),
    ],
)
def test_a_damaged_sweep_folder_is_one_line(
    doc: dict[str, Any], tmp_path: Path, damage: Any, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # A damaged part file was an ArrowInvalid traceback; sweep.json an array an AttributeError.
    _, out = _complete_sweep(doc, tmp_path)
    damage(out)
    assert main(["sweep", str(ONE_VM), "--vary", "run.duration=1s,2s", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {out}") and message in err and err.count("\n") == 1
