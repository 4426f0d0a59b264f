"""`sanlab headroom SCENARIO --slo 'p99<=5ms'`: how much more load the scenario takes before an
SLO fails, and what saturates first (docs/headroom.md)."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sanlab import engine
from sanlab.analysis.utilisation import not_covered, utilisations
from sanlab.commands import options
from sanlab.errors import UserError
from sanlab.export.files import remove_empty, replace_text
from sanlab.export.runfolder import new_default_out_dir, prepare_out_dir
from sanlab.formatting import did_you_mean
from sanlab.headroom.answer import HEADROOM_FILE, headroom_document, read_headroom, text_lines, to_json
from sanlab.headroom.bottleneck import closed_loop_bounds, response_bound
from sanlab.headroom.grow import RateGrowth, describe, plan_growth
from sanlab.headroom.points import DaskRunner, LocalRunner, PointRunError
from sanlab.headroom.search import Search, estimate
from sanlab.headroom.slo import parse_slos
from sanlab.headroom.timeline import GrowthRate, parse_growth
from sanlab.headroom.vms import VmGrowth
from sanlab.runs import dask_client


class IdleVmError(UserError):
    """A VM named with --vm or --judge, or every VM, that issues no I/O today."""


DEFAULT_SEEDS = 3
SEED_CAP_FACTOR = 4
"""A point's seeds double while its verdict is undecided, up to this many times --seeds."""
DEFAULT_MAX_RUNS = 400
SHORT_RUN_S = 10.0
"""Without --duration, runs last the scenario's warm-up plus this (at most its own duration)."""


def register(parser: argparse.ArgumentParser) -> None:
    options.add_scenario(parser)
    parser.add_argument(
        "--slo", action="append", default=[], metavar="EXPR", required=True,
        help="an objective: FIGURE<=LATENCY (mean, p50, p95, p99, p99.9, max; such as p99<=5ms) or iops>=N (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--vm", dest="vms", action="append", default=[], metavar="NAME",
        help="a VM whose load grows (repeatable; default: every VM that issues I/O)",
    )  # fmt: skip
    parser.add_argument(
        "--judge", action="append", default=[], metavar="NAME",
        help="a VM whose figures the SLOs judge (repeatable; default: the VMs that grow)",
    )  # fmt: skip
    parser.add_argument(
        "--grow", choices=("rate", "vms"), default="rate",
        help="rate (default): the grown VMs' jobs scaled by one factor; vms: more VMs like them (how many VMs)",
    )  # fmt: skip
    parser.add_argument(
        "--growth", metavar="RATE", default=None,
        help="a compound growth rate such as 4%%/month (also /week, /year): the time until the SLOs break",
    )  # fmt: skip
    options.add_variant(parser, "start from this variant (default: the scenario as written, base)")
    options.add_set(parser, "a fixed override for every run (repeatable)")
    options.add_duration(parser, "warm-up + 10s, at most the scenario's")
    options.add_seed(parser, "first seed")
    parser.add_argument(
        "--seeds", type=options.whole_number(2), default=DEFAULT_SEEDS, metavar="N",
        help=f"seeds per point to start with (default {DEFAULT_SEEDS}; up to {SEED_CAP_FACTOR}x while undecided)",
    )  # fmt: skip
    parser.add_argument(
        "--max-runs", type=options.positive, default=DEFAULT_MAX_RUNS, metavar="N",
        help=f"runs in the whole search at most (default {DEFAULT_MAX_RUNS})",
    )  # fmt: skip
    options.add_cluster(
        parser, "run the points on a local Dask cluster of N worker processes (default: in this process)"
    )
    options.add_out(
        parser, "folder for headroom.json and headroom.html (default runs/headroom-<scenario>-<UTC time>)"
    )
    options.add_json(parser, "print the answer as one JSON document")
    options.add_quiet(parser, "no progress lines on stderr")


def _duration(scenario: str, sets: list[str], variant: str, given: str | None) -> str | None:
    if given is not None:
        return given
    times = engine.run_times(scenario, sets, [variant])[0]
    short_s = times["warmup_s"] + SHORT_RUN_S
    return f"{short_s:g}s" if short_s < times["duration_s"] else None


def idle_vms(today: dict[str, Any]) -> dict[str, str]:
    """The VMs that measured no I/O today, each with why: a grown one has no load to scale and a
    judged one no figure, so each would count as a load that did not grow (docs/headroom.md)."""
    jobs = {vm["name"]: vm.get("job") or [] for vm in today.get("resolved", {}).get("vm", [])}
    found: dict[str, str] = {}
    for vm in today["vms"]:
        if float(vm.get("iops") or 0.0) > 0:
            continue
        name = vm["name"]
        if int(vm.get("issued") or 0) == 0:
            delays = ", ".join(str(job["startdelay"]) for job in jobs.get(name, []) if "startdelay" in job)
            found[name] = f"no I/O issued in the {float(today['sim_time_s']):g} s run" + (
                f", startdelay {delays}" if delays else ""
            )
        else:
            found[name] = (
                f"no I/O completed after the {float(today['sim_time_s']) - float(today['measured_s']):g} s warm-up"
            )
    return found


def _selected(
    today: dict[str, Any], wanted: list[str], where: str, option: str, idle: dict[str, str]
) -> list[str]:
    """The VMs named with `option`, or by default every VM that issues I/O today."""
    names = [vm["name"] for vm in today["vms"]]
    busy = [name for name in names if name not in idle]
    for name in wanted:
        if name not in names:
            raise UserError(
                f"{option} {name}: no VM of that name in {where}; expected one of {', '.join(names)}{did_you_mean(name, names)}"
            )
        if name in idle:
            lacks = "no load to grow" if option == "--vm" else "no figure to judge"
            raise IdleVmError(
                f"{option} {name}: VM {name} issues no I/O in {where} today ({idle[name]}), so it has {lacks}; "
                f"expected a VM that issues I/O: {', '.join(busy) or 'none does'}"
            )
    if not wanted and not busy:
        raise IdleVmError(
            f"{where}: no VM issues I/O today ({'; '.join(f'{n}: {why}' for n, why in idle.items())}); "
            "expected at least one VM whose jobs run within the search's --duration"
        )
    return list(dict.fromkeys(wanted)) or busy


def _idle_note(idle: dict[str, str], args: argparse.Namespace) -> list[str]:
    """The idle VMs the default (no --vm: every VM that issues I/O) left out, said; the judged VMs
    default to the grown ones."""
    if not idle or args.vms:
        return []
    roles = "grown" if args.judge else "grown and judged"
    by_reason: dict[str, list[str]] = {}
    for name, why in idle.items():
        by_reason.setdefault(why, []).append(name)
    reasons = "; ".join(
        f"{', '.join(names)}: {why}" if len(by_reason) > 1 else why for why, names in by_reason.items()
    )
    return [
        f"VM{'s' if len(idle) > 1 else ''} {', '.join(idle)} left out of the {roles} VMs: "
        f"no I/O today ({reasons})"
    ]


def _probe(args: argparse.Namespace, variant: str, duration: str | None) -> Any:
    """Today's run at the search's duration; a scenario whose faults come after the short run
    (the engine refuses an event beyond the run) runs its own duration."""
    try:
        return engine.run(args.scenario, [variant], args.sets, args.seed, duration)
    except engine.ScenarioError:
        if args.duration is not None or duration is None:
            raise
        return engine.run(args.scenario, [variant], args.sets, args.seed, None)


def main(args: argparse.Namespace) -> int:
    """Runs the search and prints the answer; returns the exit code."""
    slos = parse_slos(args.slo)
    rate = parse_growth(args.growth) if args.growth is not None else None
    if args.max_runs < args.seeds:
        raise UserError(
            f"--max-runs {args.max_runs}: the search needs at least --seeds {args.seeds} runs (today's load)"
        )
    variant = args.variant or "base"
    where = f"{args.scenario} (variant {variant})"
    duration = _duration(args.scenario, args.sets, variant, args.duration)
    # Today, once, in this process: the VMs, the jobs as the engine paces them, the utilisations.
    probe = _probe(args, variant, duration)
    today = probe["variants"][0]
    if today.get("resolved", {}).get("event") and args.duration is None and duration is not None:
        duration = None  # a scenario with faults runs its own duration, so that every fault happens
        probe = engine.run(args.scenario, [variant], args.sets, args.seed, duration)
        today = probe["variants"][0]
    idle = idle_vms(today)
    grown = _selected(today, args.vms, where, "--vm", idle)
    judged = _selected(today, args.judge, where, "--judge", idle) if args.judge else grown
    made = args.out is None or not args.out.exists()
    out_dir = args.out or new_default_out_dir(
        options.DEFAULT_RUNS_DIR, f"headroom-{probe['scenario']}", datetime.now(UTC)
    )
    prepare_out_dir(out_dir)
    try:
        growth, scaled, notes = _growth(args, today, grown, judged, out_dir)
        notes = [*_idle_note(idle, args), *notes]
        return _search_and_write(args, slos, rate, today, growth, scaled, notes, duration, out_dir)
    finally:
        if made:
            remove_empty([out_dir])


def _growth(
    args: argparse.Namespace, today: dict[str, Any], grown: list[str], judged: list[str], out_dir: Path
) -> tuple[RateGrowth | VmGrowth, list[str], list[str]]:
    """What a factor changes, what it grows (for people) and notes on what it leaves."""
    variant = args.variant or "base"
    scenario = str(Path(args.scenario).resolve())
    if args.grow == "vms":
        mine = [job for job in today["jobs"] if job["vm"] in grown]
        growth = VmGrowth(
            scenario, variant, tuple(args.sets), today["resolved"], tuple(grown), tuple(judged), out_dir,
            open_loop=all(job["pacing"]["kind"] == "open" for job in mine),
        )  # fmt: skip
        copies = f"copies of VM {', '.join(grown)} (each on its VM's host and volume)"
        fewer = "; below today's count, the grown VMs dropped, the last first" if len(grown) > 1 else ""
        return growth, [copies + fewer], []
    scalings, notes = plan_growth(today["resolved"], today["jobs"], grown)
    rate_growth = RateGrowth(
        tuple(scalings), scenario, variant, tuple(args.sets), tuple(grown), tuple(judged)
    )
    return rate_growth, describe(scalings), notes


def _search_and_write(
    args: argparse.Namespace, slos: list[Any], rate: GrowthRate | None, today: dict[str, Any],
    growth: RateGrowth | VmGrowth, scaled: list[str], notes: list[str], duration: str | None, out_dir: Path,
) -> int:  # fmt: skip
    variant = args.variant or "base"
    base_seed = args.seed if args.seed is not None else int(today["seed"])
    progress = (
        (lambda line: print(f"headroom: {line}", file=sys.stderr))
        if not (args.json or args.quiet)
        else (lambda line: None)
    )

    # Nothing random (fixed delays, nothing that looks at where I/Os land): one seed is exact.
    exact = today.get("seed_matters") is False
    seeds = 1 if exact else args.seeds

    def search_on(runner: Any) -> tuple[Search, Any]:
        search = Search(
            slos=slos, growth=growth, runner=runner, base_seed=base_seed, seeds=seeds,
            max_seeds=1 if exact else seeds * SEED_CAP_FACTOR, exact=exact, max_runs=args.max_runs,
            on_round=progress,
        )  # fmt: skip
        try:
            return search, search.run()
        except PointRunError as exc:
            raise UserError(f"headroom {args.scenario}: a run failed: {exc}") from None

    if args.workers is None and args.scheduler is None:
        search, bracket = search_on(LocalRunner(duration, cores=engine.cores()))
    else:
        with dask_client(args.scheduler, args.workers) as client:
            search, bracket = search_on(DaskRunner(duration, client=client))
    low, high = bracket
    limit = estimate(search, low, high) if low is not None and high is not None else None
    vm_count = isinstance(growth, VmGrowth)
    # The limit's scenario: at the factor found; with whole counts (VMs, a closed loop's depths)
    # the largest count that holds, a point the search ran.
    whole = growth.bisect_to_counts
    at = limit.factor if limit and not whole else low.factor if low else None
    at_setup = growth.setup(at)[0] if at is not None else None
    utilisation = {"today": utilisations(today)}
    if at_setup is not None:
        doc_at = engine.run(at_setup.scenario, [at_setup.variant], at_setup.all_sets(), base_seed, duration)
        utilisation["limit"] = utilisations(doc_at["variants"][0])
    header = {
        "scenario": args.scenario,
        "variant": variant,
        "version": engine.VERSION,
        "grown_vms": list(growth.grown),
        "judged_vms": list(growth.judged),
        "vms_today": len(growth.grown) if vm_count else None,
        "whole_counts": whole,
        "vms": at_setup.vms if vm_count and at_setup is not None and limit is not None else None,
        "growth": (
            "--grow vms: copies of the grown VMs, the factor their count over today's"
            if vm_count
            else "--grow rate: each grown VM's load times the factor"
        ),
        "scaled": scaled,
        "slos": [{"text": s.text, "figure": s.figure, "limit": s.limit, "label": s.label()} for s in slos],
        "duration_s": float(today["sim_time_s"]),
        "measured_s": float(today["measured_s"]),
        "seeds": {"first": base_seed, "initial": seeds, "cap": search.max_seeds, "exact": exact},
        "at_limit": list(at_setup.sets) if at_setup is not None else [],
        "at_limit_scenario": at_setup.scenario if vm_count and at_setup is not None else None,
        "sets": list(args.sets),
        "runner": "dask"
        if args.workers is not None or args.scheduler is not None
        else "local (engine replications)",
        "notes": [
            *notes,
            *(
                [
                    "nothing in the scenario is random (seed_matters is false): one seed per point, its figures exact"
                ]
                if exact
                else []
            ),
        ],
    }
    header["not_covered"] = not_covered(today)
    response = response_bound(today, list(growth.judged))
    # Outstanding I/Os that grow (a closed loop's depths, or VMs that each keep theirs): a closed network.
    closed = (
        closed_loop_bounds(today, list(growth.grown), list(growth.judged))
        if whole and not growth.open_loop
        else None
    )
    doc = headroom_document(header, search, bracket, limit, utilisation, response, closed)
    if rate is not None:
        doc["time_to_limit"] = rate.answer(doc)
    replace_text(out_dir / HEADROOM_FILE, to_json(doc), check=read_headroom)
    from sanlab.headroom.page import PAGE_FILE, page  # plotly: imported once there is a page to draw

    replace_text(out_dir / PAGE_FILE, page(doc))
    if args.json:
        print(to_json(doc), end="")
    else:
        print("\n".join([*text_lines(doc), f"headroom folder: {out_dir}"]))
    return 0
