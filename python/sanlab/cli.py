"""The `sanlab` command: run, validate, kinds.

Exit codes: 0 success, 1 a file could not be written, 2 invalid input (scenario, override,
command line, or a non-empty --out folder), 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from rich.console import Console

import sanlab
from sanlab.results import Document
from sanlab.runfolder import new_default_out_dir, prepare_out_dir, write_run_folder
from sanlab.tables import kinds_tables, paths_table, psp_events_table, variants_table

T = TypeVar("T")

DEFAULT_RUNS_DIR = Path("runs")
"""Parent of the default run folder `runs/<scenario>-<UTC stamp>`, relative to the working directory."""

JSON_OMITTED_KEYS = ("timeseries", "resolved_toml")
"""Per-variant keys left out of `run --json` (they go to the run folder)."""


def _override(text: str) -> str:
    key, sep, _ = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return text


def _seed(text: str) -> int:
    try:
        seed = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 0 <= seed < 2**64:
        raise argparse.ArgumentTypeError(f"expected 0 <= seed < 2**64, got {seed}")
    return seed


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


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the `sanlab` command."""
    parser = argparse.ArgumentParser(
        prog="sanlab", description="Simulate the storage I/O path: VM, host queues, multipath, fabric, array."
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="run a scenario and write a run folder")
    run.add_argument("scenario", metavar="SCENARIO", help="scenario TOML file")
    run.add_argument(
        "--variant",
        dest="variants",
        metavar="NAME",
        action="append",
        help="run only this variant (repeatable; default: all)",
    )
    _add_set(run)
    run.add_argument("--seed", type=_seed, help="base seed (default: the scenario's)")
    run.add_argument("--duration", metavar="D", help="simulated time, e.g. 30s (default: the scenario's)")
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
    run.set_defaults(handler=_cmd_run)

    validate = commands.add_parser("validate", help="check a scenario without running it")
    validate.add_argument("scenario", metavar="FILE", help="scenario TOML file")
    _add_set(validate)
    validate.set_defaults(handler=_cmd_validate)

    kinds = commands.add_parser("kinds", help="list component kinds and their parameters")
    kinds.set_defaults(handler=_cmd_kinds)
    return parser


def _call_interruptibly(call: Callable[[], T]) -> T:
    """Runs `call` in a worker thread so that Ctrl-C reaches the main thread while the engine works."""
    values: list[T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            values.append(call())
        except BaseException as exc:  # handed to the main thread below
            errors.append(exc)

    worker = threading.Thread(target=target, name="sanlab-engine", daemon=True)
    worker.start()
    worker.join()
    if errors:
        raise errors[0]
    return values[0]


def json_summary(doc: Document) -> Document:
    """The engine's document without the bulky per-variant time series and resolved TOML."""
    summary = dict(doc)
    summary["variants"] = [
        {key: value for key, value in variant.items() if key not in JSON_OMITTED_KEYS}
        for variant in doc["variants"]
    ]
    return summary


def _cmd_run(args: argparse.Namespace, argv: Sequence[str]) -> int:
    if args.out is not None:
        prepare_out_dir(args.out)
    started = datetime.now(UTC)
    clock = time.perf_counter()
    results = _call_interruptibly(
        lambda: sanlab.run(
            args.scenario, variants=args.variants, set=args.sets, seed=args.seed, duration=args.duration
        )
    )
    wall_s = time.perf_counter() - clock
    doc = results.raw

    # The run folder is written before anything is printed, so a closed pipe cannot lose it.
    if args.json:
        if args.out is not None:
            write_run_folder(doc, args.out, argv=argv, started=started, wall_s=wall_s)
        print(json.dumps(json_summary(doc), indent=2))
        return 0

    out_dir = args.out or new_default_out_dir(DEFAULT_RUNS_DIR, doc["scenario"], started)
    write_run_folder(doc, out_dir, argv=argv, started=started, wall_s=wall_s)
    console = _console()
    console.print(variants_table(doc))
    console.print()
    console.print(paths_table(doc))
    console.print()
    for variant in doc["variants"]:
        if variant["psp_events"]:
            console.print(psp_events_table(variant))
            console.print()
    console.print(f"run folder: {out_dir}", highlight=False, soft_wrap=True)
    return 0


def _cmd_validate(args: argparse.Namespace, argv: Sequence[str]) -> int:
    checked = sanlab.validate(args.scenario, set=args.sets)
    variants = ", ".join(checked["variants"])
    print(f"ok: {checked['scenario']} ({len(checked['variants'])} variants: {variants})")
    return 0


def _cmd_kinds(args: argparse.Namespace, argv: Sequence[str]) -> int:
    console = _console()
    for table in kinds_tables(sanlab.kinds()):
        console.print(table)
        console.print()
    return 0


def _console() -> Console:
    """A terminal console; output that is not a terminal (a file, a pipe) gets 120 columns, not 80."""
    return Console() if sys.stdout.isatty() else Console(width=120)


def _error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `sanlab` command; returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(args_list)
        return int(args.handler(args, ["sanlab", *args_list]))
    except sanlab.ScenarioError as exc:
        _error(str(exc))
        return 2
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
