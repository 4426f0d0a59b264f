"""`sanlab calibrate`: fit free scenario values so that simulated figures match measured ones.

Every candidate (a value per `--free` parameter) is run at every measured point, each run the
same `_core.run` a sweep makes (`sanlab.sweep.run_task`), on the same Dask machinery, all with
one seed (common random numbers: a small change of a value changes the figures smoothly, not by
a new draw of the noise). The objective is

    sum over points p and figures f of  weight_p * (log simulated_pf - log measured_pf)^2

minimised by scipy's differential evolution in the box of the bounds (each parameter mapped to
[0, 1], log-spaced with `:log`; `:int` values rounded to the nearest integer inside the
objective), which evaluates a whole generation at once: those runs go to Dask together. The
optimiser's RNG takes the same seed, so a calibration is deterministic for a seed.
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import sys
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np
from rich import box
from rich.table import Table

from sanlab import _core
from sanlab.calibration.inputs import VM_FIGURE, CalibrationError, FreeParam, Point, check, parse_free, read_points
from sanlab.calibration.toml_out import calibrated_text
from sanlab.formatting import format_count, format_ms, format_wall_s
from sanlab.sweep import RunOutcome, RunTask, entity_table, run_task

__all__ = ["Calibration", "CalibrationError", "Fit", "calibrate", "command", "dask_mapper", "local_mapper", "read_points"]

SENSITIVITY_STEP = 0.05
"""The sensitivity of a fitted value: the objective at value × (1 ± this)."""
FLOOR = 1e-9
"""Simulated figures below this (a run that did no I/O) count as this, so the log stays finite."""


@dataclass(frozen=True)
class Calibration:
    """What to fit: the scenario (with fixed overrides, one variant, a duration), the free
    parameters, the measured points, the seed of every run and of the optimiser."""

    scenario: str
    free: tuple[FreeParam, ...]
    points: tuple[Point, ...]
    seed: int
    sets: tuple[str, ...] = ()
    variant: str | None = None
    duration: str | None = None
    generations: int = 25
    popsize: int = 10

    def tasks(self, candidates: Sequence[Sequence[float]]) -> list[RunTask]:
        """A run per candidate (values) and point, candidates outermost."""
        return [
            RunTask(
                point=index,
                seed=self.seed,
                scenario=self.scenario,
                sets=(*self.sets, *point.sets, *(p.setting(v) for p, v in zip(self.free, values, strict=True))),
                variants=(self.variant,) if self.variant else (),
                duration=self.duration,
                version=_core.__version__,
            )
            for values in candidates
            for index, point in enumerate(self.points)
        ]


Figures = dict[str, float]
Mapper = Callable[[list[RunTask]], list[RunOutcome]]
"""Runs tasks (on Dask, or here) and returns their outcomes in the same order."""


def figures_of(outcome: RunOutcome) -> Figures:
    """The run's figures: `iops` (total VM IOPS), `lat_ms` (IOPS-weighted mean of the VMs' mean
    latency: the mean over all their I/Os), and `vm:NAME:iops`, `vm:NAME:lat_ms` per VM."""
    assert outcome.table is not None
    rows = [row for row in outcome.table.to_pylist() if row["entity_kind"] == "vm"]
    figures: Figures = {}
    for row in rows:
        name = row["entity"].removeprefix("vm/")
        figures[f"vm:{name}:iops"] = row["iops"] or 0.0
        figures[f"vm:{name}:lat_ms"] = row["lat_ms_mean"] or 0.0
    total = sum(row["iops"] or 0.0 for row in rows)
    figures["iops"] = total
    figures["lat_ms"] = sum((row["iops"] or 0.0) * (row["lat_ms_mean"] or 0.0) for row in rows) / total if total else 0.0
    return figures


def objective(points: Sequence[Point], simulated: Sequence[Figures]) -> float:
    """Sum of weight × (log simulated − log measured)² over points and figures."""
    total = 0.0
    for point, figures in zip(points, simulated, strict=True):
        for name, measured in point.figures:
            total += point.weight * (math.log(max(figures[name], FLOOR)) - math.log(measured)) ** 2
    return total


def rms_error(value: float, points: Sequence[Point]) -> float:
    """The objective as a root-mean-square relative (log) error, per unit of weight."""
    weight = sum(point.weight * len(point.figures) for point in points)
    return math.sqrt(value / weight) if weight else math.nan


@dataclass
class Best:
    """The best candidate evaluated so far: what Ctrl-C keeps."""

    values: tuple[float, ...] = ()
    objective: float = math.inf
    figures: list[Figures] = field(default_factory=list)
    evaluations: int = 0
    batches: int = 0

    def offer(self, values: Sequence[float], value: float, figures: list[Figures]) -> None:
        """Keeps the candidate when it is strictly better (the first of equals stays)."""
        self.evaluations += 1
        if value < self.objective:
            self.values, self.objective, self.figures = tuple(values), value, figures


@dataclass
class Fit:
    """The outcome: best values, objective, each point's simulated figures, sensitivities."""

    calibration: Calibration
    values: tuple[float, ...]
    objective: float
    figures: list[Figures]
    sensitivity: list[tuple[float | None, float | None]]
    """Per parameter, the objective at value × 0.95 and × 1.05 (None beyond a bound or not run)."""
    evaluations: int
    batches: int
    interrupted: bool

    @property
    def rms(self) -> float:
        return rms_error(self.objective, self.calibration.points)


class Evaluator:
    """Evaluates candidates: all their runs in one batch through `mapper`; keeps the best."""

    def __init__(self, calibration: Calibration, mapper: Mapper, on_batch: Callable[[Best, int], None]) -> None:
        self.calibration = calibration
        self.mapper = mapper
        self.on_batch = on_batch
        self.best = Best()

    def run(self, candidates: Sequence[Sequence[float]]) -> list[tuple[float, list[Figures]]]:
        """Each candidate's objective and figures per point."""
        cal = self.calibration
        tasks = cal.tasks(candidates)
        outcomes = self.mapper(tasks)
        per = len(cal.points)
        results = []
        for at, values in enumerate(candidates):
            chunk = outcomes[at * per : (at + 1) * per]
            for task, outcome in zip(tasks[at * per : (at + 1) * per], chunk, strict=True):
                if outcome.table is None:
                    sets = " ".join(f"--set {item}" for item in task.sets)
                    raise CalibrationError(f"{cal.points[task.point].where}: the run failed ({sets}): {outcome.error}")
            figures = [figures_of(outcome) for outcome in chunk]
            results.append((objective(cal.points, figures), figures))
        return results

    def batch(self, units: Sequence[Sequence[float]]) -> list[float]:
        """Differential evolution's generation (points of the unit box): objectives, in order."""
        free = self.calibration.free
        candidates = [tuple(p.value(u) for p, u in zip(free, unit, strict=True)) for unit in units]
        results = self.run(candidates)
        for values, (value, figures) in zip(candidates, results, strict=True):
            self.best.offer(values, value, figures)
        self.best.batches += 1
        self.on_batch(self.best, len(candidates))
        return [value for value, _ in results]


def _map_like(evaluator: Evaluator) -> Callable[[Callable[[Any], float], Any], list[float]]:
    """The `workers=` callable differential evolution takes: it evaluates the whole generation
    through the evaluator (the function scipy passes is the objective of one candidate, which the
    evaluator computes itself, in one batch)."""

    def mapper(func: Callable[[Any], float], iterable: Any) -> list[float]:
        return evaluator.batch([np.asarray(item, dtype=float) for item in iterable])

    return mapper


def _sensitivity(evaluator: Evaluator, values: tuple[float, ...]) -> list[tuple[float | None, float | None]]:
    """The objective with each value moved by ∓5 % (an :int value by at least 1), one batch."""
    free = evaluator.calibration.free
    candidates: list[tuple[float, ...]] = []
    slots: list[tuple[int, int]] = []
    for index, (param, value) in enumerate(zip(free, values, strict=True)):
        for side, sign in enumerate((-1, 1)):
            step = abs(value) * SENSITIVITY_STEP
            if param.integer:
                step = max(1.0, round(step))
            moved = value + sign * step
            if param.lo <= moved <= param.hi and moved != value:
                candidates.append(tuple(moved if i == index else v for i, v in enumerate(values)))
                slots.append((index, side))
    out: list[list[float | None]] = [[None, None] for _ in free]
    if candidates:
        for (index, side), (value, _) in zip(slots, evaluator.run(candidates), strict=True):
            out[index][side] = value
    return [(low, high) for low, high in out]


def calibrate(calibration: Calibration, mapper: Mapper, on_batch: Callable[[Best, int], None] = lambda best, n: None) -> Fit:
    """Fits the free parameters. Ctrl-C (KeyboardInterrupt) stops the search and keeps the best
    candidate evaluated so far (`interrupted`; no sensitivities then)."""
    from scipy.optimize import differential_evolution

    evaluator = Evaluator(calibration, mapper, on_batch)
    interrupted = False
    try:
        differential_evolution(
            lambda unit: math.nan,  # never called: the workers callable evaluates every generation
            bounds=[(0.0, 1.0)] * len(calibration.free),
            maxiter=calibration.generations,
            popsize=calibration.popsize,
            tol=0.0,
            atol=1e-9,
            rng=calibration.seed,
            workers=_map_like(evaluator),
            updating="deferred",
            polish=False,
            init="latinhypercube",
        )
    except KeyboardInterrupt:
        interrupted = True
        if not evaluator.best.figures:
            raise
    best = evaluator.best
    sensitivity: list[tuple[float | None, float | None]] = [(None, None)] * len(calibration.free)
    if not interrupted:
        try:
            sensitivity = _sensitivity(evaluator, best.values)
        except KeyboardInterrupt:
            interrupted = True
    return Fit(calibration, best.values, best.objective, best.figures, sensitivity, best.evaluations, best.batches, interrupted)


def dask_mapper(client: Any) -> Mapper:
    """Runs tasks on a Dask client; a Ctrl-C cancels those in flight."""

    def mapper(tasks: list[RunTask]) -> list[RunOutcome]:
        futures = client.map(run_task, tasks, pure=False)
        try:
            outcomes: list[RunOutcome] = client.gather(futures)
        except BaseException:
            client.cancel(futures)
            raise
        return outcomes

    return mapper


def local_mapper(tasks: list[RunTask]) -> list[RunOutcome]:
    """Runs tasks one after another in this process (the Python API's choice without Dask)."""
    return [run_task(task) for task in tasks]


# ---- the command ---------------------------------------------------------------------------


def _first_run(scenario: str, sets: Sequence[str], variant: str | None, point: Point, free: Sequence[FreeParam]) -> tuple[int, Figures]:
    """Runs the first point at the middle of the box: the seed the runs take by default (the
    scenario's `[run] seed` after the variant and --set) and the figures a run gives."""
    settings = [*sets, *point.sets, *(p.setting(p.value(0.5)) for p in free)]
    try:
        text = _core.run(scenario, [variant] if variant else None, settings, None, None)
    except _core.ScenarioError as exc:
        raise CalibrationError(f"{point.where}: the run failed: {exc}") from None
    doc = json.loads(text)
    outcome = RunOutcome(0, 0, entity_table(doc, 0, 0), None)
    return int(doc["variants"][0]["seed"]), figures_of(outcome)


def _variant(scenario: str, sets: Sequence[str], wanted: str | None) -> str | None:
    """The one variant to run: `wanted`, else the scenario's only one, else none (base)."""
    names: list[str] = json.loads(_core.validate(scenario, list(sets), [wanted] if wanted else None, False))["variants"]
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
                    f"{point.where}, column `{name}`: no VM named `{match['name']}` (VMs: {', '.join(vms)}){hint}"
                )


def _format_figure(name: str, value: float) -> str:
    return format_ms(value) if name.endswith("lat_ms") else format_count(value)


def points_table(fit: Fit) -> Table:
    """Each point's figures: measured, fitted, relative error."""
    table = Table(title="measured and fitted", box=box.SIMPLE_HEAD, title_justify="left", show_edge=False)
    for header, justify in (("point", "left"), ("settings", "left"), ("figure", "left"), ("measured", "right"), ("fitted", "right"), ("error", "right")):
        table.add_column(header, justify=justify)  # type: ignore[arg-type]
    for point, figures in zip(fit.calibration.points, fit.figures, strict=True):
        settings = " ".join(item.split("=")[0].rpartition(".")[2] + "=" + item.partition("=")[2] for item in point.sets)
        for name, measured in point.figures:
            simulated = figures[name]
            error = f"{100 * (simulated / measured - 1):+.1f} %"
            table.add_row(point.name, settings, name, _format_figure(name, measured), _format_figure(name, simulated), error)
    return table


def values_table(fit: Fit) -> Table:
    """The fitted values, their bounds and the objective when each is moved by ∓5 %."""
    table = Table(
        title=f"fitted values (objective {fit.objective:.4g}, rms error {100 * fit.rms:.2f} %)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
        show_edge=False,
    )
    for header in ("key", "value", "bounds", "objective at −5 %", "at +5 %"):
        table.add_column(header, justify="left" if header in ("key", "value", "bounds") else "right")
    for param, value, (low, high) in zip(fit.calibration.free, fit.values, fit.sensitivity, strict=True):
        bounds = f"{param.format(param.lo)}..{param.format(param.hi)}"
        side = ["-" if x is None else f"{x:.4g}" for x in (low, high)]
        table.add_row(param.key, param.format(value), bounds, *side)
    return table


def _sources(points: Sequence[Point]) -> str:
    """`points.csv lines 2-6`, or `points.parquet rows 1-4`: where the points are written."""
    first, last = points[0].where, points[-1].where
    if len(points) == 1:
        return first
    head, _, number = first.rpartition(" ")
    file, _, unit = head.rpartition(" ")
    return f"{file} {unit}s {number}-{last.rpartition(' ')[2]}"


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
    return (
        f"fitted on {_sources(points)} ({len(points)} points): rms error {100 * fit.rms:.1f} %, "
        f"largest {100 * largest:.1f} % ({at}); objective {fit.objective:.3g}, {sides} at -5 %/+5 %"
    )


def write_calibrated(fit: Fit, original: Path, out: Path, measured: Path, argv: Sequence[str]) -> None:
    """Writes the calibrated scenario (docs/cli.md) and checks that the engine reads it."""
    cal = fit.calibration
    fitted: dict[str, Any] = {}
    comments: dict[str, str] = {}
    for param, value in zip(cal.free, fit.values, strict=True):
        text = param.format(value)
        fitted[param.key] = text if param.unit else (int(round(value)) if param.integer else float(text))
        comments[param.key] = _comment(fit, param)
    header = [
        f"Calibrated from {original} with the measured points of {measured}.",
        "command: " + " ".join(argv),
        f"seed {cal.seed}" + (f", variant {cal.variant}" if cal.variant else "") + (f", --set {' '.join(cal.sets)}" if cal.sets else ""),
    ]
    if fit.interrupted:
        header.append("INTERRUPTED: the best values found before Ctrl-C, not a finished search.")
    variant = None
    if cal.variant:
        declared = tomllib.loads(original.read_text(encoding="utf-8")).get("variant", [])
        variant = next((item for item in declared if item.get("name") == cal.variant), None)
    text = calibrated_text(original, out, out.stem, header, fitted, comments, variant)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    try:
        _core.validate(str(out), [], None, False)
    except _core.ScenarioError as exc:
        raise _core.InternalError(f"the calibrated scenario {out} does not validate: {exc}") from None


def progress_line(cal: Calibration, stream: TextIO, started: float) -> Callable[[Best, int], None]:
    """A line per evaluation batch on `stream`: the best objective so far and its values."""

    def show(best: Best, candidates: int) -> None:
        values = ", ".join(f"{p.short}={p.format(v)}" for p, v in zip(cal.free, best.values, strict=True))
        print(
            f"[generation {best.batches - 1}/{cal.generations}] {candidates} candidates × {len(cal.points)} points: "
            f"best objective {best.objective:.4g} (rms error {100 * rms_error(best.objective, cal.points):.2f} %) "
            f"at {values}; {format_wall_s(time.perf_counter() - started)}",
            file=stream,
            flush=True,
        )

    return show


def command(args: argparse.Namespace, console: Any, argv: Sequence[str]) -> int:
    """`sanlab calibrate`: checks the input, fits on Dask, prints the tables, writes -o."""
    from sanlab.sweep import _client, _close

    scenario = str(Path(args.scenario).resolve())
    free = tuple(parse_free(text) for text in args.free)
    points = tuple(read_points(args.measured))
    sets = tuple(args.sets)
    if args.duration:
        sets = (*sets, f"run.duration={args.duration}")
    try:
        _core.validate(scenario, list(sets), None, False)
    except _core.ScenarioError as exc:
        raise CalibrationError(str(exc)) from None
    variant = _variant(scenario, sets, args.variant)
    check(scenario, free, points, sets, [variant] if variant else None)
    if args.scheduler is not None and args.workers is not None:
        raise CalibrationError("--workers sets the size of the local cluster; with --scheduler the cluster has its own")
    scenario_seed, figures = _first_run(scenario, sets, variant, points[0], free)
    _check_vm_figures(figures, points)
    seed = scenario_seed if args.seed is None else args.seed
    cal = Calibration(scenario, free, points, seed, sets, variant, None, args.generations, args.popsize)
    started = time.perf_counter()
    on_batch = (lambda best, n: None) if args.quiet else progress_line(cal, sys.stderr, started)
    client = _client(args.scheduler, args.workers)
    try:
        fit = calibrate(cal, dask_mapper(client), on_batch)
    finally:
        _close(client)
    if not args.quiet:
        for table in (points_table(fit), values_table(fit)):
            console.print(table)
    write_calibrated(fit, Path(args.scenario), Path(args.out), Path(args.measured), argv)
    print(f"calibrated scenario: {args.out}", flush=True)
    if fit.interrupted:
        print(
            f"error: interrupted after {fit.evaluations} candidates: wrote the best so far to {args.out}",
            file=sys.stderr,
            flush=True,
        )
        return 130
    return 0


def add_parser(commands: Any, seed: Callable[[str], int], positive: Callable[[str], int]) -> None:
    """The `calibrate` subcommand's arguments (no `e.g.` in its help: see test_doc_examples)."""
    parser = commands.add_parser("calibrate", help="fit scenario values to measured IOPS and latency")
    parser.add_argument("scenario", metavar="SCENARIO", help="scenario TOML file")
    parser.add_argument("--measured", required=True, metavar="FILE", help="measured points, CSV or Parquet (docs/cli.md)")
    parser.add_argument(
        "--free",
        required=True,
        action="append",
        metavar="KEY=LO..HI[:int][:log]",
        help="a value to fit and its bounds, such as array[0].media.read_latency=50us..500us (repeatable)",
    )
    parser.add_argument("--variant", metavar="NAME", help="the variant to fit (needed when the scenario has several)")
    parser.add_argument("--set", dest="sets", metavar="KEY=VALUE", action="append", default=[], help="a fixed override for every run (repeatable)")
    parser.add_argument("--duration", metavar="D", help="simulated time of each run (default: the scenario's)")
    parser.add_argument("--seed", type=seed, metavar="N", help="seed of every run and of the optimiser (default: the scenario's)")
    parser.add_argument("--generations", type=positive, default=25, metavar="N", help="differential evolution's generations at most (default: 25)")
    parser.add_argument("--popsize", type=positive, default=10, metavar="N", help="candidates per generation per free value (default: 10)")
    parser.add_argument("-o", "--out", required=True, metavar="FILE", help="the calibrated scenario to write")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler (default: a local cluster)")
    parser.add_argument("--workers", type=positive, metavar="N", help="worker processes of the local cluster (default: one per CPU)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines and no tables")
