"""`sanlab headroom` against queueing theory beyond M/M/1 (docs/headroom.md, "How far to trust
it"): M/M/4 by Erlang C, a closed network of two stations by exact mean value analysis, and a
two-station tandem whose bottleneck moves with the request size.

Noise: every search runs 6 s per point (5 s measured, 10,000 to 200,000 I/Os a run), 3 to 12
seeds a point, first seed 1; over first seeds 1 to 3 the answers below stayed within the
spreads docs/headroom.md gives, and the tests allow 3 %."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest

from sanlab.headroom.bottleneck import closed_at, closed_estimate
from test_headroom import FAST, MM1, ROOT, TODAY_IOPS, _erlang_c, _headroom

TANDEM = ROOT / "tests" / "data" / "scenarios" / "headroom_tandem.toml"
CORE_MS = 0.05
"""headroom_tandem.toml's core: exponential 50 µs a request."""
MEDIA_MS = {"4k": 0.020 + 4096 / 1e9 * 1e3, "256k": 0.020 + 262144 / 1e9 * 1e3}
"""Its media: exponential around 20 µs + size / 1 GB/s (the whole service time is drawn
exponential around that mean: the media's utilisation gives the mean, its p95 at no load the shape)."""


def _solve(figure: Callable[[float], float], low: float, high: float, limit: float) -> float:
    """The largest x in [low, high] where the increasing `figure(x)` is at most `limit`."""
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if figure(middle) <= limit else (low, middle)
    return low


def _mmc_mean_ms(servers: int, rate_per_ms: float, mu: float = 10.0) -> float:
    """M/M/c's mean response time: 1/μ + C(c, λ/μ) / (cμ − λ)."""
    return 1 / mu + _erlang_c(servers, rate_per_ms / mu) / (servers * mu - rate_per_ms)


def _mva(demands_ms: tuple[float, ...], population: int, think_ms: float = 0.0) -> list[tuple[float, float]]:
    """Exact MVA of a closed network of FIFO exponential stations and a think time Z (a delay
    station): for n = 1 .. population, the mean response time R(n) (ms) and throughput X(n)
    (IOPS). R_k(n) = D_k (1 + Q_k(n − 1)), X(n) = n / (Z + Σ R_k(n)), Q_k(n) = X(n) R_k(n)
    (Reiser and Lavenberg, 1980)."""
    queues = [0.0] * len(demands_ms)
    found = []
    for n in range(1, population + 1):
        times = [demand * (1 + queue) for demand, queue in zip(demands_ms, queues, strict=True)]
        rate = n / (think_ms + sum(times))
        queues = [rate * time for time in times]
        found.append((sum(times), rate * 1000))
    return found


def _jackson_mean_ms(rate_per_ms: float, demands_ms: tuple[float, ...]) -> float:
    """An open tandem of M/M/1 stations (Jackson): Σ S_k / (1 − λ S_k)."""
    return sum(demand / (1 - rate_per_ms * demand) for demand in demands_ms)


def test_mm4_mean_limit_by_erlang_c(tmp_path: Path) -> None:
    """Four 100 µs servers: mean ≤ 0.15 ms holds up to the λ where 1/μ + C(4, λ/μ)/(4μ − λ) is
    0.15 ms, 29,897 IOPS (ρ = 0.75)."""
    theory = _solve(lambda rate: _mmc_mean_ms(4, rate), 0.0, 39.999, 0.15) * 1000
    assert theory == pytest.approx(29_897, abs=1)
    doc = _headroom(
        str(MM1), "--slo", "mean<=0.15ms", "--set", "array[0].media.servers=4", *FAST, out=tmp_path / "h"
    )
    assert doc["factor"] * TODAY_IOPS == pytest.approx(theory, rel=0.03)
    assert doc["limit_iops"] == pytest.approx(theory, rel=0.03)
    assert doc["bottleneck"]["utilisation"] == pytest.approx(theory / 40_000, abs=0.03)


def test_closed_network_population_by_exact_mva(tmp_path: Path) -> None:
    """A closed loop over the tandem's core (50 µs) and media (24.1 µs at 4 KiB): the factor scales
    the outstanding I/Os (2 today). MVA gives R(8) = 0.4006 ms and R(9) = 0.4503 ms, so mean ≤
    0.425 ms (midway, so that a few % of noise cannot move the answer) holds up to 8 outstanding.
    Every point's mean and IOPS are checked against MVA at its population."""
    mva = _mva((CORE_MS, MEDIA_MS["4k"]), 64)
    largest = max(n for n, (mean_ms, _) in enumerate(mva, start=1) if mean_ms <= 0.425)
    assert largest == 8
    doc = _headroom(str(TANDEM), "--slo", "mean<=0.425ms", *FAST, out=tmp_path / "h")
    assert doc["at_limit"] == [f"vm[0].job[0].iodepth={largest}"]
    depths = [round(point["factor"] * 2) for point in doc["curve"]]
    assert largest in depths and largest + 1 in depths
    for depth, point in zip(depths, doc["curve"], strict=True):
        mean_ms, iops = mva[depth - 1]
        assert point["figures"]["mean<=0.425ms"]["mean"] == pytest.approx(mean_ms, rel=0.03), depth
        assert point["iops"]["mean"] == pytest.approx(iops, rel=0.03), depth
    assert doc["bottleneck"]["name"] == "server/ctrl1.core1"  # 50 µs against 24.1: the core saturates
    # The closed-loop bounds from today's demands (2 outstanding): D = 74.1 µs, Dmax the core's
    # 50 µs, so R(N) ≥ N × 50 µs lets mean ≤ 0.425 ms hold at most up to N = 8, MVA's answer; at
    # every point tried X ≤ min(N / D, 1 / Dmax) and R ≥ max(D, N·Dmax) hold for the measured
    # figures (within 2 %, the demands' noise), and MVA's own figures are within 3 %.
    closed = doc["closed_bound"]
    assert closed["demand_ms"] == pytest.approx(CORE_MS + MEDIA_MS["4k"], rel=0.03)
    assert closed["bottleneck_demand_ms"] == pytest.approx(CORE_MS, rel=0.03)
    assert closed["bottleneck"] == "array `server` core ctrl1.core1" and closed["population_today"] == 2
    assert closed["estimate"]["mean<=0.425ms"] == {"population": largest, "holds": True}
    assert closed["at_limit"]["population"] == largest and closed["holds_on_curve"] is True
    for depth, point in zip(depths, doc["curve"], strict=True):
        mean_ms, iops = mva[depth - 1]
        assert point["closed"]["population"] == depth
        assert (
            point["closed"]["iops_max"] >= iops * 0.97
            and point["closed"]["response_ms_min"] <= mean_ms * 1.03
        )


@pytest.mark.parametrize("think_ms", [0.0, 0.1])
def test_the_closed_loop_bounds_hold_against_exact_mva(think_ms: float) -> None:
    """X(N) ≤ min(N / (D + Z), 1 / Dmax) and R(N) ≥ max(D, N·Dmax − Z), as `closed_at` computes
    them from the tandem's demands, hold for exact MVA at every population to 64, meet it at
    N = 1 (one I/O alone: R = D) and approach it at 64 (the core saturated)."""
    demands = (CORE_MS, MEDIA_MS["4k"])
    bounds = {
        "demand_ms": sum(demands), "bottleneck_demand_ms": max(demands), "population_today": 2,
        "population_by_vm": {"source": 2}, "customers": [{"count": 2, "think_ms": think_ms, "scaled": True}],
    }  # fmt: skip
    mva = _mva(demands, 64, think_ms)
    for n, (mean_ms, iops) in enumerate(mva, start=1):
        at = closed_at(bounds, n / 2)
        assert at["population"] == n
        assert at["iops_max"] >= iops * (1 - 1e-12) and at["response_ms_min"] <= mean_ms * (1 + 1e-12), n
    assert closed_at(bounds, 0.5)["response_ms_min"] == pytest.approx(mva[0][0])
    assert closed_at(bounds, 0.5)["iops_max"] == pytest.approx(mva[0][1])
    assert mva[-1][1] / closed_at(bounds, 32)["iops_max"] > 0.999
    # The estimate: the largest N whose R(N) bound is within the ceiling.
    assert closed_estimate(bounds, 0.425) == math.floor((0.425 + think_ms) / CORE_MS)
    assert closed_estimate(bounds, 0.07) is None  # under D: no population meets it


def test_closed_loop_with_a_think_time_by_exact_mva(tmp_path: Path) -> None:
    """Two fio clones of one outstanding read each, thinking 100 µs after every I/O (Z = 0.1 ms):
    the factor grows the clones (numjobs), a closed network with a delay station. MVA gives
    R(8) = 0.3052 ms and R(9) = 0.3528 ms, so mean ≤ 0.33 ms holds up to 8 clones; the bound
    R(N) ≥ N·Dmax − Z = 0.30 ms at 8 (0.35 at 9) estimates the same N, and holds at every point."""
    mva = _mva((CORE_MS, MEDIA_MS["4k"]), 64, 0.1)
    largest = max(n for n, (mean_ms, _) in enumerate(mva, start=1) if mean_ms <= 0.33)
    assert largest == 8
    sets = ["vm[0].job[0].thinktime=100us", "vm[0].job[0].numjobs=2", "vm[0].job[0].iodepth=1"]
    doc = _headroom(
        str(TANDEM), "--slo", "mean<=0.33ms", *(arg for line in sets for arg in ("--set", line)), *FAST,
        out=tmp_path / "h",
    )  # fmt: skip
    assert doc["at_limit"] == [f"vm[0].job[0].numjobs={largest}"]
    closed = doc["closed_bound"]
    assert closed["customers"] == [{"count": 2, "think_ms": pytest.approx(0.1), "scaled": True}]
    assert closed["estimate"]["mean<=0.33ms"] == {"population": largest, "holds": True}
    assert closed["holds_on_curve"] is True
    for point in doc["curve"]:
        n = point["closed"]["population"]
        mean_ms, iops = mva[n - 1]
        assert point["figures"]["mean<=0.33ms"]["mean"] == pytest.approx(mean_ms, rel=0.03), n
        assert point["iops"]["mean"] == pytest.approx(iops, rel=0.03), n


@pytest.mark.parametrize(
    ("size", "today_iops", "slo_ms", "bottleneck"),
    [("4k", 5000, 0.3, ("array core", "server/ctrl1.core1")), ("256k", 1000, 1.5, ("array media", "server"))],
)
def test_tandem_bottleneck_moves_with_the_request_size(
    tmp_path: Path, size: str, today_iops: int, slo_ms: float, bottleneck: tuple[str, str]
) -> None:
    """Poisson arrivals through the core (50 µs) and then the media (20 µs + size / 1 GB/s):
    at 4 KiB the core is the slower station (50 against 24.1 µs), at 256 KiB the media
    (282.1 against 50 µs). The mean limit solves the Jackson tandem's Σ S/(1 − λS) = SLO:
    16,162 IOPS at 4 KiB for 0.3 ms, 2,851 at 256 KiB for 1.5 ms."""
    demands = (CORE_MS, MEDIA_MS[size])
    theory = _solve(lambda rate: _jackson_mean_ms(rate, demands), 0.0, 1 / max(demands) - 1e-9, slo_ms) * 1000
    sets = [f"vm[0].job[0].bs={size}", f"vm[0].job[0].rate_iops={today_iops}"]
    doc = _headroom(
        str(TANDEM), "--variant", "open", "--slo", f"mean<={slo_ms}ms",
        *(arg for line in sets for arg in ("--set", line)), *FAST, out=tmp_path / size,
    )  # fmt: skip
    assert doc["limit_iops"] == pytest.approx(theory, rel=0.03)
    assert (doc["bottleneck"]["kind"], doc["bottleneck"]["name"]) == bottleneck
    slowest = max(demands)
    assert doc["bottleneck"]["utilisation"] == pytest.approx(theory / 1000 * slowest, abs=0.03)


LINK = ROOT / "tests" / "data" / "scenarios" / "headroom_link.toml"
LINK_MS = 65536 * 8 / 1e9 * 1e3
"""headroom_link.toml: a 64 KiB read's data on the 1 Gb/s array-to-host transmitter, 0.524288 ms."""


def _md1_mean_ms(rate_per_ms: float, service_ms: float, other_ms: float) -> float:
    """M/D/1's mean response time (Pollaczek-Khinchine) plus a fixed delay: S + ρS / (2(1 − ρ)) + other."""
    rho = rate_per_ms * service_ms
    return service_ms + rho * service_ms / (2 * (1 - rho)) + other_ms


def test_a_link_saturates_first_and_bounds_the_load(tmp_path: Path) -> None:
    """Poisson 64 KiB reads through a 1 Gb/s link: each holds the array-to-host transmitter
    0.524 ms, an M/D/1 queue, then 20 µs of media. mean <= 1.5 ms holds up to 1,497 IOPS; the
    link, its busy share measured from the path's MB/s, is named at λ × 0.524 ms; the throughput
    bound is its 1 / 0.524 ms = 1,907 IOPS, and R >= D = 0.544 ms."""
    theory = _solve(lambda rate: _md1_mean_ms(rate, LINK_MS, 0.020), 0.0, 1 / LINK_MS - 1e-9, 1.5) * 1000
    assert theory == pytest.approx(1497, abs=1)
    doc = _headroom(str(LINK), "--slo", "mean<=1.5ms", *FAST, out=tmp_path / "h")
    assert doc["limit_iops"] == pytest.approx(theory, rel=0.03)
    bottleneck = doc["bottleneck"]
    assert (bottleneck["kind"], bottleneck["path"], bottleneck["direction"]) == (
        "link",
        "h-flash",
        "array to host",
    )
    assert bottleneck["utilisation"] == pytest.approx(doc["limit_iops"] / 1000 * LINK_MS, rel=0.03)
    writes = next(item for item in doc["utilisation"]["limit"] if item["name"] == "h-flash (host to array)")
    assert writes["utilisation"] == 0.0  # reads only: the other direction carries 0-byte commands
    assert doc["bound"]["iops"] == pytest.approx(1000 / LINK_MS, rel=0.03) and doc["bound"]["holds"] is True
    assert doc["bound"]["resource"]["kind"] == "link"
    response = doc["response_bound"]
    assert response["ms"] == pytest.approx(LINK_MS + 0.020, rel=0.03) and response["holds"] is True
    assert response["parts_ms"]["links array to host"] == pytest.approx(LINK_MS, rel=0.03)
    # Every point's mean is above D, up to the cliff.
    assert response["holds_on_curve"] is True and len(doc["curve"]) >= 5
