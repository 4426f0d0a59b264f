"""The fit of `sanlab calibrate`: free scenario values fitted so that simulated figures match measured ones.

Every candidate (a value per `--free` parameter) is run at every measured point, each run the
same run a sweep makes (`sanlab.runs.run_task`), on the same Dask machinery, all with
one seed (common random numbers: a small change of a value changes the figures smoothly, not by
a new draw of the noise). The objective is

    sum over points p and figures f of  weight_p * (log simulated_pf - log measured_pf)^2

minimised by scipy's differential evolution in the box of the bounds (each parameter mapped to
[0, 1], log-spaced with `:log`; `:int` values rounded to the nearest integer inside the
objective), which evaluates a whole generation at once: those runs go to Dask together. The
optimiser's RNG takes the same seed, so a calibration is deterministic for a seed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sanlab import engine
from sanlab.calibration.inputs import (
    CalibrationError,
    FreeParam,
    Point,
    read_points,
)
from sanlab.runs import RunOutcome, RunTask, run_task

__all__ = [
    "Calibration",
    "CalibrationError",
    "Fit",
    "calibrate",
    "dask_mapper",
    "local_mapper",
    "read_points",
]

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
                sets=(
                    *self.sets,
                    *point.sets,
                    *(p.setting(v) for p, v in zip(self.free, values, strict=True)),
                ),
                variants=(self.variant,) if self.variant else (),
                duration=self.duration,
                version=engine.VERSION,
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
    figures["lat_ms"] = (
        sum((row["iops"] or 0.0) * (row["lat_ms_mean"] or 0.0) for row in rows) / total if total else 0.0
    )
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


@dataclass(frozen=True)
class Range:
    """One fitted value's range (found by sanlab.calibration.ranges): `low`..`high` (both kept),
    whether each end is the box's, and the nearest value found left out on each side (None: none
    was, the box's end or the steps ran out first)."""

    low: float
    high: float
    at_lo: bool
    at_hi: bool
    outside: tuple[float | None, float | None]


@dataclass(frozen=True)
class Ranges:
    """Every fitted value's range, and what they were judged on."""

    ranges: tuple[Range, ...]
    seeds: tuple[int, ...]
    fit_objective: float
    """The fit's mean objective over `seeds`."""
    allowance: float
    """The measurement's allowance s² · t(0.975, ν)² (0 with ν = 0)."""
    dof: int
    runs: int


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
    ranges: Ranges | None = None
    """Each value's range (sanlab.calibration.ranges), None when not asked for or interrupted."""

    @property
    def rms(self) -> float:
        return rms_error(self.objective, self.calibration.points)


class Evaluator:
    """Evaluates candidates: all their runs in one batch through `mapper`; keeps the best."""

    def __init__(
        self, calibration: Calibration, mapper: Mapper, on_batch: Callable[[Best, int], None]
    ) -> None:
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
        for at in range(len(candidates)):
            chunk = outcomes[at * per : (at + 1) * per]
            for task, outcome in zip(tasks[at * per : (at + 1) * per], chunk, strict=True):
                if outcome.table is None:
                    sets = " ".join(f"--set {item}" for item in task.sets)
                    raise CalibrationError(
                        f"{cal.points[task.point].where}: the run failed ({sets}): {outcome.error}"
                    )
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


def calibrate(
    calibration: Calibration,
    mapper: Mapper,
    on_batch: Callable[[Best, int], None] = lambda best, n: None,
) -> Fit:
    """Fits the free parameters. Ctrl-C (KeyboardInterrupt) stops the search and keeps the best
    candidate evaluated so far (`interrupted`; no sensitivities then). The ranges of the values
    are `sanlab.calibration.ranges.with_ranges`'."""
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
    return Fit(
        calibration,
        best.values,
        best.objective,
        best.figures,
        sensitivity,
        best.evaluations,
        best.batches,
        interrupted,
    )


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
