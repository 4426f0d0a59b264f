"""Failover analysis: the level before a fault, the recovery time, faults paired and grouped with
the host's reaction, and the failover counts."""

from __future__ import annotations

from typing import Any

import pytest

from fault_doc import with_faults, with_replication_fault
from sanlab.analysis.failover import counts, every_vm_iops, faults, level_before, recovery_s, series, vm_iops

TIMES_S = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


def test_level_before_averages_the_samples_since_the_previous_edge() -> None:
    values = [5.0, 100.0, 100.0, 110.0, 90.0, 0.0]
    assert level_before(TIMES_S, values, start_s=5.0, since_s=1.0) == pytest.approx(100.0)
    assert level_before(TIMES_S, values, start_s=0.5, since_s=0.0) is None


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([100.0] * 6, 0.0),  # never left the band
        ([100.0, 100.0, 50.0, 96.0, 104.0, 100.0], 1.0),  # one sample out: back at its end
        ([100.0, 100.0, 0.0, 94.0, 100.0, 100.0], 2.0),  # 6 % off is still out
        ([100.0, 100.0, 100.0, 100.0, 100.0, 80.0], None),  # out at the last sample: not back
        ([100.0, 100.0, 0.0, 900.0, 900.0, 100.0], 1.0),  # faster than before is not a loss
    ],
)
def test_recovery_s(values: list[float], expected: float | None) -> None:
    assert recovery_s(TIMES_S, values, start_s=2.0, until_s=6.0, level=100.0) == expected


def test_recovery_ignores_samples_outside_the_window() -> None:
    values = [0.0, 100.0, 100.0, 100.0, 0.0, 0.0]
    assert recovery_s(TIMES_S, values, start_s=1.0, until_s=4.0, level=100.0) == 0.0


def test_faults_pair_edges_and_read_the_hosts_reaction(doc: dict[str, Any]) -> None:
    variant = with_faults(doc)["variants"][0]
    notice, latency, _ = faults(variant)
    assert (notice.kind, notice.target, notice.start_s, notice.end_s) == (
        "path_down",
        "path loc-0",
        5.0,
        10.0,
    )
    assert notice.marked_dead_s == pytest.approx(0.01)
    assert notice.marked_alive_s == pytest.approx(0.01)
    assert notice.max_latency_ms == 2.5
    assert notice.recovery_s == {"vm1": 2.0}
    # Never undone, IOPS 30 % lower until the next fault: not back, and no path marked dead.
    assert latency.end_s is None and latency.recovery_s == {"vm1": None}
    assert latency.marked_dead_s is None


def test_a_repeating_fault_is_one_with_its_period(doc: dict[str, Any]) -> None:
    flapping = faults(with_faults(doc)["variants"][0])[2]
    assert (flapping.occurrences, flapping.period_s, flapping.detail) == (4, 4.0, "silent")
    assert flapping.marked_dead_s == pytest.approx(0.5)
    assert flapping.marked_alive_s == pytest.approx(0.2)
    assert flapping.max_latency_ms == 503.0, "the longest over every occurrence"
    # The level before it is the degraded one the link fault left, and IOPS stay there.
    assert flapping.recovery_s == {"vm1": 0.0}


def test_a_fault_the_host_never_notices(doc: dict[str, Any]) -> None:
    variant = with_faults(doc)["variants"][0]
    variant["psp_events"] = []
    assert [fault.marked_dead_s for fault in faults(variant)] == [None, None, None]


def test_without_timeseries_there_is_no_recovery(doc: dict[str, Any]) -> None:
    variant = with_faults(doc)["variants"][0]
    del variant["timeseries"]
    assert all(fault.recovery_s == {} for fault in faults(variant))


def test_no_faults_no_rows(doc: dict[str, Any]) -> None:
    assert faults(doc["variants"][1]) == []
    assert counts(doc["variants"][1]) == []


def test_counts_list_entities_with_a_nonzero_count(doc: dict[str, Any]) -> None:
    rows = counts(with_faults(doc)["variants"][0])
    assert [(row.kind, row.name) for row in rows] == [("VM", "vm1"), ("device", "naa.1"), ("path", "loc-0")]
    assert rows[0].failed_by_reason == {"no_path": 3} and rows[0].retried == 40
    assert rows[2].failed_over == 25


def test_the_level_is_the_last_ten_seconds_before_the_fault() -> None:
    """A policy that settled at 30 s (the latency PSP) is measured against its settled level."""
    times_s = [float(t) for t in range(1, 81)]
    iops = [12_000.0 if t <= 30 else 14_000.0 for t in times_s]
    iops[60] = 13_000.0  # the sample ending at 61 s: 7 % down
    variant = {
        "sim_time_s": 80.0,
        "measured_s": 78.0,
        "vms": [{"name": "vm1"}],
        "psp_events": [],
        "timeseries": {"t_s": times_s, "entity": ["vm/vm1"] * 80, "metric": ["iops"] * 80, "value": iops},
        "faults": [
            {
                "t_s": 60.0,
                "kind": "path_down",
                "phase": "start",
                "target": "path p",
                "paths": ["p"],
                "detail": "notice",
                "max_io_latency_ms": 12.0,
            }
        ],
    }
    # Against the mean since the warm-up (about 13,000) the dip would be within 5 %.
    assert faults(variant)[0].recovery_s == {"vm1": 1.0}


def test_a_step_between_start_and_end_belongs_to_its_fault(doc: dict[str, Any]) -> None:
    (fault,) = faults(with_replication_fault(doc)["variants"][1])
    assert (fault.start_s, fault.end_s) == (10.0, 30.0)
    assert fault.steps == ((15.0, "mediator", "array-a keeps the volumes"),)
    assert fault.max_latency_ms == 5000.0
    # IOPS stop until the mediator decides, then run ten times faster: back after 5 s.
    assert fault.recovery_s == {"vm1": 5.0}
    assert fault.marked_dead_s is None, "no path is named"


def test_an_occurrence_cut_by_the_run_end_is_one_of_the_flaps(doc: dict[str, Any]) -> None:
    variant = with_faults(doc)["variants"][0]
    # A fifth flap starting at 36 s, still down when the run ends at 40 s, and a sixth at the end.
    variant["faults"] += [
        {**variant["faults"][-2], "t_s": 36.0},
        {**variant["faults"][-2], "t_s": 40.0},
    ]
    flapping = faults(variant)[2]
    assert flapping.occurrences == 5 and len(faults(variant)) == 3
    assert flapping.marked_alive_s == pytest.approx(0.2), "the cut one has no end to come back from"


def test_series_reads_one_entity_metric_in_time_order(doc: dict[str, Any]) -> None:
    variant = with_faults(doc)["variants"][0]
    times_s, iops = series(variant, "path/loc-0", "iops")
    assert times_s[:3] == [1.0, 2.0, 3.0] and len(times_s) == 40
    assert iops[5:10] == [0.0] * 5, "down from 5 s to 10 s"
    assert series(variant, "path/loc-0", "qued") == ([], [])


def test_path_changes_by_bisection_agree_with_a_scan_of_every_event() -> None:
    """The first time every path of a fault had a change in a window, found by bisection over the
    sorted changes, is what a scan of every event gives (the scan was quadratic over a flapping
    fault's occurrences)."""
    import random

    from sanlab.analysis.failover import _PathChanges

    rng = random.Random(7)
    paths = [f"p{i}" for i in range(4)]
    events = [
        {"t_s": round(rng.uniform(0, 100), 3), "event": rng.choice(["path dead", "path alive"]), "paths": rng.sample(paths, rng.randint(1, 3))}
        for _ in range(400)
    ]
    index = _PathChanges(events, "path dead")  # type: ignore[arg-type]
    for _ in range(200):
        lo = rng.uniform(0, 100)
        hi = lo + rng.uniform(0, 30)
        wanted = rng.sample(paths, rng.randint(1, 4))
        first: dict[str, float] = {}
        for change in sorted(events, key=lambda c: c["t_s"]):
            if change["event"] == "path dead" and lo <= change["t_s"] < hi:
                for p in change["paths"]:
                    first.setdefault(p, change["t_s"])
        expected = max(first[p] for p in wanted) - lo if all(p in first for p in wanted) else None
        assert index.seconds_until_all(wanted, lo, hi) == expected


def test_every_vm_iops_is_each_vms_own_series_from_one_pass() -> None:
    variant: Any = {
        "vms": [{"name": "a"}, {"name": "vm/b"}, {"name": "idle"}],
        "timeseries": {
            "t_s": [2.0, 1.0, 1.0, 1.0, 2.0, 1.0, 2.0],
            "entity": ["vm/a", "vm/a", "vm/vm/b", "path/a", "vm/a", "vm/a", "vm/vm/b"],
            "metric": ["iops", "iops", "iops", "iops", "lat_ms_mean", "lat_ms_mean", "iops"],
            "value": [20.0, 10.0, 7.0, 99.0, 0.5, 0.4, 8.0],
        },
    }
    every = every_vm_iops(variant)
    assert every == {vm["name"]: vm_iops(variant, vm["name"]) for vm in variant["vms"]}
    assert every["a"] == ([1.0, 2.0], [10.0, 20.0]), "in time order, IOPS only, the VM's own"
    assert every["vm/b"] == ([1.0, 2.0], [7.0, 8.0])
    assert every["idle"] == ([], [])
