"""Where a VM's latency goes: its own queues, the device queue (KAVG) and past it (DAVG) add up to
its mean latency, with requests cut at both of the host's split points and retried after a path
goes down; the guest queue's share obeys Little's law; the terminal, the replications and the
report carry them."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from sanlab import engine
from sanlab.formatting import format_ms
from sanlab.replications import combine

ROOT = Path(__file__).resolve().parents[2]
STAGES = ROOT / "tests" / "data" / "scenarios" / "latency_stages.toml"
NOISY = ROOT / "scenarios" / "studies" / "noisy_neighbor.toml"
CACHE_FILL = ROOT / "tests" / "data" / "scenarios" / "cache_fill.toml"

CliRunner = Callable[..., subprocess.CompletedProcess[str]]


def _sum(vm: dict) -> float:
    stages = vm["stages_ms"]
    assert stages["fabric"] + stages["array"] == pytest.approx(stages["davg"], rel=1e-12), stages
    parts = stages["array_front_end"] + stages["array_cores"] + stages["array_cache"] + stages["array_media"]
    assert parts == pytest.approx(stages["array"], rel=1e-12), stages
    return stages["vm_queues"] + stages["kavg"] + stages["davg"]


@pytest.mark.parametrize(("scenario", "duration"), [(STAGES, None), (NOISY, "12s")])
def test_the_stages_add_up_to_each_vms_mean_latency(scenario: Path, duration: str | None) -> None:
    doc = engine.run(scenario, duration=duration)
    for variant in doc["variants"]:
        for vm in variant["vms"]:
            assert all(value >= 0 for value in vm["stages_ms"].values()), vm
            assert _sum(vm) == pytest.approx(vm["lat_ms"]["mean"], rel=1e-12), (variant["name"], vm)
    if scenario == STAGES:
        # Unloaded, guest_bound's 4 KiB read would spend 2 × 50 us on the links and 4 KiB at
        # 16 Gb/s (2 us) outside the array; large's 32 KiB pieces on the same links add queueing.
        guest_bound = doc["variants"][0]["vms"][0]
        assert 0.102 <= guest_bound["stages_ms"]["fabric"] <= 0.15, guest_bound["stages_ms"]

def test_the_guest_queue_holds_what_its_depth_turns_away_by_littles_law() -> None:
    """`guest_bound` keeps 16 requests outstanding through a virtual disk queue of 4: 12 always wait
    there, so their wait is 12 / X (X the VM's completions per second) and the whole mean 16 / X.
    `large` (iodepth 8 under the default depth of 64) never waits there. Requests of `large` are cut
    at 64 KiB and 32 KiB, and both VMs see retries when the path goes down."""
    variant = engine.run(STAGES, variants=["path_down"])["variants"][0]
    guest_bound, large = variant["vms"]
    throughput = guest_bound["completed"] / variant["sim_time_s"]  # the run's own rate, warm-up too
    assert guest_bound["stages_ms"]["vm_queues"] == pytest.approx(12 / throughput * 1e3, rel=0.01)
    assert guest_bound["lat_ms"]["mean"] == pytest.approx(16 / throughput * 1e3, rel=0.01)
    assert large["stages_ms"]["vm_queues"] == 0.0 and large["stages_ms"]["kavg"] > 0.5
    assert guest_bound["retried"] > 0 and large["retried"] > 0
    for row in variant["conservation"]:
        assert row["issued"] == row["completed"] + row["failed"] + row["in_flight"], row


def test_replications_average_the_stages_so_they_still_add_up() -> None:
    combined = combine(engine.run(STAGES, replications=3))
    for vm in combined["variants"][0]["vms"]:
        assert _sum(vm) == pytest.approx(vm["lat_ms"]["mean"], rel=1e-12), vm


def test_the_terminal_and_the_report_show_the_stages(cli: CliRunner, tmp_path: Path) -> None:
    shown = cli("run", str(STAGES), "--verbose", "--out", str(tmp_path / "run"))
    assert shown.returncode == 0, shown.stderr
    assert "VMs: where the latency goes" in shown.stdout and "cache" in shown.stdout and "media" in shown.stdout
    doc = json.loads((tmp_path / "run" / "results.json").read_text())
    guest_bound = doc["variants"][1]["vms"][0]
    assert f" {format_ms(guest_bound['stages_ms']['vm_queues'])} " in shown.stdout
    page = (tmp_path / "run" / "report.html").read_text()
    assert 'id="stages"' in page and f">{format_ms(guest_bound['stages_ms']['kavg'])}<" in page


def test_a_write_the_write_back_cache_acknowledges_is_cache_time_and_the_cache_fills_linearly() -> None:
    """cache_fill.toml's first 10 s: every write is acknowledged by the write-back cache after its
    100 µs (none waits for the disks before 26.2 s), so the array's time is cache time and none is
    media time; the cache fills at a steady rate from empty, so its time-averaged fullness is half
    of its fullness at the end."""
    variant = engine.run(CACHE_FILL, duration="10s")["variants"][0]
    stages = variant["vms"][0]["stages_ms"]
    assert stages["array_media"] == 0.0
    assert stages["array_cache"] == pytest.approx(0.1, rel=1e-6), stages
    assert _sum(variant["vms"][0]) == pytest.approx(variant["vms"][0]["lat_ms"]["mean"], rel=1e-12)
    group = variant["arrays"][0]["disk_group"]
    assert group["writes_waited"] == 0 and group["dirty_bytes_now"] > 0
    assert group["dirty_bytes_mean"] == pytest.approx(group["dirty_bytes_now"] / 2, rel=0.02)
