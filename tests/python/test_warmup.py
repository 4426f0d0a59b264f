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
from sanlab.replications import transient_past_warmup

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


def _variant(values: list[float], warmup_s: float = 0.0, fault_s: float | None = None) -> dict:
    """A variant whose device `d` has `values` as its IOPS series, one sample a second."""
    times = [float(t) for t in range(1, len(values) + 1)]
    return {
        "name": "v",
        "sim_time_s": times[-1],
        "measured_s": times[-1] - warmup_s,
        "faults": [] if fault_s is None else [{"t_s": fault_s, "phase": "start"}],
        "timeseries": {"t_s": times, "entity": ["device/d"] * len(times), "metric": ["iops"] * len(times), "value": values},
    }


def _steady(count: int, level: float = 1000.0) -> list[float]:
    """A steady series with a little deterministic noise (±1 %)."""
    return [level * (1 + 0.01 * ((7 * i) % 5 - 2) / 2) for i in range(count)]


def test_a_warmup_shorter_than_the_transient_is_said_with_where_it_settles() -> None:
    ramp = [50.0 * (i + 1) for i in range(20)] + _steady(80)
    found = transient_past_warmup(_variant(ramp, warmup_s=5))
    assert found is not None and found.series == "device/d iops"
    assert 20 <= found.end_s <= 25 and found.shift < -0.05, found
    # A warm-up past the transient, a steady series and a step at a fault say nothing.
    assert transient_past_warmup(_variant(ramp, warmup_s=25)) is None
    assert transient_past_warmup(_variant(_steady(100))) is None
    step = _steady(60) + _steady(40, level=100.0)
    assert transient_past_warmup(_variant(step, fault_s=60.0)) is None


def test_every_run_says_when_its_warmup_is_shorter_than_its_transient(cli: CliRunner, tmp_path: Path) -> None:
    """The cache filling until 26.2 s under a warm-up of 0 s: the terminal and results.json say
    so, with where the transient ends; a warm-up past it says nothing."""
    shown = cli("run", str(CACHE_FILL), "--seed", "2", "--out", str(tmp_path / "short"))
    notes = json.loads((tmp_path / "short" / "results.json").read_text())["notes"]
    said = [note for note in notes if "shorter than the transient" in note]
    assert len(said) == 1 and "warm-up (0 s)" in said[0] and "--warmup auto" in said[0], notes
    settles_s = float(said[0].split("settles at ")[1].split(" s")[0])
    assert FILLED_S <= settles_s <= 1.2 * FILLED_S, said
    assert said[0] in shown.stderr.replace("note: ", "")
    long = cli("run", str(CACHE_FILL), "--seed", "2", "--set", "run.warmup=32s", "--json")
    assert not [note for note in json.loads(long.stdout).get("notes", []) if "transient" in note]
