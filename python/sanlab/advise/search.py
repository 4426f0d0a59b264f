"""The search of `sanlab advise`: coordinate descent over the knobs, then over the coupled groups
(`knobs.coupled`: every combination of a group's values, or of its parts' best few when the whole
space is more than WHOLE_SPACE_RUNS runs), each step a small sweep
(`sanlab.sweep`) of one knob's values with the same seeds for every value (common random numbers),
seeds added while the best value is not parted from another: while the 95 % interval of their
seed-by-seed difference holds zero (docs/advise.md)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from sanlab.advise.knobs import Coupled, Knob, coupled
from sanlab.advise.objective import Objective, RunFigures
from sanlab.intervals import Interval
from sanlab.sweep import SweepError, SweepSpec, load, run_sweep

MAX_PASSES = 3
"""Passes over the knobs at most: a pass that moves no knob ends the search before."""

SEED_GROWTH = 2
"""Seeds double while the leaders overlap, up to the cap."""

WHOLE_SPACE_RUNS = 300
"""A coupled group's every combination is run when that takes this many runs or fewer at the
starting seeds; beyond, each part keeps its best few values from its own step (BEST_FEW)."""

BEST_FEW = (3, 2, 1)
"""How many of each part's values a narrowed joint step keeps, fewest last (always with the value
where the search stands)."""

Point = frozenset[tuple[str, str]]
"""A candidate: the (key, value) of each knob whose value differs from today's."""

TODAY: Point = frozenset()


def set_lines(point: Point, knobs: Sequence[Knob]) -> list[str]:
    """The point as `--set` arguments, in the knobs' order."""
    values = dict(point)
    return [knob.set_line(values[knob.key]) for knob in knobs if knob.key in values]


@dataclass
class Step:
    """One knob visited at one point: what each value gave and what the search did."""

    settled: bool
    knob: str
    pass_number: int
    values: dict[str, Interval]
    infeasible: dict[str, list[str]]
    failed: dict[str, str]
    chosen: str
    outcome: str  # "moved", "kept", "no difference"
    note: str = ""
    whole: bool = True  # False: a coupled group's step over its parts' best few values only
    at: Point = frozenset()  # where the search stood: what the step found holds there


@dataclass
class Search:
    """Runs candidates through sweeps, remembers every run's figures and does the descent."""

    scenario: Path
    variant: str
    sets: tuple[str, ...]
    duration: str | None
    base_seed: int
    seeds: int
    max_seeds: int
    max_runs: int
    objective: Objective
    knobs: list[Knob]
    out_dir: Path
    client: Any
    on_runs: Callable[[int], None] = lambda runs: None
    runs: int = 0
    sweeps: int = 0
    figures: dict[Point, dict[int, RunFigures]] = field(default_factory=dict)
    errors: dict[Point, str] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stopped: str = ""

    def _sweep(self, base: Point, knob: Searched, values: Sequence[str], first_seed: int, count: int) -> None:
        """Runs `values` of `knob` at `base` for `count` seeds from `first_seed`, as one sweep (a
        coupled pair's as the grid of the values its parts take among them)."""
        rest = _without(base, knob)
        self.sweeps += 1
        folder = self.out_dir / "sweeps" / f"{self.sweeps:04d}"
        spec = SweepSpec.create(
            self.scenario,
            [f"{key}={','.join(axis)}" for key, axis in _axes(knob, values)],
            seeds=count,
            base_seed=first_seed,
            sets=[*self.sets, *set_lines(rest, self.knobs)],
            variants=[self.variant],
            duration=self.duration,
        )
        result = run_sweep(spec, folder, client=self.client)
        self.runs += len(spec.tasks())
        self.on_runs(self.runs)
        points = [Coupled.join(point) for point in spec.points()]
        for failure in result.failures:
            self.errors[self._point(base, knob, points[failure.point])] = failure.error
        if len(result.failures) == len(spec.tasks()):
            return
        results, _ = load(folder)
        for (index, seed), rows in results.groupby(["point", "seed"]):
            point = self._point(base, knob, points[int(index)])
            if point not in self.errors:
                self.figures.setdefault(point, {})[int(seed)] = _figures(rows)

    def _point(self, base: Point, knob: Searched, value: str) -> Point:
        if isinstance(knob, Coupled):
            point = base
            for part, part_value in zip(knob.parts, knob.split(value), strict=True):
                point = self._point(point, part, part_value)
            return point
        rest = _without(base, knob)
        return rest if value == knob.today else rest | {(knob.key, value)}

    def ensure(self, base: Point, knob: Searched, values: Sequence[str], count: int) -> None:
        """Every value run with the first `count` seeds (those it has are kept)."""
        missing: dict[int, list[str]] = {}
        for value in values:
            point = self._point(base, knob, value)
            if point in self.errors:
                continue
            have = len(self.figures.get(point, {}))
            if have < count:
                missing.setdefault(have, []).append(value)
        for have, group in sorted(missing.items()):
            needed = math.prod(len(axis) for _, axis in _axes(knob, group)) * (count - have)
            if self.runs + needed > self.max_runs:
                self.stopped = f"the run budget (--max-runs {self.max_runs}) was reached"
                raise _Budget
            self._sweep(base, knob, group, self.base_seed + have, count - have)

    def runs_of(self, point: Point) -> list[RunFigures]:
        runs = self.figures.get(point, {})
        return [runs[seed] for seed in sorted(runs)]

    def interval(self, point: Point) -> Interval:
        return Interval.of([self.objective.score(run) for run in self.runs_of(point)])

    def _identical(self, a: Point, b: Point) -> bool:
        """Both gave exactly the same figure with every seed they share (with common random numbers,
        the same behaviour: two selectors that pick the same path): more seeds cannot part them."""
        runs_a, runs_b = self.figures.get(a, {}), self.figures.get(b, {})
        common = sorted(set(runs_a) & set(runs_b))
        return bool(common) and all(
            self.objective.score(runs_a[s]) == self.objective.score(runs_b[s]) for s in common
        )

    def difference(self, a: Point, b: Point) -> Interval:
        """`a`'s figure minus `b`'s, seed by seed over the seeds both ran (common random numbers:
        the noise both share cancels), as a mean and its 95 % interval."""
        runs_a, runs_b = self.figures.get(a, {}), self.figures.get(b, {})
        common = sorted(set(runs_a) & set(runs_b))
        score = self.objective.score
        return Interval.of([score(runs_a[s]) - score(runs_b[s]) for s in common])

    def parted(self, a: Point, b: Point) -> bool:
        """The interval of the seed-by-seed difference excludes zero: one is better, not by chance."""
        if a == b:
            return False
        difference = self.difference(a, b)
        return difference.low > 0 or difference.high < 0

    def step(self, current: Point, knob: Searched, pass_number: int) -> Point:
        """Visits `knob` at `current`: evaluates its values, adds seeds while the best is not parted
        from another, and returns the point the search moves to (`current` when no value beats it)."""
        today_runs = self.runs_of(TODAY)
        here = _value_at(current, knob)
        count = self.seeds
        values = list(knob.values)
        while True:
            self.ensure(current, knob, values, count)
            points = {v: self._point(current, knob, v) for v in knob.values}
            ok = {v: p for v, p in points.items() if p not in self.errors}
            infeasible = {v: self.objective.breaches(self.runs_of(p), today_runs) for v, p in ok.items()}
            feasible = {v: p for v, p in ok.items() if not infeasible[v] and not _nan(self.interval(p))}
            intervals = {v: self.interval(p) for v, p in ok.items()}
            if here not in feasible:
                feasible[here] = points[here]  # where the search stands is never refused
            best = max(feasible, key=lambda v: _key(intervals[v], self.objective))
            leaders = [v for v in feasible if not self.parted(points[v], points[best])]
            contested = [v for v in leaders if v != best and not self._identical(points[v], points[best])]
            if not contested or count >= self.max_seeds:
                break
            count = min(count * SEED_GROWTH, self.max_seeds)
            values = list(dict.fromkeys([*leaders, here]))
        note = ""
        if contested:
            note = (
                f"{best} and {', '.join(contested)} are not parted after {count} seeds (the cap): the "
                "interval of their seed-by-seed difference holds zero; more seeds (--seeds) or a "
                "longer --duration may part them"
            )
        if here in leaders:
            alike = all(not self.parted(points[v], points[here]) for v in feasible)
            outcome = "no difference" if alike else "kept"
            chosen = here
        else:
            outcome = "moved"
            tied = [v for v in leaders if v == best or self._identical(points[v], points[best])]
            chosen = min(tied, key=lambda v: _distance(v, here, knob))
            if len(tied) > 1:
                others = ", ".join(v for v in tied if v != chosen)
                note = note or f"{others} gave exactly the same figures; the smallest change is kept"
        self.steps.append(
            Step(
                not contested,
                knob.key,
                pass_number,
                {v: intervals[v] for v in ok},
                {v: r for v, r in infeasible.items() if r},
                {v: self.errors[p] for v, p in points.items() if p in self.errors},
                chosen,
                outcome,
                note,
                not isinstance(knob, Coupled) or knob.whole,
                current,
            )
        )
        return points[chosen]

    def run(self) -> Point:
        """Today's baseline, then passes over the knobs until one moves none; the point reached."""
        current = TODAY
        try:
            # Today is the first knob at today's value: the same run as the scenario as given.
            self.ensure(TODAY, self.knobs[0], [self.knobs[0].today], self.seeds)
            if TODAY in self.errors:
                raise SweepError(f"today's scenario does not run: {self.errors[TODAY]}")
            for pass_number in range(1, MAX_PASSES + 1):
                start = current
                for knob in self.knobs:
                    current = self.step(current, knob, pass_number)
                for group in coupled(self.knobs):
                    joint = self._joint(group, current)
                    if joint is not None:
                        current = self.step(current, joint, pass_number)
                if current == start:
                    break
            else:
                self.stopped = f"{MAX_PASSES} passes moved a knob each; the last point is shown"
        except _Budget:
            pass
        return current

    def _joint(self, group: Coupled, current: Point) -> Coupled | None:
        """The group as its joint step searches it: whole when every combination fits in
        WHOLE_SPACE_RUNS runs at the starting seeds, else each part's best few values from its own
        step (and the value where the search stands); None, with a note, when even two each do not."""
        if len(group.values) * self.seeds <= WHOLE_SPACE_RUNS:
            return group
        last = {step.knob: step for step in self.steps}
        for few in BEST_FEW:
            choices = []
            for part in group.parts:
                kept = {*_best_first(last[part.key], self.objective)[:few], _value_at(current, part)}
                choices.append(tuple(v for v in part.values if v in kept))
            narrowed = Coupled(group.parts, tuple(choices))
            if len(narrowed.values) * self.seeds <= WHOLE_SPACE_RUNS:
                return narrowed
        note = (
            f"{group.key}: {len(group.values):,} combinations, more than {WHOLE_SPACE_RUNS} runs even "
            "at the best value of each and the current one; searched one at a time only"
        )
        if note not in self.notes:
            self.notes.append(note)
        return None


Searched = Knob | Coupled
"""What one step of the search varies: a knob, or a coupled pair of knobs as one."""


def _axes(knob: Searched, values: Sequence[str]) -> list[tuple[str, list[str]]]:
    """The sweep axes that run `values` of `knob`: one, or a coupled group's parts with the values
    each takes among them (their grid holds every value asked, and may hold more)."""
    if not isinstance(knob, Coupled):
        return [(knob.key, list(values))]
    split = [knob.split(value) for value in values]
    return [(part.key, list(dict.fromkeys(parts[i] for parts in split))) for i, part in enumerate(knob.parts)]


def _without(point: Point, knob: Searched) -> Point:
    """The point without the knob's values (a group's: every part's)."""
    keys = {part.key for part in knob.parts} if isinstance(knob, Coupled) else {knob.key}
    return frozenset(item for item in point if item[0] not in keys)


def _value_at(point: Point, knob: Searched) -> str:
    """The knob's value at the point (a group's as `a / b`)."""
    if isinstance(knob, Coupled):
        return Coupled.join(_value_at(point, part) for part in knob.parts)
    return dict(point).get(knob.key, knob.today)


class _Budget(Exception):
    """The next sweep would pass --max-runs."""


def _best_first(step: Step, objective: Objective) -> list[str]:
    """A step's values: those that kept the objective's limit first, each kind by its mean."""
    return sorted(
        step.values, key=lambda v: (v not in step.infeasible, _key(step.values[v], objective)), reverse=True
    )


def _nan(interval: Interval) -> bool:
    return math.isnan(interval.mean)


def _key(interval: Interval, objective: Objective) -> float:
    return interval.mean if objective.higher_is_better else -interval.mean


def _distance(value: str, here: str, knob: Searched) -> float:
    """How far a value is from where the search stands: by ratio for numbers, else by list order;
    a group's, the sum over its parts."""
    if isinstance(knob, Coupled):
        parts = zip(knob.split(value), knob.split(here), knob.parts, strict=True)
        return sum(_distance(part_value, part_here, part) for part_value, part_here, part in parts)
    try:
        return abs(math.log(float(value) / float(here)))
    except (ValueError, ZeroDivisionError):
        return abs(knob.values.index(value) - knob.values.index(here))


def _figures(rows: pd.DataFrame) -> RunFigures:
    vms = rows[rows["entity_kind"] == "vm"]
    names = [entity.removeprefix("vm/") for entity in vms["entity"]]
    run = rows[rows["entity_kind"] == "run"]
    fault = None
    if "fault_iops_min" in run and not run["fault_iops_min"].isna().all():
        fault = float(run["fault_iops_min"].iloc[0])
    return RunFigures(
        dict(zip(names, map(float, vms["iops"]), strict=True)),
        dict(zip(names, map(float, vms["lat_ms_p99"]), strict=True)),
        fault,
    )


def paired_gain(search: Search, point: Point) -> Interval:
    """The objective's change from today to `point`, seed by seed (common random numbers)."""
    return search.difference(point, TODAY)


def runner_up(search: Search, chosen: Point) -> tuple[Point, Interval] | None:
    """The best other candidate the search ran that keeps the objective's limit, and its figure
    minus the recommendation's seed by seed. Ranked by that difference, over the seeds both ran:
    a candidate's own mean is over its own seeds, and the recommendation has more where its step
    added seeds, so two means can rank in another order than the same seeds do."""
    today = search.runs_of(TODAY)
    others = [
        p
        for p in search.figures
        if p != chosen
        and not search.objective.breaches(search.runs_of(p), today)
        and not _nan(search.interval(p))
    ]
    if not others:
        return None
    best = max(others, key=lambda p: _key(search.difference(p, chosen), search.objective))
    return best, search.difference(best, chosen)


def outcomes(search: Search) -> dict[str, Step]:
    """The last step of each knob, and of each coupled group its joint step visited; a knob in a
    visited group is told by the group's step (its own, one at a time, tested less)."""
    last = {step.knob: step for step in search.steps}
    for group in coupled(search.knobs):
        if group.key in last:
            for part in group.parts:
                last.pop(part.key, None)
    return last
