"""Issue 27, round 3: a run folder handed over by someone else is untrusted input. Damaged or
hostile files get one line naming the file and what is wrong (exit 2), never a traceback."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from sanlab.cli import main
from sanlab.export.files import MAX_JSON_DEPTH, JsonBoundError, loads_bounded
from sanlab.export.runfolder import write_run_folder

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
