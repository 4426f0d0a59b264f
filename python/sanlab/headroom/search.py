"""The search of `sanlab headroom` (docs/headroom.md): from today's load (factor 1), expand ×2
until the SLOs fail (or halve until they hold, when they fail today), then cut the bracket
between the largest factor that holds and the smallest that fails until it is within 2 % (or the
run budget ends). Every point runs the same seeds (common random numbers); a point whose verdict
its 95 % intervals do not decide gets its seeds doubled, up to a cap, and is then judged by its
means (said). The points of one round run side by side (`points.Runner`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from sanlab.headroom.points import Job, RunFigures, Runner, Setup
from sanlab.headroom.slo import Slo
from sanlab.intervals import Interval

BRACKET = 0.02
"""The search ends when the bracket's width is at most this share of its low end."""
MAX_DOUBLINGS = 10
"""Expanding (or shrinking) stops at 2**10 times today's load (or 1/2**10)."""
SEED_GROWTH = 2
SETTLE_STEPS = 4
"""Points tried past an undecided bracket end, 2 % to 16 % further out."""
STALLED = 0.75
"""An open-loop point delivering less than this share of factor × today's IOPS did not grow."""


def factor_text(factor: float) -> str:
    """`×4`, `×1.078`, `×1/1024`."""
    return f"×1/{1 / factor:.4g}" if factor < 1 / 16 else f"×{factor:.4g}"


class Budget(Exception):
    """The run budget (--max-runs) would be passed."""


class Growth(Protocol):
    """What a load factor changes (`grow.RateGrowth`, `vms.VmGrowth`)."""

    @property
    def open_loop(self) -> bool:
        """Every grown job an open loop: its IOPS must follow the factor (`Search.stalled`)."""
        ...

    @property
    def counts(self) -> str:
        """Whole counts that round the factor, for people (`whole depths`); empty for none."""
        ...

    @property
    def bisect_to_counts(self) -> bool:
        """The bracket is cut down to neighbouring counts (VMs, closed loops' depths), not to 2 %."""
        ...

    def setup(self, factor: float) -> tuple[Setup, float]:
        """The scenario at `factor`, and the factor it really gets (a count's, for VMs)."""
        ...


@dataclass(eq=False)
class Point:
    """A factor tried: its scenario and each seed's figures."""

    index: int
    factor: float
    setup: Setup
    runs: dict[int, RunFigures] = field(default_factory=dict)
    exact: bool = False  # nothing random in the scenario: one seed's figure is the figure

    @property
    def sets(self) -> tuple[str, ...]:
        return self.setup.sets

    def seeds(self) -> list[int]:
        return sorted(self.runs)

    def idle(self) -> bool:
        """A grown or judged VM measured no I/O with some seed."""
        names = {*self.setup.grown, *self.setup.judged}
        return any(run[name]["iops"] <= 0 for run in self.runs.values() for name in names if name in run)

    def _of(self, values: list[float]) -> Interval:
        if self.exact and len(values) == 1:
            return Interval(values[0], 0.0, 1)
        return Interval.of(values)

    def _judged(self, seed: int) -> RunFigures:
        run = self.runs[seed]
        return {name: run[name] for name in self.setup.judged}

    def interval(self, slo: Slo) -> Interval:
        return self._of([slo.statistic(self._judged(seed)) for seed in self.seeds()])

    def iops(self) -> Interval:
        """The grown VMs' total IOPS."""
        return self._of(
            [sum(self.runs[seed][name]["iops"] for name in self.setup.grown) for seed in self.seeds()]
        )

    def all_iops(self) -> Interval:
        """Every VM's total IOPS, grown or not."""
        return self._of([sum(vm["iops"] for vm in self.runs[seed].values()) for seed in self.seeds()])

    def worst(self, slo: Slo) -> str:
        """The judged VM whose figure is the worst on average over the seeds (a latency's highest)."""
        sign = 1.0 if slo.ceiling else -1.0
        seeds = self.seeds()

        def mean_of(name: str) -> float:
            return sign * sum(self.runs[seed][name][slo.key] for seed in seeds) / len(seeds)

        return max(self.setup.judged, key=mean_of)


@dataclass
class Search:
    """The search's state: every point tried and the bracket."""

    slos: Sequence[Slo]
    growth: Growth
    runner: Runner
    base_seed: int
    seeds: int
    max_seeds: int
    max_runs: int
    exact: bool = False
    on_round: Callable[[str], None] = lambda line: None
    points: list[Point] = field(default_factory=list)
    runs: int = 0
    stopped: str = ""
    undecided: list[float] = field(default_factory=list)

    # --- points and their verdicts -------------------------------------------------------
    def point(self, factor: float) -> Point:
        """The point at `factor`, or one already tried with the same scenario (a whole depth or
        count rounds several factors to one run)."""
        setup, applied = self.growth.setup(factor)
        for point in self.points:
            if point.setup == setup:
                return point
        point = Point(len(self.points), applied, setup, exact=self.exact)
        self.points.append(point)
        return point

    def verdicts(self, point: Point) -> dict[str, str]:
        """Each SLO's verdict; every SLO fails at a point whose load did not grow (`stalled`)."""
        if self.stalled(point):
            return {slo.text: "fails" for slo in self.slos}
        return {slo.text: slo.verdict(point.interval(slo)) for slo in self.slos}

    def decided(self, point: Point) -> bool:
        verdicts = self.verdicts(point).values()
        return "fails" in verdicts or all(v == "holds" for v in verdicts)

    def holds(self, point: Point) -> bool:
        """All SLOs hold: by the intervals when they decide, else by the means (at the seed cap)."""
        verdicts = self.verdicts(point)
        if "fails" in verdicts.values():
            return False
        if all(v == "holds" for v in verdicts.values()):
            return True
        return all(slo.holds(point.interval(slo).mean) for slo in self.slos)

    def _launch(self, wanted: dict[int, int]) -> None:
        """Runs each point (index -> seeds wanted) up to its seeds, in one round."""
        jobs = []
        for index, count in wanted.items():
            point = self.points[index]
            have = len(point.runs)
            if have < count:
                jobs.append(Job(index, point.setup, self.base_seed + have, count - have))
        needed = sum(job.count for job in jobs)
        if self.runs + needed > self.max_runs:
            self.stopped = f"the run budget (--max-runs {self.max_runs}) was reached"
            raise Budget
        for (index, seed), figures in self.runner.run(jobs).items():
            self.points[index].runs[seed] = figures
        self.runs += needed

    def evaluate(self, points: Sequence[Point]) -> None:
        """Runs `points` at --seeds seeds, then doubles the seeds of those still undecided, up to
        the cap; the rounds run the points side by side."""
        count = self.seeds
        todo = list(points)
        while todo:
            self._launch({point.index: max(count, len(point.runs)) for point in todo})
            todo = [point for point in todo if not self.decided(point)]
            if not todo:
                break
            if count >= self.max_seeds:
                self.undecided.extend(point.factor for point in todo)
                break
            count = min(count * SEED_GROWTH, self.max_seeds)
        for point in points:
            self.on_round(self._line(point))

    def _line(self, point: Point) -> str:
        verdict = "holds" if self.holds(point) else "fails"
        seeds = len(point.runs)
        return f"×{point.factor:.4g}: {verdict} ({seeds} seed{'s' if seeds != 1 else ''})"

    def stalled(self, point: Point) -> bool:
        """The load did not grow: a selected VM measured no I/O with some seed, or (every scaled
        job an open loop) the VMs delivered less than STALLED of factor × today's IOPS: a trace
        replayed faster ends sooner, arrivals the system cannot take pile up."""
        if point.idle():
            return True
        today = next((p for p in self.points if p.factor == 1.0 and p.runs), None)
        if today is None or point is today or not self.growth.open_loop:
            return False
        return point.iops().mean < STALLED * self._expected(point, today)

    def _expected(self, point: Point, today: Point) -> float:
        """The IOPS `point` should deliver: factor × today's, or with VMs copied or dropped
        (`setup.origins`), the sum of today's IOPS of each VM's original (VMs differ)."""
        origins = point.setup.origins
        if origins is None:
            return point.factor * today.iops().mean
        seeds = today.seeds()
        return sum(today.runs[seed][name]["iops"] for seed in seeds for name in origins) / len(seeds)

    # --- the search --------------------------------------------------------------------------
    def run(self) -> tuple[Point | None, Point | None]:
        """The bracket: the largest factor tried that holds and the smallest above it that fails
        (either None when the search found none)."""
        try:
            low, high = self._expand()
            if low is not None and high is not None:
                low, high = self._bisect(low, high)
                self._settle(low, high)
        except Budget:
            low, high = self.bracket()
        return low, high

    def _settle(self, low: Point, high: Point) -> None:
        """A bracket end its intervals left undecided (judged by its means) gets a decided
        neighbour: points 2 %, 4 %, 8 %, 16 % further out until one is decided the same way, so
        that the limit's interval rests on decided points on both sides, a few % apart."""
        for end, outward, verdict in ((high, 1.0, False), (low, -1.0, True)):
            if self.decided(end):
                continue
            step = BRACKET
            for _ in range(SETTLE_STEPS):
                point = self.point(end.factor * (1 + step) ** outward)
                self.evaluate([point])
                if self.decided(point) and self.holds(point) == verdict:
                    break
                step *= 2

    def bracket(self) -> tuple[Point | None, Point | None]:
        tried = sorted((p for p in self.points if p.runs and self._complete(p)), key=lambda p: p.factor)
        failing = [p for p in tried if not self.holds(p)]
        high = failing[0] if failing else None
        holding = [p for p in tried if self.holds(p) and (high is None or p.factor < high.factor)]
        return (holding[-1] if holding else None), high

    def _complete(self, point: Point) -> bool:
        return len(point.runs) >= min(self.seeds, self.max_seeds)

    def _expand(self) -> tuple[Point | None, Point | None]:
        today = self.point(1.0)
        self.evaluate([today])
        failing = [slo for slo in self.slos if not slo.holds(today.interval(slo).mean)]
        if failing and all(not slo.ceiling for slo in failing) and not self.stalled(today):
            self.stopped = (
                f"{', '.join(slo.text for slo in failing)} fails at today's load, and less load cannot "
                "raise IOPS: the floor is out of reach from here (headroom looks for the most load that meets it)"
            )
            return self.bracket()
        step = 2.0 if self.holds(today) else 0.5
        factor = 1.0
        for _ in range(MAX_DOUBLINGS):
            factor *= step
            point = self.point(factor)
            if point.runs:  # whole counts: the factor rounds to a point already tried
                verdict = "hold" if step == 2.0 else "fail"
                self.stopped = (
                    f"the objectives still {verdict} at {factor_text(point.factor)} of today's load, and "
                    f"{self.growth.counts} cannot {'grow' if step == 2.0 else 'shrink'} it further"
                )
                break
            self.evaluate([point])
            if self.holds(point) != (step == 2.0):
                break
        else:
            verdict = "hold" if step == 2.0 else "fail"
            self.stopped = f"the objectives still {verdict} at {factor_text(factor)} of today's load, the furthest the search goes"
        return self.bracket()

    def _bisect(self, low: Point, high: Point) -> tuple[Point, Point]:
        """k-section of the bracket: as many points per round as the runner runs side by side
        (its parallel runs over the seeds a point needs; one point: bisection)."""
        per_round = max(1, self.runner.parallel // self.seeds)
        share = 0.0 if self.growth.bisect_to_counts else BRACKET
        while (high.factor - low.factor) > share * low.factor:
            factors = [
                low.factor + (high.factor - low.factor) * (i + 1) / (per_round + 1) for i in range(per_round)
            ]
            fresh = [
                p for p in dict.fromkeys(self.point(f) for f in factors) if p is not low and p is not high
            ]
            fresh = [p for p in fresh if not p.runs]
            if not fresh:  # neighbouring whole counts: the answer, not a stop
                if not self.growth.bisect_to_counts:
                    self.stopped = f"{self.growth.counts} cannot part the bracket further"
                break
            self.evaluate(fresh)
            new_low, new_high = self.bracket()
            if new_low is None or new_high is None:
                break
            low, high = new_low, new_high
        return low, high


@dataclass(frozen=True)
class Limit:
    """The answer: the factor where the binding SLO's figure crosses its limit, with its interval."""

    factor: float
    low: float
    high: float
    slo: Slo | None


def _cross(f0: float, v0: float, f1: float, v1: float, limit: float) -> float:
    """Where the line through (f0, v0) and (f1, v1) reaches `limit`, kept within [f0, f1]."""
    if v1 == v0 or not all(map(math.isfinite, (v0, v1))):
        return (f0 + f1) / 2
    return min(f1, max(f0, f0 + (limit - v0) / (v1 - v0) * (f1 - f0)))


def _band_cross(search: Search, slo: Slo, sign: float) -> float | None:
    """Where the band mean + sign × half first fails the SLO going up the tried factors, by
    linear interpolation between the two points around it (None when it never does)."""
    tried = sorted((p for p in search.points if p.runs), key=lambda p: p.factor)
    values = [(p.factor, p.interval(slo)) for p in tried]
    bands = [(f, i.mean + sign * i.half) for f, i in values]
    for (f0, v0), (f1, v1) in zip(bands, bands[1:], strict=False):
        if slo.holds(v0) and not slo.holds(v1):
            return _cross(f0, v0, f1, v1, slo.limit)
    return None


def estimate(search: Search, low: Point, high: Point) -> Limit:
    """The limit between `low` (holds) and `high` (fails): for each SLO that fails at `high`, the
    factor where its mean figure crosses the limit, linearly between the two points; its 95 %
    interval runs from where the pessimistic bound of the SLO figure's interval (the high end of a
    latency's) first crosses the limit over the points tried to where the optimistic bound does.
    The binding SLO is the one whose mean crosses first."""
    if search.stalled(high):  # the load stopped growing: no SLO crossed its limit
        return Limit(low.factor, low.factor, high.factor, None)
    best: Limit | None = None
    for slo in search.slos:
        a, b = low.interval(slo), high.interval(slo)
        if slo.holds(b.mean) and slo.verdict(b) != "fails":
            continue
        mean = _cross(low.factor, a.mean, high.factor, b.mean, slo.limit)
        sign = 1.0 if slo.ceiling else -1.0
        early = _band_cross(search, slo, sign)
        late = _band_cross(search, slo, -sign)
        found = Limit(
            mean,
            min(early, mean) if early is not None else min(p.factor for p in search.points),
            max(late, mean) if late is not None else high.factor,
            slo,
        )
        if search.exact or search.stopped:
            # No noise to widen it (exact figures), or a bracket the budget left wide: the
            # crossing is somewhere between the bracket's points, the interpolation a guess.
            found = Limit(found.factor, min(found.low, low.factor), max(found.high, high.factor), slo)
        if best is None or found.factor < best.factor:
            best = found
    if best is None:
        best = Limit((low.factor + high.factor) / 2, low.factor, high.factor, None)
    return best
