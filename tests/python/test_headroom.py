"""`sanlab headroom`: the search's answers against queueing theory (M/M/1, M/M/2 by Erlang C), the
SLO expressions and their one-line errors, what a load factor scales in each kind of job, the
search on a known curve, and the same runs here and on Dask.

Noise (docs/headroom.md): the M/M/1 and M/M/2 searches run 6 s per point (5 s measured, 25,000 to
75,000 I/Os), 3 to 12 seeds a point. Over first seeds 1 to 5, p99<=1ms on M/M/1 gave 5,401 to
5,433 IOPS (theory 5,394.8: +0.1 to +0.7 %), mean<=1ms 8,974 to 9,004 (theory 9,000), and
p99<=1ms on M/M/2 14,982 to 15,225 (theory 15,159.5: -1.2 to +0.4 %): the tests' 3 % is several
times the spread."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from sanlab import engine
from sanlab.analysis.utilisation import qos_units, utilisations
from sanlab.headroom.answer import bound_lines, headroom_document, read_headroom, to_json
from sanlab.headroom.bottleneck import closed_loop_bounds, throughput_bound
from sanlab.headroom.grow import GrowError, RateGrowth, Scaling, plan_growth, sets_at
from sanlab.headroom.page import page
from sanlab.headroom.points import Job, RunFigures
from sanlab.headroom.search import Search, estimate
from sanlab.headroom.slo import SloError, parse_slo, parse_slos
from sanlab.intervals import Interval
from test_report_browser import ARTIFACTS, Chromium, chromium, load_report

ROOT = Path(__file__).resolve().parents[2]
MM1 = ROOT / "scenarios" / "validation" / "mm1.toml"
METRO = ROOT / "scenarios" / "studies" / "metro_cluster_psp.toml"
PARDA = ROOT / "scenarios" / "studies" / "parda_calibrated.toml"
__all__ = ["chromium"]  # the fixture, used by the browser test below
TODAY_IOPS = 5000.0
"""mm1.toml's Poisson arrival rate: factor 1."""
FAST = ["--duration", "6s", "--seed", "1"]


def _headroom(*args: str, out: Path) -> dict[str, Any]:
    command = [sys.executable, "-m", "sanlab.cli", "headroom", *args, "--out", str(out), "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    doc: dict[str, Any] = json.loads(done.stdout)
    assert doc == json.loads((out / "headroom.json").read_text(encoding="utf-8"))
    return doc


def _erlang_c(servers: int, offered: float) -> float:
    top = offered**servers / math.factorial(servers) / (1 - offered / servers)
    return top / (sum(offered**k / math.factorial(k) for k in range(servers)) + top)


def _p99_ms(servers: int, rate_per_ms: float, mu: float = 10.0) -> float:
    """M/M/c's response-time p99 (ms): P(T > t) = (1-C) e^{-μt} + C (a e^{-μt} - μ e^{-at}) / (a - μ),
    a = cμ - λ, by bisection."""
    waits, a = _erlang_c(servers, rate_per_ms / mu), servers * mu - rate_per_ms

    def beyond(t: float) -> float:
        both = (
            math.exp(-mu * t) * (1 + mu * t)
            if a == mu
            else (a * math.exp(-mu * t) - mu * math.exp(-a * t)) / (a - mu)
        )
        return (1 - waits) * math.exp(-mu * t) + waits * both

    low, high = 0.0, 100.0
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if beyond(middle) > 0.01 else (low, middle)
    return low


def _rate_at_p99(servers: int, limit_ms: float) -> float:
    """The arrival rate (IOPS) at which M/M/c's p99 reaches `limit_ms`."""
    low, high = 0.0, servers * 10.0
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if _p99_ms(servers, middle) <= limit_ms else (low, middle)
    return low * 1000


def test_theory_of_the_cases() -> None:
    """M/M/1: p99 of the response time is ln(100)/(μ-λ), so p99<=1ms holds up to 10,000 - 4,605.2."""
    assert _rate_at_p99(1, 1.0) == pytest.approx(10_000 - math.log(100) * 1000, abs=0.5)
    assert _rate_at_p99(2, 1.0) == pytest.approx(15_159.5, abs=0.5)


def test_mm1_p99_limit_matches_theory(tmp_path: Path) -> None:
    doc = _headroom(str(MM1), "--slo", "p99<=1ms", *FAST, out=tmp_path / "h")
    theory = 10_000 - math.log(100) * 1000  # 5,394.8 IOPS
    assert doc["factor"] * TODAY_IOPS == pytest.approx(theory, rel=0.03)
    assert doc["limit_iops"] == pytest.approx(theory, rel=0.03)
    low, high = doc["factor_ci95"]
    assert low <= doc["factor"] <= high and high - low < 0.1
    bracket_low, bracket_high = doc["bracket"]
    assert (bracket_high - bracket_low) <= 0.02 * bracket_low
    # The server is the only resource: busy theory / 10,000 of the time at the limit.
    assert doc["bottleneck"]["kind"] == "array media" and doc["bottleneck"]["name"] == "server"
    assert doc["bottleneck"]["utilisation"] == pytest.approx(theory / 10_000, abs=0.03)
    assert doc["today"]["holds"] is True
    factors = [point["factor"] for point in doc["curve"]]
    assert factors == sorted(factors) and 1.0 in factors and 2.0 in factors
    for point in doc["curve"]:
        figure = point["figures"]["p99<=1ms"]
        assert figure["ci95"][0] <= figure["mean"] <= figure["ci95"][1]
        assert len(point["seeds"]) >= 3 and point["seeds"][0] == 1  # common seeds from --seed
    assert doc["at_limit"] and doc["at_limit"][0].startswith("vm[0].job[0].rate_iops=")
    assert "Load and latency" in (tmp_path / "h" / "headroom.html").read_text(encoding="utf-8")
    # The operational-law bound from today's utilisation: X / U = μ = 10,000 IOPS, above the limit.
    assert doc["bound"]["iops"] == pytest.approx(10_000, rel=0.03) and doc["bound"]["holds"] is True
    assert doc["bound"]["resource"]["name"] == "server"
    # The response-time bound: R >= D, the server's 100 µs, below today's mean (theory 1/(μ-λ) = 0.2 ms).
    response = doc["response_bound"]
    assert response["ms"] == pytest.approx(0.1, rel=0.03) and response["holds"] is True
    assert response["today_mean_ms"] == pytest.approx(0.2, rel=0.05)
    assert doc["utilisation"]["today"][0]["how"].startswith("busy servers / servers (1)")


def test_mm1_mean_and_mm2_erlang_c_limits(tmp_path: Path) -> None:
    """M/M/1 mean<=1ms: 1/(μ-λ) = 1 ms at 9,000 IOPS; M/M/2 (two 100 µs servers) p99<=1ms at
    15,159.5 IOPS by Erlang C's response-time distribution."""
    mean = _headroom(str(MM1), "--slo", "mean<=1ms", *FAST, out=tmp_path / "mean")
    assert mean["factor"] * TODAY_IOPS == pytest.approx(9000, rel=0.03)
    assert mean["bottleneck"]["utilisation"] == pytest.approx(0.9, abs=0.03)
    two = _headroom(
        str(MM1), "--slo", "p99<=1ms", "--set", "array[0].media.servers=2", *FAST, out=tmp_path / "mm2"
    )
    assert two["factor"] * TODAY_IOPS == pytest.approx(_rate_at_p99(2, 1.0), rel=0.03)


def test_terminal_answer_and_closed_loop_scaling_said(tmp_path: Path) -> None:
    """The metro study's VM keeps 32 writes outstanding (a closed loop): the factor scales its
    iodepth, which the answer says, and the LUN queue (depth 64) is what fills. Nothing in it is
    random: one seed a point."""
    command = [
        sys.executable, "-m", "sanlab.cli", "headroom", str(METRO), "--variant", "alua_rr",
        "--slo", "p99<=5ms", "--duration", "4s", "--out", str(tmp_path / "m"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "grows: VM vm1 job write32k: iodepth (closed loop: outstanding I/Os), today 32" in text
    assert "today 14,144 IOPS, p99 2.26 ms" in text
    assert "the SLO p99 ≤ 5 ms holds up to" in text
    assert (
        "first to saturate: device queue `esx1/metro_vol` (utilisation 1.00 at the limit; DQLEN set by the LUN "
        "queue depth 64)" in text
    )
    # Its throughput is 64 slots over a write's 2.26 ms round trip: no service demand bounds it.
    assert "no operational-law throughput bound: what saturates first, device queue `esx1/metro_vol`" in text
    assert doc_bound_none(tmp_path / "m")
    assert "one seed per point" in text and "stopped:" not in text
    doc = json.loads((tmp_path / "m" / "headroom.json").read_text(encoding="utf-8"))
    assert 3.5 < doc["factor"] < 4.5 and doc["seeds"]["exact"] is True
    # A closed loop is bisected to neighbouring depths: the limit's depth is one the search ran
    # and held at, the next one failed (p99 = depth / 14,144 IOPS at 64 slots: 128 holds, 129 fails).
    assert doc["at_limit"] == ["vm[0].job[0].iodepth=128"] and doc["whole_counts"] is True
    held = {tuple(point["sets"]): point["holds"] for point in doc["curve"]}
    assert held[("vm[0].job[0].iodepth=128",)] is True and held[("vm[0].job[0].iodepth=129",)] is False
    assert doc["limit_iops"] == pytest.approx(28_288, rel=0.001)  # 64 slots / 2.263 ms


def doc_bound_none(out: Path) -> bool:
    """headroom.json gives no throughput bound and names the resource without a demand."""
    bound = json.loads((out / "headroom.json").read_text(encoding="utf-8"))["bound"]
    return bound["iops"] is None and bound["unknown"] == ["device queue `esx1/metro_vol`"]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("p99<5ms", "a latency objective is a ceiling, p99<=LATENCY"),
        ("p98<=5ms", "unknown figure 'p98'"),
        ("p99<=5", "no unit; a latency needs ns, us, ms or s"),
        ("p99<=5 parsecs", "expected FIGURE<=LATENCY"),
        ("iops<=300", "an IOPS objective is a floor, iops>=N"),
        ("mean<=0ms", "must be above 0"),
        ("", "expected FIGURE<=LATENCY"),
    ],
)
def test_slo_errors_name_the_expression_and_what_is_expected(text: str, said: str) -> None:
    with pytest.raises(SloError) as caught:
        parse_slo(text)
    message = str(caught.value)
    assert "\n" not in message and f"--slo {text!r}" in message and said in message
    assert "expected" in message


def test_slo_parse_and_verdicts() -> None:
    assert parse_slo("p99<=5ms").limit == 5.0
    assert parse_slo("p99.9 <= 500us").key == "p999"
    assert parse_slo("mean<=0.2ms").label() == "mean ≤ 0.2 ms"
    assert parse_slo("iops>=2k").limit == 2000 and not parse_slo("iops>=2k").ceiling
    assert parse_slo("max<=1s").limit == 1000
    slo = parse_slo("p99<=1ms")
    assert slo.verdict(Interval(0.9, 0.05, 3)) == "holds"
    assert slo.verdict(Interval(1.1, 0.05, 3)) == "fails"
    assert slo.verdict(Interval(0.98, 0.05, 3)) == "undecided"
    assert slo.statistic({"a": {"p99": 0.5, "iops": 1}, "b": {"p99": 0.7, "iops": 2}}) == 0.7  # the worst VM
    with pytest.raises(SloError, match="at least one --slo"):
        parse_slos([])


def test_slo_errors_on_the_command_line_are_one_line(tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "sanlab.cli",
        "headroom",
        str(MM1),
        "--slo",
        "p99=<1ms",
        "--out",
        str(tmp_path / "x"),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: --slo 'p99=<1ms': expected")
    assert not (tmp_path / "x").exists()


def _jobs(vm: str, names: Sequence[str], depth: int = 32) -> list[dict[str, Any]]:
    return [
        {"vm": vm, "name": name, "entry": name, "pacing": {"kind": "closed", "depth": depth}}
        for name in names
    ]


def test_what_a_factor_scales_in_each_kind_of_job() -> None:
    resolved = {
        "vm": [
            {"name": "a", "job": [
                {"name": "oltp", "kind": "fio", "iodepth": 32},
                {"name": "paced", "kind": "fio", "rate_iops": "3000,1000"},
                {"name": "bytes", "kind": "fio", "rate": "10m"},
            ]},
            {"name": "b", "job": [
                {"name": "sync", "kind": "fio", "iodepth": 8, "ioengine": "psync", "numjobs": 2},
                {"name": "replay", "kind": "trace", "file": "t.csv"},
                {"name": "closed", "kind": "trace", "file": "t.csv", "mode": "closed", "depth": 4},
                {"name": "vd", "kind": "vdbench", "threads": 16},
                {"name": "vdrate", "kind": "vdbench", "iorate": 2000},
                {"name": "probe", "kind": "ioping"},
                {"name": "one", "kind": "fio", "ioengine": "pvsync2"},
            ]},
        ]
    }  # fmt: skip
    jobs = [*_jobs("a", ["oltp", "paced", "bytes"]), *_jobs("b", ["sync", "one"], depth=1)]
    scalings, notes = plan_growth(resolved, jobs, ["a", "b"])
    lines = sets_at(scalings, 1.5)
    assert lines == [
        "vm[0].job[0].iodepth=48",
        'vm[0].job[1].rate_iops="4500,1500"',
        "vm[0].job[2].rate=15728640",
        "vm[1].job[0].numjobs=3",
        "vm[1].job[1].iops_scale=1.5",
        "vm[1].job[2].depth=6",
        "vm[1].job[3].threads=24",
        "vm[1].job[4].iorate=3000",
        "vm[1].job[6].numjobs=2",  # a sync engine at iodepth 1: its pacing depth cannot tell
    ]
    assert sets_at(scalings, 1.0) == []  # today as given
    whats = {s.job: s.what for s in scalings}
    assert whats["oltp"] == "iodepth (closed loop: outstanding I/Os)"
    assert whats["sync"].startswith("numjobs (closed loop on a synchronous engine or a thinktime")
    assert notes == ["VM b job probe: an ioping probe is not scaled (it measures, it is not load)"]
    # Whole counts round, at least one outstanding I/O.
    depth = Scaling("a", "j", "k", (1.0,), "closed", "iodepth", whole=True)
    assert depth.value(0.25) == "1" and depth.value(1.6) == "2" and depth.applied(1.6) == 2.0
    # Only the VMs asked for grow.
    only_b, _ = plan_growth(resolved, jobs, ["b"])
    assert {s.vm for s in only_b} == {"b"}


@pytest.mark.parametrize(
    ("job", "said"),
    [
        ({"name": "f", "kind": "fio_file", "file": "x.fio"}, "a fio_file job keeps its options in a file"),
        ({"name": "v", "kind": "vdbench", "file": "p.vdb"}, "a vdbench parameter file keeps its iorate"),
    ],
)
def test_jobs_that_cannot_grow_are_refused_with_the_fix(job: dict[str, Any], said: str) -> None:
    with pytest.raises(GrowError) as caught:
        plan_growth({"vm": [{"name": "a", "job": [job]}]}, [], ["a"])
    assert said in str(caught.value) and "inline" in str(caught.value) and "\n" not in str(caught.value)
    assert str(caught.value).endswith("or grow whole VMs like it with --grow vms")


def _rate(scalings: list[Scaling]) -> RateGrowth:
    return RateGrowth(tuple(scalings), "curve.toml", "base", (), ("vm",), ("vm",))


class _Curve:
    """A runner whose p99 is a known curve of the rate, with seed noise: p99 = 1 / (10 - rate)
    ms (M/M/1-like), today's rate 5 per ms; the limit of p99<=1ms is at rate 9, factor 1.8. The
    mean is M/M/1's, p99 / ln 100, all of it in the array."""

    parallel = 1

    def __init__(self, scalings: list[Scaling]) -> None:
        self.scalings = scalings
        self.calls: list[list[Job]] = []

    def run(self, jobs: Sequence[Job]) -> dict[tuple[int, int], RunFigures]:
        self.calls.append(list(jobs))
        found = {}
        for job in jobs:
            rate = float(job.setup.sets[0].partition("=")[2]) if job.setup.sets else 5.0
            for seed in range(job.first, job.first + job.count):
                p99 = 1 / max(1e-3, 10 - rate) * (1 + 0.01 * ((seed % 3) - 1))
                mean = p99 / math.log(100)
                stages = {
                    "stage_vm_queues": 0.0, "stage_kavg": 0.0, "stage_davg": mean, "stage_fabric": 0.0,
                    "stage_array": mean, "stage_array_front_end": 0.0, "stage_array_cores": 0.0, "stage_array_media": mean,
                }  # fmt: skip
                found[(job.point, seed)] = {"vm": {"iops": rate * 1000, "p99": p99, "mean": mean, **stages}}
        return found


def test_search_brackets_within_two_percent_and_stops_at_the_budget() -> None:
    scalings = [Scaling("vm", "j", "vm[0].job[0].rate_iops", (5.0,), "open", "rate")]
    runner = _Curve(scalings)
    search = Search(
        slos=[parse_slo("p99<=1ms")],
        growth=_rate(scalings),
        runner=runner,
        base_seed=10,
        seeds=3,
        max_seeds=12,
        max_runs=500,
    )
    low, high = search.run()
    assert low is not None and high is not None
    assert low.factor < 1.8 < high.factor and high.factor - low.factor <= 0.02 * low.factor
    limit = estimate(search, low, high)
    assert limit.factor == pytest.approx(1.8, rel=0.005) and limit.low <= limit.factor <= limit.high
    # Every point ran the same seeds, from the first: common random numbers.
    assert all(sorted(point.runs)[:3] == [10, 11, 12] for point in search.points)
    tight = Search(
        slos=[parse_slo("p99<=1ms")],
        growth=_rate(scalings),
        runner=_Curve(scalings),
        base_seed=1,
        seeds=3,
        max_seeds=12,
        max_runs=12,
    )
    low, high = tight.run()
    assert "--max-runs 12" in tight.stopped and tight.runs <= 12
    assert low is not None and high is not None and low.factor == 1.75 and high.factor == 2.0
    # Stopped with the bracket wide: the crossing lies anywhere in it, whatever the points' intervals.
    stopped = estimate(tight, low, high)
    assert stopped.low <= 1.75 and stopped.high >= 2.0
    # Nothing random: one seed, zero-width intervals; the interval is the bracket, not a point.
    exact = Search(
        slos=[parse_slo("p99<=1ms")], growth=_rate(scalings), runner=_Curve(scalings), base_seed=1,
        seeds=1, max_seeds=1, max_runs=500, exact=True,
    )  # fmt: skip
    low, high = exact.run()
    assert low is not None and high is not None
    found = estimate(exact, low, high)
    assert (found.low, found.high) == (low.factor, high.factor) and found.low < found.factor < found.high
    # A floor on IOPS that today misses: less load cannot raise IOPS, so the search stops and says so.
    floor = Search(
        slos=[parse_slo("iops>=6000")],
        growth=_rate(scalings),
        runner=_Curve(scalings),
        base_seed=1,
        seeds=3,
        max_seeds=12,
        max_runs=500,
    )
    assert floor.run() == (None, floor.points[0]) and floor.runs == 3
    assert "iops>=6000 fails at today's load, and less load cannot raise IOPS" in floor.stopped
    # With a ceiling, a floor today meets is one more condition at every point.
    both = Search(
        slos=[parse_slo("p99<=1ms"), parse_slo("iops>=4000")],
        growth=_rate(scalings),
        runner=_Curve(scalings),
        base_seed=1,
        seeds=3,
        max_seeds=12,
        max_runs=500,
    )
    low, high = both.run()
    assert low is not None and high is not None and low.factor < 1.8 < high.factor


def test_dask_runs_the_same_points_as_this_process(tmp_path: Path) -> None:
    """--workers sends each point's seeds to Dask as RunTasks; the figures are those of the
    engine's replications here (replication r is seed + r)."""
    args = [str(MM1), "--slo", "mean<=1ms", "--duration", "2s", "--seed", "4", "--max-runs", "6"]
    here = _headroom(*args, out=tmp_path / "here")
    there = _headroom(*args, "--workers", "1", out=tmp_path / "dask")
    assert here["runner"].startswith("local") and there["runner"] == "dask"
    assert [point["figures"] for point in here["curve"]] == [point["figures"] for point in there["curve"]]
    assert "--max-runs 6" in here["stopped"]


def test_a_load_that_stops_growing_is_said_not_taken_for_a_limit(tmp_path: Path) -> None:
    """The example trace holds 2 s of I/O: replayed faster in a 3 s run, it ends sooner and its IOPS
    stay where they were; the answer says the load stopped growing, not that an SLO failed. An SLO
    below the array's fixed 150 µs fails at any load: said too."""
    trace = ROOT / "scenarios" / "examples" / "trace.toml"
    grown = _headroom(str(trace), "--slo", "p99<=5ms", "--duration", "3s", out=tmp_path / "a")
    assert grown["limited_by"] == "stalled" and grown["binding_slo"] is None
    assert grown["stalled"] and grown["factor"] == grown["bracket"][0] < 2
    never = _headroom(str(trace), "--slo", "p99<=0.1ms", "--duration", "1s", out=tmp_path / "b")
    assert (
        never["limited_by"] == "fails today" and never["factor"] is None and never["today"]["holds"] is False
    )
    assert "×1/1024" in never["stopped"]


def test_headroom_html_renders_offline_in_chromium(chromium: Chromium, tmp_path: Path) -> None:
    """headroom.html of a search on a known curve: the curve, the SLO line and the limit drawn
    without a JavaScript error or a network request."""
    scalings = [Scaling("vm", "j", "vm[0].job[0].rate_iops", (5.0,), "open", "rate")]
    slos = [parse_slo("p99<=1ms")]
    search = Search(
        slos=slos,
        growth=_rate(scalings),
        runner=_Curve(scalings),
        base_seed=1,
        seeds=3,
        max_seeds=12,
        max_runs=500,
    )
    low, high = search.run()
    assert low is not None and high is not None
    header = {
        "scenario": "curve.toml", "variant": "base", "version": "test", "grown_vms": ["vm"], "judged_vms": ["vm"], "growth": "--grow rate",
        "scaled": ["VM vm job j: rate"], "slos": [{"text": s.text, "figure": s.figure, "limit": s.limit, "label": s.label()} for s in slos],
        "duration_s": 6.0, "notes": [],
    }  # fmt: skip
    media = {
        "kind": "array media",
        "name": "a",
        "how": "busy servers / servers (1)",
        "demand": True,
        "vms": ["vm"],
    }
    utilisation = {"today": [{**media, "utilisation": 0.5}], "limit": [{**media, "utilisation": 0.9}]}
    doc = headroom_document(header, search, (low, high), estimate(search, low, high), utilisation)
    assert read_headroom(_written(tmp_path / "headroom.json", to_json(doc)))["factor"] == pytest.approx(
        1.8, rel=0.01
    )
    html_page = _written(tmp_path / "headroom.html", page(doc))
    figures = load_report(chromium, html_page, ARTIFACTS / "headroom.png")
    assert [figure["key"] for figure in figures] == ["headroom-curve"]
    assert figures[0]["rendered"] and figures[0]["traces"] == 1 and figures[0]["height"] > 200
    text = html_page.read_text(encoding="utf-8")
    assert "the SLO p99 ≤ 1 ms holds up to " in text and "(×1.80 ± " in text and "array `a` media" in text
    # Where the latency goes: today's point (mean 1 / (10 - 5) / ln 100 = 0.0434 ms), all the array's.
    assert "Where the latency goes, today and at the limit" in text and "<td>today, ×1</td>" in text
    assert doc["curve"][0]["stages_ms"]["vm"]["array"] == pytest.approx(0.2 / math.log(100), rel=0.02)


def _written(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_qos_units_are_the_engines() -> None:
    """The SolidFire cost curve as docs/models/array.md checks it: 6,000 units at 256 KiB give
    153.8 IOPS, a burst of 2,000 at 128 KiB 102.6; a 4 KiB request is one unit; past 1 MiB the
    cost grows in proportion."""
    assert 6000 / qos_units(262144) == pytest.approx(153.8, abs=0.05)
    assert 2000 / qos_units(131072) == pytest.approx(102.6, abs=0.05)
    assert qos_units(4096) == 1.0 and qos_units(512) == 1.0
    assert qos_units(2 * 1048576) == pytest.approx(300.0)
    assert qos_units(6144) == pytest.approx(1.3)  # midway between 4 KiB (1) and 8 KiB (1.6)


def test_a_parda_window_is_named_as_what_sets_dqlen() -> None:
    """On the calibrated PARDA platform at L = 30 ms each busy host's device queue is its window:
    esxtop's DQLEN follows it, far under the LUN depth of 64, and the drives are as busy."""
    doc = engine.run(PARDA, ["table3_parda30"], ["run.warmup=10s"], 1, "30s")
    variant = doc["variants"][0]
    found = utilisations(variant)
    queues = [item for item in found if item["kind"] == "device queue" and item["name"].startswith("host1/")]
    assert len(queues) == 1 and queues[0]["limit"].startswith("PARDA window (mean ")
    window = variant["hosts"][0]["window"]["mean"]
    assert window < 40 and f"(mean {window:.1f})" in queues[0]["limit"]
    # Over the measured time the windows are full (ACTV / DQLEN 1.00) and the drives as busy.
    drive = next(item for item in found if item["kind"] == "drive")
    assert drive["utilisation"] > 0.95 and found[0]["utilisation"] - drive["utilisation"] < 0.05
    cache = next(item for item in found if item["kind"] == "write cache")
    assert cache["utilisation"] == 0.0 and "0 writes waited" in cache["how"]  # Table 3 reads only


def test_a_saturated_drive_bounds_the_load_beside_a_full_window() -> None:
    """PARDA at L = 30 ms with 75 outstanding per VM: each host's window is full (ACTV / DQLEN 1)
    and the drives are as busy (0.998), so the drives' demand bounds the load where it is: about
    today's IOPS (×1.00). (A full queue beside idle media gives none: the metro test above.)"""
    sets = ["run.warmup=10s", *(f"vm[{k}].job[0].iodepth=75" for k in range(4))]
    today = utilisations(engine.run(PARDA, ["table3_parda30"], ["run.warmup=10s"], 1, "30s")["variants"][0])
    limit = utilisations(engine.run(PARDA, ["table3_parda30"], sets, 1, "30s")["variants"][0])
    assert limit[0]["kind"] == "device queue" and limit[0]["utilisation"] > 0.99
    drives = next(item for item in limit if item["kind"] == "drive")
    assert drives["utilisation"] > limit[0]["utilisation"] - 0.05
    grown = ["vm1", "vm2", "vm3", "vm4"]
    bound = throughput_bound(today, limit, grown, dict.fromkeys(grown, 800.0), 3200.0)
    assert bound["resource"]["kind"] == "drive" and bound["factor"] == pytest.approx(1.0, abs=0.01)


def test_a_resource_some_grown_vms_do_not_cross_bounds_nothing() -> None:
    """A QoS caps VM `capped` (busy 1.00 today); VM `free`, also grown, crosses only an idle link.
    The QoS bounds `capped`, not the two together: no bound from it (the free VM grows past it)."""
    today = [
        {"kind": "volume QoS", "name": "q", "utilisation": 1.0, "demand": True, "vms": ["capped"], "how": ""},
        {"kind": "link", "name": "l (host to array)", "utilisation": 0.1, "demand": True, "vms": ["capped", "free"],
         "path": "l", "direction": "host to array", "how": ""},
    ]  # fmt: skip
    iops = {"capped": 25.0, "free": 4000.0}
    bound = throughput_bound(today, today, ["capped", "free"], iops, 4025.0)
    assert bound["resource"]["kind"] == "link" and bound["factor"] == pytest.approx(10.0)
    alone = throughput_bound(today[:1], today[:1], ["capped", "free"], iops, 4025.0)
    assert alone["iops"] is None and "every grown VM" in alone["why_none"]


def test_a_disk_groups_media_passed_is_said_as_a_drives_reordering() -> None:
    """A bound from a disk group's media (the drives' mean) that the limit passes: said as the
    drives' reordering, as for its busiest drive; on a flash array, check the utilisations."""
    table = [
        {"kind": "array media", "name": "cx3", "utilisation": 1.0, "demand": True, "vms": ["a"], "how": ""},
        {"kind": "drive", "name": "cx3/disk0", "utilisation": 1.0, "demand": True, "vms": ["a"], "how": ""},
    ]
    bound = {"iops": 100.0, "factor": 1.0, "resource": table[0], "share": 1.0, "holds": False}
    doc = {"bound": bound, "utilisation": {"today": table}}
    assert "a drive's reordering serves a deeper queue faster" in bound_lines(doc)[0]
    doc = {"bound": bound, "utilisation": {"today": table[:1]}}
    assert bound_lines(doc)[0].endswith("the limit found passes it: check the utilisations")


def test_closed_loop_bounds_leave_out_drives_behind_a_write_back_cache() -> None:
    """PARDA's static study writes; by the end of its 120 s warm-up the write-back cache is full
    and destages: its drives are busy with writes no I/O waits for, so they are neither in D nor in
    Dmax. What is left that every VM crosses has no busy time (each host's link carries one VM):
    no bound, said. On the calibrated array, reads only, the drives bound them all."""
    doc = engine.run(ROOT / "scenarios" / "studies" / "parda_static.toml", ["base"], [], 1, "130s")
    variant = doc["variants"][0]
    grown = [vm["name"] for vm in variant["vms"]]
    assert closed_loop_bounds(variant, grown, grown) == {
        "why_none": "no server that every grown VM's I/Os cross reports a busy time (left out: array `cx3` "
        "drives: writes reach them after the write-back cache)"
    }
    variant = engine.run(PARDA, ["base"], ["run.warmup=10s"], 1, "20s")["variants"][0]
    grown = [vm["name"] for vm in variant["vms"] if vm["iops"] > 0]
    bounds = closed_loop_bounds(variant, grown, grown)
    assert bounds["bottleneck"].startswith("array `cx3` drive") and bounds["skipped"] == []
    assert bounds["demand_ms"] >= bounds["bottleneck_demand_ms"] > 0
    assert bounds["population_today"] == 4 * 32
