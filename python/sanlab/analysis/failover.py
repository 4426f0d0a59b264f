"""Failover analysis of a run with faults: how the host reacted to each fault and how long the VMs'
IOPS took to come back.

The engine lists every fault edge (`faults`: a start, steps in between such as the mediator's
decision after a replication link fails, and an end when the fault is undone, each with the paths
it affects and the longest VM I/O latency until the next edge) and every path
state change (`psp_events`: "path dead", "path alive"). From those and the VM IOPS series this
module gives, per fault, the failover duration (fault start to the host marking the affected
paths dead), the failback duration (fault end to the paths alive again) and the recovery time
(fault start to the VM IOPS no more than TOLERANCE below their level over the LEVEL_WINDOW_S
before the fault, after the warm-up and the previous fault edge). The terminal
tables, the report and the failover study (`docs/studies/failover.md`) all read it from here.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sanlab.document import FaultReport, PspEventReport, Variant, entities

TOLERANCE = 0.05
"""IOPS are back when they are no more than this fraction below their level before the fault.
More IOPS than before count as back: a VM is not hurt by running faster (with the replication link
down, the surviving array acknowledges writes without the mirror round trip, ten times faster in
the metro cluster)."""

LEVEL_WINDOW_S = 10.0
"""The level before a fault is the mean IOPS over at most this long before it: long enough to
average out sampling noise, short enough to be the state the fault met (a latency PSP that settles
at its second evaluation has not settled over the whole run before the fault)."""

PERIOD_TOLERANCE_S = 1e-6
"""Occurrence spacings equal within this are one period (a flapping path's `every`)."""

PATH_FAILURE_KINDS = frozenset({"path_down", "adapter_down", "port_down", "controller_down", "array_down"})
"""Event kinds that take their paths down, so the host should mark them dead; the others (a slower
link, an ALUA state change) need not."""

REASONS = ("apd_timeout", "pdl", "no_path")
"""Why the engine failed an I/O: the all-paths-down timeout expired, permanent device loss, or no
path left to try."""


def level_before(
    times_s: Sequence[float], values: Sequence[float], start_s: float, since_s: float
) -> float | None:
    """Mean of the samples that end after `since_s` and at or before `start_s`: the level before an
    event at `start_s`. None when no sample lies there (the event came too early to tell)."""
    window = [value for t_s, value in zip(times_s, values, strict=True) if since_s < t_s <= start_s]
    return sum(window) / len(window) if window else None


def recovery_s(
    times_s: Sequence[float],
    values: Sequence[float],
    start_s: float,
    until_s: float,
    level: float,
    tolerance: float = TOLERANCE,
) -> float | None:
    """Seconds from `start_s` until the series is back, for good, to no more than `tolerance` below
    `level` (see TOLERANCE: above it counts as back).

    A sample at `t` covers the interval before `t`, so the samples looked at are those ending after
    `start_s` and at or before `until_s` (the next fault, or the run's end). The answer is the end
    of the last sample below the band, minus `start_s`: 0 when no sample fell below it, None when
    the last sample is still below it (not back before `until_s`). Its resolution is the sample
    interval.
    """
    floor = level - tolerance * abs(level)
    last_outside: float | None = None
    last_t_s: float | None = None
    for t_s, value in sorted(zip(times_s, values, strict=True)):
        if start_s < t_s <= until_s:
            last_t_s = t_s
            if value < floor:
                last_outside = t_s
    if last_outside is None:
        return 0.0
    if last_outside == last_t_s:
        return None
    return last_outside - start_s


def series(variant: Variant, entity: str, metric: str) -> tuple[list[float], list[float]]:
    """Sample end times (s) and values of one entity's metric (`path/local-0`, `iops`), in time
    order; empty without such a series."""
    columns = variant["timeseries"]
    points = sorted(
        (t_s, value)
        for t_s, e, m, value in zip(
            columns["t_s"], columns["entity"], columns["metric"], columns["value"], strict=True
        )
        if e == entity and m == metric
    )
    return [t for t, _ in points], [v for _, v in points]


def vm_iops(variant: Variant, vm: str) -> tuple[list[float], list[float]]:
    """Sample end times (s) and IOPS of one VM, in time order."""
    return series(variant, f"vm/{vm}", "iops")


def every_vm_iops(variant: Variant) -> dict[str, tuple[list[float], list[float]]]:
    """`vm_iops` of each of the variant's VMs, from one pass over its series: a pass per VM is
    quadratic in VMs (10,000 VMs times millions of rows)."""
    columns = variant["timeseries"]
    points: dict[str, list[tuple[float, float]]] = {vm["name"]: [] for vm in variant["vms"]}
    for t_s, entity, metric, value in zip(
        columns["t_s"], columns["entity"], columns["metric"], columns["value"], strict=True
    ):
        if metric == "iops" and entity.startswith("vm/") and entity[3:] in points:
            points[entity[3:]].append((t_s, value))
    ordered = {vm: sorted(found) for vm, found in points.items()}
    return {vm: ([t for t, _ in found], [v for _, v in found]) for vm, found in ordered.items()}


@dataclass(frozen=True)
class Fault:
    """One fault of a variant: a single event, or the occurrences of a repeating (flapping) one.

    Times are those of the first occurrence; `occurrences` and `period_s` say how it repeats.
    `marked_dead_s` is the longest time, over the occurrences, from the fault's start until the
    host had marked every affected path dead (None: some occurrence was never noticed, or the
    fault affects no path); `marked_alive_s` likewise from its end until they were alive again.
    `max_latency_ms` is the longest VM I/O latency from the first start to the next fault's edge
    (None when the engine gave none). `steps` are the first occurrence's edges between its start and
    end, as (time s, phase, detail): the mediator's decision when a replication link fails.
    `recovery_s` maps each VM to `recovery_s()` from the first start to the next fault's start or
    the run's end (None: not back by then; a VM missing: no level before the fault to compare with).
    """

    kind: str
    target: str
    detail: str
    paths: tuple[str, ...]
    start_s: float
    end_s: float | None
    occurrences: int
    period_s: float | None
    marked_dead_s: float | None
    marked_alive_s: float | None
    max_latency_ms: float | None
    recovery_s: Mapping[str, float | None]
    steps: tuple[tuple[float, str, str], ...] = ()


@dataclass
class _Occurrence:
    start: FaultReport
    end: FaultReport | None = None
    steps: list[FaultReport] = field(default_factory=list)

    def edges(self) -> list[FaultReport]:
        return [self.start, *self.steps, *([self.end] if self.end is not None else [])]


def _occurrences(edges: Sequence[FaultReport]) -> list[_Occurrence]:
    """Start edges paired with the next end edge of the same kind and target, with the edges of
    other phases between them as steps, in start order. A step without a start opens its own."""
    occurrences: list[_Occurrence] = []
    open_ones: dict[tuple[str, str], _Occurrence] = {}
    for edge in sorted(edges, key=lambda e: e["t_s"]):
        key = (edge["kind"], edge["target"])
        if edge["phase"] == "end":
            if key in open_ones:
                open_ones.pop(key).end = edge
        elif edge["phase"] != "start" and key in open_ones:
            open_ones[key].steps.append(edge)
        else:
            occurrence = _Occurrence(edge)
            occurrences.append(occurrence)
            open_ones[key] = occurrence
    return occurrences


def _duration_s(occurrence: _Occurrence) -> float | None:
    return None if occurrence.end is None else occurrence.end["t_s"] - occurrence.start["t_s"]


def _repeats(group: Sequence[_Occurrence], nxt: _Occurrence) -> bool:
    """Whether `nxt` continues `group` as one repeating event: same kind, target and detail, same
    duration (or none yet: cut by the run's end), and (from the third on) the same period."""
    last = group[-1]
    if (nxt.start["kind"], nxt.start["target"], nxt.start.get("detail", "")) != (
        last.start["kind"],
        last.start["target"],
        last.start.get("detail", ""),
    ):
        return False
    last_s, next_s = _duration_s(last), _duration_s(nxt)
    if last_s is None or (next_s is not None and abs(last_s - next_s) > PERIOD_TOLERANCE_S):
        return False
    if len(group) < 2:
        return True
    period_s = group[1].start["t_s"] - group[0].start["t_s"]
    return abs(nxt.start["t_s"] - last.start["t_s"] - period_s) <= PERIOD_TOLERANCE_S


def _groups(occurrences: Sequence[_Occurrence]) -> list[list[_Occurrence]]:
    """Occurrences of one repeating event gathered, faults in order of their first start.

    Another fault can fall between two occurrences of a flapping one, so each occurrence joins
    the most recent group of its kind and target that it continues.
    """
    groups: list[list[_Occurrence]] = []
    for occurrence in occurrences:
        for group in reversed(groups):
            if (group[-1].start["kind"], group[-1].start["target"]) == (
                occurrence.start["kind"],
                occurrence.start["target"],
            ):
                if _repeats(group, occurrence):
                    group.append(occurrence)
                    break
                groups.append([occurrence])
                break
        else:
            groups.append([occurrence])
    return groups


class _PathChanges:
    """The PSP's path state changes of one kind ("path dead", "path alive") in time order, so a
    window's first changes are found by bisection: linear in the events over all of a flapping
    fault's occurrences (a scan of every event per occurrence was quadratic: 6,000 edges took
    6.5 s, 60,000 minutes)."""

    def __init__(self, psp_events: Sequence[PspEventReport], event: str) -> None:
        changes = sorted((float(c["t_s"]), tuple(c["paths"])) for c in psp_events if c["event"] == event)
        self.times = [t for t, _ in changes]
        self.paths = [paths for _, paths in changes]

    def seconds_until_all(self, paths: Sequence[str], from_s: float, to_s: float) -> float | None:
        """Seconds from `from_s` until every one of `paths` had a change at or after `from_s` and
        before `to_s`; None when some path had none, or no paths."""
        if not paths:
            return None
        waiting = set(paths)
        at = bisect_left(self.times, from_s)
        while waiting and at < len(self.times) and self.times[at] < to_s:
            waiting.difference_update(self.paths[at])
            if not waiting:
                return self.times[at] - from_s
            at += 1
        return None


def _worst(values: Sequence[float | None]) -> float | None:
    """The largest value, None when any is None (one occurrence never got there)."""
    if not values or any(value is None for value in values):
        return None
    return max(value for value in values if value is not None)


def faults(variant: Variant) -> list[Fault]:
    """The variant's faults with the host's reaction and the VMs' recovery; empty without faults.

    A variant without time series (a document from `--json`) has no recovery figures.
    """
    end_of_run_s = float(variant["sim_time_s"])
    # An edge at the run's end (a flapping path's next occurrence) has nothing after it to measure.
    edges = [edge for edge in variant.get("faults", []) if edge["t_s"] < end_of_run_s]
    if not edges:
        return []
    groups = _groups(_occurrences(edges))
    edge_times = sorted({edge["t_s"] for edge in edges})
    warmup_s = end_of_run_s - float(variant["measured_s"])
    marked_dead = _PathChanges(variant["psp_events"], "path dead")
    marked_alive = _PathChanges(variant["psp_events"], "path alive")
    series = every_vm_iops(variant) if "timeseries" in variant else {}
    result = []
    for group in groups:
        first = group[0]
        start_s = float(first.start["t_s"])
        paths = tuple(first.start.get("paths", ()))
        # The next fault's start (not this one's own occurrences) bounds what is charged to this fault.
        own = {id(edge) for occurrence in group for edge in occurrence.edges()}
        later = [e["t_s"] for e in edges if e["phase"] != "end" and e["t_s"] > start_s and id(e) not in own]
        until_s = min(later, default=end_of_run_s)
        previous = [t for t in edge_times if t < start_s]
        since_s = max([warmup_s, start_s - LEVEL_WINDOW_S, *previous])
        dead, alive = [], []
        for index, occurrence in enumerate(group):
            bound_s = group[index + 1].start["t_s"] if index + 1 < len(group) else until_s
            dead.append(marked_dead.seconds_until_all(paths, occurrence.start["t_s"], bound_s))
            if occurrence.end is not None:
                alive.append(marked_alive.seconds_until_all(paths, occurrence.end["t_s"], bound_s))
        latencies = [
            edge["max_io_latency_ms"]
            for occurrence in group
            for edge in occurrence.edges()
            if edge.get("max_io_latency_ms") is not None
        ]
        recovery: dict[str, float | None] = {}
        for vm, (times_s, values) in series.items():
            level = level_before(times_s, values, start_s, since_s)
            if level is not None:
                recovery[vm] = recovery_s(times_s, values, start_s, until_s, level)
        result.append(
            Fault(
                kind=first.start["kind"],
                target=first.start["target"],
                detail=first.start.get("detail", ""),
                paths=paths,
                start_s=start_s,
                end_s=None if first.end is None else float(first.end["t_s"]),
                occurrences=len(group),
                period_s=group[1].start["t_s"] - start_s if len(group) > 1 else None,
                marked_dead_s=_worst(dead),
                marked_alive_s=_worst(alive),
                max_latency_ms=max(latencies) if latencies else None,
                recovery_s=recovery,
                steps=tuple((float(e["t_s"]), e["phase"], e.get("detail", "")) for e in first.steps),
            )
        )
    result.sort(key=lambda fault: fault.start_s)
    return result


COUNTED = (("vms", "VM"), ("devices", "device"), ("paths", "path"))
"""(list key in a variant, label) of the entities with failover counts."""


@dataclass(frozen=True)
class Counts:
    """An entity's failover counts: I/Os retried, failed (by reason) and failed over to another path."""

    kind: str
    name: str
    retried: int
    failed: int
    failed_by_reason: Mapping[str, int]
    failed_over: int


def counts(variant: Variant) -> list[Counts]:
    """VMs, devices and paths of the variant with a nonzero count, in that order."""
    rows = []
    for key, label in COUNTED:
        for item in entities(variant, key):
            row = Counts(
                kind=label,
                name=item["name"],
                retried=int(item.get("retried", 0)),
                failed=int(item.get("failed", 0)),
                failed_by_reason={
                    reason: int(n) for reason, n in item.get("failed_by_reason", {}).items() if n
                },
                failed_over=int(item.get("failed_over", 0)),
            )
            if row.retried or row.failed or row.failed_over:
                rows.append(row)
    return rows
