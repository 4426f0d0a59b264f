"""`sanlab run --warmup auto`: a pilot without warm-up, MSER-5 on each VM's and device's series,
the largest truncation becomes the run's warm-up; it finds a transient known analytically within
10 %, finds little in a steady run and never cuts into a fault."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from sanlab import engine
from sanlab.analysis.warmup import find_warmup

ROOT = Path(__file__).resolve().parents[2]
CACHE_FILL = ROOT / "tests" / "data" / "scenarios" / "cache_fill.toml"
NOISE = ROOT / "scenarios" / "examples" / "noise.toml"

CliRunner = Callable[..., subprocess.CompletedProcess[str]]


def _run(cli: CliRunner, *args: str) -> dict:
    shown = cli("run", *args, "--warmup", "auto", "--json")
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


FILLED_S = 16 * 2**30 / (80_000 * 8192)
"""When the cache is full: its size over the rate it fills at, 26.2 s."""


def test_the_transient_of_a_cache_filling_is_never_cut_short_and_mostly_within_10_percent() -> None:
    """Five seeds: MSER-5 never ends the warm-up before the cache is full; it errs long, by a batch
    or two of noise, and is within 10 % of the analytic point on at least four of them."""
    found = []
    for seed in range(1, 6):
        pilot = engine.run(CACHE_FILL, sets=["run.sample_interval=200ms"], seed=seed)
        found.append(find_warmup(pilot, 0.2).found_s)
    assert all(found_s >= FILLED_S for found_s in found), found
    assert sum(found_s <= 1.1 * FILLED_S for found_s in found) >= 4, found


def test_run_warmup_auto_cuts_what_it_found(cli: CliRunner) -> None:
    doc = _run(cli, str(CACHE_FILL), "--seed", "2")
    found = doc["warmup"]
    assert found["method"] == "MSER-5" and found["configured_s"] == [0.0] and found["pilot_sample_interval_s"] == 0.2
    assert FILLED_S <= found["found_s"] <= 1.1 * FILLED_S, found
    # The run that follows measures from there on.
    variant = doc["variants"][0]
    assert variant["sim_time_s"] - variant["measured_s"] == round(found["found_s"], 6)
    assert variant["vms"][0]["iops"] < 1_000, "past the warm-up, the disks' pace"


def test_a_steady_run_gets_a_short_warmup(cli: CliRunner) -> None:
    found = _run(cli, str(NOISE), "--duration", "10s")["warmup"]
    assert found["found_s"] <= 1.0, found


def test_a_fault_is_not_a_transient(cli: CliRunner, tmp_path: Path) -> None:
    """A path down at 10 s, before the cache is full: the warm-up stops at the fault."""
    fault = 'event=[{ kind = "path_down", path = "h-clariion", at = "10s", until = "11s" }]'
    shown = cli("run", str(CACHE_FILL), "--set", fault, "--warmup", "auto", "--out", str(tmp_path / "run"))
    found = json.loads((tmp_path / "run" / "results.json").read_text())["warmup"]
    assert found["found_s"] == 10.0 and found["capped_at_fault_s"] == 10.0, found
    assert "warm-up: 10 s found by MSER-5" in shown.stdout and "cut at the first fault, 10 s" in shown.stdout
