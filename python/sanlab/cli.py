"""The `sanlab` command: run, report, compare, sweep, validate, kinds.

Exit codes: 0 success, 1 a file could not be written or some sweep runs failed, 2 invalid input
(scenario, override, command line, run folder, or a non-empty --out folder), 3 an internal error
(a bug in sanlab: please report it), 130 interrupted (Ctrl-C; what finished is kept). Every
error is one line on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import json
import os
import sys
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

from rich import box
from rich.console import Console
from rich.table import Table

import sanlab
from sanlab import _core
from sanlab.advise import add_parser as add_advise
from sanlab.document import Document
from sanlab.export.runfolder import (
    RunFolderError,
    new_default_out_dir,
    prepare_out_dir,
    read_run_folder,
    render_folders,
    safe_name,
    utc_stamp,
    write_run_folder,
)
from sanlab.export.files import LinkInFolderError, refuse_links, replace_text
from sanlab.formatting import did_you_mean, few_names, format_bytes, format_count, format_tenths, shown_name
from sanlab.hostimport.command import IMPORT_ERRORS
from sanlab.hostimport.command import add_esxtop_compare, compare_with_capture, measured_sections
from sanlab.hostimport.command import add_parser as add_import
from sanlab.lint.command import add_parser as add_lint
from sanlab.lint.source import LintInputError
from sanlab.progress import REFRESH_S, Mode, RunProgress, SweepProgress, progress_mode
from sanlab.report import REPORT_FILE, ReportRun, merge_runs
from sanlab.results import JSON_OMITTED_KEYS, json_summary
from sanlab.sweep import SweepError, SweepResult, SweepSpec, failure_messages, run_sweep, summary_rich_table
from sanlab.views.fit import fit
from sanlab.views.names import shown_document
from sanlab.views.summary import every_table, fits_a_screen, print_tables, summary_table, verbose_adds
from sanlab.views.tables import kinds_tables, variants_table

__all__ = ["JSON_OMITTED_KEYS", "build_parser", "json_summary", "main"]

DEFAULT_RUNS_DIR = Path("runs")
"""Parent of the default run and sweep folders, relative to the working directory."""

DEFAULT_COMPARE_FILE = Path("compare.html")
"""Where `sanlab compare` writes its page unless told otherwise."""


def _override(text: str) -> str:
    key, sep, _ = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return text


SEED_LIMIT = 2**63
"""Seeds are whole numbers from 0 to SEED_LIMIT - 1: `--seed` is set as the scenario's `[run] seed`, a
TOML integer (signed 64-bit), which the engine checks too. `_seed` is where the command line checks
it, for every command that takes a seed (run, sweep, calibrate), so each says so in one message."""

SEED_HELP = f"0 to 2**63-1 ({SEED_LIMIT - 1})"


class CommandLineError(Exception):
    """A command line that argparse refused: one `error:` line and exit 2, not usage and error."""


class _Parser(argparse.ArgumentParser):
    """argparse with its errors raised as CommandLineError (argparse prints the usage, then the
    error, two lines or more); --help and --version print as argparse does."""

    def error(self, message: str) -> NoReturn:
        raise CommandLineError(f"{self.prog}: {message}; `{self.prog} --help` lists the arguments")


def _seed(text: str) -> int:
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number {SEED_HELP}, got {text!r}") from None
    if seed < 0:
        raise argparse.ArgumentTypeError(f"expected a seed {SEED_HELP}, got {seed}; the nearest is 0")
    if seed >= SEED_LIMIT:
        raise argparse.ArgumentTypeError(
            f"expected a seed {SEED_HELP}, got {seed}; the nearest is {SEED_LIMIT - 1}"
        )
    return seed


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected at least 1, got {value}")
    return value


def _add_set(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        dest="sets",
        metavar="KEY=VALUE",
        action="append",
        type=_override,
        default=[],
        help="override a scenario value, e.g. host[0].multipath.psp=rr (repeatable)",
    )


def _add_variant(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--variant",
        dest="variants",
        metavar="NAME",
        action="append",
        help="run only this variant (repeatable; default: all)",
    )


def _version() -> str:
    """`sanlab 0.1.0 (engine 0.1.0)`: the installed package's version and the native engine's."""
    try:
        package = importlib.metadata.version("sanlab")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree that was not installed
        package = "not installed"
    return f"sanlab {package} (engine {_core.__version__})"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the `sanlab` command."""
    parser = _Parser(
        prog="sanlab", description="Simulate the storage I/O path: VM, host queues, multipath, fabric, array."
    )
    parser.add_argument("--version", action="version", version=_version())
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="run a scenario and write a run folder with its report")
    run.add_argument("scenario", metavar="SCENARIO", help="scenario TOML file")
    _add_variant(run)
    _add_set(run)
    run.add_argument("--seed", type=_seed, help=f"base seed, {SEED_HELP} (default: the scenario's)")
    run.add_argument("--duration", metavar="D", help="simulated time, e.g. 30s (default: the scenario's)")
    run.add_argument(
        "--jobs",
        type=_positive,
        metavar="N",
        help="variants run at most at once, at least 1 (default: one per core); fewer while more would "
        "not fit in the memory available; the results are the same for any N",
    )
    run.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="run folder, created empty (default: runs/<scenario>-<UTC time>; with --json: none)",
    )
    run.add_argument(
        "--json",
        action="store_true",
        help="print the results as one JSON document and nothing else on stdout",
    )
    run.add_argument(
        "--esxtop-csv",
        action="store_true",
        help="also write each variant's time series as <variant>/esxtop.csv, in esxtop batch mode's layout",
    )
    output = run.add_mutually_exclusive_group()
    output.add_argument(
        "--quiet", action="store_true", help="no progress and no tables: print only the run folder"
    )
    output.add_argument(
        "--verbose",
        action="store_true",
        help="print every table (default: all of them when they fit a screen, else a summary)",
    )
    run.set_defaults(handler=_cmd_run)

    report = commands.add_parser("report", help=f"write a run folder's {REPORT_FILE} again")
    report.add_argument("run_dir", metavar="RUN_DIR", type=Path, help="run folder written by `sanlab run`")
    report.set_defaults(handler=_cmd_report)

    compare = commands.add_parser(
        "compare", help="put several runs side by side in one HTML page, or one run beside a host's esxtop capture"
    )
    compare.add_argument(
        "run_dirs", metavar="RUN_DIR", type=Path, nargs="+", help="run folders (two or more; one with --esxtop)"
    )
    add_esxtop_compare(compare)
    compare.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        default=DEFAULT_COMPARE_FILE,
        help="page to write (default: %(default)s)",
    )
    compare.set_defaults(handler=_cmd_compare)

    sweep = commands.add_parser("sweep", help="run a scenario over a grid of values and seeds on Dask")
    sweep.add_argument("scenario", metavar="SCENARIO", help="scenario TOML file")
    sweep.add_argument(
        "--vary",
        metavar="KEY=V1,V2,...",
        action="append",
        required=True,
        help="a scenario value and the values it takes, e.g. host[0].adapter.lun_queue_depth=32,64 "
        "(repeatable: the grid is every combination)",
    )
    sweep.add_argument("--seeds", type=_positive, default=1, metavar="N", help="seeds per point (default: 1)")
    sweep.add_argument(
        "--seed",
        type=_seed,
        metavar="N",
        help=f"first seed, {SEED_HELP}; the others follow it, all below 2**63 "
        "(default: the scenario's [run] seed)",
    )
    _add_variant(sweep)
    _add_set(sweep)
    sweep.add_argument("--duration", metavar="D", help="simulated time, e.g. 30s (default: the scenario's)")
    sweep.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="sweep folder (default: runs/<scenario>-sweep-<UTC time>); a rerun with the same DIR resumes",
    )
    sweep.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (default: a local cluster)",
    )
    sweep.add_argument(
        "--workers",
        type=_positive,
        metavar="N",
        help="worker processes of the local cluster (default: one per CPU)",
    )
    sweep.add_argument(
        "--quiet",
        action="store_true",
        help="no progress bar and no table: print only the run counts and the sweep folder",
    )
    sweep.set_defaults(handler=_cmd_sweep)

    validate = commands.add_parser("validate", help="check a scenario without running it")
    validate.add_argument("scenario", metavar="FILE", help="scenario TOML file")
    _add_variant(validate)
    _add_set(validate)
    validate.set_defaults(handler=_cmd_validate)

    kinds = commands.add_parser("kinds", help="list component kinds and their parameters")
    kinds.add_argument(
        "filter",
        nargs="?",
        metavar="FILTER",
        help="only an extension point (psp), a kind (rr), or the kinds whose name holds this text (latency)",
    )
    kinds.set_defaults(handler=_cmd_kinds)

    from sanlab.calibration.command import add_parser as add_calibrate

    add_calibrate(commands, _seed, _positive)
    commands.choices["calibrate"].set_defaults(handler=_cmd_calibrate)
    add_import(commands)
    add_advise(commands)
    add_lint(commands, _seed)
    return parser


def _run_engine(args: argparse.Namespace, mode: Mode) -> tuple[Document, bool]:
    """Runs the scenario in a worker thread (the engine releases the GIL and runs `--jobs`
    variants at once on threads of its own) while showing progress.

    Returns the document and whether Ctrl-C stopped the run; then the document holds the variants
    that finished. A second Ctrl-C while the engine stops gives up at once.
    """
    engine = _core.Progress()
    outcome: list[str] = []
    errors: list[BaseException] = []
    # An Event, not Thread.join: a join interrupted by Ctrl-C can report a live thread as finished.
    finished = threading.Event()

    jobs = args.jobs or _core.cores()

    def target() -> None:
        try:
            outcome.append(
                _core.run(args.scenario, args.variants, args.sets, args.seed, args.duration, engine, jobs)
            )
        except BaseException as exc:  # handed to the main thread below
            errors.append(exc)
        finally:
            finished.set()

    threading.Thread(target=target, name="sanlab-engine", daemon=True).start()
    interrupted = False
    with RunProgress(engine, mode) as progress:
        try:
            while not finished.wait(REFRESH_S):
                progress.update()
        except KeyboardInterrupt:
            interrupted = True
            engine.cancel()
        if not interrupted and not errors:
            progress.finish("writing the run folder")
    finished.wait()
    if errors:
        raise errors[0]
    doc: Document = json.loads(outcome[0])
    return doc, interrupted


def _cmd_run(args: argparse.Namespace, argv: Sequence[str]) -> int:
    # Empty folders this run made (--out, the default folder's name reserved): removed when no
    # run folder is written into them, so a failed run leaves nothing behind.
    made: list[Path] = []
    if args.out is not None and prepare_out_dir(args.out):
        made.append(args.out)
    try:
        code = _run_and_write(args, argv, made)
    except BaseException:
        _remove_empty(made)
        raise
    _remove_empty(made)
    return code


def _remove_empty(folders: Sequence[Path]) -> None:
    """Removes each of `folders` that is still empty (a run folder written into it is not)."""
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()


def _run_and_write(args: argparse.Namespace, argv: Sequence[str], made: list[Path]) -> int:
    """`sanlab run` once its --out folder is checked: the run, then its folder (written at once by
    `write_run_folder`), then what is printed."""
    started = datetime.now(UTC)
    clock = time.perf_counter()
    doc, interrupted = _run_engine(args, "off" if args.json else progress_mode(args.quiet))
    wall_s = time.perf_counter() - clock

    if interrupted and not doc["variants"]:
        _error("interrupted before any variant finished; nothing was written")
        return 130
    # The run folder is written before anything is printed, so a closed pipe cannot lose it.
    if args.json:
        if args.out is not None:
            write_run_folder(doc, args.out, argv=argv, started=started, wall_s=wall_s, esxtop_csv=args.esxtop_csv)
        print(json.dumps(json_summary(doc), indent=2))
        return 130 if interrupted else 0

    out_dir = args.out
    if out_dir is None:
        out_dir = new_default_out_dir(DEFAULT_RUNS_DIR, doc["scenario"], started)
        made.append(out_dir)
    write_run_folder(doc, out_dir, argv=argv, started=started, wall_s=wall_s, esxtop_csv=args.esxtop_csv)
    doc = shown_document(doc)  # names from the scenario, as the terminal shows them
    if not args.quiet:
        console = _console()
        named = every_table(doc)
        tables = [table for _, table in named]
        if args.verbose or fits_a_screen(tables):
            print_tables(console, tables)
        else:
            summary, left_out = summary_table(doc, console)
            print_tables(console, [summary])
            print(verbose_adds(named, left_out), flush=True)
        note = seedless_note(doc)
        if note:
            print(note, flush=True)
    print(f"run folder: {shown_name(str(out_dir))}", flush=True)
    if not args.quiet:
        print(f"report: {shown_name(str(out_dir / REPORT_FILE))}", flush=True)
    # fio options without effect on the model, once per run.
    ignored = sorted({name for variant in doc["variants"] for job in variant["jobs"] for name in job.get("ignored", [])})
    if ignored:
        names = shown_name(", ".join(ignored))
        print(f"ignored: {names} (fio options without effect on the model; `sanlab kinds` says why)", file=sys.stderr)
    if interrupted:
        kept = few_names([variant["name"] for variant in doc["variants"]])
        _error(f"interrupted: kept the variants that finished ({kept}) in {out_dir}")
        return 130
    return 0


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


def _cmd_report(args: argparse.Namespace, argv: Sequence[str]) -> int:
    path = args.run_dir / REPORT_FILE
    refuse_links([path])  # before reading: a folder that would be refused costs nothing
    doc, manifest = read_run_folder(args.run_dir)
    extra = measured_sections(args.run_dir, doc)
    replace_text(path, render_folders([ReportRun(args.run_dir.name, doc, manifest)], extra))
    print(f"report: {shown_name(str(path))}")
    return 0


def _labels(run_dirs: Sequence[Path]) -> list[str]:
    """Folder names, or the paths as given when two folders share a name."""
    names = [run_dir.resolve().name for run_dir in run_dirs]
    if len(set(names)) == len(names):
        return names
    return [str(run_dir) for run_dir in run_dirs]


def _cmd_compare(args: argparse.Namespace, argv: Sequence[str]) -> int:
    if args.esxtop is not None:
        return compare_with_capture(args, _console())
    if len(args.run_dirs) < 2:
        raise RunFolderError("compare needs two or more run folders; for one, use `sanlab report RUN_DIR`")
    runs = [
        ReportRun(label, *read_run_folder(run_dir))
        for label, run_dir in zip(_labels(args.run_dirs), args.run_dirs, strict=True)
    ]
    page = render_folders(runs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(page, encoding="utf-8")
    print_tables(_console(), [variants_table(shown_document(merge_runs(runs)))])
    print(f"report: {shown_name(str(args.out))}")
    return 0


def _cmd_sweep(args: argparse.Namespace, argv: Sequence[str]) -> int:
    if args.scheduler is not None and args.workers is not None:
        raise SweepError(
            "--workers sets the size of the local cluster; with --scheduler the cluster has its own"
        )
    spec = SweepSpec.create(
        Path(args.scenario),
        args.vary,
        seeds=args.seeds,
        base_seed=args.seed,
        sets=args.sets,
        variants=args.variants or (),
        duration=args.duration,
    )
    out_dir = (
        args.out
        or DEFAULT_RUNS_DIR / f"{safe_name(Path(args.scenario).stem)}-sweep-{utc_stamp(datetime.now(UTC))}"
    )
    try:
        with SweepProgress(progress_mode(args.quiet) == "bar") as progress:
            result = run_sweep(
                spec,
                out_dir,
                scheduler=args.scheduler,
                workers=args.workers,
                on_start=progress.begin,
                on_progress=progress.advance,
            )
    except KeyboardInterrupt:
        _error(f"interrupted: the runs that finished are saved in {out_dir}; run the same command to resume")
        return 130
    return _sweep_outcome(result, args.quiet)


def _sweep_outcome(result: SweepResult, quiet: bool) -> int:
    """Prints the summary, the failures and the folder; exit code 0, 1 (some runs failed) or 2 (all did)."""
    failed = len(result.failures)
    if not quiet and failed < result.ran + result.skipped:
        _console().print(summary_rich_table(result.out_dir))
    skipped = f", {result.skipped} already done" if result.skipped else ""
    print(
        f"sweep: {result.runs} runs: {result.ran - failed} finished now{skipped}, {failed} failed", flush=True
    )
    print(f"sweep folder: {shown_name(str(result.out_dir))}", flush=True)
    if not failed:
        return 0
    for failure in result.failures:
        sets = " ".join(f"--set {item}" for item in failure.sets)
        _error(f"point {failure.point} seed {failure.seed} ({sets}): {failure.error}")
    if failed == result.runs:
        messages = failure_messages(result.failures)
        _error(f"every run failed: {messages[0]}" if len(messages) == 1 else "every run failed")
        return 2
    return 1


def _cmd_calibrate(args: argparse.Namespace, argv: Sequence[str]) -> int:
    from sanlab.calibration.command import command
    from sanlab.calibration.inputs import CalibrationError

    try:
        return command(args, _console(), argv)
    except CalibrationError as exc:
        _error(str(exc))
        return 2


def _estimate_text(value: float | None, text: str) -> str:
    return "unknown" if value is None else text


def _cost_table(cost: dict[str, Any]) -> Table:
    """The estimate of each variant's run and their total (one process runs them in turn)."""
    table = Table(
        title="what running it costs (estimated from a pilot run of each variant)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
        show_edge=False,
    )
    table.add_column("variant", no_wrap=True)
    for header in ("simulated s", "I/Os", "events", "engine s", "outstanding", "series values"):
        table.add_column(header, justify="right", no_wrap=True)
    rows = [
        [
            variant["name"],
            format_count(variant["sim_time_s"]),
            _estimate_text(variant["ios"], format_count(variant["ios"] or 0)),
            _estimate_text(variant["events"], format_count(variant["events"] or 0)),
            _estimate_text(variant["engine_s"], format_tenths(variant["engine_s"] or 0)),
            format_count(variant["outstanding"]),
            format_count(variant["samples"] * variant["series"]),
        ]
        for variant in cost["variants"]
    ]
    for row in rows:
        table.add_row(*row)
    if len(rows) > 1:
        table.add_section()
        table.add_row(
            "total",
            format_count(sum(variant["sim_time_s"] for variant in cost["variants"])),
            _estimate_text(cost["ios"], format_count(cost["ios"] or 0)),
            _estimate_text(cost["events"], format_count(cost["events"] or 0)),
            _estimate_text(cost["engine_s"], format_tenths(cost["engine_s"] or 0)),
            "",
            format_count(sum(variant["samples"] * variant["series"] for variant in cost["variants"])),
        )
    return table


def _cmd_validate(args: argparse.Namespace, argv: Sequence[str]) -> int:
    checked = sanlab.validate(args.scenario, set=args.sets, variants=args.variants)
    variants = few_names(checked["variants"])
    scenario = shown_name(checked["scenario"])
    count = len(checked["variants"])
    print(f"ok: {scenario} ({count} variant{'' if count == 1 else 's'}: {variants})", flush=True)
    cost = shown_document(checked["cost"])
    console = _console()
    for part in fit(_cost_table(cost), console):
        console.print(part)
    if count > 1:
        # Many variants share the pilots' events: say how short each pilot was.
        console.print(
            f"pilots: {format_count(cost['pilot_events'])} simulator events or 1 s of wall time each, "
            f"whichever came first, {cost['pilot_threads']} at a time; a pilot that stopped before "
            "its run's end is extrapolated at the rate of its latter half"
        )
    machine = cost["machine"]
    here = (
        "this machine's memory cannot be checked here (it is read from Linux's /proc/meminfo)"
        if machine is None
        else f"this machine has {format_bytes(machine['available_bytes'])} available"
        f" of {format_bytes(machine['total_bytes'])}"
    )
    console.print(f"peak memory (estimated): {format_bytes(cost['peak_memory_bytes'])}; {here}")
    if cost["warning"] is not None:
        print(f"warning: {_one_line(cost['warning'])}", file=sys.stderr, flush=True)
    return 0


def _cmd_kinds(args: argparse.Namespace, argv: Sequence[str]) -> int:
    kinds = sanlab.kinds()
    if args.filter is not None:
        wanted = args.filter.lower()
        points = {kind["extension_point"] for kind in kinds}
        names = {kind["kind"] for kind in kinds}
        if wanted in points:
            kinds = [kind for kind in kinds if kind["extension_point"] == wanted]
        elif wanted in names:
            kinds = [kind for kind in kinds if kind["kind"] == wanted]
        else:
            kinds = [kind for kind in kinds if wanted in kind["kind"]]
        if not kinds:
            hint = did_you_mean(wanted, points | names)
            _error(
                f"kinds {args.filter}: no extension point or kind matches; expected one of the extension "
                f"points {', '.join(sorted(points))}, a kind, or part of a kind's name{hint}"
            )
            return 2
    print_tables(_console(), kinds_tables(kinds))
    return 0


def _console() -> Console:
    """A terminal console; output that is not a terminal (a file, a pipe) gets 120 columns, not 80."""
    # No markup: a name such as `[red]vm` or `[/]` is text, not a style (`[/]` raised MarkupError).
    return Console(markup=False) if sys.stdout.isatty() else Console(width=120, markup=False)


def _one_line(message: str) -> str:
    """`message` with control characters (a newline in a name, say) escaped, as names are
    everywhere (`shown_name`): one line."""
    return shown_name(message)


def _error(message: str) -> None:
    print(f"error: {_one_line(message)}", file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `sanlab` command; returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(args_list)
        return int(args.handler(args, ["sanlab", *args_list]))
    except (
        CommandLineError,
        sanlab.ScenarioError,
        RunFolderError,
        SweepError,
        LinkInFolderError,
        *IMPORT_ERRORS,
        LintInputError,
    ) as exc:
        _error(str(exc))
        return 2
    except _core.InternalError as exc:
        _error(f"internal error in sanlab, please report: {exc}")
        return 3
    except BrokenPipeError:
        # stdout was closed early (e.g. `| head`): silence the failing final flush.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except FileExistsError as exc:
        _error(str(exc))
        return 2
    except OSError as exc:
        _error(str(exc))
        return 1
    except KeyboardInterrupt:
        _error("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
