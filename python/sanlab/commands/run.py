"""`sanlab run SCENARIO`: runs a scenario's variants on every core while showing progress, writes
the run folder, then prints the tables (or the summary, or JSON)."""

from __future__ import annotations

import argparse
import json
import math
import sys
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sanlab import engine
from sanlab.analysis.warmup import find_warmup
from sanlab.commands import options
from sanlab.commands.terminal import console, error
from sanlab.document import Document
from sanlab.export.files import remove_empty
from sanlab.export.runfolder import new_default_out_dir, prepare_out_dir, write_run_folder
from sanlab.formatting import few_names, shown_name
from sanlab.notes import figure_notes
from sanlab.progress import REFRESH_S, Mode, RunProgress, progress_mode
from sanlab.replications import combine, merge, relative_half_widths, with_batch_means
from sanlab.report import REPORT_FILE
from sanlab.results import json_summary
from sanlab.views.names import shown_document
from sanlab.views.summary import every_table, fits_a_screen, print_tables, summary_table, verbose_adds


def register(parser: argparse.ArgumentParser) -> None:
    options.add_scenario(parser)
    options.add_variants(parser)
    options.add_set(parser)
    options.add_seed(parser)
    parser.add_argument("--duration", metavar="D", help="simulated time, e.g. 30s (default: the scenario's)")
    parser.add_argument(
        "--jobs",
        type=options.parallel,
        metavar="N",
        help=f"threads at most, 1 to {options.MAX_PARALLEL} (default: one per core): variants at once, and the cores "
        "they leave to the independent parts of each (sanlab validate names them); fewer while more would not fit in "
        "the memory available; the results are the same for any N",
    )
    replicate = parser.add_mutually_exclusive_group()
    replicate.add_argument(
        "--replications",
        type=options.whole_number(1, MAX_REPLICATIONS),
        metavar="N",
        help="run each variant N times, replication r with its seed + r (the same r on every variant), and "
        "show each figure as the mean with its 95 %% interval; 1: one run with intervals of its IOPS and mean "
        "latency by batch means (default: one run, as written, no intervals)",
    )
    replicate.add_argument(
        "--precision",
        type=percent,
        metavar="P%",
        help=f"replications ({PILOT_REPLICATIONS} first) until every VM's IOPS, mean and p99 latency has a 95 %% "
        "half-width within P percent of its value",
    )
    parser.add_argument(
        "--warmup",
        choices=["auto"],
        help="find the warm-up from the data: a pilot run without warm-up, MSER-5 on each VM's and device's "
        "IOPS and latency, the largest truncation (never past the first fault) becomes the run's warm-up",
    )
    parser.add_argument(
        "--max-replications",
        type=options.whole_number(2, MAX_REPLICATIONS),
        default=DEFAULT_MAX_REPLICATIONS,
        metavar="N",
        help=f"with --precision, the most replications (default {DEFAULT_MAX_REPLICATIONS}); the run says so when "
        "this stops it",
    )
    options.add_out(parser, "run folder, created empty (default: runs/<scenario>-<UTC time>; with --json: none)")
    options.add_json(parser)
    parser.add_argument(
        "--esxtop-csv",
        action="store_true",
        help="also write each variant's time series as <variant>/esxtop.csv, in esxtop batch mode's layout",
    )
    output = parser.add_mutually_exclusive_group()
    options.add_quiet(output, "no progress and no tables: print only the run folder")
    output.add_argument(
        "--verbose",
        action="store_true",
        help="print every table (default: all of them when they fit a screen, else a summary)",
    )


MAX_REPLICATIONS = 1000
DEFAULT_MAX_REPLICATIONS = 50
PILOT_REPLICATIONS = 5
"""Replications `--precision` runs before it first judges the intervals (Law, ch. 9.4.1, starts
a sequential procedure from a few; fewer than 5 gives t quantiles of 2.8 and more)."""


def percent(text: str) -> float:
    """`5%` as 0.05: a share above 0 and below 100 %."""
    number = text.strip().removesuffix("%")
    try:
        value = float(number) if text.strip().endswith("%") else math.nan
    except ValueError:
        value = math.nan
    if not (0 < value < 100):
        raise argparse.ArgumentTypeError(f"expected a percent above 0 and below 100, such as 5%, got {text!r}")
    return value / 100


def main(args: argparse.Namespace) -> int:
    # Empty folders this run made (--out, the default folder's name reserved): removed when no
    # run folder is written into them, so a failed run leaves nothing behind.
    made: list[Path] = []
    if args.out is not None and prepare_out_dir(args.out):
        made.append(args.out)
    try:
        return _run_and_write(args, made)
    finally:
        remove_empty(made)


def _run_engine(
    args: argparse.Namespace, mode: Mode, first: int = 0, count: int = 1, sets: Sequence[str] | None = None
) -> tuple[Document, bool]:
    """Runs the scenario in a worker thread (the engine releases the GIL and runs `--jobs`
    variants at once on threads of its own) while showing progress.

    Returns the document and whether Ctrl-C stopped the run; then the document holds the variants
    that finished. A second Ctrl-C while the engine stops gives up at once. `sets`: the overrides
    (default: the command line's).
    """
    progress_of_engine = engine.Progress()
    outcome: list[Document] = []
    errors: list[BaseException] = []
    # An Event, not Thread.join: a join interrupted by Ctrl-C can report a live thread as finished.
    finished = threading.Event()
    jobs = args.jobs or engine.cores()

    def target() -> None:
        try:
            outcome.append(
                engine.run(
                    args.scenario, args.variants, args.sets if sets is None else sets, args.seed, args.duration,
                    progress=progress_of_engine, jobs=jobs, replications=count, first_replication=first,
                )
            )
        except BaseException as exc:  # handed to the main thread below
            errors.append(exc)
        finally:
            finished.set()

    threading.Thread(target=target, name="sanlab-engine", daemon=True).start()
    interrupted = False
    with RunProgress(progress_of_engine, mode) as progress:
        try:
            while not finished.wait(REFRESH_S):
                progress.update()
        except KeyboardInterrupt:
            interrupted = True
            progress_of_engine.cancel()
        if not interrupted and not errors:
            progress.finish("writing the run folder")
    finished.wait()
    if errors:
        raise errors[0]
    return outcome[0], interrupted


def _run_and_write(args: argparse.Namespace, made: list[Path]) -> int:
    """`sanlab run` once its --out folder is checked: the run, then its folder (written at once by
    `write_run_folder`), then what is printed."""
    started = datetime.now(UTC)
    clock = time.perf_counter()
    doc, interrupted = _replicated(args, "off" if args.json else progress_mode(args.quiet))
    wall_s = time.perf_counter() - clock

    if interrupted and not doc["variants"]:
        error("interrupted before any variant finished; nothing was written")
        return 130

    def write(folder: Path) -> None:
        write_run_folder(doc, folder, argv=args.argv, started=started, wall_s=wall_s, esxtop_csv=args.esxtop_csv)

    # The run folder is written before anything is printed, so a closed pipe cannot lose it.
    if args.json:
        if args.out is not None:
            write(args.out)
        print(json.dumps(json_summary(doc), indent=2))
        return 130 if interrupted else 0

    out_dir = args.out
    if out_dir is None:
        out_dir = new_default_out_dir(options.DEFAULT_RUNS_DIR, doc["scenario"], started)
        made.append(out_dir)
    write(out_dir)
    doc = shown_document(doc)  # names from the scenario, as the terminal shows them
    if not args.quiet:
        _print_tables(doc, args.verbose)
    print(f"run folder: {shown_name(str(out_dir))}", flush=True)
    if not args.quiet:
        print(f"report: {shown_name(str(out_dir / REPORT_FILE))}", flush=True)
    # fio options without effect on the model, once per run.
    ignored = sorted({name for variant in doc["variants"] for job in variant["jobs"] for name in job.get("ignored", [])})
    if ignored:
        names = shown_name(", ".join(ignored))
        print(f"ignored: {names} (fio options without effect on the model; `sanlab kinds` says why)", file=sys.stderr)
    for note in figure_notes(doc):
        print(f"note: {shown_name(note)}", file=sys.stderr)
    if interrupted:
        kept = few_names([variant["name"] for variant in doc["variants"]])
        error(f"interrupted: kept the variants that finished ({kept}) in {out_dir}")
        return 130
    return 0


def _replicated(args: argparse.Namespace, mode: Mode) -> tuple[Document, bool]:
    """The run's replications as one document: `--replications` of them, or with `--precision`
    as many as its intervals need (see `_more_replications`); with `--warmup auto`, after the
    pilot that finds the warm-up."""
    sets, found = list(args.sets), None
    if args.warmup == "auto":
        found, interrupted = _find_warmup(args, mode)
        if interrupted or found is None:
            return {**_EMPTY, "scenario": str(args.scenario)}, True  # type: ignore[typeddict-item]
        sets.append(f"run.warmup={round(found['found_s'] * 1e6)}us")
    doc, interrupted = _replications(args, mode, sets)
    if found is not None:
        doc["warmup"] = found
    return doc, interrupted


_EMPTY = {"file": "", "scenario_sha256": "", "version": engine.VERSION, "cancelled": True, "variants": []}
PILOT_SAMPLES = 400
"""Samples of each series in `--warmup auto`'s pilot: 80 batches of MSER-5's 5, so the warm-up is found to
1/80 of the run."""


def _find_warmup(args: argparse.Namespace, mode: Mode) -> tuple[dict[str, Any] | None, bool]:
    """`--warmup auto`'s pilot: every variant once without warm-up, sampled PILOT_SAMPLES times
    (or at the scenario's interval when finer), and the warm-up MSER-5 finds in it."""
    sets = [*args.sets, *([f"run.duration={args.duration}"] if args.duration else [])]
    times = engine.run_times(args.scenario, sets, args.variants)
    interval_us = max(1, math.floor(min(min(t["duration_s"] / PILOT_SAMPLES, t["sample_interval_s"]) for t in times) * 1e6))
    pilot_sets = [*args.sets, "run.warmup=0s", f"run.sample_interval={interval_us}us"]
    pilot, interrupted = _run_engine(args, mode, sets=pilot_sets)
    if interrupted:
        return None, True
    warmup = find_warmup(pilot, interval_us / 1e6)
    return {
        "method": "MSER-5",
        "found_s": warmup.found_s,
        "series": warmup.series,
        "capped_at_fault_s": warmup.capped_at_fault_s,
        "configured_s": sorted({t["warmup_s"] for t in times}),
        "pilot_sample_interval_s": interval_us / 1e6,
    }, False


def warmup_line(doc: Document) -> str | None:
    """What `--warmup auto` found, in one line, or None without it."""
    found = doc.get("warmup")
    if not found:
        return None
    configured = " or ".join(f"{s:g} s" for s in found["configured_s"])
    where = f" (longest transient: {found['series']})" if found["series"] else " (no transient found)"
    capped = f"; cut at the first fault, {found['capped_at_fault_s']:g} s" if found["capped_at_fault_s"] is not None else ""
    return f"warm-up: {found['found_s']:g} s found by MSER-5{where}{capped}; the scenario's was {configured}"


def _replications(args: argparse.Namespace, mode: Mode, sets: Sequence[str]) -> tuple[Document, bool]:
    if args.precision is None:
        doc, interrupted = _run_engine(args, mode, 0, args.replications or 1, sets)
        # One replication asked for by name: its precision from its own time series.
        return (with_batch_means(doc) if args.replications == 1 else combine(doc)), interrupted
    count = min(PILOT_REPLICATIONS, args.max_replications)
    doc, interrupted = _run_engine(args, mode, 0, count, sets)
    while True:
        combined = combine(doc)
        worst = max(relative_half_widths(combined), key=lambda named: named[1], default=("", 0.0))
        reached = worst[1] <= args.precision
        more = _more_replications(count, worst[1], args.precision, args.max_replications)
        if interrupted or reached or not more:
            break
        later, interrupted = _run_engine(args, mode, count, more, sets)
        doc, count = merge(doc, later), count + more
    combined["precision"] = {
        "target": args.precision,
        "replications": count,
        "reached": reached,
        "worst": {"figure": worst[0], "relative_half_width": worst[1] if math.isfinite(worst[1]) else None},
        "max_replications": args.max_replications,
    }
    return combined, interrupted


def _more_replications(have: int, worst: float, target: float, most: int) -> int:
    """Replications to add so that the worst half-width reaches the target: it shrinks as
    1/sqrt(n), so n·(worst/target)², a tenth more for the t quantile's and the estimate's error,
    at least one more and at most up to `most`; without an interval yet, double."""
    if have >= most:
        return 0
    needed = math.ceil(have * 1.1 * (worst / target) ** 2) if math.isfinite(worst) else 2 * have
    return min(most, max(needed, have + 1)) - have


def precision_line(doc: Document) -> str | None:
    """What `--precision` reached, in one line, or None without it."""
    precision = doc.get("precision")
    if not precision:
        return None
    target = f"{precision['target'] * 100:g} %"
    worst = precision["worst"]
    share = worst["relative_half_width"]
    widest = f"{worst['figure']} ±{share * 100:.1f} %" if share is not None else f"{worst['figure']} (no interval)"
    if precision["reached"]:
        return f"precision: every watched figure within ±{target} after {precision['replications']} replications (widest: {widest})"
    return (
        f"precision: not reached: --max-replications {precision['max_replications']} stopped the run at "
        f"{precision['replications']} replications; the widest is {widest}, the target ±{target}"
    )


LEFT_FIRST = "latency stages"
"""The table left out first when every table would not fit a screen (a row per VM and variant)."""


def _print_tables(doc: Document, verbose: bool) -> None:
    """Every table when they fit a screen (or with --verbose); else every one but LEFT_FIRST when
    those fit, else the summary; then the note on variants no seed can change."""
    terminal = console()
    named = every_table(doc)
    tables = [table for _, table in named]
    fewer = [(name, table) for name, table in named if name != LEFT_FIRST]
    if verbose or fits_a_screen(tables):
        print_tables(terminal, tables)
    elif len(fewer) < len(named) and fits_a_screen([table for _, table in fewer]):
        print_tables(terminal, [table for _, table in fewer])
        print(f"--verbose adds the table {LEFT_FIRST}; so does the report", flush=True)
    else:
        summary, left_out = summary_table(doc, terminal)
        print_tables(terminal, [summary])
        print(verbose_adds(named, left_out), flush=True)
    for note in (seedless_note(doc), precision_line(doc), warmup_line(doc)):
        if note:
            print(note, flush=True)


def seedless_note(doc: Document) -> str | None:
    """One line for the variants whose figures no seed can change, or None."""
    seedless = [variant["name"] for variant in doc["variants"] if not variant.get("seed_matters", True)]
    if not seedless:
        return None
    which = "" if len(seedless) == len(doc["variants"]) else f" in {', '.join(seedless)}"
    return (
        f"note: nothing random shaped the figures{which} (fixed delays, no array that looks at where "
        "I/Os land): equal settings tie and every --seed gives the same figures; "
        "docs/scenario.md#when-nothing-is-random says when to add noise"
    )
