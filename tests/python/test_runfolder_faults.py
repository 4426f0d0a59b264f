"""Fault edges in the run folder: kept in results.json with the failover counts, read back as
written, and a damaged fault list named with its location (exit 2, no traceback)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from fault_doc import with_faults
from sanlab.cli import main
from sanlab.export.runfolder import RunFolderError, read_run_folder, write_run_folder

STARTED = datetime(2026, 11, 22, 22, 0, 0, tzinfo=UTC)


def _write(doc: dict[str, Any], tmp_path: Path) -> Path:
    out = tmp_path / "run"
    out.mkdir()
    write_run_folder(doc, out, argv=["sanlab", "run", "x.toml"], started=STARTED, wall_s=0.1)
    return out


def test_faults_and_counts_round_trip(doc: dict[str, Any], tmp_path: Path) -> None:
    faulty = with_faults(doc)
    out = _write(faulty, tmp_path)
    read, _ = read_run_folder(out)
    assert read["variants"][0]["faults"] == faulty["variants"][0]["faults"]
    assert read["variants"][0]["vms"][0]["failed_by_reason"] == {"no_path": 3}
    assert "faults" not in read["variants"][1], "a variant without faults stays without"
    summary = pq.read_table(out / "summary.parquet").to_pylist()
    found = {(row["entity"], row["metric"]): row["value"] for row in summary if row["variant"] == "rr"}
    assert found[("vm/vm1", "retried")] == 40
    assert found[("vm/vm1", "failed_by_reason_no_path")] == 3
    assert found[("path/loc-0", "failed_over")] == 25


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda v: v.update(faults={"t_s": 1}), "variants[0].faults: expected a list"),
        (lambda v: v["faults"].__setitem__(1, "edge"), "variants[0].faults[1]: expected an object"),
        (lambda v: v["faults"][0].pop("kind"), "variants[0].faults[0].kind: expected a string"),
        (lambda v: v["faults"][2].update(t_s="15s"), "variants[0].faults[2].t_s: expected a number"),
        (lambda v: v["faults"][0].update(phase=""), "variants[0].faults[0].phase: empty"),
        (lambda v: v["faults"][0].update(paths=[0]), "variants[0].faults[0].paths: expected path names"),
        (
            lambda v: v["faults"][0].update(max_io_latency_ms="2"),
            "faults[0].max_io_latency_ms: expected a number",
        ),
    ],
)
def test_damaged_faults_are_named(
    doc: dict[str, Any], tmp_path: Path, damage: Any, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _write(with_faults(doc), tmp_path)
    results = json.loads((out / "results.json").read_text())
    damage(results["variants"][0])
    (out / "results.json").write_text(json.dumps(results))
    with pytest.raises(RunFolderError, match="the file is damaged") as error:
        read_run_folder(out)
    assert message in str(error.value)
    assert main(["report", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
