"""The rows and captions both the terminal's tables and the HTML report show: a host's cells, a
fault's edges, folded path selection events, failover counts. One place, so the two say the same.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sanlab.analysis import failover
from sanlab.document import Document, HostReport, PspEventReport, hosts
from sanlab.formatting import format_count, format_ms, format_time_s
from sanlab.replications import ci95_of, value_of

HOST_COLUMNS = ("host", "VMs", "IOPS", "VM mean\nms", "DAVG\nms")
"""The hosts table's columns for every host: VM mean latency and device latency (DAVG) in ms."""

FLOW_CONTROL_COLUMNS = ("kind", "threshold\nms", "β", "window\nmean", "window\nfinal", "L\nms")
"""The hosts table's columns when some host has flow control: its kind, latency threshold, β
(its share), window (device queue depth: mean, final) and latency estimate L at the end."""

HOST_TEXT_COLUMNS = ("host", "kind")
"""The hosts table's left-aligned columns; the others hold numbers."""

HOSTS_CAPTION = (
    "DAVG: mean time on the path per device request; window: the device queue depth flow control "
    "sets; L: its cluster-wide latency estimate at the end, which it steers to the threshold"
)


def flow_controlled(doc: Document) -> bool:
    """Whether any host of any variant has flow control (PARDA, SIOC)."""
    return any(host["flow_control"] for variant in doc["variants"] for host in hosts(variant))


def shows_hosts(doc: Document) -> bool:
    """Whether hosts deserve a table of their own: several hosts in a variant, or flow control."""
    return flow_controlled(doc) or any(len(hosts(variant)) > 1 for variant in doc["variants"])


def with_interval(entity: Mapping[str, Any], figure: str, shown: Callable[[float], str]) -> str:
    """An entity's figure (`iops`, or a latency figure of `lat_ms` such as `p99`) as `shown`
    writes it, with `±` its interval's half-width when replications gave one (`few` when the tail
    held too few I/Os to estimate it)."""
    value = value_of(entity, figure)
    covered, bounds = ci95_of(entity, figure)
    if not covered:
        return shown(value)  # no replications, or an interval of means only (batch means)
    if bounds is None:
        return "few"
    return f"{shown(value)} ±{shown((bounds[1] - bounds[0]) / 2)}"


def host_cells(host: HostReport, flow_control: bool) -> list[str]:
    """A host's row under HOST_COLUMNS, then FLOW_CONTROL_COLUMNS when `flow_control` (blank for a
    host without it); the terminal and the HTML report show the same text."""
    cells = [
        host["name"],
        format_count(host["vms"]),
        with_interval(host, "iops", format_count),
        with_interval(host, "mean", format_ms),
        format_ms(host["device_lat_ms"]),
    ]
    if not flow_control:
        return cells
    control, window = host["flow_control"], host["window"]
    if not control:
        return [*cells, "-", *[""] * (len(FLOW_CONTROL_COLUMNS) - 1)]
    return [
        *cells,
        control["kind"],
        format_ms(control["latency_threshold_ms"]),
        f"{control['beta']:g}",
        format_count(window["mean"]) if window else "-",
        format_count(window["final"]) if window else "-",
        format_ms(control["latency_estimate_ms"]),
    ]


_NUMBERED = re.compile(r"(.+)-(\d+)(:.*)?")
"""A numbered name: `remote-3`, or a path of a volume, `remote-3:busy_vol`."""


def compact_names(names: Sequence[str]) -> str:
    """`remote-0, remote-1, remote-2, local-7` as `remote-{0..2}, local-7`; `local-0:vol,
    local-1:vol` as `local-{0..1}:vol`."""
    groups: dict[tuple[str, str], list[int]] = {}
    singles: list[str] = []
    for name in names:
        numbered = _NUMBERED.fullmatch(name)
        if numbered:
            groups.setdefault((numbered[1], numbered[3] or ""), []).append(int(numbered[2]))
        else:
            singles.append(name)
    parts = []
    for (prefix, suffix), numbers in groups.items():
        numbers.sort()
        runs: list[list[int]] = []
        for n in numbers:
            if runs and n == runs[-1][-1] + 1:
                runs[-1].append(n)
            else:
                runs.append([n])
        for run in runs:
            span = f"{run[0]}" if len(run) == 1 else f"{{{run[0]}..{run[-1]}}}"
            parts.append(f"{prefix}-{span}{suffix}")
    return ", ".join(parts + singles)


REPEAT_MIN = 3
"""Identical path selection events at least this many times at a constant period print as one row."""


@dataclass(frozen=True)
class Repeated:
    """A path selection event and how it repeats: `count` times, `period_s` apart, the last at `last_s`."""

    event: PspEventReport
    count: int = 1
    period_s: float = 0.0
    last_s: float = 0.0


def fold_repeats(events: Sequence[PspEventReport]) -> list[Repeated]:
    """The events in time order with each periodic run (the same device, event and paths at least
    REPEAT_MIN times at a constant period: a flapping path) folded into its first occurrence, so
    that an hour of flapping is a few rows, not thousands."""
    by_key: dict[tuple[str, str, tuple[str, ...]], list[PspEventReport]] = {}
    for event in events:
        by_key.setdefault((event["device"], event["event"], tuple(event["paths"])), []).append(event)
    folded: list[Repeated] = []
    for items in by_key.values():
        i = 0
        while i < len(items):
            j = i
            if i + 1 < len(items):
                period_s = items[i + 1]["t_s"] - items[i]["t_s"]
                j = i + 1
                while (
                    j + 1 < len(items)
                    and abs(items[j + 1]["t_s"] - items[j]["t_s"] - period_s) <= failover.PERIOD_TOLERANCE_S
                ):
                    j += 1
            if j - i + 1 >= REPEAT_MIN:
                folded.append(Repeated(items[i], j - i + 1, period_s, items[j]["t_s"]))
                i = j + 1
            else:
                folded.append(Repeated(items[i], 1, 0.0, items[i]["t_s"]))
                i += 1
    return sorted(folded, key=lambda r: r.event["t_s"])


def repeat_text(row: Repeated) -> str:
    """`×18 every 5 s, last 145.010` for a folded run; empty for a single event."""
    return f"×{row.count} every {row.period_s:.3g} s, last {row.last_s:.3f}" if row.count > 1 else ""


def _seconds(value: float | None, missing: str) -> str:
    return missing if value is None else format_time_s(value)


def recovery_text(recovery: Mapping[str, float | None]) -> str:
    """The slowest VM's recovery: `1.000 s`, `not back`, with the VM named when there are several;
    `-` when no VM had a level before the fault."""
    if not recovery:
        return "-"
    vm, worst = max(recovery.items(), key=lambda item: math.inf if item[1] is None else item[1])
    text = "not back" if worst is None else format_time_s(worst)
    return text if len(recovery) == 1 else f"{text} ({vm})"


def marked_text(fault: failover.Fault, seconds: float | None) -> str:
    """Seconds until the host marked the fault's paths dead (or alive); `never` when it did not
    though the fault takes paths down, `-` when it does not (a slower link is not a dead one)."""
    expected = bool(fault.paths) and fault.kind in failover.PATH_FAILURE_KINDS
    return _seconds(seconds, "never" if expected else "-")


def fault_rows(fault: failover.Fault) -> list[list[str]]:
    """A fault's start and end edges as table cells: time, edge, kind, target, detail, the host's
    reaction (paths marked dead, then alive, after s), longest I/O latency, IOPS back after s."""
    detail = fault.detail
    if fault.period_s is not None:
        detail = f"{detail}, ×{fault.occurrences} every {fault.period_s:g} s".lstrip(", ")
    latency = "-" if fault.max_latency_ms is None else format_ms(fault.max_latency_ms)
    noticed = marked_text(fault, fault.marked_dead_s)
    rows = [
        [f"{fault.start_s:.3f}", "start", fault.kind, fault.target, detail, noticed, latency,
         recovery_text(fault.recovery_s)]
    ]  # fmt: skip
    rows += [
        [f"{t_s:.3f}", phase, fault.kind, fault.target, text, "", "", ""] for t_s, phase, text in fault.steps
    ]
    if fault.end_s is not None:
        back = marked_text(fault, fault.marked_alive_s)
        rows.append([f"{fault.end_s:.3f}", "end", fault.kind, fault.target, "", back, "", ""])
    return rows


FAULTS_CAPTION = (
    "marked s: from the fault's start until the host marked its paths dead (end: alive again); max ms: "
    "longest VM I/O latency until the next fault; back s: until VM IOPS were back within "
    f"{100 * failover.TOLERANCE:g} % of their level before the fault (or above it), to a sample "
    "(not back: not by the next fault or the run's end)"
)


def failed_text(counts: failover.Counts) -> str:
    """Failed I/Os with their reasons: `12 (apd_timeout 10, no_path 2)`."""
    if not counts.failed_by_reason:
        return format_count(counts.failed)
    reasons = ", ".join(f"{reason} {format_count(n)}" for reason, n in counts.failed_by_reason.items())
    return f"{format_count(counts.failed)} ({reasons})"


STAGES = ("vm_queues", "kavg", "davg", "fabric", "array", "array_front_end", "array_cores", "array_cache", "array_media")
"""The engine's `stages_ms` in the tables' order: vm_queues + kavg + davg = the mean latency,
fabric + array = davg, array_front_end + array_cores + array_cache + array_media = array."""
STAGE_COLUMNS = (
    "VM queues ms", "KAVG ms", "DAVG ms", "fabric ms", "array ms", "front end ms", "cores ms", "cache ms", "media ms",
    "mean ms",
)  # fmt: skip
STAGES_CAPTION = (
    "where each VM's mean latency goes: VM queues, its virtual disk and adapter queues, before the "
    "host's device queue; KAVG, in the device queue (esxtop's); DAVG, past it (esxtop's) = fabric, the "
    "time outside the array (links, adapter, QUEUE FULL retries), + array, from the command's arrival "
    "to its status = its front end (a QoS hold, a write's data transfer) + cores + cache (a read hit, a "
    "write the write-back cache acknowledged, its wait for room included) + media (with a replica's "
    "acknowledgement); mean = VM queues + KAVG + DAVG"
)


def shows_stages(doc: Document) -> bool:
    """Whether the run reports its VMs' latency by stage (run folders before it did not)."""
    return any("stages_ms" in vm for variant in doc["variants"] for vm in variant["vms"])


def stage_cells(vm: Mapping[str, Any]) -> list[str]:
    """A VM's row under STAGE_COLUMNS; the terminal and the HTML report show the same text."""
    stages = vm["stages_ms"]
    # A run folder written before the cache had its own stage: its media time includes it.
    shown = (format_ms(stages[stage]) if stage in stages else "–" for stage in STAGES)
    return [*shown, with_interval(vm, "mean", format_ms)]
