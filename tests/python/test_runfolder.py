"""The run folder: every file, Parquet columns and row counts, deterministic bytes."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sanlab

from conftest import with_hosts
from sanlab.export.runfolder import (
    new_default_out_dir,
    prepare_out_dir,
    read_run_folder,
    safe_name,
    write_run_folder,
)

STARTED = datetime(2026, 11, 21, 20, 9, 5, tzinfo=UTC)
ARGV = ["sanlab", "run", "tiny_metro.toml"]

# Numeric fields per entity in the sample document (lat_ms adds six: mean p50 p95 p99 p999 max):
# vm 7 + 6, path 4 + 6 (two paths), device 11 + 6, volume 0 (no QoS), array 6 + 6,
# then share, util and iops of two cores and one controller.
SUMMARY_ROWS_PER_VARIANT = 13 + 2 * 10 + 17 + 12 + 3 * 3
# A host: vms, iops, mbps, device_lat_ms + 6 lat_ms; with PARDA 3 flow control figures and 4 window ones.
HOST_ROWS, CONTROLLED_HOST_ROWS = 4 + 6, 4 + 6 + 3 + 4


def _write(doc: dict[str, Any], out: Path) -> list[str]:
    out.mkdir()
    return write_run_folder(doc, out, argv=ARGV, started=STARTED, wall_s=0.25)


def test_writes_every_file(doc: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "run"
    files = _write(doc, out)
    expected = {
        "manifest.json",
        "results.json",
        "report.html",
        "summary.parquet",
        "timeseries.parquet",
        "rr/scenario.resolved.toml",
        "rr/fio/writer.json",
        "latency/scenario.resolved.toml",
        "latency/fio/writer.json",
    }
    assert set(files) == expected
    on_disk = {path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_file()}
    assert on_disk == expected
    assert (out / "rr" / "scenario.resolved.toml").read_text() == doc["variants"][0]["resolved_toml"]
    fio = json.loads((out / "latency" / "fio" / "writer.json").read_text())
    assert fio["fio version"] == "sanlab-0.1.0"
    assert fio["jobs"][0]["jobname"] == "writer"


def test_manifest(doc: dict[str, Any], tmp_path: Path) -> None:
    _write(doc, tmp_path / "run")
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["sanlab_version"] == "0.1.0"
    assert manifest["scenario_file"] == "scenarios/tiny_metro.toml"
    assert manifest["scenario_sha256"] == "0" * 64
    assert manifest["argv"] == ARGV
    assert manifest["started_utc"] == "2026-11-21T20:09:05Z"
    assert manifest["wall_s"] == 0.25
    assert {"python", "platform"} <= set(manifest)
    assert [(v["name"], v["seed"], v["wall_s"]) for v in manifest["variants"]] == [
        ("rr", 7, 0.05),
        ("latency", 8, 0.05),
    ]
    assert manifest["files"][-1] == "manifest.json"


def test_summary_parquet(doc: dict[str, Any], tmp_path: Path) -> None:
    _write(doc, tmp_path / "run")
    table = pq.read_table(tmp_path / "run" / "summary.parquet")
    assert table.schema.names == ["variant", "replication", "entity_kind", "entity", "metric", "value"]
    assert table.schema.field("value").type == pa.float64()
    assert table.num_rows == 2 * SUMMARY_ROWS_PER_VARIANT
    rows = table.to_pylist()
    assert {row["entity_kind"] for row in rows} == {"vm", "path", "device", "array", "core", "controller"}
    share = [
        r for r in rows if r["variant"] == "rr" and r["entity"] == "path/rem-0" and r["metric"] == "share"
    ]
    assert [r["value"] for r in share] == [0.5]
    p99 = [r for r in rows if r["entity"] == "vm/vm1" and r["metric"] == "lat_ms_p99"]
    assert [r["value"] for r in p99] == [4.8, 4.8]


def test_hosts_in_summary_and_results(doc: dict[str, Any], tmp_path: Path) -> None:
    _write(with_hosts(doc, controlled=("latency",)), tmp_path / "run")
    table = pq.read_table(tmp_path / "run" / "summary.parquet")
    assert table.num_rows == 2 * SUMMARY_ROWS_PER_VARIANT + 2 * HOST_ROWS + 2 * CONTROLLED_HOST_ROWS
    rows = [row for row in table.to_pylist() if row["entity_kind"] == "host"]
    beta = [
        (row["variant"], row["entity"], row["value"]) for row in rows if row["metric"] == "flow_control_beta"
    ]
    assert beta == [("latency", "host/esx1", 1.0), ("latency", "host/esx2", 2.0)]
    read, _ = read_run_folder(tmp_path / "run")
    assert read["variants"][1]["hosts"] == doc["variants"][1]["hosts"]
    assert "host/esx2" in read["variants"][1]["timeseries"]["entity"]


def test_timeseries_parquet(doc: dict[str, Any], tmp_path: Path) -> None:
    _write(doc, tmp_path / "run")
    table = pq.read_table(tmp_path / "run" / "timeseries.parquet")
    assert table.schema.names == ["variant", "replication", "t_s", "entity", "metric", "value"]
    assert table.num_rows == 8
    assert table.column("variant").to_pylist() == ["rr"] * 4 + ["latency"] * 4
    assert table.column("t_s").to_pylist()[:4] == [0.5, 0.5, 1.0, 1.0]


def test_parquet_bytes_are_deterministic(doc: dict[str, Any], tmp_path: Path) -> None:
    _write(doc, tmp_path / "a")
    later = datetime(2030, 1, 1, tzinfo=UTC)
    (tmp_path / "b").mkdir()
    write_run_folder(doc, tmp_path / "b", argv=["other"], started=later, wall_s=9.0)
    for name in ("summary.parquet", "timeseries.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_timeseries_columns_of_different_length_are_refused(doc: dict[str, Any], tmp_path: Path) -> None:
    doc["variants"][0]["timeseries"]["value"].pop()
    with pytest.raises(ValueError, match="differ in length"):
        _write(doc, tmp_path / "run")


def test_safe_name_is_the_engines_rule() -> None:
    assert safe_name("metro_cluster_psp") == "metro_cluster_psp"
    assert safe_name("job 1/a") == "job_1_a"
    assert safe_name("a_ b") == "a__b"
    with pytest.raises(sanlab.ScenarioError, match="gives no file name"):
        safe_name("..")
    with pytest.raises(sanlab.ScenarioError, match="300 characters long"):
        safe_name("x" * 300)


def test_prepare_out_dir_refuses_a_folder_with_files(tmp_path: Path) -> None:
    prepare_out_dir(tmp_path / "new" / "run")
    assert (tmp_path / "new" / "run").is_dir()
    (tmp_path / "new" / "run" / "old.txt").write_text("x")
    with pytest.raises(FileExistsError, match="not empty"):
        prepare_out_dir(tmp_path / "new" / "run")


def test_default_out_dir_is_unique(tmp_path: Path) -> None:
    first = new_default_out_dir(tmp_path / "runs", "metro", STARTED)
    second = new_default_out_dir(tmp_path / "runs", "metro", STARTED)
    assert first.name == "metro-20261121T200905Z"
    assert second.name == "metro-20261121T200905Z-2"
