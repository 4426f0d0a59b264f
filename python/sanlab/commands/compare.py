"""`sanlab compare RUN_DIR RUN_DIR...`: runs side by side in one HTML page; `sanlab compare RUN_DIR
--esxtop|--iostat|--typeperf CAPTURE`: one run beside the host's capture it was imported from."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from sanlab.analysis.differences import differences, methods
from sanlab.commands import options
from sanlab.commands.terminal import console
from sanlab.export.files import refuse_inputs, replace_text
from sanlab.export.runfolder import (
    MANIFEST_FILE,
    RESULTS_FILE,
    TIMESERIES_FILE,
    RunFolderError,
    read_run_folder,
    render_folders,
)
from sanlab.formatting import format_count, format_ms, shown_name
from sanlab.hostimport.compare import (
    TOOLS,
    Comparison,
    Figure,
    compare,
    compare_disks,
    disk_volumes,
    error_text,
    measured_sections,
    read_comparison,
    value_text,
)
from sanlab.hostimport.esxtop import read_capture
from sanlab.report import REPORT_FILE, ReportRun, merge_runs
from sanlab.views.legend import legend
from sanlab.views.names import shown_document
from sanlab.views.summary import print_tables
from sanlab.views.tables import variants_table

DEFAULT_COMPARE_FILE = Path("compare.html")
"""Where `sanlab compare` writes its page unless told otherwise."""


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run_dirs", metavar="RUN_DIR", type=Path, nargs="+", help="run folders (two or more; one with --esxtop, --iostat or --typeperf)"
    )
    captures = parser.add_mutually_exclusive_group()
    captures.add_argument(
        "--esxtop", type=Path, metavar="CSV",
        help="a host's esxtop batch capture: compare one run folder's devices and paths with it",
    )
    captures.add_argument(
        "--iostat", type=Path, metavar="FILE",
        help="a Linux host's `iostat -x` capture: compare one run folder's devices (and, with --multipath, paths) with it",
    )
    captures.add_argument(
        "--typeperf", type=Path, metavar="CSV",
        help="a Windows host's typeperf capture of its PhysicalDisk counters: compare one run folder's devices with it",
    )
    parser.add_argument(
        "--multipath", type=Path, metavar="FILE",
        help="with --iostat: the `multipath -ll` listing the scenario was imported from, to find each map's "
        "devices (dm-N) and each path's disk (sdX) in the capture",
    )
    options.add_variant(parser, "with a capture: the run's variant to compare (default: its only one)")
    parser.add_argument(
        "--json", type=Path, metavar="FILE",
        help="with a capture: where to write the comparison (default: RUN_DIR/<tool>-compare.json)",
    )
    options.add_out(parser, "page to write (default: %(default)s)", metavar="FILE", default=DEFAULT_COMPARE_FILE)


def main(args: argparse.Namespace) -> int:
    if args.multipath is not None and args.iostat is None:
        raise RunFolderError("compare: --multipath goes with --iostat (the listing the run's scenario was imported from)")
    if any(c is not None for c in (args.esxtop, args.iostat, args.typeperf)):
        return _with_capture(args, console())
    if len(args.run_dirs) < 2:
        raise RunFolderError("compare needs two or more run folders; for one, use `sanlab report RUN_DIR`")
    runs = [
        ReportRun(label, *read_run_folder(run_dir))
        for label, run_dir in zip(_labels(args.run_dirs), args.run_dirs, strict=True)
    ]
    page = render_folders(runs)
    # The page never replaces a file of a run it compares, and is never written through a link.
    refuse_inputs(args.out, [path for run_dir in args.run_dirs for path in run_dir.iterdir()], "--out")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    replace_text(args.out, page)
    terminal = console()
    print_tables(terminal, [variants_table(shown_document(merge_runs(runs)))])
    for run in runs[1:]:
        _print_differences(runs[0], run, terminal)
    print(f"report: {shown_name(str(args.out))}")
    return 0


def _print_differences(first: ReportRun, second: ReportRun, terminal: Console) -> None:
    """Each VM figure of the variants both runs have: the second minus the first with its 95 %
    interval, and whether that interval tells them apart."""
    found = differences(first.doc, second.doc)
    if not found:
        return
    table = Table(title=f"{shown_name(second.label)} against {shown_name(first.label)}", title_justify="left")
    for column in ("variant", "VM", "figure", "first", "second", "difference (95 %)", "verdict"):
        table.add_column(column, justify="left" if column in ("variant", "VM", "figure", "verdict") else "right")
    for d in found:
        shown = format_count if d.figure == "IOPS" else format_ms
        change = shown(d.second - d.first)
        if d.interval is not None and d.interval.half > 0:
            change += f" ±{shown(d.interval.half)}"
        table.add_row(
            shown_name(d.variant), shown_name(d.vm), d.figure, shown(d.first), shown(d.second), change, d.verdict
        )
    table.caption = legend([f"intervals: {method}" for method in methods(found)])
    table.caption_justify = "left"
    terminal.print(table)


def _labels(run_dirs: Sequence[Path]) -> list[str]:
    """Folder names, or the paths as given when two folders share a name."""
    names = [run_dir.resolve().name for run_dir in run_dirs]
    if len(set(names)) == len(names):
        return names
    return [str(run_dir) for run_dir in run_dirs]


def _table(title: str, figures: list[Figure], terminal: Console) -> None:
    table = Table(title=title, title_justify="left")
    for column in ("entity", "figure", "measured", "simulated", "error"):
        table.add_column(column, justify="left" if column in ("entity", "figure") else "right")
    for f in figures:
        # Names from the capture and the run folder, escaped for the terminal.
        table.add_row(
            shown_name(f.entity), shown_name(f.figure), value_text(f.measured), value_text(f.simulated), error_text(f)
        )
    terminal.print(table)


def _tool(args: argparse.Namespace) -> tuple[str, Path]:
    """The capture's tool and file."""
    return next((name, getattr(args, name)) for name in TOOLS if getattr(args, name) is not None)


def _compare(args: argparse.Namespace, tool: str, chosen: dict, results: Path, index: int) -> tuple[Comparison, object]:
    """The comparison of the capture with the run's variant `chosen`, and the capture read."""
    if tool == "esxtop":
        capture = read_capture(args.esxtop)
        return compare(capture, chosen, results, index), capture  # type: ignore[arg-type]
    volumes = link_of = None
    if tool == "iostat":
        from sanlab.hostimport.linux.iostat import read_iostat
        from sanlab.hostimport.linux.multipath import read_multipath
        from sanlab.hostimport.linux.topology import from_multipath

        disks = read_iostat(args.iostat)
        if args.multipath is not None:
            maps, _ = read_multipath(args.multipath)
            volumes = from_multipath(maps).volumes
            link_of = {p.devnode: f"{p.hctl[0]}:{p.hctl[1]}:{p.hctl[2]}" for m in maps for g in m.groups for p in g.paths if p.devnode and p.hctl}
    else:
        from sanlab.hostimport.windows.typeperf import read_typeperf

        disks = read_typeperf(args.typeperf)
    matched = disk_volumes(chosen, disks, tool, volumes)  # type: ignore[arg-type]
    return compare_disks(disks, chosen, results, index, tool, matched, link_of or {}), disks  # type: ignore[arg-type]


def _with_capture(args: argparse.Namespace, terminal: Console) -> int:
    tool, capture_path = _tool(args)
    if len(args.run_dirs) != 1:
        raise RunFolderError(f"compare --{tool} compares one run folder with the capture: give one RUN_DIR")
    run_dir = args.run_dirs[0]
    document, _ = read_run_folder(run_dir)
    variants = document["variants"]
    names = [v["name"] for v in variants]
    if args.variant is None and len(variants) > 1:
        raise RunFolderError(f"{run_dir} has {len(variants)} variants ({', '.join(names)}): name one with --variant")
    chosen = variants[0] if args.variant is None else next((v for v in variants if v["name"] == args.variant), None)
    if chosen is None:
        raise RunFolderError(f"{run_dir} has no variant {args.variant!r}; it has {', '.join(names)}")
    if args.json is not None:
        inputs = [capture_path, *([args.multipath] if args.multipath is not None else [])]
        refuse_inputs(args.json, [*inputs, *(run_dir / name for name in (MANIFEST_FILE, RESULTS_FILE, TIMESERIES_FILE))], "--json")
    comparison, capture = _compare(args, tool, chosen, run_dir / RESULTS_FILE, variants.index(chosen))
    _table("devices: the capture's mean against the run", comparison.devices, terminal)
    if comparison.links:
        _table("links: share of all commands", comparison.links, terminal)
    for note in comparison.notes:
        print(f"note: {shown_name(note)}", file=sys.stderr)
    document = comparison.document(capture, chosen["name"])  # type: ignore[arg-type]
    # allow_nan=False: a figure that is not finite is a bug here, never `NaN` in the file.
    text = json.dumps(document, allow_nan=False) + "\n"
    if args.json is not None:
        replace_text(args.json, text, check=read_comparison)
        print(f"comparison: {args.json}")
        return 0
    # Into the run folder (someone else's, maybe): never through a link there; read back as
    # `sanlab report` will read it.
    out = run_dir / TOOLS[tool].file
    replace_text(out, text, check=read_comparison)
    # The run's report gains the section (and keeps any other capture's); `sanlab report RUN_DIR`
    # keeps them while the files are there.
    run = ReportRun(run_dir.name, *read_run_folder(run_dir))
    report = render_folders([run], measured_sections(run_dir, run.doc))
    replace_text(run_dir / REPORT_FILE, report)
    print(f"comparison: {out}; report: {run_dir / REPORT_FILE} (section \"{TOOLS[tool].heading}\")")
    return 0
