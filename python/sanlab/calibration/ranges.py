"""The range of each fitted value: the values that fit the measured points within the noise of
the measurement and of the simulation (docs/cli.md, "The range of a fitted value").

A profile, one free value at a time with the others held at their fitted values: the value is
stepped away from the fit on each side (an integer by 1, 2, 3, … then geometrically; a real
value geometrically, 1 %, 2 %, 4 %, … of itself, or of its box when it sits at 0), and once a
step falls outside, the gap between the last value kept and the first left out is bisected. Each
candidate and the fit run at the same `seeds` (common random numbers), seeds other than the
fit's own (at its own seed the fit was chosen, so its objective there is biased low). A value is
kept when the 95 % interval (`intervals.Interval.of`) of the seed-by-seed difference

    objective(value, seed k) - objective(fit, seed k)

reaches down to the measurement's allowance: not worse than the fit's by more than the
measurement's noise, beyond the simulation's. The allowance is the profile t rule of nonlinear
least squares (Bates and Watts, Nonlinear Regression Analysis, 1988, ch. 6): s² · t(0.975, ν)²
with s² = the fit's objective / ν, ν = the weighted figures − the free values, the objective
being a sum of squared log errors. It reads the measurement's noise from what the fit leaves
unexplained, so a model that misses the points gets wider ranges; with ν = 0 (as many figures as
free values) it cannot be estimated and the range is the simulation's noise alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from sanlab.calibration.fit import Calibration, Figures, Fit, Mapper, Range, Ranges, figures_of, objective
from sanlab.calibration.inputs import CalibrationError, FreeParam
from sanlab.intervals import Interval, t_quantile_975

RANGE_SEEDS = 5
"""Seeds the range is judged on, by default (`--range-seeds`)."""
FIRST_STEP = 0.01
"""A real value's first step: 1 % of itself; each further step doubles."""
MAX_STEPS = 14
"""Candidates per side of a value at most (ladder and bisection together)."""
BISECTIONS = 2
"""Bisections of a real value's gap between the last value kept and the first left out."""


def range_seeds(seed: int, count: int) -> tuple[int, ...]:
    """`count` seeds after the fit's own: seed + 1 … seed + count."""
    return tuple(seed + k for k in range(1, count + 1))


def max_runs(free: int, points: int, seeds: int) -> int:
    """The most runs the range can take: the fit and MAX_STEPS candidates per side of each value,
    at every seed and weighted point."""
    return (1 + 2 * free * MAX_STEPS) * seeds * points


def allowance(value: float, figures: int, free: int) -> tuple[float, int]:
    """The measurement's allowance and its degrees of freedom (see the module)."""
    dof = figures - free
    if dof < 1:
        return 0.0, max(dof, 0)
    return value / dof * t_quantile_975(dof) ** 2, dof


def _ladder(param: FreeParam, fitted: float, side: int, step: int, last: float) -> float | None:
    """The `step`-th value (0 first) away from `fitted` on `side` (-1, +1), within the box, or
    None when `last` already was the box's end."""
    end = param.lo if side < 0 else param.hi
    if last == end:
        return None
    h = FIRST_STEP * 2**step
    if fitted > 0 and (param.log or param.lo >= 0):
        value = fitted * (1 + h) if side > 0 else fitted / (1 + h)
    else:
        value = fitted + side * h * (param.hi - param.lo)
    if param.integer:
        value = float(round(value))
        value = max(value, last + 1) if side > 0 else min(value, last - 1)
    return min(param.hi, max(param.lo, value))


def _between(param: FreeParam, kept: float, out: float) -> float | None:
    """A value between the last kept and the first left out, or None when there is none to try."""
    if param.integer:
        if abs(out - kept) <= 1:
            return None
        return float(math.floor((kept + out) / 2)) if out > kept else float(math.ceil((kept + out) / 2))
    return math.sqrt(kept * out) if kept > 0 and out > 0 else (kept + out) / 2


@dataclass
class _Side:
    index: int
    side: int
    kept: float
    out: float | None = None
    steps: int = 0
    bisections: int = 0

    def next(self, param: FreeParam, fitted: float) -> float | None:
        if self.steps >= MAX_STEPS:
            return None
        if self.out is None:
            return _ladder(param, fitted, self.side, self.steps, self.kept)
        if not param.integer and self.bisections >= BISECTIONS:
            return None
        return _between(param, self.kept, self.out)

    def judged(self, value: float, keep: bool) -> None:
        self.steps += 1
        if self.out is not None:
            self.bisections += 1
        if keep:
            self.kept = value
        else:
            self.out = value


class _Judge:
    """Runs candidates at every seed in one batch; the objective per candidate per seed."""

    def __init__(self, calibration: Calibration, mapper: Mapper, seeds: Sequence[int]) -> None:
        weighted = tuple(point for point in calibration.points if point.weight > 0)
        self.calibrations = [replace(calibration, points=weighted, seed=seed) for seed in seeds]
        self.mapper = mapper
        self.runs = 0

    def objectives(self, candidates: Sequence[Sequence[float]]) -> list[list[float]]:
        tasks = [task for cal in self.calibrations for task in cal.tasks(candidates)]
        outcomes = self.mapper(tasks)
        self.runs += len(tasks)
        per = len(self.calibrations[0].points)
        by_seed: list[list[float]] = []
        for at_seed, cal in enumerate(self.calibrations):
            row = []
            for at in range(len(candidates)):
                start = (at_seed * len(candidates) + at) * per
                chunk = outcomes[start : start + per]
                for task, outcome in zip(tasks[start : start + per], chunk, strict=True):
                    if outcome.table is None:
                        raise CalibrationError(
                            f"{cal.points[task.point].where}: a run of the range failed (seed {cal.seed}): {outcome.error}"
                        )
                figures: list[Figures] = [figures_of(outcome) for outcome in chunk]
                row.append(objective(cal.points, figures))
            by_seed.append(row)
        return [[by_seed[k][at] for k in range(len(by_seed))] for at in range(len(candidates))]


def _baseline(judge: _Judge, calibration: Calibration, values: Sequence[float]) -> tuple[list[float], float, float, int]:
    """The fit's objective per seed, its mean, the measurement's allowance and its freedom."""
    (fit_row,) = judge.objectives([tuple(values)])
    fit_mean = sum(fit_row) / len(fit_row)
    weighted = [point for point in calibration.points if point.weight > 0]
    limit, dof = allowance(fit_mean, sum(len(point.figures) for point in weighted), len(calibration.free))
    return fit_row, fit_mean, limit, dof


def within(
    calibration: Calibration,
    values: Sequence[float],
    candidates: Sequence[Sequence[float]],
    mapper: Mapper,
    seeds: Sequence[int],
) -> list[bool]:
    """Whether each candidate fits within noise of the fit at `values`: the rule `profile` keeps
    a value by (see the module), for checking a range found before (the studies' tests)."""
    judge = _Judge(calibration, mapper, seeds)
    fit_row, _, limit, _ = _baseline(judge, calibration, values)
    rows = judge.objectives(candidates)
    return [Interval.of([a - b for a, b in zip(row, fit_row, strict=True)]).low <= limit for row in rows]


def profile(
    calibration: Calibration,
    values: Sequence[float],
    mapper: Mapper,
    seeds: Sequence[int],
    on_round: Callable[[int, int], None] = lambda round_, runs: None,
) -> Ranges:
    """Each value's range around `values` (see the module): rounds of one batch each, every side
    of every value still open taking its next candidate."""
    if len(seeds) < 2:
        raise CalibrationError("the range of a fitted value needs at least 2 seeds (--range-seeds)")
    free = calibration.free
    judge = _Judge(calibration, mapper, seeds)
    fit_row, fit_mean, limit, dof = _baseline(judge, calibration, values)
    sides = [_Side(index, side, values[index]) for index in range(len(free)) for side in (-1, 1)]
    round_ = 0
    while True:
        asked = [(s, s.next(free[s.index], values[s.index])) for s in sides]
        asked = [(s, v) for s, v in asked if v is not None]
        if not asked:
            break
        candidates = [tuple(v if i == s.index else x for i, x in enumerate(values)) for s, v in asked]
        for (s, v), row in zip(asked, judge.objectives(candidates), strict=True):
            difference = Interval.of([a - b for a, b in zip(row, fit_row, strict=True)])
            s.judged(v, difference.low <= limit)
        round_ += 1
        on_round(round_, judge.runs)
    ranges = []
    for index, param in enumerate(free):
        down, up = sides[2 * index], sides[2 * index + 1]
        ranges.append(Range(down.kept, up.kept, down.kept == param.lo, up.kept == param.hi, (down.out, up.out)))
    return Ranges(tuple(ranges), tuple(seeds), fit_mean, limit, dof, judge.runs)


def with_ranges(
    fit: Fit, mapper: Mapper, seeds: int, on_round: Callable[[int, int], None] = lambda round_, runs: None
) -> Fit:
    """`fit` with its values' ranges on `seeds` seeds after the fit's (none when `seeds` is 0 or
    the fit was interrupted). Ctrl-C during them gives the fit without them, marked interrupted."""
    if not seeds or fit.interrupted:
        return fit
    try:
        ranges = profile(fit.calibration, fit.values, mapper, range_seeds(fit.calibration.seed, seeds), on_round)
    except KeyboardInterrupt:
        return replace(fit, interrupted=True)
    return replace(fit, ranges=ranges)


def shown(param: FreeParam, value: float, span: Range) -> str:
    """`14 (13–15)`, `864.23us (820.1us–901.7us)`; an end at the box's bound is marked `bound`."""
    low = param.format(span.low) + (" bound" if span.at_lo else "")
    high = param.format(span.high) + (" bound" if span.at_hi else "")
    return f"{param.format(value)} ({low}–{high})"
