"""`sanlab advise SCENARIO`: the settings a user can change, searched for an objective (docs/advise.md)."""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sanlab import engine
from sanlab.advise.advice import ADVICE_FILE, PAGE_FILE, advice_document, page, text_lines
from sanlab.advise.knobs import knobs_of
from sanlab.advise.objective import parse_objective
from sanlab.advise.search import Search
from sanlab.analysis.health import duration_s
from sanlab.commands import options
from sanlab.errors import UserError
from sanlab.export.files import remove_empty, replace_text
from sanlab.export.runfolder import new_default_out_dir, prepare_out_dir
from sanlab.formatting import did_you_mean
from sanlab.runs import dask_client

DEFAULT_SEEDS = 3
SEED_CAP_FACTOR = 4
"""Seeds grow, while the best value is not parted from another, up to this many times --seeds."""
DEFAULT_MAX_RUNS = 500
SHORT_RUN_S = 10.0
"""Without --duration, runs last the scenario's warm-up plus this (or the scenario's duration, if
shorter); a scenario with [[event]] faults runs its own duration, so every fault happens."""


def register(parser: argparse.ArgumentParser) -> None:
    options.add_scenario(parser)
    options.add_variant(parser, "start from this variant (default: the scenario as written, base)")
    parser.add_argument(
        "--objective",
        default="iops",
        metavar="OBJ",
        help="iops (default: most total VM IOPS, no VM's p99 over today's + 10 %%), p99:VMNAME or worst-case",
    )
    parser.add_argument(
        "--keep", action="append", default=[], metavar="KEY", help="a setting never varied (repeatable)"
    )
    options.add_set(parser, "a fixed override for every run (repeatable)")
    options.add_duration(parser, "warm-up + 10s, at most the scenario's")
    options.add_seed(parser, "first seed")
    parser.add_argument(
        "--seeds",
        type=options.whole_number(2),
        default=DEFAULT_SEEDS,
        metavar="N",
        help=f"seeds per candidate to start with (default {DEFAULT_SEEDS}; "
        f"up to {SEED_CAP_FACTOR}x while undecided)",
    )
    parser.add_argument(
        "--max-runs",
        type=options.positive,
        default=DEFAULT_MAX_RUNS,
        metavar="N",
        help=f"runs in the whole search at most (default {DEFAULT_MAX_RUNS})",
    )
    options.add_cluster(parser)
    options.add_out(parser, "folder for advice.json, advice.html and the sweeps")
    options.add_json(parser, "print the advice as one JSON document")


def _search_duration(variant: dict[str, Any], given: str | None) -> str | None:
    if given is not None or variant.get("faults") or variant["resolved"].get("event"):
        return given
    warmup_s = variant["sim_time_s"] - variant["measured_s"]
    short_s = warmup_s + SHORT_RUN_S
    return f"{short_s:g}s" if short_s < variant["sim_time_s"] else None


def main(args: argparse.Namespace) -> int:
    """Runs the search and prints the advice; returns the exit code."""
    variant_name = args.variant or "base"
    # Today as given, once, in this process: the scenario's settings, devices and faults.
    probe = engine.run(args.scenario, [variant_name], args.sets, args.seed, args.duration)
    today = probe["variants"][0]
    resolved = today["resolved"]
    vms = [vm["name"] for vm in today["vms"]]
    where = f"{args.scenario} (variant {variant_name})"
    objective = parse_objective(args.objective, vms, bool(resolved.get("event")), where)
    lun_depths = {device["host"]: device["queue_depth"] for device in today["devices"]}
    knobs, notes = knobs_of(resolved, lun_depths)
    keys = [knob.key for knob in knobs]
    for key in args.keep:
        if key not in keys:
            hint = did_you_mean(key, keys)
            raise UserError(
                f"--keep {key}: not a setting advise varies in {where}: expected one of "
                f"{', '.join(keys) or 'none (nothing to vary)'}{hint}"
            )
    # A setting given with --set is pinned as --keep pins it (docs/advise.md), a part of it too.
    pinned = {item.partition("=")[0].strip() for item in args.sets}
    knobs = [
        knob for knob in knobs
        if knob.key not in args.keep and not any(key == knob.key or key.startswith(f"{knob.key}.") for key in pinned)
    ]  # fmt: skip
    if not knobs:
        raise UserError(f"{where}: no setting left to vary (--keep and --set pin every one advise found)")
    if args.max_runs < args.seeds:  # today's settings are measured first, at --seeds seeds
        raise UserError(
            f"--max-runs {args.max_runs}: the search needs at least {args.seeds} runs (today's settings at "
            f"--seeds {args.seeds}); the nearest is {args.seeds}"
        )
    duration = _search_duration(today, args.duration)
    made = args.out is None or not args.out.exists()
    out_dir = args.out or new_default_out_dir(options.DEFAULT_RUNS_DIR, f"{probe['scenario']}-advise", datetime.now(UTC))
    prepare_out_dir(out_dir)
    try:
        return _search_and_write(args, today, objective, knobs, notes, duration, out_dir)
    finally:
        if made:
            remove_empty([out_dir])


def _search_and_write(
    args: argparse.Namespace,
    today: dict[str, Any],
    objective: Any,
    knobs: list[Any],
    notes: list[str],
    duration: str | None,
    out_dir: Path,
) -> int:
    """The search from today's run, then advice.json, advice.html and what is printed."""
    variant_name = args.variant or "base"
    base_seed = args.seed if args.seed is not None else today["seed"]
    with dask_client(args.scheduler, args.workers) as client:
        search = Search(
            scenario=Path(args.scenario),
            variant=variant_name,
            sets=tuple(args.sets),
            duration=duration,
            base_seed=base_seed,
            seeds=args.seeds,
            max_seeds=args.seeds * SEED_CAP_FACTOR,
            max_runs=args.max_runs,
            objective=objective,
            knobs=knobs,
            out_dir=out_dir,
            client=client,
        )
        chosen = search.run()
    header = {
        "scenario": args.scenario,
        "variant": variant_name,
        "version": engine.VERSION,
        "objective": {
            "name": objective.name,
            "text": _objective_text(objective),
            "figure": objective.figure,
            "unit": objective.unit,
            "higher_is_better": objective.higher_is_better,
        },
        "duration_s": _duration_s(today, duration),
        "seeds": {"first": base_seed, "initial": args.seeds, "cap": args.seeds * SEED_CAP_FACTOR},
        "kept": list(args.keep),
        "sets": list(args.sets),
        "notes": notes,
    }
    doc = advice_document(search, chosen, header)
    replace_text(out_dir / ADVICE_FILE, json.dumps(doc, indent=2) + "\n")
    replace_text(out_dir / PAGE_FILE, page(doc))
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print("\n".join([*text_lines(doc), f"advice folder: {out_dir}"]))
    return 0


def _objective_text(objective: Any) -> str:
    if objective.name == "iops":
        return "most total VM IOPS, no VM's p99 more than 10 % over today's"
    if objective.name == "worst-case":
        return "most IOPS at the worst moment of the faults (lowest total VM IOPS while a fault lasts)"
    return f"lowest p99 latency of VM {objective.vm}"


def _duration_s(today: dict[str, Any], duration: str | None) -> float:
    return duration_s(duration) if duration else float(today["sim_time_s"])
