"""How sure a figure is: the one place sanlab computes a 95 % interval, from independent
replications (seeds) or from the batches of one long run, and finds a warm-up in a series.

- Replications: the mean of n values and its half-width t(0.975, n-1) · s / sqrt(n) (Student's t;
  Law, Simulation Modeling and Analysis, 5th ed., 2015, ch. 9). Paired differences (common random
  numbers, the same seeds on both sides) are replications of the difference.
- Independent runs (different seeds on the two sides): the difference of the means with
  Welch's half-width, t at the Welch-Satterthwaite degrees of freedom (rounded down).
- Batch means: one run's series (past its warm-up) cut into k non-overlapping batches whose means
  are taken as replications; batches are merged pairwise while their means' lag-1
  autocorrelation is significantly above LAG1_LIMIT, so that they are nearly independent (Law,
  ch. 9.5.3). Too
  few batches left, and the run cannot say how precise it is: no interval, and why.
- MSER-5 (White, 1997; White, Cobb and Spratt, 2000): the series in batches of 5; the truncation d
  minimising the marginal standard error of what is left, searched over the first half.

Everything here is our own code over those published rules; the thresholds (LAG1_LIMIT, the
initial and least batch counts) are our choices where the sources leave a range.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

# Two-sided 95 % quantiles of Student's t for 1..30 degrees of freedom.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip

INITIAL_BATCHES = 40
"""Batches a series is first cut into (Law suggests 10 to 40 in the end; merging halves them)."""
LEAST_BATCHES = 10
"""Fewer batches than this and batch means give no interval."""
LAG1_LIMIT = 0.2
"""Batch means whose lag-1 autocorrelation is at most this are taken as independent."""
MSER_BATCH = 5


def t_quantile_975(dof: int) -> float:
    """Student's t quantile for a two-sided 95 % interval with `dof` degrees of freedom.

    Tabulated up to 30; beyond, the Cornish-Fisher expansion (Abramowitz & Stegun 26.7.5),
    within 1e-4 of the exact value there.
    """
    if dof < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {dof}")
    if dof <= len(_T975):
        return _T975[dof - 1]
    z = 1.959964
    terms = (
        (z**3 + z) / 4,
        (5 * z**5 + 16 * z**3 + 3 * z) / 96,
        (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384,
        (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160,
    )
    return float(z + sum(term / dof ** (power + 1) for power, term in enumerate(terms)))


@dataclass(frozen=True)
class Interval:
    """A mean and its 95 % half-width over `n` values (an infinite half-width with one value)."""

    mean: float
    half: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> Interval:
        """Of replications: independent values, or paired differences under common seeds."""
        if not values:
            raise ValueError("an interval needs at least one value")
        mean = statistics.fmean(values)
        if len(values) < 2:
            return cls(mean, math.inf, len(values))
        half = t_quantile_975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
        return cls(mean, half, len(values))

    @classmethod
    def difference(cls, first: Sequence[float], second: Sequence[float]) -> Interval:
        """Of `second` minus `first` from independent replications of each (Welch); `n` is the
        smaller side's count. Both sides without spread: an exact difference."""
        if len(first) < 2 or len(second) < 2:
            raise ValueError("a difference of independent runs needs at least two values a side")
        mean = statistics.fmean(second) - statistics.fmean(first)
        a, b = statistics.variance(first) / len(first), statistics.variance(second) / len(second)
        n = min(len(first), len(second))
        if a + b == 0:
            return cls(mean, 0.0, n)
        dof = (a + b) ** 2 / (a * a / (len(first) - 1) + b * b / (len(second) - 1))
        return cls(mean, t_quantile_975(max(1, math.floor(dof))) * math.sqrt(a + b), n)

    @property
    def low(self) -> float:
        return self.mean - self.half

    @property
    def high(self) -> float:
        return self.mean + self.half

    def relative(self) -> float:
        """The half-width as a share of the mean (infinite for a zero mean)."""
        return self.half / abs(self.mean) if self.mean else math.inf

    def excludes(self, value: float) -> bool:
        """Whether `value` lies outside the interval: a difference that excludes 0 is real."""
        return value < self.low or value > self.high


def _lag1(values: Sequence[float]) -> float:
    mean = statistics.fmean(values)
    denominator = sum((value - mean) ** 2 for value in values)
    if denominator == 0:
        return 0.0
    return sum((a - mean) * (b - mean) for a, b in zip(values, values[1:], strict=False)) / denominator


@dataclass(frozen=True)
class BatchMeans:
    """One run's interval from its batches, or why there is none."""

    interval: Interval | None
    batches: int
    batch_size: int
    lag1: float
    why_not: str = ""


def batch_means(series: Sequence[float]) -> BatchMeans:
    """The interval of a series' mean from non-overlapping batch means (see the module)."""
    batches = min(INITIAL_BATCHES, len(series))
    while batches >= LEAST_BATCHES:
        size = len(series) // batches
        means = [statistics.fmean(series[i * size : (i + 1) * size]) for i in range(batches)]
        lag1 = _lag1(means)
        # Estimated from k means, lag-1 has a standard error of about 1/sqrt(k): a value within
        # noise of LAG1_LIMIT is not evidence of dependence (a one-sided 5 % test).
        if lag1 <= LAG1_LIMIT + 1.645 / math.sqrt(batches):
            return BatchMeans(Interval.of(means), batches, size, lag1)
        batches //= 2
    return BatchMeans(
        None, batches, 0, math.nan,
        f"{len(series)} samples do not make {LEAST_BATCHES} batches whose means are independent "
        f"(lag-1 autocorrelation above {LAG1_LIMIT}): run longer, or run replications",
    )  # fmt: skip


def mser5(series: Sequence[float]) -> int:
    """The warm-up MSER-5 finds: how many leading samples to cut (a multiple of 5; 0 when the
    series is too short to judge, fewer than two batches)."""
    batches = [statistics.fmean(series[i : i + MSER_BATCH]) for i in range(0, len(series) - MSER_BATCH + 1, MSER_BATCH)]
    if len(batches) < 2:
        return 0
    best_d, best = 0, math.inf
    # Suffix sums: the standard error of what is left after each truncation, in one pass.
    count, total, squares = 0, 0.0, 0.0
    left: list[tuple[int, float, float]] = []
    for value in reversed(batches):
        count, total, squares = count + 1, total + value, squares + value * value
        left.append((count, total, squares))
    left.reverse()
    for d in range(len(batches) // 2 + 1):
        n, s, q = left[d]
        statistic = (q - s * s / n) / (n * n)
        if statistic < best:
            best_d, best = d, statistic
    return best_d * MSER_BATCH
