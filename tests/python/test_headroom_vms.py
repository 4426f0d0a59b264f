"""`sanlab headroom --grow vms` (how many VMs), `--judge` (the VMs the SLOs judge apart from those
that grow) and `--growth` (the time until the SLOs break), against M/M/1: every VM of
headroom_neighbours.toml sends Poisson arrivals into one exponential 100 µs server, so each sees
the mean response time 1 / (μ − λ) of the total rate λ.

Noise: 4 s per point (3 s measured, 3,000 to 27,000 I/Os a VM), 3 to 12 seeds a point."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from sanlab import engine
from sanlab.headroom.timeline import GrowthRateError, parse_growth, time_line
from sanlab.headroom.vms import VmGrowth, copy_names, scenario_text
from test_headroom import ROOT, _headroom

NEIGHBOURS = ROOT / "tests" / "data" / "scenarios" / "headroom_neighbours.toml"
NOISY = ROOT / "scenarios" / "studies" / "noisy_neighbor.toml"
METRO = ROOT / "scenarios" / "studies" / "metro_cluster_psp.toml"
IDLE = ROOT / "tests" / "data" / "scenarios" / "headroom_idle.toml"
FAST = ["--duration", "4s", "--seed", "1"]


def test_growth_rate_and_its_time() -> None:
    rate = parse_growth("4%/month")
    assert (rate.share, rate.period) == (0.04, "month")
    assert rate.periods_to(2.7) == pytest.approx(math.log(2.7) / math.log(1.04))  # 25.3 months
    assert parse_growth(" 10 % / year ").periods_to(1.1) == pytest.approx(1.0)
    doc = {"factor": 2.0, "factor_ci95": [1.9, 2.1], "bracket": [1.98, 2.02]}
    found = parse_growth("2%/week").answer(doc)
    assert found["periods"] == pytest.approx(35.0, abs=0.01)
    low, high = found["periods_ci95"]
    assert low == pytest.approx(math.log(1.9) / math.log(1.02)) and high > found["periods"] > low
    assert time_line(found, "the SLO p99 ≤ 1 ms", True) == (
        "at 2%/week compound growth, the SLO p99 ≤ 1 ms breaks in 35.0 weeks (95 % interval 32.4 to 37.5)"
    )
    none = parse_growth("2%/week").answer({"factor": None, "factor_ci95": None, "bracket": [1024, None]})
    assert "at_least_periods" in none and "periods" not in none


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("4%", "expected PERCENT%/PERIOD"),
        ("4%/fortnight", "unknown period 'fortnight'"),
        ("0%/year", "never reaches"),
    ],
)
def test_growth_rate_errors_are_one_line(text: str, said: str) -> None:
    with pytest.raises(GrowthRateError) as caught:
        parse_growth(text)
    message = str(caught.value)
    assert message.startswith(f"--growth {text!r}: ") and said in message and "\n" not in message


def test_copies_round_robin_and_the_written_scenario_reads_back() -> None:
    assert copy_names(["db", "web"], ["db", "web", "web-copy1"], 3) == [
        ("db", "db-copy1"), ("web", "web-copy2"), ("db", "db-copy2"),
    ]  # fmt: skip
    table = {"name": "s", "run": {"duration": "1s"}, "vm": [{"name": "a", "job": [{"bs": "4k"}]}]}
    assert tomllib.loads(scenario_text(table)) == table


def test_copies_spread_over_the_hosts_as_today(tmp_path: Path) -> None:
    """The noisy neighbour with its good VM on the second host: copies land on their VM's host and
    volume, named jobs renamed, relative to nothing; the file passes the engine's checks."""
    doc = engine.run(NOISY, ["two_hosts"], ["run.warmup=0s"], 1, "1s")
    today = doc["variants"][0]
    growth = VmGrowth(
        str(NOISY), "two_hosts", ("run.warmup=0s",), today["resolved"], ("bad", "good"), ("good",),
        tmp_path, open_loop=False,
    )  # fmt: skip
    setup, factor = growth.setup(2.0)
    assert factor == 2.0 and setup.vms == 4 and setup.variant == "base" and setup.base_sets == ()
    assert setup.grown == ("bad", "good", "bad-copy1", "good-copy1")
    assert setup.judged == ("good", "good-copy1")  # the judged VM's copies are judged too
    written = tomllib.loads(Path(setup.scenario).read_text(encoding="utf-8"))
    placed = {vm["name"]: (vm["host"], vm["volume"], vm["job"][0]["name"]) for vm in written["vm"]}
    assert placed["bad-copy1"] == ("esx1", "bad_vvol", "randwrite-bad-copy1")
    assert placed["good-copy1"] == ("esx2", "good_vvol", "ioping-good-copy1")
    assert growth.setup(1.0)[0].scenario == str(NOISY)  # today: the scenario as given
    assert growth.setup(1.9)[0] == setup  # 3.8 VMs round to 4: the same point


def test_how_many_vms_meet_the_slo(tmp_path: Path) -> None:
    """Copies of `grower` at 1,000 IOPS beside `judged` at 1,000: n grown VMs offer
    1,000 (n + 1) IOPS, so mean ≤ 0.6 ms holds for n = 7 (0.5 ms) and fails at 8 (1 ms)."""
    doc = _headroom(
        str(NEIGHBOURS), "--vm", "grower", "--grow", "vms", "--slo", "mean<=0.6ms",
        "--set", "vm[0].job[0].rate_iops=1000", "--growth", "10%/year", *FAST, out=tmp_path / "h",
    )  # fmt: skip
    assert doc["vms"] == 7 and doc["vms_today"] == 1 and doc["judged_vms"] == ["grower"]
    counts = sorted(point["vms"] for point in doc["curve"])
    assert 7 in counts and 8 in counts and all(isinstance(count, int) for count in counts)
    assert [point["factor"] for point in doc["curve"]] == sorted(point["factor"] for point in doc["curve"])
    assert doc["bracket"] == [7.0, 8.0] and doc["limit_iops"] == pytest.approx(7000, rel=0.03)
    at_seven = next(point for point in doc["curve"] if point["vms"] == 7)
    assert at_seven["iops"]["mean"] == pytest.approx(7000, rel=0.03)
    assert at_seven["worst_vm"]["mean<=0.6ms"].startswith("grower")
    assert doc["at_limit_scenario"] == str(tmp_path / "h" / "vms-7.toml")
    engine.validate(doc["at_limit_scenario"])  # the scenario at the limit runs as it is
    assert doc["time_to_limit"]["periods"] == pytest.approx(math.log(doc["factor"]) / math.log(1.1))


def test_judged_vm_apart_from_the_grown_one(tmp_path: Path) -> None:
    """`grower` grows from 2,000 IOPS; `judged` (1,000) is judged: mean ≤ 0.5 ms holds while the
    total is at most 8,000, so the grower reaches 7,000 IOPS (×3.5). The operational-law bound
    leaves the judged VM its 1,000: 9,000."""
    doc = _headroom(
        str(NEIGHBOURS),
        "--vm",
        "grower",
        "--judge",
        "judged",
        "--slo",
        "mean<=0.5ms",
        *FAST,
        out=tmp_path / "h",
    )
    assert doc["grown_vms"] == ["grower"] and doc["judged_vms"] == ["judged"] and doc["vms"] is None
    assert doc["factor"] == pytest.approx(3.5, rel=0.03) and doc["limit_iops"] == pytest.approx(
        7000, rel=0.03
    )
    assert doc["bound"]["iops"] == pytest.approx(9000, rel=0.03) and doc["bound"]["holds"] is True
    assert all(set(point["worst_vm"].values()) == {"judged"} for point in doc["curve"])


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--judge", "nobody"], "error: --judge nobody: no VM of that name in"),
        (["--growth", "4 percent"], "error: --growth '4 percent': expected PERCENT%/PERIOD"),
    ],
)
def test_bad_options_are_one_line(tmp_path: Path, args: list[str], said: str) -> None:
    command = [
        sys.executable,
        "-m",
        "sanlab.cli",
        "headroom",
        str(NEIGHBOURS),
        "--slo",
        "p99<=1ms",
        *args,
        "--out",
        str(tmp_path / "x"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(said)
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("variant", ["shared_pe", "shared_pe_esxi"])
def test_noisy_neighbour_grows_until_the_shared_queue_is_full(tmp_path: Path, variant: str) -> None:
    """The noisy neighbour's question (docs/studies/noisy_neighbor.md): the QoS-capped VM's 40
    writes as one job, so its outstanding I/Os grow one by one. The shared PE device is clamped to
    DSNRO = 32 slots: at 31 outstanding one slot stays free for the good VM's probe (its 0.30 ms),
    at 32 the probe waits for a held write to leave, under FIFO and under ESXi's scheduler alike."""
    doc = _headroom(
        str(NOISY), "--variant", variant, "--vm", "bad", "--judge", "good", "--slo", "p99<=1ms",
        "--set", "vm[0].job[0].numjobs=1", "--set", "vm[0].job[0].iodepth=40", out=tmp_path / variant,
    )  # fmt: skip
    assert doc["at_limit"] == ["vm[0].job[0].iodepth=31"]
    p99 = {tuple(point["sets"]): point["figures"]["p99<=1ms"]["mean"] for point in doc["curve"]}
    assert p99[("vm[0].job[0].iodepth=31",)] == pytest.approx(0.30, abs=0.02)
    assert p99[("vm[0].job[0].iodepth=32",)] > 30  # most of one 39 ms slot cycle
    # The capped VM's QoS releases at its rate (burst credit left in a 20 s run: 2,000 units/s,
    # 512 KiB writes split in four 128 KiB requests of 19.5 units): it is saturated from today on,
    # and bounds the VM's IOPS where they are; the shared queue, clamped by DSNRO, is next.
    assert (doc["bottleneck"]["kind"], doc["bottleneck"]["name"]) == ("volume QoS", "bad_vvol")
    assert doc["bottleneck"]["utilisation"] == pytest.approx(1.0, abs=0.03)
    assert doc["bound"]["iops"] == pytest.approx(25.6, rel=0.03) and doc["bound"]["holds"] is True
    queue = next(item for item in doc["utilisation"]["limit"] if item["kind"] == "device queue")
    assert queue["name"] == "esx1/esx1:sf1-pe" and queue["limit"].startswith("DSNRO 32")
    # Every server the judged VM crosses is shared with the VM that is not judged: no R >= D.
    assert doc["response_bound"]["ms"] is None


def test_metro_cluster_takes_one_more_vm_said_on_the_terminal(tmp_path: Path) -> None:
    """The metro study under ALUA (docs/studies/metro_cluster_psp.md): each VM keeps 32 writes
    outstanding at 2.263 ms. With a second VM on the device ESXi clamps its queue to DSNRO = 32,
    so the device still completes 32 / 2.263 ms = 14,143 writes a second and n VMs' writes take
    32 n / 14,143: 4.53 ms for two, 6.79 ms for three."""
    command = [
        sys.executable, "-m", "sanlab.cli", "headroom", str(METRO), "--variant", "alua_rr", "--grow", "vms",
        "--slo", "p99<=5ms", "--duration", "4s", "--out", str(tmp_path / "m"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert "the SLO p99 ≤ 5 ms holds up to 2 VMs, 14,14" in done.stdout  # 32 / 2.263 ms, to the I/O
    assert "IOPS (today's 1 and 1 more); 3 do not" in done.stdout
    assert f"at the limit: sanlab run {tmp_path / 'm' / 'vms-2.toml'}" in done.stdout
    assert (
        "first to saturate: device queue `esx1/metro_vol` (utilisation 1.00 at the limit; DQLEN set by DSNRO 32: "
        "the LUN depth 64 clamped while VMs compete)" in done.stdout
    )


def test_idle_vms_are_left_out_by_default_and_said(tmp_path: Path) -> None:
    """headroom_idle.toml: `busy` at 2,000 IOPS on an M/M/1 server, `late` starting after the run
    and `early` stopping within the warm-up. By default only `busy` grows and is judged (an idle VM
    would count as a load that did not grow at every point: nothing would grow), so mean ≤ 0.5 ms
    holds up to 1 / (μ − λ) = 0.5 ms at 8,000 IOPS; the note names both idle VMs and why."""
    doc = _headroom(str(IDLE), "--slo", "mean<=0.5ms", *FAST, out=tmp_path / "h")
    assert doc["grown_vms"] == ["busy"] and doc["judged_vms"] == ["busy"]
    assert doc["limit_iops"] == pytest.approx(8000, rel=0.03) and doc["limited_by"] == "slo"
    note = next(note for note in doc["notes"] if "left out" in note)
    assert note.startswith("VMs late, early left out of the grown and judged VMs: no I/O today")
    assert "late: no I/O issued in the 4 s run, startdelay 100s" in note
    assert "early: no I/O completed after the 1 s warm-up" in note
    # Named VMs are what was asked for: no note.
    named = _headroom(
        str(IDLE), "--vm", "busy", "--slo", "mean<=0.5ms", "--max-runs", "3", *FAST, out=tmp_path / "n"
    )
    assert not any("left out" in note for note in named["notes"])


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--vm", "late"], "error: --vm late: VM late issues no I/O in "),
        (["--judge", "early"], "error: --judge early: VM early issues no I/O in "),
    ],
)
def test_a_named_idle_vm_is_a_one_line_error(tmp_path: Path, args: list[str], said: str) -> None:
    command = [
        sys.executable, "-m", "sanlab.cli", "headroom", str(IDLE), "--slo", "mean<=0.5ms", *args,
        *FAST, "--out", str(tmp_path / "x"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith(said) and done.stderr.rstrip().endswith(
        "expected a VM that issues I/O: busy"
    )
    assert not (tmp_path / "x").exists()


CROWDED = ROOT / "tests" / "data" / "scenarios" / "headroom_crowded.toml"


def test_fewer_vms_when_todays_count_fails(tmp_path: Path) -> None:
    """headroom_crowded.toml: `a`, `b`, `c` at 1,000 IOPS and `heavy` at 4,000 on one M/M/1 server.
    Today's 4 VMs see 1 / (μ − 7,000/s) = 0.333 ms, over mean ≤ 0.2 ms: the search goes down,
    dropping the last grown VM first. 3 VMs (a, b, c: 3,000 IOPS) see 0.143 ms and hold; the
    count that fails above them is today's. Their IOPS are 3/7 of today's, not 3/4: the load they
    should deliver is their own, so the point is not taken for a load that stopped growing."""
    doc = _headroom(str(CROWDED), "--grow", "vms", "--slo", "mean<=0.2ms", *FAST, out=tmp_path / "h")
    assert doc["today"]["holds"] is False and doc["vms_today"] == 4
    assert doc["vms"] == 3 and doc["bracket"] == [0.75, 1.0] and doc["stalled"] == []
    assert doc["limit_iops"] == pytest.approx(3000, rel=0.03) and doc["limited_by"] == "slo"
    three = next(point for point in doc["curve"] if point["vms"] == 3)
    assert three["figures"]["mean<=0.2ms"]["mean"] == pytest.approx(1 / (10 - 3), rel=0.05)
    written = tomllib.loads(Path(doc["at_limit_scenario"]).read_text(encoding="utf-8"))
    assert [vm["name"] for vm in written["vm"]] == ["a", "b", "c"]
    engine.validate(doc["at_limit_scenario"])
    assert sorted(point["vms"] for point in doc["curve"]) == [2, 3, 4]


def test_even_one_vm_fails_said(tmp_path: Path) -> None:
    """mean ≤ 0.1 ms: the 100 µs service alone reaches it, so no count holds, down to 1 VM."""
    command = [
        sys.executable, "-m", "sanlab.cli", "headroom", str(CROWDED), "--grow", "vms", "--slo", "mean<=0.1ms",
        *FAST, "--out", str(tmp_path / "h"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "the SLO mean ≤ 0.1 ms does not hold even with 1 VM (today's 4)" in done.stdout
    doc = json.loads((tmp_path / "h" / "headroom.json").read_text(encoding="utf-8"))
    assert doc["vms"] is None and min(point["vms"] for point in doc["curve"]) == 1
    one = tomllib.loads((tmp_path / "h" / "vms-1.toml").read_text(encoding="utf-8"))
    assert [vm["name"] for vm in one["vm"]] == ["a"]


def test_dropped_vms_leave_a_judged_one() -> None:
    """Below today's count the judged VMs are dropped last: with `--judge c`, one VM left is c."""
    growth = VmGrowth(
        str(CROWDED), "base", (), {"vm": []}, ("a", "b", "c", "heavy"), ("c",), Path("."), open_loop=True
    )
    assert growth.kept(1) == ("c",) and growth.kept(2) == ("a", "c") and growth.kept(3) == ("a", "b", "c")
    assert growth.count(0.01) == 1 and growth.count(0.5) == 2
