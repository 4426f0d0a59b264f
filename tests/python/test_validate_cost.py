"""`sanlab validate` prints what a run will cost and warns when it needs more memory than the machine has."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

import sanlab

CliRunner = Callable[..., subprocess.CompletedProcess[str]]

METRO_STUDY = Path(__file__).resolve().parents[2] / "scenarios" / "studies" / "metro_cluster_psp.toml"
MEMORY_ENV = "SANLAB_TEST_MEMORY_BYTES"
"""Stands in for /proc/meminfo in tests (crates/sanlab-scenario/src/cost.rs)."""


def test_validate_returns_the_estimate_and_only_checks_without_it() -> None:
    checked = sanlab.validate(METRO_STUDY, set={"run.duration": "10s"}, variants="alua_rr")
    cost = checked["cost"]
    [variant] = cost["variants"]
    assert variant["name"] == "alua_rr"
    assert variant["sim_time_s"] == 10.0
    # A steady closed loop: about 14,100 IOPS, eight events per I/O (docs/robustness.md).
    assert 130_000 < cost["ios"] < 150_000
    assert 7 < cost["events"] / cost["ios"] < 9
    assert cost["peak_memory_bytes"] > variant["engine_bytes"] + variant["results_bytes"]
    assert "cost" not in sanlab.validate(METRO_STUDY, cost=False)


def test_validate_prints_the_cost(cli: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MEMORY_ENV, str(10**15))
    result = cli("validate", str(METRO_STUDY), "--variant", "alua_rr", "--set", "run.duration=10s")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0].startswith("ok: metro_cluster_psp")
    assert "what running it costs (estimated" in lines[1]
    header = lines[2].split()
    assert header[:5] == ["variant", "simulated", "s", "I/Os", "events"]
    row = next(line.split() for line in lines if line.split()[:1] == ["alua_rr"])
    assert row[1] == "10"
    assert 130_000 < int(row[2].replace(",", "")) < 150_000
    assert "peak memory (estimated):" in lines[-1]
    assert "this machine has 1,000,000.0 GB available of 1,000,000.0 GB" in lines[-1]


def test_validate_warns_when_the_machine_has_less_memory(
    cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MEMORY_ENV, str(50_000_000))
    result = cli("validate", str(METRO_STUDY), "--variant", "alua_rr")
    assert result.returncode == 0, result.stderr
    [warning] = result.stderr.splitlines()
    assert warning.startswith("warning: the run needs about ")
    assert "more than this machine has (50.0 MB)" in warning
    assert "sanlab itself" in warning
    # No pilot when the engine's state would not fit: what it would measure is unknown.
    row = next(line.split() for line in result.stdout.splitlines() if line.split()[:1] == ["alua_rr"])
    assert row[2:5] == ["unknown", "unknown", "unknown"]


def test_a_series_near_its_limit_warns_on_this_machine(
    cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An hour sampled every 2.2 ms, just within the engine's series limit (each device's read and
    # write series included): 1.6 M samples, about 1 GB in the engine and tens of GB of results,
    # more than nearly any machine has.
    monkeypatch.delenv(MEMORY_ENV, raising=False)
    sets = ["run.duration=3600s", "run.sample_interval=2200us"]
    cost = sanlab.validate(METRO_STUDY, set=sets, variants="alua_rr")["cost"]
    machine = cost["machine"]
    if machine is None:
        pytest.skip("this machine's memory cannot be read (no /proc/meminfo)")
    assert cost["peak_memory_bytes"] > 50e9
    result = cli("validate", str(METRO_STUDY), "--variant", "alua_rr", *(f"--set={s}" for s in sets))
    assert result.returncode == 0, result.stderr
    if cost["peak_memory_bytes"] > machine["available_bytes"]:
        [warning] = result.stderr.splitlines()
        assert "raise run.sample_interval" in warning
    else:
        assert result.stderr == ""


def test_a_file_without_variants_is_validated_as_the_one_variant_run_runs(cli: CliRunner) -> None:
    """`run` reports one variant, `base`, for a file without [[variant]]; validate says the same."""
    done = cli("validate", "tests/data/scenarios/one_vm.toml")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "ok: one_vm (1 variant: base)"


def test_the_runs_of_a_large_vdbench_file_share_the_pilots(
    cli: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real parameter file of 640 runs (tests/data/vdbench/SOURCES.md), each a variant: every
    run gets its estimate and the output says how short each pilot was."""
    monkeypatch.setenv(MEMORY_ENV, str(10**15))
    root = Path(__file__).resolve().parents[2]
    series = (root / "scenarios" / "examples" / "vdbench_series.toml").read_text()
    parm = root / "tests" / "data" / "vdbench" / "poseidonos_test_1ms.vd"
    scenario = tmp_path / "test_1ms.toml"
    scenario.write_text(series.replace('file = "parm/series.vdb"', f'file = "{parm}"'))
    cost = sanlab.validate(scenario)["cost"]
    assert len(cost["variants"]) == 640
    assert all(variant["ios"] for variant in cost["variants"])
    assert sum(variant["pilot_events"] for variant in cost["variants"]) < 2 * 640 * cost["pilot_events"]
    result = cli("validate", str(scenario))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("ok: vdbench_series (640 variants: seq_r xfersize=4k rdpct=100 threads=1, ")
    pilots = next(line for line in lines if line.startswith("pilots: "))
    assert f"pilots: {cost['pilot_events']:,} simulator events or 1 s of wall time each" in pilots


def test_an_address_space_limit_bounds_the_memory_validate_checks_against() -> None:
    """Memory admission read /proc/meminfo alone: under `ulimit -v` (or a cgroup's memory.max) the
    machine's gigabytes are not this process's."""
    import resource
    import subprocess
    import sys

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    done = subprocess.run(
        [sys.executable, "-m", "sanlab.cli", "validate", str(METRO_STUDY)],
        capture_output=True, text=True, timeout=300, check=False, preexec_fn=limited,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "of 3.2 GB (the limit of RLIMIT_AS, ulimit -v)" in done.stdout, done.stdout
