"""`sanlab sweep SCENARIO --vary KEY=V1,V2,...`: the scenario over a grid of values and seeds on
Dask, into one Parquet dataset (docs/cli.md)."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from pathlib import Path

from sanlab.commands import options
from sanlab.commands.terminal import console, error
from sanlab.export.runfolder import safe_name, utc_stamp
from sanlab.formatting import shown_name
from sanlab.progress import SweepProgress, progress_mode
from sanlab.sweep import SweepResult, SweepSpec, failure_messages, run_sweep, summary_rich_table


def register(parser: argparse.ArgumentParser) -> None:
    options.add_scenario(parser)
    parser.add_argument(
        "--vary",
        metavar="KEY=V1,V2,...",
        action="append",
        required=True,
        help="a scenario value and the values it takes, e.g. host[0].adapter.lun_queue_depth=32,64 "
        "(repeatable: the grid is every combination)",
    )
    parser.add_argument("--seeds", type=options.positive, default=1, metavar="N", help="seeds per point (default: 1)")
    options.add_seed(parser, "first seed; the others follow it, all below 2**63", "the scenario's [run] seed")
    options.add_variants(parser)
    options.add_set(parser)
    parser.add_argument("--duration", metavar="D", help="simulated time, e.g. 30s (default: the scenario's)")
    options.add_out(
        parser, "sweep folder (default: runs/<scenario>-sweep-<UTC time>); a rerun with the same DIR resumes"
    )
    options.add_cluster(parser)
    options.add_quiet(parser, "no progress bar and no table: print only the run counts and the sweep folder")


def main(args: argparse.Namespace) -> int:
    spec = SweepSpec.create(
        Path(args.scenario),
        args.vary,
        seeds=args.seeds,
        base_seed=args.seed,
        sets=args.sets,
        variants=args.variants or (),
        duration=args.duration,
    )
    stamp = utc_stamp(datetime.now(UTC))
    out_dir = args.out or options.DEFAULT_RUNS_DIR / f"{safe_name(Path(args.scenario).stem)}-sweep-{stamp}"
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
        error(f"interrupted: the runs that finished are saved in {out_dir}; run the same command to resume")
        return 130
    return _outcome(result, args.quiet)


def _outcome(result: SweepResult, quiet: bool) -> int:
    """Prints the summary, the failures and the folder; exit code 0, 1 (some runs failed) or 2 (all did)."""
    failed = len(result.failures)
    if not quiet and failed < result.ran + result.skipped:
        console().print(summary_rich_table(result.out_dir))
    skipped = f", {result.skipped} already done" if result.skipped else ""
    print(
        f"sweep: {result.runs} runs: {result.ran - failed} finished now{skipped}, {failed} failed", flush=True
    )
    print(f"sweep folder: {shown_name(str(result.out_dir))}", flush=True)
    if not failed:
        return 0
    for failure in result.failures:
        sets = " ".join(f"--set {item}" for item in failure.sets)
        error(f"point {failure.point} seed {failure.seed} ({sets}): {failure.error}")
    if failed == result.runs:
        messages = failure_messages(result.failures)
        error(f"every run failed: {messages[0]}" if len(messages) == 1 else "every run failed")
        return 2
    return 1
