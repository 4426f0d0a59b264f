"""A result document with faults, in the engine's format (the `faults` list, path state changes,
failover counts), built on conftest's sample document, for the tests of failover analysis, tables,
run folder and report."""

from __future__ import annotations

from typing import Any

LEVEL_IOPS = 10_000.0
"""The VM's IOPS before and after the faults."""

SAMPLES_S = [float(t) for t in range(1, 41)]
"""One sample a second for 40 s."""


def _edge(
    t_s: float, kind: str, phase: str, target: str, paths: list[str], detail: str, max_ms: float
) -> dict[str, Any]:
    return {
        "t_s": t_s,
        "kind": kind,
        "phase": phase,
        "target": target,
        "paths": paths,
        "detail": detail,
        "max_io_latency_ms": max_ms,
    }


def with_faults(doc: dict[str, Any], variant_name: str = "rr") -> dict[str, Any]:
    """The document with, in `variant_name`, 40 s of samples and three faults:

    - loc-0 down with notice from 5 s to 10 s: marked dead at 5.01 s, alive at 10.01 s; the VM's
      IOPS dip 20 % in the sample ending at 6 s, and 10 % in the one ending at 7 s (back after 2 s);
    - the link of rem-0 slower from 15 s, never undone: IOPS 30 % lower to the run's end (not back);
    - loc-0 flapping silently (down 1 s every 4 s, from 20 s to 33 s, four times): marked dead
      0.5 s after each start, alive 0.2 s after each end.
    The variant's VM retried 40 I/Os and failed 3 (no_path), its path loc-0 failed 25 over.
    """
    for variant in doc["variants"]:
        if variant["name"] != variant_name:
            continue
        variant["sim_time_s"] = 40.0
        variant["measured_s"] = 38.0
        iops = []
        for t_s in SAMPLES_S:
            if t_s == 6.0:
                iops.append(0.8 * LEVEL_IOPS)
            elif t_s == 7.0:
                iops.append(0.9 * LEVEL_IOPS)
            elif t_s > 15.0:
                iops.append(0.7 * LEVEL_IOPS)
            else:
                iops.append(LEVEL_IOPS)
        variant["timeseries"] = {
            "t_s": SAMPLES_S + SAMPLES_S,
            "entity": ["vm/vm1"] * len(SAMPLES_S) + ["path/loc-0"] * len(SAMPLES_S),
            "metric": ["iops"] * (2 * len(SAMPLES_S)),
            "value": iops
            + [0.0 if 5.0 < t <= 10.0 else value / 2 for t, value in zip(SAMPLES_S, iops, strict=True)],
        }
        edges = [
            _edge(5.0, "path_down", "start", "path loc-0", ["loc-0"], "notice", 2.5),
            _edge(10.0, "path_down", "end", "path loc-0", ["loc-0"], "notice", 2.4),
            _edge(15.0, "link_latency", "start", "path rem-0", ["rem-0"], "2 ms", 8.0),
        ]
        psp = [
            {"t_s": 5.01, "device": "naa.1", "event": "path dead", "paths": ["loc-0"]},
            {"t_s": 10.01, "device": "naa.1", "event": "path alive", "paths": ["loc-0"]},
        ]
        for n in range(4):
            start_s = 20.0 + 4 * n
            edges.append(_edge(start_s, "path_down", "start", "path loc-0", ["loc-0"], "silent", 500.0 + n))
            edges.append(_edge(start_s + 1, "path_down", "end", "path loc-0", ["loc-0"], "silent", 9.0))
            psp.append({"t_s": start_s + 0.5, "device": "naa.1", "event": "path dead", "paths": ["loc-0"]})
            psp.append({"t_s": start_s + 1.2, "device": "naa.1", "event": "path alive", "paths": ["loc-0"]})
        variant["faults"] = edges
        variant["psp_events"] = psp
        vm = variant["vms"][0]
        vm.update(retried=40, failed=3, failed_by_reason={"no_path": 3})
        variant["devices"][0].update(retried=40, failed=3, failed_by_reason={"no_path": 3})
        variant["paths"][0].update(retried=0, failed_over=25)
        variant["paths"][1].update(retried=0, failed_over=0)
        vm["issued"] = vm["completed"] + vm["in_flight"] + vm["failed"]
        variant["conservation"] = [
            {
                "component": "vm/vm1",
                "issued": vm["issued"],
                "completed": vm["completed"],
                "failed": 3,
                "in_flight": vm["in_flight"],
            }
        ]
    return doc


def with_replication_fault(doc: dict[str, Any], variant_name: str = "latency") -> dict[str, Any]:
    """The document with, in `variant_name`, 40 s of samples and the replication link failing from
    10 s to 30 s: writes stall until the mediator's decision at 15 s (the longest I/O, 5 s), then the
    surviving array serves alone, ten times faster, until the link returns."""
    for variant in doc["variants"]:
        if variant["name"] != variant_name:
            continue
        variant["sim_time_s"] = 40.0
        variant["measured_s"] = 38.0
        iops = [0.0 if 10 < t <= 15 else 10 * LEVEL_IOPS if 15 < t <= 30 else LEVEL_IOPS for t in SAMPLES_S]
        variant["timeseries"] = {
            "t_s": list(SAMPLES_S),
            "entity": ["vm/vm1"] * len(SAMPLES_S),
            "metric": ["iops"] * len(SAMPLES_S),
            "value": iops,
        }
        target = "replication array-a<->array-b"
        variant["faults"] = [
            _edge(10.0, "replication_down", "start", target, [], "", 2.2),
            _edge(15.0, "replication_down", "mediator", target, [], "array-a keeps the volumes", 5000.0),
            _edge(30.0, "replication_down", "end", target, [], "", 2.4),
        ]
    return doc
