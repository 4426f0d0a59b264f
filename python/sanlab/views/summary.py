"""What `sanlab run` prints: every table when they fit a screen, else a summary that does.

The summary is one table with a row per VM of each variant, or per variant when that makes too
many rows: IOPS and latency and, when the run has them, the headline of the path selector health
(its worst device) and of the faults (the slowest reaction and recovery), with as many columns
as the console's width takes, the most useful first. `--verbose` prints every table.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from sanlab.analysis import failover
from sanlab.analysis.health import DeviceHealth, compares_selectors, health
from sanlab.analysis.tail import tail_iops
from sanlab.document import Document, Variant, VmReport
from sanlab.formatting import format_count, format_fraction, format_ms, format_time_s
from sanlab.views.fit import fit, min_width, titled_table
from sanlab.views.legend import legend
from sanlab.views.tables import (
    cores_table,
    devices_table,
    failover_counts_table,
    faults_table,
    health_table,
    hosts_table,
    injector_table,
    paths_tables,
    psp_events_table,
    reaction_text,
    stages_table,
    variants_table,
)

SCREEN_LINES = 70
"""Runs whose tables take at most this many lines at REFERENCE_WIDTH print them all: the metro
study (5 variants, 62 lines) does; the failover study (30 variants, 680 lines) gets the summary."""

REFERENCE_WIDTH = 120
"""The width the tables are counted at, so that a terminal's width does not change what is
printed (output that is not a terminal is this wide too)."""

SUMMARY_VM_ROWS = 32
"""The summary has a row per VM of each variant when that makes at most this many rows, else one
per variant with its VMs' IOPS summed and its slowest VM's latency."""


def every_table(doc: Document) -> list[tuple[str, Table]]:
    """The tables `sanlab run --verbose` prints, in order, each with a short name; those without
    rows are left out."""
    tables = [
        ("variants", variants_table(doc)),
        ("hosts", hosts_table(doc)),
        ("SIOC injector", injector_table(doc)),
        ("path selector health", health_table(doc)),
        *(("paths", table) for table in paths_tables(doc)),
        ("devices", devices_table(doc)),
        ("latency stages", stages_table(doc)),
        ("cores", cores_table(doc)),
        *(("path selection events", psp_events_table(v)) for v in doc["variants"] if v["psp_events"]),
        ("fault edges", faults_table(doc)),
        ("failover counts", failover_counts_table(doc)),
    ]
    return [(name, table) for name, table in tables if table is not None]


def print_tables(console: Console, tables: Sequence[Table]) -> None:
    """Prints each table, split where it is too wide for the console, and a blank line after it."""
    for table in tables:
        for part in fit(table, console):
            console.print(part)
            console.print()


def line_count(tables: Sequence[Table], width: int) -> int:
    """The lines `print_tables` takes at `width` columns."""
    console = Console(width=width, file=io.StringIO(), color_system=None, markup=False)  # as the terminal's
    with console.capture() as capture:
        print_tables(console, tables)
    return capture.get().count("\n")


def fits_a_screen(tables: Sequence[Table]) -> bool:
    """Whether `tables` take at most SCREEN_LINES lines at REFERENCE_WIDTH. Tables with more rows
    than that are not rendered to count their lines (a row takes one line at least): a 10,000-VM
    table takes long, and 30 variants' a tenth of a second."""
    if sum(table.row_count for table in tables) > SCREEN_LINES:
        return False
    lines = 0
    for table in tables:
        if lines + table.row_count > SCREEN_LINES:
            return False
        lines += line_count([table], REFERENCE_WIDTH)
    return lines <= SCREEN_LINES


@dataclass(frozen=True)
class Row:
    """A row of the summary: a variant's VMs (one, or all of them); `first` for the variant's first
    row, which carries its name and the figures of the variant as a whole."""

    variant: Variant
    vms: Sequence[VmReport]
    first: bool


def summary_rows(doc: Document) -> list[Row]:
    """A row per VM of each variant, or per variant when there would be over SUMMARY_VM_ROWS; a
    variant without VMs has none."""
    if sum(len(variant["vms"]) for variant in doc["variants"]) <= SUMMARY_VM_ROWS:
        return [Row(v, [vm], index == 0) for v in doc["variants"] for index, vm in enumerate(v["vms"])]
    return [Row(variant, variant["vms"], True) for variant in doc["variants"] if variant["vms"]]


@dataclass(frozen=True)
class Column:
    """A figure of the summary: its header, a cell per row, and its rank (0 is kept first) when the
    console is too narrow for them all."""

    header: str
    cells: list[str]
    rank: int


def _slowest_reaction(devices: Sequence[DeviceHealth]) -> str:
    """The slowest reaction to a degrading path over the devices: one that was in use before it
    degraded counts before one that was not, and `never` after any time."""
    slowest = max(
        devices,
        key=lambda d: (
            d.degraded_path is not None,
            d.used_before,
            math.inf if d.reaction_s is None else d.reaction_s,
        ),
    )
    return reaction_text(slowest)


def _lowest_balance(devices: Sequence[DeviceHealth]) -> str:
    found = [device for device in devices if device.balance is not None]
    if not found:
        return "-"
    lowest = min(found, key=lambda d: d.balance or 0.0)
    return format_fraction(lowest.balance) + ("" if lowest.balance_over == "controllers" else "*")


def _slowest_marking(faults: Sequence[failover.Fault]) -> str:
    """The longest time until the host marked a fault's paths dead: `never` when it missed one that
    takes paths down; `-` when no fault takes paths down."""
    found = [f.marked_dead_s for f in faults if f.paths and f.kind in failover.PATH_FAILURE_KINDS]
    if not found:
        return "-"
    known = [seconds for seconds in found if seconds is not None]
    return "never" if len(known) < len(found) else format_time_s(max(known))


def _slowest_recovery(faults: Sequence[failover.Fault]) -> str:
    """The longest time until the VMs' IOPS were back over the faults and VMs: `not back` when some
    were not; `-` when no VM had a level to come back to."""
    found = [seconds for fault in faults for seconds in fault.recovery_s.values()]
    if not found:
        return "-"
    known = [seconds for seconds in found if seconds is not None]
    return "not back" if len(known) < len(found) else format_time_s(max(known))


def _longest_io(faults: Sequence[failover.Fault]) -> str:
    found = [fault.max_latency_ms for fault in faults if fault.max_latency_ms is not None]
    return format_ms(max(found)) if found else "-"


Note = tuple[tuple[str, ...], str]
"""How the figures under some headers sum up several VMs, devices or faults: for the caption."""


def summary_columns(doc: Document, rows: Sequence[Row]) -> tuple[list[Column], list[Note]]:
    """The summary's figures after the names, in display order, and the notes for its caption."""
    tails = {v["name"]: tail_iops(v) if "timeseries" in v else {} for v in doc["variants"]}

    def per_row(header: str, rank: int, text: Callable[[Row], str]) -> Column:
        return Column(header, [text(row) for row in rows], rank)

    def per_variant(header: str, rank: int, text: Callable[[str], str]) -> Column:
        """A figure of the variant as a whole, on its first row."""
        found = {variant["name"]: text(variant["name"]) for variant in doc["variants"]}
        return Column(header, [found[row.variant["name"]] if row.first else "" for row in rows], rank)

    def tail(row: Row) -> str:
        found = [tails[row.variant["name"]].get(vm["name"]) for vm in row.vms]
        known = [iops for iops in found if iops is not None]
        return format_count(sum(known)) if len(known) == len(found) else "-"

    columns = [
        per_row("IOPS", 0, lambda row: format_count(sum(vm["iops"] for vm in row.vms))),
        per_row("tail IOPS", 5, tail),
        per_row("p99 ms", 8, lambda row: format_ms(max(vm["lat_ms"]["p99"] for vm in row.vms))),
        per_row("p99.9 ms", 1, lambda row: format_ms(max(vm["lat_ms"]["p999"] for vm in row.vms))),
    ]
    notes: list[Note] = []
    if any(len(row.vms) > 1 for row in rows):
        columns.insert(0, per_row("VMs", 10, lambda row: format_count(len(row.vms))))
        notes += [(("IOPS", "tail IOPS"), "the VMs' sum"), (("p99 ms", "p99.9 ms"), "the slowest VM's")]
    if compares_selectors(doc):
        devices: dict[str, list[DeviceHealth]] = {}
        for found in health(doc):
            devices.setdefault(found.variant, []).append(found)
        if any(device.degraded_path for found in devices.values() for device in found):
            columns.append(per_variant("react s", 3, lambda name: _slowest_reaction(devices[name])))
        columns.append(
            per_variant("flaps/h", 7, lambda name: format_count(max(d.flaps_per_hour for d in devices[name])))
        )
        columns.append(per_variant("balance", 9, lambda name: _lowest_balance(devices[name])))
        notes.append((("react s", "flaps/h", "balance"), "the path selector's health on its worst device"))
    faults = {variant["name"]: failover.faults(variant) for variant in doc["variants"]}
    if any(faults.values()):
        columns += [
            per_variant("marked s", 6, lambda name: _slowest_marking(faults[name])),
            per_variant("max ms", 4, lambda name: _longest_io(faults[name])),
            per_variant("back s", 2, lambda name: _slowest_recovery(faults[name])),
        ]
        notes.append((("marked s", "max ms", "back s"), "the slowest over the variant's faults"))
    return columns, notes


def _prefix(name: str) -> str:
    """A variant name up to its first separator: `notice` of `notice-fixed`, `dm` of `dm_service_time`."""
    return re.split(r"[-_.:/ ]", name, maxsplit=1)[0]


def prefix_breaks(names: Sequence[str]) -> set[int]:
    """The indices of `names` after which a blank line sets apart consecutive names sharing a
    prefix from those around them; none when no two consecutive names share one."""
    prefixes = [_prefix(name) for name in names]
    shared = [
        any(0 <= j < len(prefixes) and prefixes[j] == prefix for j in (i - 1, i + 1))
        for i, prefix in enumerate(prefixes)
    ]
    return {
        i for i in range(len(names) - 1) if prefixes[i] != prefixes[i + 1] and (shared[i] or shared[i + 1])
    }


NOT_SUMMED_UP = ("MB/s", "mean ms", "p50 ms")
"""The variants table's figures the summary leaves out whatever the width."""


def summary_table(doc: Document, console: Console) -> tuple[Table, list[str]]:
    """The summary and what it leaves out of the variants table: a row per VM when it sums them
    up, the figures it never shows and those the console's width left out."""
    rows = summary_rows(doc)
    columns, notes = summary_columns(doc, rows)
    # A row per VM names its VM when some variant has several.
    named_vms = any(len(v["vms"]) > 1 for v in doc["variants"]) and all(len(row.vms) == 1 for row in rows)
    breaks = (
        {i for i in range(len(rows) - 1) if rows[i + 1].first}
        if named_vms
        else prefix_breaks([row.variant["name"] for row in rows])
    )

    def build(shown: Sequence[Column]) -> Table:
        table = titled_table(f"{doc['scenario']}: variants")
        headers = [column.header for column in shown]
        caption = [
            f"{', '.join(h for h in noted if h in headers)}: {text}"
            for noted, text in notes
            if any(h in headers for h in noted)
        ]
        if caption:
            table.caption = legend(caption)
            table.caption_justify = "left"
        table.add_column("variant", no_wrap=True)
        if named_vms:
            table.add_column("VM", no_wrap=True)
        for column in shown:
            # Headers on two lines keep the columns as narrow as their numbers, which never wrap.
            table.add_column(column.header.replace(" ", "\n"), justify="right", no_wrap=True)
        for index, row in enumerate(rows):
            names = [row.variant["name"] if row.first else "", *([row.vms[0]["name"]] if named_vms else [])]
            table.add_row(*names, *(column.cells[index] for column in shown), end_section=index in breaks)
        return table

    shown: set[str] = set()
    for candidate in sorted(columns, key=lambda column: column.rank):
        wider = shown | {candidate.header}
        if not shown or min_width(build([c for c in columns if c.header in wider]), console) <= console.width:
            shown = wider
    left_out = [column.header for column in columns if column.header not in shown]
    per_vm = [] if all(len(row.vms) == 1 for row in rows) else ["a row per VM"]
    table = build([column for column in columns if column.header in shown])
    return table, [*per_vm, *NOT_SUMMED_UP, *(header for header in left_out if header != "VMs")]


def verbose_adds(tables: Sequence[tuple[str, Table]], left_out: Sequence[str]) -> str:
    """The line under the summary: what `--verbose` prints besides (what the summary left out of
    the variants table, and the other `tables` as `every_table` names them), and that the report
    has it all."""
    names = dict.fromkeys(name for name, _ in tables if name != "variants")
    return f"--verbose adds {', '.join(left_out)}, and the tables {', '.join(names)}; so does the report"
