"""The one module of intervals: replications, batch means, MSER-5, checked against series whose
answer is known (seeded, so the counts asserted are fixed)."""

from __future__ import annotations

import math
import random

import pytest

from sanlab.intervals import INITIAL_BATCHES, LEAST_BATCHES, Interval, batch_means, mser5, t_quantile_975


def test_t_quantiles() -> None:
    assert t_quantile_975(1) == 12.706
    assert t_quantile_975(30) == 2.042
    assert t_quantile_975(31) == pytest.approx(2.0395, abs=2e-4)
    with pytest.raises(ValueError):
        t_quantile_975(0)


def test_an_interval_of_replications() -> None:
    interval = Interval.of([1.0, 2.0, 3.0])
    assert interval.mean == 2.0 and interval.n == 3
    assert interval.half == pytest.approx(4.303 * 1.0 / math.sqrt(3))
    assert not interval.excludes(4.0) and interval.excludes(-1.0)
    assert Interval.of([5.0]).half == math.inf, "one value says nothing of its precision"
    assert Interval.of([2.0, 2.0, 2.0]).half == 0.0, "when nothing is random the interval is exactly zero"


def test_replications_cover_the_true_mean_about_95_times_in_100() -> None:
    rng = random.Random(7)
    covered = sum(
        not Interval.of([rng.expovariate(1.0) for _ in range(30)]).excludes(1.0) for _ in range(400)
    )
    assert 360 <= covered <= 392, covered  # 95 % of 400 is 380; the t-interval of skewed data runs a little under


def _ar1(n: int, phi: float, rng: random.Random, mean: float = 10.0) -> list[float]:
    value, out = 0.0, []
    for _ in range(n):
        value = phi * value + rng.gauss(0, 1)
        out.append(mean + value)
    return out


def test_batch_means_of_a_correlated_series_cover_its_mean() -> None:
    rng = random.Random(11)
    trials = [batch_means(_ar1(4000, 0.9, rng)) for _ in range(200)]
    assert all(trial.interval is not None for trial in trials)
    covered = sum(not trial.interval.excludes(10.0) for trial in trials if trial.interval)
    assert 176 <= covered <= 198, covered  # about 95 % of 200
    # Naive intervals, treating the samples as independent, are far too narrow on such a series.
    naive = sum(not Interval.of(_ar1(4000, 0.9, rng)).excludes(10.0) for _ in range(200))
    assert naive < 120, naive


def test_batch_means_say_why_when_the_run_is_too_short() -> None:
    found = batch_means(_ar1(60, 0.99, random.Random(3)))
    assert found.interval is None and "run longer, or run replications" in found.why_not
    assert batch_means(list(range(5))).interval is None
    assert INITIAL_BATCHES >= LEAST_BATCHES


def test_mser5_finds_a_transient_within_ten_percent() -> None:
    """A series that climbs from 0 to its level over its first 300 samples (as a queue filling
    from empty), then stays there with noise."""
    rng = random.Random(5)
    transient = 300
    series = [min(1.0, i / transient) * 50 + rng.gauss(0, 2) for i in range(3000)]
    found = mser5(series)
    assert 0.9 * transient <= found <= 1.1 * transient, found
    assert mser5([rng.gauss(50, 2) for _ in range(3000)]) < 100, "a series in its steady state from the start"
    assert mser5([1.0, 2.0]) == 0
