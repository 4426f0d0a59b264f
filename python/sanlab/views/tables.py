"""The terminal's tables (rich) of a run's results and of the component kinds; `views.fit` lays
each out to the console's width."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table
from rich.text import Text

from sanlab.analysis import failover
from sanlab.analysis.health import (
    IN_USE_FRACTION,
    REACTED_SHARE,
    DeviceHealth,
    compares_selectors,
    health,
)
from sanlab.analysis.tail import tail_iops
from sanlab.document import CoreReport, Document, PathReport, Variant, hosts
from sanlab.formatting import format_count, format_fraction, format_ms, format_seconds, format_tenths
from sanlab.views.fit import titled_table
from sanlab.views.legend import legend
from sanlab.views.rows import (
    FAULTS_CAPTION,
    FLOW_CONTROL_COLUMNS,
    HOST_COLUMNS,
    HOST_TEXT_COLUMNS,
    HOSTS_CAPTION,
    STAGE_COLUMNS,
    STAGES_CAPTION,
    compact_names,
    failed_text,
    fault_rows,
    flow_controlled,
    fold_repeats,
    host_cells,
    repeat_text,
    shows_hosts,
    shows_stages,
    stage_cells,
    with_interval,
)


def _add_variant_rows(
    table: Table, variant: str, rows: Sequence[Sequence[str | Text]], grouped: bool
) -> None:
    """Adds a variant's rows, naming the variant on the first only so that the eye finds where it
    starts; `grouped` puts a blank line after its last row."""
    for index, cells in enumerate(rows):
        table.add_row(variant if index == 0 else "", *cells, end_section=grouped and index == len(rows) - 1)


REPLICATED_CAPTION = (
    "± half-width of the 95 % interval over the replications (Student's t); tail IOPS: the first replication's",
    "few: too few I/Os beyond the percentile in a replication to estimate it",
)


BATCH_CAPTION = (
    "± half-width of the 95 % interval of IOPS and mean latency from batch means of the run's time series",
    "percentiles: run --replications 2 or more",
)


def variants_table(doc: Document) -> Table:
    """One row per variant and VM: IOPS (whole run and tail), MB/s and latency in ms.

    Variants are separated by a blank line when any of them has more than one VM.
    """
    grouped = any(len(variant["vms"]) > 1 for variant in doc["variants"])
    table = titled_table(f"{doc['scenario']}: variants")
    if any("replicas" in variant for variant in doc["variants"]):
        table.caption = legend(REPLICATED_CAPTION)
        table.caption_justify = "left"
    elif any("ci95_method" in variant for variant in doc["variants"]):
        table.caption = legend(BATCH_CAPTION)
        table.caption_justify = "left"
    table.add_column("variant", no_wrap=True)
    table.add_column("VM", no_wrap=True)
    # The values are single words: only the headers wrap, when the terminal is narrow (`fit`).
    for header in ("IOPS", "tail IOPS", "MB/s", "mean ms", "p50 ms", "p99 ms", "p99.9 ms"):
        table.add_column(header, justify="right")
    for variant in doc["variants"]:
        rows = []
        tails = tail_iops(variant) if "timeseries" in variant else {}
        for vm in variant["vms"]:
            tail = tails.get(vm["name"])
            rows.append(
                [
                    vm["name"],
                    with_interval(vm, "iops", format_count),
                    "-" if tail is None else format_count(tail),
                    with_interval(vm, "mbps", format_tenths),
                    *(with_interval(vm, figure, format_ms) for figure in ("mean", "p50", "p99", "p999")),
                ]
            )
        _add_variant_rows(table, variant["name"], rows, grouped)
    return table


def hosts_table(doc: Document) -> Table | None:
    """One row per variant and host: VMs, IOPS, VM and device latency, and with flow control its
    kind, threshold, β, window and latency estimate. None when no variant has several hosts and
    no host has flow control: then the variants table says it all.

    Variants are separated by a blank line when any of them has more than one host.
    """
    if not shows_hosts(doc):
        return None
    flow_control = flow_controlled(doc)
    grouped = any(len(hosts(variant)) > 1 for variant in doc["variants"])
    table = titled_table("hosts")
    table.collapse_padding = True  # twelve columns fit 100 characters with one space between them
    if flow_control:
        table.caption = legend(HOSTS_CAPTION)
        table.caption_justify = "left"
    table.add_column("variant", no_wrap=True)
    headers = HOST_COLUMNS + FLOW_CONTROL_COLUMNS if flow_control else HOST_COLUMNS
    for header in headers:
        table.add_column(header, justify="left" if header in HOST_TEXT_COLUMNS else "right", no_wrap=True)
    for variant in doc["variants"]:
        rows = [host_cells(host, flow_control) for host in hosts(variant)]
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
    table.caption = legend("random reads to the idle datastore before the run; the threshold is the latency at the percent of peak")
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
    rows: dict[tuple[str, str, str], dict[str, PathReport]] = {}
    for variant in doc["variants"]:
        for path in variant["paths"]:
            rows.setdefault((path["host"], path["device"], path["name"]), {})[variant["name"]] = path
    extra = [
        index for index, key in enumerate(("host", "device")) if len({row[index] for row in rows}) > 1
    ]
    table = titled_table("paths: I/O share % / mean ms")
    table.caption = legend(["* active-non-optimized (ANO)", "s standby", "u unavailable", "- no I/O"])
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
            latency = with_interval(path, "mean", format_ms) if path["ios"] else "-"
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


def stages_table(doc: Document) -> Table | None:
    """Each VM's mean latency by stage, one row per variant and VM; None for a run folder written
    before the engine reported stages."""
    if not shows_stages(doc):
        return None
    table = titled_table("VMs: where the latency goes")
    table.caption = legend(STAGES_CAPTION)
    table.add_column("variant", no_wrap=True)
    table.add_column("VM", no_wrap=True)
    for header in STAGE_COLUMNS:
        table.add_column(header, justify="right")
    for variant in doc["variants"]:
        _add_variant_rows(table, variant["name"], [[vm["name"], *stage_cells(vm)] for vm in variant["vms"]], grouped=False)
    return table


def cores_table(doc: Document) -> Table | None:
    """Arrays' cores as rows, variants as columns: share of requests % / utilisation %.
    None when no array has cores."""
    rows: dict[tuple[str, str], dict[str, CoreReport]] = {}
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


def psp_events_table(variant: Variant) -> Table:
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


def faults_table(doc: Document) -> Table | None:
    """Each fault edge of each variant with the host's reaction and the VMs' recovery; None when
    no variant has faults."""
    found = [(variant["name"], failover.faults(variant)) for variant in doc["variants"]]
    if not any(faults for _, faults in found):
        return None
    table = titled_table("faults and failover")
    table.collapse_padding = True
    table.caption = legend(FAULTS_CAPTION)
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


def failover_counts_table(doc: Document) -> Table | None:
    """VMs, devices and paths with I/Os retried, failed (by reason) or failed over; None when no
    entity of any variant has any, so a healthy run prints what it printed before faults existed."""
    found = [(variant["name"], failover.counts(variant)) for variant in doc["variants"]]
    if not any(rows for _, rows in found):
        return None
    table = titled_table("failover counts: I/Os")
    table.caption = legend("retried: commands sent again after an abort; failed over: moved off this path to another")
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
        # Path selectors name the platform whose multipathing offers them (the engine's registry).
        platforms = any("platform" in entry for entry in entries)
        table.add_column("kind", no_wrap=True)
        if platforms:
            table.add_column("platform", no_wrap=True)
        table.add_column("summary", ratio=3)
        table.add_column("params", ratio=2)
        for entry in entries:
            params = "\n".join(_param_text(param) for param in entry["params"])
            platform = [entry.get("platform", "")] if platforms else []
            table.add_row(entry["kind"], *platform, entry["summary"], params)
        tables.append(table)
    return tables


def reaction_text(found: DeviceHealth) -> str:
    """A device's reaction to its degrading path: seconds or `never`; `unused` when the path
    carried too little before to react to; `-` when none of its paths degraded."""
    if found.degraded_path is None:
        return "-"
    if not found.used_before:
        return "unused"
    return format_seconds(found.reaction_s)


def health_table(doc: Document) -> Table | None:
    """The selectors side by side, one row per variant and device: IOPS, p99 and p99.9 device
    latency, reaction to a degrading path and its share while degraded (when the run has one),
    flaps per hour and balance. None unless the run compares path selectors."""
    if not compares_selectors(doc):
        return None
    found = health(doc)
    degraded = any(row.degraded_path for row in found)
    several = any(len(variant["devices"]) > 1 for variant in doc["variants"])
    table = titled_table("path selector health")
    table.caption = legend([*DEGRADATION_NOTES, *NOTES] if degraded else NOTES)
    table.caption_justify = "left"
    table.add_column("variant", no_wrap=True)
    if several:
        table.add_column("device", no_wrap=True)
    headers = ["IOPS", "p99 ms", "p99.9 ms"]
    headers += ["react s", "bad %"] if degraded else []
    headers += ["flaps/h", "balance"]
    for header in headers:
        table.add_column(header, justify="right")  # single words: only the headers wrap
    previous = None
    for row in found:
        cells = [format_count(row.iops), format_ms(row.p99_ms), format_ms(row.p999_ms)]
        if degraded:
            cells += [reaction_text(row), format_fraction(row.degraded_share, percent=True)]
        balance_text = format_fraction(row.balance) + ("" if row.balance_over == "controllers" else "*")
        cells += [format_count(row.flaps_per_hour), balance_text]
        name = row.variant if row.variant != previous else ""
        table.add_row(name, *([row.device] if several else []), *cells)
        previous = row.variant
    return table


DEGRADATION_NOTES = (
    f"react: s from a path's degradation until it carries under {100 * REACTED_SHARE:g} % of the "
    "device's I/O (and under half an equal share) for good; unused: it carried less than that before",
    "bad %: its share while degraded",
)

NOTES = (
    f"flaps/h: changes of the set of paths in use (>= {IN_USE_FRACTION:g} of an equal share) between "
    "samples, per hour",
    "balance: least / most loaded controller of the array used (* its paths: no controllers known)",
    "docs/studies/poor_health.md",
)
"""The health table's caption: what each column means."""

ALUA_MARKS = {"ANO": "*", "standby": " s", "unavailable": " u"}
