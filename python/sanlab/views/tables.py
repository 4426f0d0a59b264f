"""Terminal tables (rich) for run results and component kinds; `fit` splits one that is too wide."""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from sanlab import failover
from sanlab.document import Document, entities
from sanlab.formatting import format_count, format_ms, format_tenths, format_time_s


def titled_table(title: str) -> Table:
    """A table as every sanlab table looks: title on the left, a rule under the header, no frame."""
    return Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", show_edge=False)


_UNBOUNDED = 1_000_000
"""A width no table reaches: measured at it, a table reports the widths its cells need."""


@dataclass(frozen=True)
class _Widths:
    """Per column of a table the width of its text: the least (its longest value, or longest word
    in a column that wraps), with its values whole but its header wrapped, and on one line each;
    and what padding and rules add."""

    least: list[int]
    header_wrapped: list[int]
    natural: list[int]
    extra: int


def _widths(table: Table, console: Console) -> _Widths:
    options = console.options.update_width(_UNBOUNDED)
    least, header_wrapped, natural = [], [], []
    for column in table.columns:
        header = Measurement.get(console, options, column.header)
        body = [Measurement.get(console, options, cell) for cell in column.cells]
        natural.append(max([header.maximum, *(size.maximum for size in body)]))
        # rich's own minimum lets every column wrap; one that may not needs its longest value.
        words = max([header.minimum, *(size.minimum for size in body)])
        least.append(natural[-1] if column.no_wrap else words)
        header_wrapped.append(max([least[-1], *(size.maximum for size in body)]))
    extra = Measurement.get(console, options, table).maximum - sum(natural)
    return _Widths(least, header_wrapped, natural, extra)


def min_width(table: Table, console: Console) -> int:
    """The narrowest `table` renders without cutting a cell: every column at its longest value,
    except those that wrap, at their longest word."""
    widths = _widths(table, console)
    return sum(widths.least) + widths.extra


def _columns(table: Table, indices: Sequence[int]) -> Table:
    part = copy.copy(table)
    # `_index` is where rich looks up a column's padding: its position in the new table.
    part.columns = [dataclasses.replace(table.columns[i], _index=n) for n, i in enumerate(indices)]
    return part


def _narrowed(table: Table, console: Console) -> Table:
    """`table` with its wrapping columns narrowed until it fits the console: headers wrap first, then
    values, the widest column first. (rich narrows all alike and, once they are equally wide, cuts
    every column.)"""
    sizes = _widths(table, console)
    widths = list(sizes.natural)
    excess = sum(widths) + sizes.extra - console.width
    for floor in (sizes.header_wrapped, sizes.least):
        while excess > 0:
            narrower = [i for i, width in enumerate(widths) if width > floor[i]]
            if not narrower:
                break
            widths[max(narrower, key=lambda i: widths[i])] -= 1
            excess -= 1
    narrowed = copy.copy(table)
    narrowed.columns = [
        column if column.no_wrap else dataclasses.replace(column, max_width=width)
        for column, width in zip(table.columns, widths, strict=True)
    ]
    return narrowed


def fit(table: Table, console: Console) -> list[Table]:
    """`table` as one or several tables that fit the console without cutting a cell with "…".

    Columns that wrap are narrowed first; when that is not enough, the table is split: each part
    repeats the leading left-aligned columns (the names a row is about: variant, device, path)
    with as many of the others as fit, and the caption goes under the last. A table that starts
    with a number column or has only names is not split.
    """
    names = next((i for i, column in enumerate(table.columns) if column.justify == "right"), 0)
    parts = [table]
    if names and min_width(table, console) > console.width:
        columns: list[list[int]] = []
        for index in range(names, len(table.columns)):
            wider = [*columns[-1], index] if columns else []
            if wider and min_width(_columns(table, wider), console) <= console.width:
                columns[-1] = wider
            else:
                columns.append([*range(names), index])
        parts = [_columns(table, indices) for indices in columns]
        for part in parts[:-1]:
            part.caption = None
    return [_narrowed(part, console) for part in parts]


def tail_iops(variant: Mapping[str, Any]) -> dict[str, float]:
    """Mean IOPS of each VM over the last quarter of the run, at most its last 60 s, by VM name.

    This is where a policy that changes its mind (the latency PSP) has settled. A VM with fewer
    than two samples in that window is left out. One pass over the series for every VM: a pass
    per VM took hours at 10,000 VMs.
    """
    series = variant["timeseries"]
    end_s = variant["sim_time_s"]
    window_s = min(60.0, end_s / 4)
    values: dict[str, list[float]] = {}
    for t_s, entity, metric, value in zip(
        series["t_s"], series["entity"], series["metric"], series["value"], strict=True
    ):
        if metric == "iops" and t_s > end_s - window_s and entity.startswith("vm/"):
            values.setdefault(entity[3:], []).append(value)
    return {vm: sum(v) / len(v) for vm, v in values.items() if len(v) >= 2}


def _add_variant_rows(
    table: Table, variant: str, rows: Sequence[Sequence[str | Text]], grouped: bool
) -> None:
    """Adds a variant's rows, naming the variant on the first only so that the eye finds where it
    starts; `grouped` puts a blank line after its last row."""
    for index, cells in enumerate(rows):
        table.add_row(variant if index == 0 else "", *cells, end_section=grouped and index == len(rows) - 1)


def variants_table(doc: Document) -> Table:
    """One row per variant and VM: IOPS (whole run and tail), MB/s and latency in ms.

    Variants are separated by a blank line when any of them has more than one VM.
    """
    grouped = any(len(variant["vms"]) > 1 for variant in doc["variants"])
    table = titled_table(f"{doc['scenario']}: variants")
    table.add_column("variant", no_wrap=True)
    table.add_column("VM", no_wrap=True)
    # The values are single words: only the headers wrap, when the terminal is narrow (`fit`).
    for header in ("IOPS", "tail IOPS", "MB/s", "mean ms", "p50 ms", "p99 ms", "p99.9 ms"):
        table.add_column(header, justify="right")
    for variant in doc["variants"]:
        rows = []
        tails = tail_iops(variant) if "timeseries" in variant else {}
        for vm in variant["vms"]:
            lat_ms = vm["lat_ms"]
            tail = tails.get(vm["name"])
            rows.append(
                [
                    vm["name"],
                    format_count(vm["iops"]),
                    "-" if tail is None else format_count(tail),
                    format_tenths(vm["mbps"]),
                    format_ms(lat_ms["mean"]),
                    format_ms(lat_ms["p50"]),
                    format_ms(lat_ms["p99"]),
                    format_ms(lat_ms["p999"]),
                ]
            )
        _add_variant_rows(table, variant["name"], rows, grouped)
    return table


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
    return any(host["flow_control"] for variant in doc["variants"] for host in entities(variant, "hosts"))


def shows_hosts(doc: Document) -> bool:
    """Whether hosts deserve a table of their own: several hosts in a variant, or flow control."""
    return flow_controlled(doc) or any(len(entities(variant, "hosts")) > 1 for variant in doc["variants"])


def host_cells(host: Mapping[str, Any], flow_control: bool) -> list[str]:
    """A host's row under HOST_COLUMNS, then FLOW_CONTROL_COLUMNS when `flow_control` (blank for a
    host without it); the terminal and the HTML report show the same text."""
    cells = [
        host["name"],
        format_count(host["vms"]),
        format_count(host["iops"]),
        format_ms(host["lat_ms"]["mean"]),
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


def hosts_table(doc: Document) -> Table | None:
    """One row per variant and host: VMs, IOPS, VM and device latency, and with flow control its
    kind, threshold, β, window and latency estimate. None when no variant has several hosts and
    no host has flow control: then the variants table says it all.

    Variants are separated by a blank line when any of them has more than one host.
    """
    if not shows_hosts(doc):
        return None
    flow_control = flow_controlled(doc)
    grouped = any(len(entities(variant, "hosts")) > 1 for variant in doc["variants"])
    table = titled_table("hosts")
    table.collapse_padding = True  # twelve columns fit 100 characters with one space between them
    if flow_control:
        table.caption = HOSTS_CAPTION
        table.caption_justify = "left"
    table.add_column("variant", no_wrap=True)
    headers = HOST_COLUMNS + FLOW_CONTROL_COLUMNS if flow_control else HOST_COLUMNS
    for header in headers:
        table.add_column(header, justify="left" if header in HOST_TEXT_COLUMNS else "right", no_wrap=True)
    for variant in doc["variants"]:
        rows = [host_cells(host, flow_control) for host in entities(variant, "hosts")]
        _add_variant_rows(table, variant["name"], rows, grouped)
    return table


def injector_table(doc: Document) -> Table | None:
    """SIOC's automatic threshold: per variant and volume, the injector's throughput and device
    latency at each outstanding-I/O level, then the threshold at the percent of the peak. None
    when no variant measured one."""
    measured = [(variant["name"], found) for variant in doc["variants"] for found in variant.get("injector", [])]
    if not measured:
        return None
    table = titled_table("SIOC injector: the automatic threshold")
    table.caption = "random reads to the idle datastore before the run; the threshold is the latency at the percent of peak"
    table.caption_justify = "left"
    for header in ("variant", "volume", "outstanding", "IOPS", "DAVG\nms"):
        table.add_column(header, justify="left" if header in ("variant", "volume") else "right", no_wrap=True)
    for name, found in measured:
        rows = [
            [found["volume"], str(point["outstanding"]), format_count(point["iops"]), format_ms(point["latency_ms"])]
            for point in found["points"]
        ]
        target = found["peak_iops"] * found["percent_of_peak"] / 100
        rows.append([found["volume"], f"{found['percent_of_peak']:g} % of peak", format_count(target), format_ms(found["threshold_ms"])])
        _add_variant_rows(table, name, rows, grouped=True)
    return table


ALUA_MARKS = {"ANO": "*", "standby": " s", "unavailable": " u"}


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


PATH_TABLE_VARIANTS = 5


def paths_tables(doc: Document) -> list[Table]:
    """The paths table, in groups of at most five variants so that columns stay readable."""
    variants = doc["variants"]
    return [
        paths_table({**doc, "variants": variants[i : i + PATH_TABLE_VARIANTS]})
        for i in range(0, len(variants), PATH_TABLE_VARIANTS)
    ]


def paths_table(doc: Document) -> Table:
    """Paths as rows, variants as columns: each cell is the path's I/O share and mean latency,
    as esxtop's per-path view shows them; `*` marks a non-optimized path, `-` a path that
    carried no I/O. Host and device columns appear only when there is more than one of them.
    """
    rows: dict[tuple[str, str, str], dict[str, Mapping[str, Any]]] = {}
    for variant in doc["variants"]:
        for path in variant["paths"]:
            rows.setdefault((path["host"], path["device"], path["name"]), {})[variant["name"]] = path
    extra = [
        index for index, key in enumerate(("host", "device")) if len({row[index] for row in rows}) > 1
    ]
    table = titled_table("paths: I/O share % / mean ms")
    table.caption = "* active-non-optimized (ANO), s standby, u unavailable; - no I/O"
    table.caption_justify = "left"
    for index in extra:
        table.add_column(("host", "device")[index], no_wrap=True)
    table.add_column("path", no_wrap=True)
    for variant in doc["variants"]:
        table.add_column(variant["name"], justify="right", no_wrap=True)
    for key, by_variant in rows.items():
        cells = []
        for variant in doc["variants"]:
            path = by_variant.get(variant["name"])
            if path is None:
                cells.append("")
                continue
            latency = format_ms(path["lat_ms"]["mean"]) if path["ios"] else "-"
            mark = ALUA_MARKS.get(path["alua"], "")
            cells.append(f"{100.0 * path['share']:.1f} / {latency}{mark}")
        table.add_row(*(key[index] for index in extra), key[2], *cells)
    return table


def devices_table(doc: Document) -> Table:
    """esxtop's device view, one row per variant and device: DQLEN, ACTV, QUED (time averages),
    KAVG, DAVG, GAVG (mean ms in the kernel queue, on the path, both) and QUEUE FULLs."""
    table = titled_table("devices (esxtop)")
    table.add_column("variant", no_wrap=True)
    table.add_column("device", no_wrap=True)
    for header in ("DQLEN", "ACTV", "QUED", "KAVG ms", "DAVG ms", "GAVG ms", "QFULL"):
        table.add_column(header, justify="right")  # single words: only the headers wrap
    for variant in doc["variants"]:
        rows = [
            [
                device["name"],
                format_tenths(device["dqlen_mean"]),
                format_tenths(device["actv_mean"]),
                format_tenths(device["qued_mean"]),
                format_ms(device["kavg_ms"]),
                format_ms(device["davg_ms"]),
                format_ms(device["gavg_ms"]),
                format_count(device["qfull"]),
            ]
            for device in variant["devices"]
        ]
        _add_variant_rows(table, variant["name"], rows, grouped=False)
    return table


def cores_table(doc: Document) -> Table | None:
    """Arrays' cores as rows, variants as columns: share of requests % / utilisation %.
    None when no array has cores."""
    rows: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = {}
    for variant in doc["variants"]:
        for array in variant["arrays"]:
            for core in array.get("cores", []):
                rows.setdefault((array["name"], core["name"]), {})[variant["name"]] = core
    if not rows:
        return None
    table = titled_table("cores: share of requests % / utilisation %")
    table.add_column("array", no_wrap=True)
    table.add_column("core", no_wrap=True)
    for variant in doc["variants"]:
        table.add_column(variant["name"], justify="right", no_wrap=True)
    for (array, core), by_variant in rows.items():
        cells = [
            f"{100 * c['share']:.1f} / {100 * c['util']:.0f}" if (c := by_variant.get(v["name"])) else ""
            for v in doc["variants"]
        ]
        table.add_row(array, core, *cells)
    return table


REPEAT_MIN = 3
"""Identical path selection events at least this many times at a constant period print as one row."""


@dataclass(frozen=True)
class Repeated:
    """A path selection event and how it repeats: `count` times, `period_s` apart, the last at `last_s`."""

    event: Mapping[str, Any]
    count: int = 1
    period_s: float = 0.0
    last_s: float = 0.0


def fold_repeats(events: Sequence[Mapping[str, Any]]) -> list[Repeated]:
    """The events in time order with each periodic run (the same device, event and paths at least
    REPEAT_MIN times at a constant period: a flapping path) folded into its first occurrence, so
    that an hour of flapping is a few rows, not thousands."""
    by_key: dict[tuple[str, str, tuple[str, ...]], list[Mapping[str, Any]]] = {}
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


def psp_events_table(variant: Mapping[str, Any]) -> Table:
    """Path selection events of a variant: time, device, event and the paths it names; events that
    repeat at a constant period (a flapping path) are one row with a `repeats` column."""
    rows = fold_repeats(variant["psp_events"])
    table = titled_table(f"{variant['name']}: path selection events")
    table.add_column("t s", justify="right", no_wrap=True)
    table.add_column("device", no_wrap=True)
    table.add_column("event")
    table.add_column("paths")
    repeats = any(row.count > 1 for row in rows)
    if repeats:
        table.add_column("repeats")
    for row in rows:
        event = row.event
        cells = [f"{event['t_s']:.3f}", event["device"], event["event"], compact_names(event["paths"])]
        if repeats:
            cells.append(repeat_text(row))
        table.add_row(*cells)
    return table


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


def faults_table(doc: Document) -> Table | None:
    """Each fault edge of each variant with the host's reaction and the VMs' recovery; None when
    no variant has faults."""
    found = [(variant["name"], failover.faults(variant)) for variant in doc["variants"]]
    if not any(faults for _, faults in found):
        return None
    table = titled_table("faults and failover")
    table.collapse_padding = True
    table.caption = FAULTS_CAPTION
    table.caption_justify = "left"
    table.add_column("variant", no_wrap=True)
    # Edge, kind and target share a column that wraps, with the detail under them, dimmed, so that
    # the table fits 80 columns; the numbers are single words, which wrap only in their headers.
    for header in ("t s", "edge, kind, target", "marked s", "max ms", "back s"):
        table.add_column(header, justify="left" if header == "edge, kind, target" else "right")
    for name, faults in found:
        rows = [
            [cells[0], Text.assemble(" ".join(cells[1:4]), ("\n" + cells[4], "dim") if cells[4] else ""),
             *cells[5:]]  # fmt: skip
            for fault in faults
            for cells in fault_rows(fault)
        ]
        _add_variant_rows(table, name, rows, grouped=True)
    return table


def failed_text(counts: failover.Counts) -> str:
    """Failed I/Os with their reasons: `12 (apd_timeout 10, no_path 2)`."""
    if not counts.failed_by_reason:
        return format_count(counts.failed)
    reasons = ", ".join(f"{reason} {format_count(n)}" for reason, n in counts.failed_by_reason.items())
    return f"{format_count(counts.failed)} ({reasons})"


def failover_counts_table(doc: Document) -> Table | None:
    """VMs, devices and paths with I/Os retried, failed (by reason) or failed over; None when no
    entity of any variant has any, so a healthy run prints what it printed before faults existed."""
    found = [(variant["name"], failover.counts(variant)) for variant in doc["variants"]]
    if not any(rows for _, rows in found):
        return None
    table = titled_table("failover counts: I/Os")
    table.caption = "retried: commands sent again after an abort; failed over: moved off this path to another"
    table.caption_justify = "left"
    for header in ("variant", "kind", "name", "retried", "failed", "failed over"):
        text = header in ("variant", "kind", "name")
        table.add_column(header, justify="left" if text else "right", no_wrap=True)
    for name, rows in found:
        cells = [
            [row.kind, row.name, format_count(row.retried), failed_text(row), format_count(row.failed_over)]
            for row in rows
        ]
        _add_variant_rows(table, name, cells, grouped=True)
    return table


def _param_text(param: Mapping[str, Any]) -> str:
    """`name: type = default`; a default that is not text is written as in JSON and TOML (`false`)."""
    default = param.get("default")
    if default is None:
        return f"{param['name']}: {param['type']}"
    shown = default if isinstance(default, str) else json.dumps(default)
    return f"{param['name']}: {param['type']} = {shown}"


def kinds_tables(kinds: Sequence[Mapping[str, Any]]) -> list[Table]:
    """One table per extension point listing its kinds, summaries and parameters."""
    by_point: dict[str, list[Mapping[str, Any]]] = {}
    for kind in kinds:
        by_point.setdefault(kind["extension_point"], []).append(kind)
    tables = []
    for point, entries in by_point.items():
        table = titled_table(point)
        table.add_column("kind", no_wrap=True)
        table.add_column("summary", ratio=3)
        table.add_column("params", ratio=2)
        for entry in entries:
            params = "\n".join(_param_text(param) for param in entry["params"])
            table.add_row(entry["kind"], entry["summary"], params)
        tables.append(table)
    return tables
