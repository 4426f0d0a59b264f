"""`sanlab run SCENARIO`: runs a scenario's variants on every core while showing progress, writes
the run folder, then prints the tables (or the summary, or JSON)."""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from sanlab import engine
from sanlab.commands import options
from sanlab.commands.terminal import console, error
from sanlab.document import Document
from sanlab.export.files import remove_empty
from sanlab.export.runfolder import new_default_out_dir, prepare_out_dir, write_run_folder
from sanlab.formatting import few_names, shown_name
from sanlab.notes import figure_notes
from sanlab.progress import REFRESH_S, Mode, RunProgress, progress_mode
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
        help=f"variants run at most at once, 1 to {options.MAX_PARALLEL} (default: one per core); fewer while more would "
        "not fit in the memory available; the results are the same for any N",
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


def _run_engine(args: argparse.Namespace, mode: Mode) -> tuple[Document, bool]:
    """Runs the scenario in a worker thread (the engine releases the GIL and runs `--jobs`
    variants at once on threads of its own) while showing progress.

    Returns the document and whether Ctrl-C stopped the run; then the document holds the variants
    that finished. A second Ctrl-C while the engine stops gives up at once.
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
                    args.scenario, args.variants, args.sets, args.seed, args.duration,
                    progress=progress_of_engine, jobs=jobs,
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
    doc, interrupted = _run_engine(args, "off" if args.json else progress_mode(args.quiet))
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


def _print_tables(doc: Document, verbose: bool) -> None:
    """Every table when they fit a screen (or with --verbose), else the summary; then the note
    on variants no seed can change."""
    terminal = console()
    named = every_table(doc)
    tables = [table for _, table in named]
    if verbose or fits_a_screen(tables):
        print_tables(terminal, tables)
    else:
        summary, left_out = summary_table(doc, terminal)
        print_tables(terminal, [summary])
        print(verbose_adds(named, left_out), flush=True)
    note = seedless_note(doc)
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
