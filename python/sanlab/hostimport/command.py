"""`sanlab import esxi`: a host's esxcli storage listings in, a scenario out."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from sanlab.export.files import replace_text
from sanlab.formatting import shown_name
from sanlab.export.runfolder import RunFolderError, read_run_folder, render_folders
from sanlab.report import REPORT_FILE, ReportRun
from sanlab.hostimport.compare import COMPARE_FILE, Comparison, compare, error_text, report_section, value_text
from sanlab.hostimport.esxcli import ListingError, detect_kind, read_listings
from sanlab.hostimport.esxtop import Capture, CaptureError, read_capture
from sanlab.hostimport.scenario import DEFAULT_WORKLOAD, HostImportError, build

# What a listing, a capture or the host they describe can be refused for: one line each.
IMPORT_ERRORS = (ListingError, CaptureError, HostImportError)


def add_parser(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Registers `import esxi` among the command's subcommands."""
    imported = commands.add_parser("import", help="build a scenario from a real host's listings")
    platforms = imported.add_subparsers(dest="platform", required=True, metavar="PLATFORM")
    esxi = platforms.add_parser(
        "esxi",
        help="from `esxcli storage` listings (core device list, nmp device list, nmp path list, core path list)",
        description="Reads the host's esxcli storage listings (text, --formatter=csv or keyvalue, recognised by "
        "their content) and writes a scenario: its devices, paths and ALUA states, each device's path selection "
        "policy, the arrays behind the targets, and a workload per device. Every value names the listing and line "
        "it came from, or says it is sanlab's default. With --esxtop, each device runs the load the capture shows and "
        "its array answers as fast as the capture's DAVG (docs/from-your-host.md).",
    )
    esxi.add_argument("--esxcli", nargs="+", required=True, type=Path, metavar="FILE", help="listing files, or folders of them")
    esxi.add_argument("--esxtop", type=Path, metavar="CSV", help="an esxtop batch capture (esxtop -b) of the same host: each device then runs the load it carried, its array answers at the DAVG measured")
    esxi.add_argument("--workload", default=DEFAULT_WORKLOAD, metavar="CMDLINE", help=f"the fio command line of each device without a capture (default: {DEFAULT_WORKLOAD!r})")
    esxi.add_argument("--host", default="esx1", help="the host's name in the scenario (default esx1)")
    esxi.add_argument("--duration", default="60s", help="the scenario's simulated time (default 60s)")
    esxi.add_argument("-o", "--output", required=True, type=Path, metavar="SCENARIO", help="the scenario file to write")
    esxi.set_defaults(handler=run)


def _files(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """The files named, and the listings among a folder's files (sorted, not recursive), with a
    note naming the folder's other files: a folder such as a support bundle's holds more than
    listings. A file named on its own must be a listing."""
    out: list[Path] = []
    skipped: list[str] = []
    for p in paths:
        if not p.is_dir():
            out.append(p)
            continue
        for f in sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith(".")):
            try:
                detect_kind(f.read_text(encoding="utf-8", errors="replace"), str(f))
                out.append(f)
            except ListingError:
                skipped.append(f.name)
    notes = [f"not storage listings, skipped: {', '.join(skipped)}"] if skipped else []
    return out, notes


def _capture(path: Path) -> Capture:
    if not path.is_file():
        raise CaptureError(f"{path}: no such file: expected an esxtop batch capture (esxtop -b -a > capture.csv)")
    return read_capture(path)


def run(args: argparse.Namespace, argv: list[str]) -> int:
    files, notes = _files(args.esxcli)
    if not files:
        print(f"error: no listing files in {', '.join(map(str, args.esxcli))}", file=sys.stderr)
        return 2
    capture = _capture(args.esxtop) if args.esxtop is not None else None
    imported = build(read_listings(files), host=args.host, workload=args.workload, duration=args.duration, capture=capture)
    args.output.write_text(imported.toml, encoding="utf-8")
    for note in [*notes, *imported.notes]:
        print(f"note: {shown_name(note)}", file=sys.stderr)
    print(f"wrote {args.output}: run it with `sanlab run {args.output}`")
    return 0


def add_esxtop_compare(compare_parser: argparse.ArgumentParser) -> None:
    """`sanlab compare RUN_DIR --esxtop CAPTURE`: the run beside the host it was imported from."""
    compare_parser.add_argument("--esxtop", type=Path, metavar="CSV", help="a host's esxtop batch capture: compare one run folder's devices and paths with it")
    compare_parser.add_argument("--variant", metavar="NAME", help="with --esxtop: the run's variant to compare (default: its only one)")
    compare_parser.add_argument("--json", type=Path, metavar="FILE", help="with --esxtop: where to write the comparison (default: RUN_DIR/esxtop-compare.json)")


def _table(title: str, comparison_rows: list, console: Console) -> None:
    table = Table(title=title, title_justify="left")
    for column in ("entity", "figure", "measured", "simulated", "error"):
        table.add_column(column, justify="left" if column in ("entity", "figure") else "right")
    for f in comparison_rows:
        # Names from the capture and the run folder, escaped for the terminal.
        table.add_row(
            shown_name(f.entity), shown_name(f.figure), value_text(f.measured), value_text(f.simulated), error_text(f)
        )
    console.print(table)


def compare_with_capture(args: argparse.Namespace, console: Console) -> int:
    if len(args.run_dirs) != 1:
        raise RunFolderError("compare --esxtop compares one run folder with the capture: give one RUN_DIR")
    run_dir = args.run_dirs[0]
    document, _ = read_run_folder(run_dir)
    variants = document["variants"]
    names = [v["name"] for v in variants]
    if args.variant is None and len(variants) > 1:
        raise RunFolderError(f"{run_dir} has {len(variants)} variants ({', '.join(names)}): name one with --variant")
    chosen = variants[0] if args.variant is None else next((v for v in variants if v["name"] == args.variant), None)
    if chosen is None:
        raise RunFolderError(f"{run_dir} has no variant {args.variant!r}; it has {', '.join(names)}")
    capture = _capture(args.esxtop)
    comparison: Comparison = compare(capture, chosen)
    _table("devices: the capture's mean against the run", comparison.devices, console)
    _table("links: share of all commands", comparison.links, console)
    for note in comparison.notes:
        print(f"note: {shown_name(note)}", file=sys.stderr)
    document = comparison.document(capture, chosen["name"])
    out = args.json if args.json is not None else run_dir / COMPARE_FILE
    if args.json is None:  # into the run folder (someone else's, maybe): never through a link there
        replace_text(out, json.dumps(document) + "\n")
    else:
        out.write_text(json.dumps(document) + "\n", encoding="utf-8")
    if args.json is None:
        # The run's report gains the section; `sanlab report RUN_DIR` keeps it while the file is there.
        replace_text(run_dir / REPORT_FILE, render_folders([ReportRun(run_dir.name, *read_run_folder(run_dir))], [report_section(document, chosen)]))
        print(f"comparison: {out}; report: {run_dir / REPORT_FILE} (section \"Measured against simulated\")")
    else:
        print(f"comparison: {out}")
    return 0


def measured_sections(run_dir: Path, document: dict) -> list[tuple[str, str, str]]:
    """The report section of a comparison `compare --esxtop` left in the run folder, if any."""
    path = run_dir / COMPARE_FILE
    if not path.is_file():
        return []
    comparison = json.loads(path.read_text(encoding="utf-8"))
    variant = next((v for v in document["variants"] if v["name"] == comparison.get("variant")), None)
    return [report_section(comparison, variant)] if variant is not None and "measured" in comparison else []
