"""The failover study (scenarios/studies/failover.toml) run in full: the failover invariants on
every variant, read from the results and the time series as a user would."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sanlab.analysis.failover import faults, level_before, recovery_s, vm_iops
from side_by_side import run_variants

pytestmark = pytest.mark.e2e

STUDY = Path(__file__).resolve().parents[2] / "scenarios" / "studies" / "failover.toml"
FAULT_AT_S = 60.0
BACK_AT_S = 120.0
COMMAND_TIMEOUT_S = 30.0
IN_FLIGHT_DONE_S = 0.01
POLICIES = ("fixed", "mru", "rr_iops1", "alua_rr", "latency")
EVENTS = ("notice", "silent", "degraded", "controller", "replication", "flapping")
CONTROLLER_PATHS = ("local-0", "local-2", "local-4", "local-6", "local-8")
"""The local paths to controller ctrl1 (paths alternate between the two controllers' ports)."""
TAKEOVER_S = 2.0
ELECTION_S = 5.0
"""The defaults of controller_down's takeover and of the replication's mediator race."""


@pytest.fixture(scope="module")
def variants() -> dict[str, dict[str, Any]]:
    """Every variant of the study, by name, with its time series."""
    return run_variants(STUDY)


def _series(variant: dict[str, Any], entity: str, metric: str = "iops") -> dict[float, float]:
    series = variant["timeseries"]
    return {
        t_s: value
        for t_s, e, m, value in zip(
            series["t_s"], series["entity"], series["metric"], series["value"], strict=True
        )
        if e == entity and m == metric
    }


def _dead_intervals(variant: dict[str, Any], path: str) -> list[tuple[float, float]]:
    """(marked dead, marked alive or run end) for `path`, from the path state changes."""
    intervals: list[tuple[float, float]] = []
    dead_since: float | None = None
    for event in variant["psp_events"]:
        if path not in event["paths"]:
            continue
        if event["event"] == "path dead":
            dead_since = event["t_s"]
        elif event["event"] == "path alive" and dead_since is not None:
            intervals.append((dead_since, event["t_s"]))
            dead_since = None
    if dead_since is not None:
        intervals.append((dead_since, variant["sim_time_s"]))
    return intervals


def test_every_variant_ran(variants: dict[str, dict[str, Any]]) -> None:
    assert set(variants) == {f"{event}-{policy}" for event in EVENTS for policy in POLICIES}


def test_no_io_is_lost(variants: dict[str, dict[str, Any]]) -> None:
    for name, variant in variants.items():
        for c in variant["conservation"]:
            assert c["issued"] == c["completed"] + c["failed"] + c["in_flight"], (name, c)


def test_a_dead_path_carries_nothing_while_dead(variants: dict[str, dict[str, Any]]) -> None:
    checked = 0
    for name, variant in variants.items():
        if name.startswith(("degraded", "replication")):
            assert _dead_intervals(variant, "local-0") == [], "a slow link is not a dead one"
            continue
        for path in CONTROLLER_PATHS if name.startswith("controller") else ("local-0",):
            intervals = _dead_intervals(variant, path)
            assert intervals, f"{name}: {path} was never marked dead"
            iops = _series(variant, f"path/{path}")
            interval_s = 1.0  # the study's sample interval
            for dead_s, alive_s in intervals:
                inside = [t for t in iops if dead_s <= t - interval_s and t <= alive_s]
                assert all(iops[t] == 0.0 for t in inside), (name, path, dead_s, alive_s)
                checked += len(inside)
    assert checked > 500


@pytest.mark.parametrize("event", ["notice", "silent"])
def test_fixed_fails_back_and_mru_does_not(variants: dict[str, dict[str, Any]], event: str) -> None:
    for policy, home in (("fixed", "local-0"), ("mru", "local-1")):
        variant = variants[f"{event}-{policy}"]
        alive_s = _dead_intervals(variant, "local-0")[-1][1]
        assert alive_s >= BACK_AT_S
        # From the first sample starting after the path came back and the I/Os then in flight
        # (2.3 ms each) completed, one path carries every I/O.
        after = [t for t in _series(variant, "vm/vm1") if t - 1.0 >= alive_s + IN_FLIGHT_DONE_S]
        for path in variant["paths"]:
            iops = _series(variant, f"path/{path['name']}")
            carried = [iops[t] for t in after]
            if path["name"] == home:
                assert all(value > 0 for value in carried), (event, policy, path["name"])
            else:
                assert not any(carried), (event, policy, path["name"])


def test_a_silent_failure_is_retried_after_the_command_timeout(variants: dict[str, dict[str, Any]]) -> None:
    for policy in POLICIES:
        variant = variants[f"silent-{policy}"]
        assert variant["devices"][0]["retried"] > 0, policy
        assert variant["vms"][0]["lat_ms"]["max"] >= COMMAND_TIMEOUT_S * 1000, policy
        dead_s = _dead_intervals(variant, "local-0")[0][0]
        assert FAULT_AT_S + COMMAND_TIMEOUT_S - 0.1 <= dead_s <= FAULT_AT_S + COMMAND_TIMEOUT_S + 0.1, policy


def test_iops_recover_when_the_host_gives_up_on_the_path(variants: dict[str, dict[str, Any]]) -> None:
    """Every policy stalls on a silent failure until the command timeout; with notice, RR over the
    local paths never leaves the 5 % band."""
    for policy in POLICIES:
        times_s, iops = vm_iops(variants[f"silent-{policy}"], "vm1")
        level = level_before(times_s, iops, FAULT_AT_S, FAULT_AT_S - 10)
        assert level is not None and level > 0
        back_s = recovery_s(times_s, iops, FAULT_AT_S, 150.0, level)
        assert back_s is not None and COMMAND_TIMEOUT_S <= back_s <= COMMAND_TIMEOUT_S + 1, (policy, back_s)
    times_s, iops = vm_iops(variants["notice-alua_rr"], "vm1")
    level = level_before(times_s, iops, FAULT_AT_S, FAULT_AT_S - 10)
    assert level is not None
    assert recovery_s(times_s, iops, FAULT_AT_S, 150.0, level) == 0.0


def test_the_engine_lists_each_fault_once(variants: dict[str, dict[str, Any]]) -> None:
    for name, variant in variants.items():
        (fault,) = faults(variant)
        assert fault.start_s == FAULT_AT_S, name
        if name.startswith("flapping"):
            assert (fault.end_s, fault.occurrences, fault.period_s) == (62.0, 18, 5.0), name
        else:
            assert (fault.end_s, fault.occurrences) == (BACK_AT_S, 1), name


def test_the_losing_array_stops_serving_after_the_mediator_race(variants: dict[str, dict[str, Any]]) -> None:
    """The local array is preferred: after the race (5 s of stalled writes) it serves alone, faster
    (no mirror round trip), and the remote paths carry nothing until the link returns."""
    for policy in POLICIES:
        variant = variants[f"replication-{policy}"]
        (fault,) = faults(variant)
        assert fault.steps == (
            (FAULT_AT_S + ELECTION_S, "mediator", "local keeps the volumes, remote stops serving them"),
        )
        assert ELECTION_S * 1000 <= fault.max_latency_ms < ELECTION_S * 1000 + 10, policy
        assert fault.recovery_s == {"vm1": ELECTION_S}, policy
        alone = [t for t in _series(variant, "vm/vm1") if FAULT_AT_S + ELECTION_S + 1 < t <= BACK_AT_S]
        for path in variant["paths"]:
            if path["array"] == "remote":
                iops = _series(variant, f"path/{path['name']}")
                assert not any(iops[t] for t in alone), (policy, path["name"])
        assert variant["vms"][0]["failed"] == 0, "no I/O fails: the local array serves them all"


def test_a_controller_takeover_stalls_every_policy_for_its_pause(variants: dict[str, dict[str, Any]]) -> None:
    for policy in POLICIES:
        (fault,) = faults(variants[f"controller-{policy}"])
        assert fault.marked_dead_s == pytest.approx(0.01), policy
        assert TAKEOVER_S * 1000 <= fault.max_latency_ms < TAKEOVER_S * 1000 + 10, policy
    # Policies that keep to the local paths are back once the survivor has taken over; RR over all
    # paths loses half its local paths to the remote ones until the controller returns.
    for policy in ("fixed", "mru", "alua_rr"):
        assert faults(variants[f"controller-{policy}"])[0].recovery_s == {"vm1": TAKEOVER_S}, policy
    assert faults(variants["controller-rr_iops1"])[0].recovery_s == {"vm1": BACK_AT_S - FAULT_AT_S}
