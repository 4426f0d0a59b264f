"""End to end through the native engine on the metro cluster study (short simulated durations)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

import sanlab

pytestmark = pytest.mark.e2e

CliRunner = Callable[..., subprocess.CompletedProcess[str]]

METRO_STUDY = Path(__file__).resolve().parents[2] / "scenarios" / "studies" / "metro_cluster_psp.toml"
METRO_VARIANTS = {"rr_iops1", "alua_rr", "latency", "fixed", "mru"}
DOCUMENT_KEYS = {"scenario", "file", "scenario_sha256", "version", "cancelled", "variants"}
VARIANT_KEYS = {
    "name", "description", "seed", "replication", "sim_time_s", "measured_s", "wall_s", "events", "ios", "seed_matters",
    "hosts", "vms", "jobs", "paths", "devices", "volumes", "arrays", "psp_events", "links", "faults", "conservation",
}  # fmt: skip
LAT_MS_KEYS = {"mean", "p50", "p95", "p99", "p999", "max"}
SHORT_DURATION = "4s"  # simulated; the study's warmup is 2 s


def _ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, result.stderr
    return result


def _without_wall_time(document: dict[str, Any]) -> dict[str, Any]:
    for variant in document["variants"]:
        del variant["wall_s"]
    return document


def test_run_writes_the_run_folder(cli: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "tmp"
    result = _ok(cli("run", str(METRO_STUDY), "--duration", "5s", "--out", str(out)))
    for variant in METRO_VARIANTS:
        assert variant in result.stdout
    assert f"run folder: {out}" in result.stdout

    manifest = json.loads((out / "manifest.json").read_text())
    assert {v["name"] for v in manifest["variants"]} == METRO_VARIANTS
    assert all(isinstance(v["seed"], int) for v in manifest["variants"])
    assert re.fullmatch(r"[0-9a-f]{64}", manifest["scenario_sha256"])
    for name in manifest["files"]:
        assert (out / name).is_file(), name
    for variant in METRO_VARIANTS:
        assert (out / variant / "scenario.resolved.toml").read_text().strip()
        fio_files = sorted((out / variant / "fio").glob("*.json"))
        assert fio_files, variant
        fio = json.loads(fio_files[0].read_text())
        assert fio["fio version"].startswith("sanlab-")
        assert fio["jobs"][0]["write"]["total_ios"] > 0

    summary = pq.read_table(out / "summary.parquet")
    assert summary.schema.names == ["variant", "replication", "entity_kind", "entity", "metric", "value"]
    assert set(summary.column("variant").to_pylist()) == METRO_VARIANTS
    timeseries = pq.read_table(out / "timeseries.parquet")
    assert timeseries.schema.names == ["variant", "replication", "t_s", "entity", "metric", "value"]
    assert timeseries.num_rows > 0


def test_json_output_has_the_contract_keys(cli: CliRunner, tmp_path: Path) -> None:
    result = _ok(cli("run", str(METRO_STUDY), "--duration", SHORT_DURATION, "--json", cwd=tmp_path))
    document = json.loads(result.stdout)
    assert set(document) == DOCUMENT_KEYS
    assert {variant["name"] for variant in document["variants"]} == METRO_VARIANTS
    for variant in document["variants"]:
        assert set(variant) == VARIANT_KEYS, variant["name"]
        # Fixed delays and arrays that ignore offsets: no seed changes these figures.
        assert variant["seed_matters"] is False, variant["name"]
        for vm in variant["vms"]:
            assert set(vm["lat_ms"]) == LAT_MS_KEYS
        for component in variant["conservation"]:
            assert component["issued"] == component["completed"] + component["in_flight"], component
    assert not (tmp_path / "runs").exists(), "--json without --out writes no run folder"


def test_same_seed_gives_the_same_results(cli: CliRunner) -> None:
    args = ("run", str(METRO_STUDY), "--duration", SHORT_DURATION, "--seed", "42", "--json")
    first = json.loads(_ok(cli(*args)).stdout)
    second = json.loads(_ok(cli(*args)).stdout)
    assert _without_wall_time(first) == _without_wall_time(second)


def test_unknown_set_key_names_its_location(cli: CliRunner, tmp_path: Path) -> None:
    result = cli(
        "run", str(METRO_STUDY), "--duration", SHORT_DURATION, "--set", "run.no_such_key=1", cwd=tmp_path
    )
    assert result.returncode == 2
    assert result.stderr.startswith("error: ")
    assert "no_such_key" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "runs").exists()


def test_validate_rejects_an_unknown_top_level_key(cli: CliRunner, tmp_path: Path) -> None:
    scenario = tmp_path / "typo.toml"
    scenario.write_text("no_such_key = 1\n" + METRO_STUDY.read_text())
    result = cli("validate", str(scenario))
    assert result.returncode == 2
    assert result.stderr.startswith("error: ")
    assert "no_such_key" in result.stderr
    assert "Traceback" not in result.stderr


def test_validate_lists_the_variants(cli: CliRunner) -> None:
    result = _ok(cli("validate", str(METRO_STUDY)))
    for variant in METRO_VARIANTS:
        assert variant in result.stdout


def test_missing_scenario_file_is_named(cli: CliRunner, tmp_path: Path) -> None:
    result = cli("run", str(tmp_path / "missing_scenario.toml"))
    assert result.returncode == 2
    assert "missing_scenario.toml" in result.stderr
    assert "Traceback" not in result.stderr


def test_kinds_lists_the_round_robin_policies(cli: CliRunner) -> None:
    result = _ok(cli("kinds"))
    words = set(re.findall(r"[\w.]+", result.stdout))
    assert {"rr", "rr_latency"} <= words


def test_python_api(tmp_path: Path) -> None:
    kinds = {entry["kind"] for entry in sanlab.kinds()}
    assert {"rr", "rr_latency"} <= kinds
    assert set(sanlab.validate(METRO_STUDY)["variants"]) == METRO_VARIANTS

    results = sanlab.run(METRO_STUDY, variants="fixed", duration=SHORT_DURATION, seed=3)
    assert results.variants == ["fixed"]
    for frame in (results.vms, results.paths, results.devices, results.arrays, results.jobs):
        assert not frame.empty
        assert set(frame["variant"]) == {"fixed"}
    conservation = results.conservation
    assert (conservation["issued"] == conservation["completed"] + conservation["in_flight"]).all()
    assert set(results.timeseries["variant"]) == {"fixed"}


def test_python_api_reports_bad_overrides() -> None:
    with pytest.raises(sanlab.ScenarioError, match="no_such_key"):
        sanlab.validate(METRO_STUDY, set={"run.no_such_key": 1})
