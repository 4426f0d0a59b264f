"""`sanlab calibrate SCENARIO --measured FILE --free KEY=LO..HI -o FILE`: checks the input, runs
the fit (`sanlab.calibration.fit`) on Dask, prints the points and fitted values, writes the
calibrated scenario (docs/cli.md). `sanlab calibrate SCENARIO --predict`: runs a calibrated
scenario at its fitted values and the ends of their ranges (`sanlab.calibration.predict`)."""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import time
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

from rich import box
from rich.table import Table

from sanlab import engine
from sanlab.calibration.fit import (
    Best,
    Calibration,
    Figures,
    Fit,
    calibrate,
    dask_mapper,
    figures_of,
    rms_error,
)
from sanlab.calibration.inputs import (
    VM_FIGURE,
    CalibrationError,
    FreeParam,
    Point,
    check,
    parse_free,
    read_points,
)
from sanlab.calibration.predict import Prediction, predict
from sanlab.calibration.ranges import RANGE_SEEDS, max_runs, shown, with_ranges
from sanlab.calibration.toml_out import calibrated_text
from sanlab.commands import options
from sanlab.commands.terminal import console
from sanlab.export.files import refuse_inputs, replace_text
from sanlab.formatting import format_count, format_ms, format_wall_s, shown_name
from sanlab.runs import RunOutcome, dask_client, entity_table


def _first_run(
    scenario: str, sets: Sequence[str], variant: str | None, point: Point, free: Sequence[FreeParam]
) -> tuple[int, Figures]:
    """Runs the first point at the middle of the box: the seed the runs take by default (the
    scenario's `[run] seed` after the variant and --set) and the figures a run gives."""
    settings = [*sets, *point.sets, *(p.setting(p.value(0.5)) for p in free)]
    try:
        doc = engine.run(scenario, [variant] if variant else None, settings)
    except engine.ScenarioError as exc:
        raise CalibrationError(f"{point.where}: the run failed: {exc}") from None
    outcome = RunOutcome(0, 0, entity_table(doc, 0, 0), None)
    return int(doc["variants"][0]["seed"]), figures_of(outcome)


def _variant(scenario: str, sets: Sequence[str], wanted: str | None) -> str | None:
    """The one variant to run: `wanted`, else the scenario's only one, else none (base)."""
    names = engine.validate(scenario, sets, [wanted] if wanted else None)["variants"]
    if wanted is None and len(names) > 1:
        raise CalibrationError(
            f"{scenario}: {len(names)} variants ({', '.join(names)}); choose the one to fit with --variant"
        )
    return wanted or (names[0] if names else None)


def _check_vm_figures(fit_figures: Figures, points: Sequence[Point]) -> None:
    """Every vm:NAME: column names a VM of the scenario."""
    vms = sorted({name.split(":")[1] for name in fit_figures if name.startswith("vm:")})
    for point in points:
        for name, _ in point.figures:
            match = VM_FIGURE.match(name)
            if match and match["name"] not in vms:
                nearest = difflib.get_close_matches(match["name"], vms, n=1, cutoff=0.3)
                hint = f"; did you mean `vm:{nearest[0]}:{match['figure']}`?" if nearest else ""
                raise CalibrationError(
                    f"{point.where}, column `{name}`: no VM named `{match['name']}` "
                    f"(VMs: {', '.join(vms)}){hint}"
                )


def _format_figure(name: str, value: float) -> str:
    return format_ms(value) if name.endswith("lat_ms") else format_count(value)


def points_table(fit: Fit) -> Table:
    """Each point's figures: measured, fitted, relative error."""
    table = Table(title="measured and fitted", box=box.SIMPLE_HEAD, title_justify="left", show_edge=False)
    for header, justify in (
        ("point", "left"),
        ("settings", "left"),
        ("figure", "left"),
        ("measured", "right"),
        ("fitted", "right"),
        ("error", "right"),
    ):
        table.add_column(header, justify=justify)  # type: ignore[arg-type]
    for point, figures in zip(fit.calibration.points, fit.figures, strict=True):
        settings = " ".join(
            item.split("=")[0].rpartition(".")[2] + "=" + item.partition("=")[2] for item in point.sets
        )
        for name, measured in point.figures:
            simulated = figures[name]
            error = f"{100 * (simulated / measured - 1):+.1f} %"
            table.add_row(  # labels and columns from the measured file, escaped for the terminal
                shown_name(point.name),
                shown_name(settings),
                shown_name(name),
                _format_figure(name, measured),
                _format_figure(name, simulated),
                error,
            )
    return table


def values_table(fit: Fit) -> Table:
    """The fitted values, their bounds and the objective when each is moved by ∓5 %."""
    table = Table(
        title=f"fitted values (objective {fit.objective:.4g}, rms error {100 * fit.rms:.2f} %)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
        show_edge=False,
    )
    for header in ("key", "value (range)", "bounds", "objective at −5 %", "at +5 %"):
        table.add_column(header, justify="right" if header.startswith(("objective", "at ")) else "left")
    for index, (param, value, (low, high)) in enumerate(zip(fit.calibration.free, fit.values, fit.sensitivity, strict=True)):
        bounds = f"{param.format(param.lo)}..{param.format(param.hi)}"
        side = ["-" if x is None else f"{x:.4g}" for x in (low, high)]
        text = shown(param, value, fit.ranges.ranges[index]) if fit.ranges else param.format(value)
        table.add_row(shown_name(param.key), text, bounds, *side)
    return table


def range_lines(fit: Fit) -> list[str]:
    """`key = value (low–high)` per fitted value, and what the ranges were judged on."""
    if fit.ranges is None:
        return []
    r = fit.ranges
    seeds = f"seeds {r.seeds[0]}-{r.seeds[-1]}"
    noise = (
        f"the measurement's allowance {r.allowance:.3g} (s² t², {r.dof} degree{'s' if r.dof > 1 else ''} of freedom)"
        if r.dof
        else "no measurement allowance (as many figures as free values): the simulation's noise alone"
    )
    lines = [f"ranges: the values within noise of the fit (objective {r.fit_objective:.4g} on {seeds}; {noise}; {r.runs} runs)"]
    for param, value, span in zip(fit.calibration.free, fit.values, r.ranges, strict=True):
        lines.append(f"  {param.key} = {shown(param, value, span)}")
    return lines


def _sources(points: Sequence[Point]) -> str:
    """`points.csv lines 2-6`, or `points.parquet rows 1-4`: where the points are written."""
    first, last = points[0].where, points[-1].where
    if len(points) == 1:
        return first
    head, _, number = first.rpartition(" ")
    file, _, unit = head.rpartition(" ")
    return f"{file} {unit}s {number}-{last.rpartition(' ')[2]}"


MAX_FIT_RUNS = 1_000_000
"""Simulations in one fit: at a tenth of a second each, more than a day on one core."""


def _bounded(free: int, points: Sequence[Point], generations: int, popsize: int, seeds: int) -> tuple[int, int]:
    """The most runs of the fit and of its ranges; refuses them when above MAX_FIT_RUNS together,
    before anything starts: differential evolution runs popsize x free candidates per generation,
    plus the first, each at every point; the ranges, `max_runs` at the weighted points."""
    fit = (generations + 1) * popsize * free * len(points)
    ranges = max_runs(free, sum(1 for point in points if point.weight > 0), seeds) if seeds else 0
    if fit + ranges > MAX_FIT_RUNS:
        size = (
            f"((--generations {generations} + 1) x --popsize {popsize} x {free} free value(s) x {len(points)} point(s)"
            + (f", and up to {format_count(ranges)} for the ranges with --range-seeds {seeds}" if ranges else "")
        )
        raise CalibrationError(
            f"the fit would run up to {format_count(fit + ranges)} simulations {size}), above the limit of "
            f"{format_count(MAX_FIT_RUNS)}: lower --popsize or --generations"
            + (", --range-seeds or give --no-range" if ranges else "")
            + ", or fit fewer points"
        )
    return fit, ranges


def _at_bound(fit: Fit, param: FreeParam) -> str | None:
    """The end of its bounds a fitted value presses against, or None: within 5 % of it (its
    neighbour that way is outside the box) with the objective rising the other way."""
    low, high = fit.sensitivity[fit.calibration.free.index(param)]
    if low is None and high is not None and high > fit.objective:
        return param.format(param.lo)
    if high is None and low is not None and low > fit.objective:
        return param.format(param.hi)
    return None  # inside the box, or not measured (an interrupted fit, a box narrower than 5 %)


def not_converged(fit: Fit) -> list[str]:
    """The fitted values a neighbour 5 % away fits better than (the search stopped short), and
    those pressing against an end of their box (the data may ask for a value outside it)."""
    warnings = []
    for param, value, sides in zip(fit.calibration.free, fit.values, fit.sensitivity, strict=True):
        if any(x is not None and x < fit.objective for x in sides):
            warnings.append(f"{param.key}: {param.format(value)} is not a minimum (the objective is lower 5 % away): raise --generations or --popsize")
        if fit.ranges is not None:
            span = fit.ranges.ranges[fit.calibration.free.index(param)]
            ends = [param.format(b) for b, at in ((param.lo, span.at_lo), (param.hi, span.at_hi)) if at]
            if ends:
                warnings.append(
                    f"{param.key}: its range reaches the bound {' and '.join(ends)} of --free: the points allow "
                    f"values beyond {param.format(param.lo)}..{param.format(param.hi)}; widen the bounds to see how far"
                )
        end = _at_bound(fit, param)
        if end is not None:
            warnings.append(
                f"{param.key}: {param.format(value)} is within 5 % of its bound {end} and the objective rises away "
                f"from it (rms error {100 * fit.rms:.1f} %): the points may ask for a value outside "
                f"{param.format(param.lo)}..{param.format(param.hi)}; widen the bounds to see"
            )
    return warnings


def _comment(fit: Fit, param: FreeParam) -> str:
    """The comment on a fitted value: the points, the error, the objective at ∓5 %."""
    points = fit.calibration.points
    errors = [
        (abs(figures[name] / measured - 1), f"{' '.join(point.where.split(' ')[-2:])} {name}")
        for point, figures in zip(points, fit.figures, strict=True)
        for name, measured in point.figures
    ]
    largest, at = max(errors)
    low, high = fit.sensitivity[fit.calibration.free.index(param)]
    sides = "/".join("-" if x is None else f"{x:.3g}" for x in (low, high))
    short = " NOT CONVERGED: a value 5 % away fits better" if any(x is not None and x < fit.objective for x in (low, high)) else ""
    if _at_bound(fit, param) is not None:
        short += " AT A BOUND: the points may ask for a value outside the bounds"
    span = ""
    if fit.ranges is not None:
        index = fit.calibration.free.index(param)
        span = f"range {shown(param, fit.values[index], fit.ranges.ranges[index]).partition(' ')[2][1:-1]}; "
        if fit.ranges.ranges[index].at_lo or fit.ranges.ranges[index].at_hi:
            short += " RANGE AT A BOUND of --free"
    return (
        f"{span}fitted on {_sources(points)} ({_count(len(points), 'point')}): rms error {100 * fit.rms:.1f} %, "
        f"largest {100 * largest:.1f} % ({at}); objective {fit.objective:.3g}, {sides} at -5 %/+5 %{short}"
    )


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def write_calibrated(fit: Fit, original: Path, out: Path, measured: Path, argv: Sequence[str]) -> None:
    """Writes the calibrated scenario (docs/cli.md) and checks that the engine reads it."""
    cal = fit.calibration
    fitted: dict[str, Any] = {}
    comments: dict[str, str] = {}
    for param, value in zip(cal.free, fit.values, strict=True):
        text = param.format(value)
        fitted[param.key] = text if param.unit else (round(value) if param.integer else float(text))
        comments[param.key] = _comment(fit, param)
    header = [
        f"Calibrated from {original} with the measured points of {measured}.",
        "command: " + " ".join(argv),
        f"seed {cal.seed}"
        + (f", variant {cal.variant}" if cal.variant else "")
        + (f", --set {' '.join(cal.sets)}" if cal.sets else ""),
    ]
    header.extend(range_lines(fit))  # `  KEY = VALUE (LOW–HIGH)` lines: what `--predict` reads back
    if fit.interrupted:
        header.append("INTERRUPTED: the best values found before Ctrl-C, not a finished search.")
    variant = None
    if cal.variant:
        declared = tomllib.loads(original.read_text(encoding="utf-8")).get("variant", [])
        variant = next((item for item in declared if item.get("name") == cal.variant), None)
        if variant is not None:
            # A variant that sets a fitted key would override the fitted value in the file.
            overridden = sorted(set(variant.get("set", {})) & set(fitted))
            if overridden:
                variant = {**variant, "set": {k: v for k, v in variant["set"].items() if k not in fitted}}
                header.append(f"variant {cal.variant}'s own {', '.join(overridden)} dropped: fitted here")
    text = calibrated_text(original, out, out.stem, header, fitted, comments, variant)
    out.parent.mkdir(parents=True, exist_ok=True)

    def read_back(written: Path) -> None:
        try:
            engine.validate(written)
        except engine.ScenarioError as exc:
            raise engine.InternalError(f"the calibrated scenario {out} does not validate: {exc}") from None

    replace_text(out, text, check=read_back)


def progress_line(cal: Calibration, stream: TextIO, started: float) -> Callable[[Best, int], None]:
    """A line per evaluation batch on `stream`: the best objective so far and its values."""

    def show(best: Best, candidates: int) -> None:
        values = ", ".join(f"{p.short}={p.format(v)}" for p, v in zip(cal.free, best.values, strict=True))
        print(
            f"[generation {best.batches - 1}/{cal.generations}] {candidates} candidates × "
            f"{_count(len(cal.points), 'point')}: best objective {best.objective:.4g} "
            f"(rms error {100 * rms_error(best.objective, cal.points):.2f} %) "
            f"at {shown_name(values)}; {format_wall_s(time.perf_counter() - started)}",
            file=stream,
            flush=True,
        )

    return show


def range_progress(most: int, stream: TextIO, started: float) -> Callable[[int, int], None]:
    """A line per round of the ranges on `stream`: the runs so far against the most."""

    def show(round_: int, runs: int) -> None:
        print(f"[range round {round_}] {format_count(runs)} of at most {format_count(most)} runs; "
              f"{format_wall_s(time.perf_counter() - started)}", file=stream, flush=True)

    return show


def fit_document(fit: Fit, out: str) -> dict[str, Any]:
    """The fit as `--json` prints it: the values with their ranges, the objective, the points."""
    ranges = fit.ranges
    values = []
    for index, (param, value) in enumerate(zip(fit.calibration.free, fit.values, strict=True)):
        entry: dict[str, Any] = {"key": param.key, "value": param.format(value), "bounds": [param.format(param.lo), param.format(param.hi)]}
        if ranges is not None:
            span = ranges.ranges[index]
            entry["range"] = [param.format(span.low), param.format(span.high)]
            entry["range_at_bound"] = [span.at_lo, span.at_hi]
            entry["outside"] = [None if x is None else param.format(x) for x in span.outside]
        entry["shown"] = shown(param, value, ranges.ranges[index]) if ranges else param.format(value)
        values.append(entry)
    document: dict[str, Any] = {"values": values, "objective": fit.objective, "rms_error": fit.rms, "interrupted": fit.interrupted, "calibrated": out}
    if ranges is not None:
        document["ranges"] = {"seeds": list(ranges.seeds), "fit_objective": ranges.fit_objective, "allowance": ranges.allowance, "dof": ranges.dof, "runs": ranges.runs}
    document["points"] = [
        {"point": point.name, "figures": {name: {"measured": measured, "fitted": figures[name]} for name, measured in point.figures}}
        for point, figures in zip(fit.calibration.points, fit.figures, strict=True)
    ]
    return document


GENERATIONS = 25
POPSIZE = 10
PREDICT_REPLICATIONS = 5
"""Seeds a prediction runs at each setting, by default (`--replications`)."""
FIT_ONLY = (
    ("measured", None, "--measured"),
    ("free", None, "--free"),
    ("out", None, "-o"),
    ("range_seeds", RANGE_SEEDS, "--range-seeds"),
    ("no_range", False, "--no-range"),
    ("generations", GENERATIONS, "--generations"),
    ("popsize", POPSIZE, "--popsize"),
)
"""The options of a fit, with their defaults: refused with --predict."""


def _checked_mode(args: argparse.Namespace) -> None:
    """A fit needs --measured, --free and -o and takes one --variant; --predict takes none of a
    fit's options, nor --scheduler (its runs are the engine's, in this process)."""
    if args.predict:
        given = [option for dest, default, option in FIT_ONLY if getattr(args, dest) != default]
        if args.scheduler is not None:
            given.append("--scheduler")
        if given:
            raise CalibrationError(
                f"--predict runs a calibrated scenario and takes no {', '.join(given)} "
                "(a fit's options; --workers sets its parallel runs)"
            )
        return
    missing = [option for dest, _, option in FIT_ONLY[:3] if getattr(args, dest) is None]
    if missing:
        raise CalibrationError(
            f"a fit needs {', '.join(missing)} (or give --predict to run a calibrated scenario)"
        )
    if args.replications is not None:
        raise CalibrationError("--replications is --predict's: a fit runs each candidate at one seed")
    if args.variants and len(args.variants) > 1:
        raise CalibrationError(f"a fit takes one --variant, got {len(args.variants)}: {', '.join(args.variants)}")


def _figure_text(figure: str, value: float) -> str:
    return format_count(value) if figure == "iops" else format_ms(value)


def prediction_table(prediction: Prediction) -> Table:
    """Each figure at the fitted values with the seeds' 95 % interval, and over the ranges."""
    table = Table(
        title=f"predicted over {_count(prediction.replications, 'seed')} and "
        f"{_count(len(prediction.settings), 'end')} of the fitted ranges",
        box=box.SIMPLE_HEAD,
        title_justify="left",
        show_edge=False,
    )
    for header, justify in (
        ("variant", "left"),
        ("vm", "left"),
        ("figure", "left"),
        ("at the fit", "right"),
        ("seeds' 95 %", "right"),
        ("over the ranges", "right"),
    ):
        table.add_column(header, justify=justify)  # type: ignore[arg-type]
    for item in prediction.figures:
        interval = "-" if item.ci95 is None else "–".join(_figure_text(item.figure, x) for x in item.ci95)
        table.add_row(
            shown_name(item.variant),
            shown_name(item.vm),
            "IOPS" if item.figure == "iops" else f"{item.figure} ms",
            _figure_text(item.figure, item.value),
            interval,
            "–".join(_figure_text(item.figure, x) for x in item.spread),
        )
    return table


def prediction_document(prediction: Prediction) -> dict[str, Any]:
    """The prediction as `--predict --json` prints it."""
    return {
        "ranges_from": str(prediction.source),
        "ranges": [{"key": r.key, "value": r.value, "range": [r.low, r.high]} for r in prediction.ranges],
        "ends": list(prediction.settings),
        "replications": prediction.replications,
        "figures": [
            {"variant": f.variant, "vm": f.vm, "figure": f.figure, "value": f.value, "ci95": f.ci95, "range": list(f.spread)}
            for f in prediction.figures
        ],
    }


def _predict_main(args: argparse.Namespace) -> int:
    """`sanlab calibrate SCENARIO --predict`: the runs, then the table or the JSON."""
    sets = tuple(args.sets)
    try:
        engine.validate(args.scenario, sets, args.variants)
    except engine.ScenarioError as exc:
        raise CalibrationError(str(exc)) from None
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        if not args.quiet:
            print(f"[setting {done}/{total}] {format_wall_s(time.perf_counter() - started)}", file=sys.stderr, flush=True)

    replications = args.replications or PREDICT_REPLICATIONS
    jobs = args.workers or engine.cores()
    prediction = predict(Path(args.scenario), args.variants, sets, args.seed, args.duration, replications, jobs, progress)
    if args.json:
        print(json.dumps(prediction_document(prediction), indent=2), flush=True)
        return 0
    console().print(prediction_table(prediction))
    print(f"ranges from {shown_name(str(prediction.source))}:", flush=True)
    for span in prediction.ranges:
        print(shown_name(f"  {span.key} = {span.value} ({span.low}–{span.high})"), flush=True)
    return 0


def main(args: argparse.Namespace) -> int:
    """`sanlab calibrate`: checks the input, fits on Dask, prints the tables, writes -o; with
    --predict, runs a calibrated scenario over its fitted ranges."""
    _checked_mode(args)
    if args.predict:
        return _predict_main(args)
    given = args.scenario  # as typed, for messages; the runs take the absolute path (Dask workers)
    refuse_inputs(Path(args.out), [Path(given), Path(args.measured)])
    free = tuple(parse_free(text) for text in args.free)
    points = tuple(read_points(args.measured))
    seeds = 0 if args.no_range else args.range_seeds
    fit_runs, range_runs = _bounded(len(free), points, args.generations, args.popsize, seeds)
    sets = tuple(args.sets)
    if args.duration:
        sets = (*sets, f"run.duration={args.duration}")
    variant = _variant(given, sets, args.variants[0] if args.variants else None)  # checks the chosen variant only
    check(given, free, points, sets, [variant] if variant else None)
    scenario_seed, figures = _first_run(given, sets, variant, points[0], free)
    _check_vm_figures(figures, points)
    seed = scenario_seed if args.seed is None else args.seed
    scenario = str(Path(given).resolve())
    cal = Calibration(scenario, free, points, seed, sets, variant, None, args.generations, args.popsize)
    started = time.perf_counter()
    on_batch = (lambda best, n: None) if args.quiet else progress_line(cal, sys.stderr, started)
    on_range = (lambda round_, runs: None) if args.quiet else range_progress(range_runs, sys.stderr, started)
    if not args.quiet:
        ranges = (
            f"the ranges up to {format_count(range_runs)} ({seeds} seeds; --no-range skips them)"
            if seeds
            else "no ranges (--no-range)"
        )
        print(f"runs: the fit up to {format_count(fit_runs)}, {ranges}", file=sys.stderr, flush=True)
    with dask_client(args.scheduler, args.workers) as client:
        mapper = dask_mapper(client)
        fit = with_ranges(calibrate(cal, mapper, on_batch), mapper, seeds, on_range)
    if not args.quiet and not args.json:
        terminal = console()
        for table in (points_table(fit), values_table(fit)):
            terminal.print(table)
        for line in range_lines(fit):
            print(shown_name(line), flush=True)
    write_calibrated(fit, Path(args.scenario), Path(args.out), Path(args.measured), args.argv)
    if args.json:
        print(json.dumps(fit_document(fit, args.out), indent=2), flush=True)
    else:
        print(f"calibrated scenario: {shown_name(str(args.out))}", flush=True)
    for warning in not_converged(fit):
        print(f"warning: {shown_name(warning)}", file=sys.stderr, flush=True)
    if fit.interrupted:
        print(
            f"error: interrupted after {fit.evaluations} candidates: wrote the best so far to {args.out}",
            file=sys.stderr,
            flush=True,
        )
        return 130
    return 0


def register(parser: argparse.ArgumentParser) -> None:
    """The arguments (no `e.g.` in their help: see test_doc_examples)."""
    options.add_scenario(parser)
    parser.add_argument(
        "--measured", metavar="FILE", help="measured points, CSV or Parquet (docs/cli.md; needed to fit)"
    )
    parser.add_argument(
        "--free",
        action="append",
        metavar="KEY=LO..HI[:int][:log]",
        help="a value to fit and its bounds, such as array[0].media.read_latency=50us..500us (repeatable; needed "
        "to fit)",
    )
    parser.add_argument(
        "--variant",
        dest="variants",
        metavar="NAME",
        action="append",
        help="the variant to fit (needed when the scenario has several); with --predict, a variant to run "
        "(repeatable; default: all)",
    )
    options.add_set(parser, "a fixed override for every run (repeatable)")
    options.add_duration(parser)
    options.add_seed(parser, "seed of every run and of the optimiser (with --predict: of replication 0)")
    parser.add_argument(
        "--range-seeds",
        type=options.whole_number(2, 1000, "a count of seeds"),
        default=RANGE_SEEDS,
        metavar="N",
        help=f"seeds each fitted value's range is judged on, after the fit's own (default: {RANGE_SEEDS})",
    )
    parser.add_argument("--no-range", action="store_true", help="skip the ranges of the fitted values (their runs)")
    parser.add_argument(
        "--generations",
        type=options.positive,
        default=GENERATIONS,
        metavar="N",
        help=f"differential evolution's generations at most (default: {GENERATIONS})",
    )
    parser.add_argument(
        "--popsize",
        type=options.positive,
        default=POPSIZE,
        metavar="N",
        help=f"candidates per generation per free value (default: {POPSIZE})",
    )
    parser.add_argument("-o", "--out", metavar="FILE", help="the calibrated scenario to write (needed to fit)")
    parser.add_argument(
        "--predict",
        action="store_true",
        help="run SCENARIO, a calibrated scenario or one based on it, at its fitted values and at each end of "
        "their ranges, one value at a time (read from its header): each VM's figures with the seeds' 95 %% interval and the range "
        "the fitted values' spread gives",
    )
    parser.add_argument(
        "--replications",
        type=options.whole_number(2, 1000, "a count of seeds"),
        metavar="N",
        help=f"with --predict, the seeds each setting runs at, replication r at the variant's seed + r "
        f"(default: {PREDICT_REPLICATIONS})",
    )
    options.add_cluster(
        parser,
        "worker processes of the local cluster (default: one per CPU); with --predict, runs at once (default: one "
        "per core)",
    )
    options.add_quiet(parser, "no progress lines (and, for a fit, no tables)")
    options.add_json(parser)

