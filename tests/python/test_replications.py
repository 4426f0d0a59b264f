"""Replications: each variant run again with its seed + r, shown as means with 95 % intervals that
cover what queueing theory says in about 95 of 100 trials, kept replication by replication in the
run folder, and run until precise enough with --precision."""

from __future__ import annotations

import json
import math
import statistics
import subprocess
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from sanlab import engine
from sanlab.analysis.differences import differences
from sanlab.export.runfolder import read_run_folder
from sanlab.intervals import Interval, t_quantile_975
from sanlab.replications import combine, with_batch_means

CliRunner = Callable[..., subprocess.CompletedProcess[str]]

ROOT = Path(__file__).resolve().parents[2]
MM1 = ROOT / "scenarios" / "validation" / "mm1.toml"
NOISE = ROOT / "scenarios" / "examples" / "noise.toml"
ONE_VM = ROOT / "tests" / "data" / "scenarios" / "one_vm.toml"
SERVICE_MS = 0.1
"""The M/M/c server's mean service time (mm1.toml: 100 us, exponential)."""


def _erlang_c(servers: int, offered: float) -> float:
    """The probability that an arrival waits in M/M/c (Erlang C), `offered` = λ/μ."""
    top = offered**servers / math.factorial(servers) / (1 - offered / servers)
    return top / (sum(offered**k / math.factorial(k) for k in range(servers)) + top)


def _response_quantile_ms(servers: int, rate_per_s: float, share: float) -> float:
    """The `share` quantile of M/M/c's response time (wait + service) in ms: P(T > t) is
    (1-C) e^{-μt} + C (a e^{-μt} - μ e^{-at}) / (a - μ) with a = cμ - λ; solved by bisection."""
    mu = 1 / SERVICE_MS
    rate = rate_per_s / 1000
    waits = _erlang_c(servers, rate / mu)
    a = servers * mu - rate

    def beyond(t: float) -> float:
        both = math.exp(-mu * t) * (1 + mu * t) if a == mu else (a * math.exp(-mu * t) - mu * math.exp(-a * t)) / (a - mu)
        return (1 - waits) * math.exp(-mu * t) + waits * both

    low, high = 0.0, 1000.0
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if beyond(middle) > 1 - share else (low, middle)
    return low


@pytest.mark.parametrize(
    ("servers", "duration"),
    [(1, "5.2s"), (2, "3.2s")],
    ids=["M/M/1", "M/M/2"],
)
def test_intervals_cover_queueing_theory_in_90_to_99_of_100_trials(servers: int, duration: str) -> None:
    """ρ = 0.9, five short replications a trial, 100 trials on a fixed list of seeds: the 95 %
    intervals of the mean and of p99 hold the theoretical values in 90 to 99 of them."""
    rate = 0.9 * servers / SERVICE_MS * 1000
    sets = [f"vm[0].job[0].rate_iops={rate:g}", f"array[0].media.servers={servers}", "run.warmup=0.2s"]
    mean_ms = _erlang_c(servers, rate / 1000 * SERVICE_MS) / (servers / SERVICE_MS - rate / 1000) + SERVICE_MS
    p99_ms = _response_quantile_ms(servers, rate, 0.99)
    if servers == 1:
        assert (mean_ms, p99_ms) == pytest.approx((1.0, math.log(100)), rel=1e-6)
    covered = {"mean": 0, "p99": 0}
    for trial in range(100):
        doc = combine(engine.run(MM1, ["mm1"], sets, seed=1000 * trial + 1, duration=duration, replications=5, jobs=2))
        bounds = doc["variants"][0]["vms"][0]["ci95"]["lat_ms"]
        covered["mean"] += bounds["mean"][0] <= mean_ms <= bounds["mean"][1]
        covered["p99"] += bounds["p99"][0] <= p99_ms <= bounds["p99"][1]
    assert 90 <= covered["mean"] <= 99, covered
    assert 90 <= covered["p99"] <= 99, covered


def test_a_figure_is_the_mean_of_its_replications_with_students_interval() -> None:
    raw = engine.run(NOISE, duration="2s", replications=3, jobs=2)
    assert [(v["name"], v["replication"], v["seed"]) for v in raw["variants"]] == [("base", r, 1 + r) for r in range(3)]
    variant = combine(raw)["variants"][0]
    assert variant["replications"] == 3 and [r["seed"] for r in variant["replicas"]] == [1, 2, 3]
    for key in ("vms", "paths", "devices", "hosts"):
        for index, entity in enumerate(variant[key]):
            values = [run[key][index]["iops"] for run in raw["variants"]]
            assert entity["iops"] == pytest.approx(statistics.fmean(values))
            half = t_quantile_975(2) * statistics.stdev(values) / math.sqrt(3)
            assert entity["ci95"]["iops"] == pytest.approx([entity["iops"] - half, entity["iops"] + half])
            assert half > 0, f"{key} {entity['name']}: seeds differ, so do the figures"
    vm = variant["vms"][0]
    # IOPS against I/Os ÷ time, replication by replication.
    for run in raw["variants"]:
        completed = sum(job["read"]["total_ios"] + job["write"]["total_ios"] for job in run["jobs"])
        assert run["vms"][0]["iops"] == pytest.approx(completed / run["measured_s"], rel=1e-6)
    p99 = [run["vms"][0]["lat_ms"]["p99"] for run in raw["variants"]]
    assert vm["lat_ms"]["p99"] == pytest.approx(statistics.fmean(p99))
    # The first replication is the run as written: the same figures as a plain run.
    plain = engine.run(NOISE, duration="2s")["variants"][0]
    assert variant["replicas"][0]["vms"] == plain["vms"] and variant["jobs"] == plain["jobs"]


def test_when_nothing_is_random_the_interval_is_exactly_zero() -> None:
    variant = combine(engine.run(ONE_VM, duration="1s", replications=3))["variants"][0]
    assert variant["seed_matters"] is False
    vm = variant["vms"][0]
    assert vm["ci95"]["iops"] == [vm["iops"], vm["iops"]]
    assert vm["ci95"]["lat_ms"]["mean"] == [vm["lat_ms"]["mean"]] * 2


def test_run_replications_reach_the_json_the_parquet_the_tables_and_the_report(tmp_path: Path, cli: CliRunner) -> None:
    out = tmp_path / "run"
    shown = cli("run", str(NOISE), "--duration", "2s", "--replications", "3", "--out", str(out))
    assert shown.returncode == 0, shown.stderr
    assert "±" in shown.stdout and "half-width of the 95 % interval" in shown.stdout
    assert "figures are means of 3 replications" in shown.stderr
    results = json.loads((out / "results.json").read_text())
    variant = results["variants"][0]
    assert variant["replications"] == 3 and "timeseries" not in variant["replicas"][0]
    assert set(variant["vms"][0]["ci95"]) >= {"iops", "mbps", "lat_ms"}
    summary = pq.read_table(out / "summary.parquet").to_pandas()
    iops = summary[(summary.entity == "vm/db") & (summary.metric == "iops")].sort_values("replication")
    assert list(iops.replication) == [0, 1, 2]
    assert statistics.fmean(iops.value) == pytest.approx(variant["vms"][0]["iops"])
    series = pq.read_table(out / "timeseries.parquet").to_pandas()
    assert sorted(series.replication.unique()) == [0, 1, 2]
    doc, _ = read_run_folder(out)
    assert [len(r["timeseries"]["t_s"]) for r in doc["variants"][0]["replicas"]] == [len(doc["variants"][0]["timeseries"]["t_s"])] * 3
    assert cli("report", str(out)).returncode == 0


def test_precision_runs_replications_until_every_watched_figure_is_within_the_target(cli: CliRunner) -> None:
    shown = cli("run", str(NOISE), "--duration", "2s", "--precision", "0.4%", "--json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    precision = doc["precision"]
    assert precision["reached"] and precision["worst"]["relative_half_width"] <= 0.004
    vm = doc["variants"][0]["vms"][0]
    for figure, (low, high) in (("iops", vm["ci95"]["iops"]), ("mean", vm["ci95"]["lat_ms"]["mean"]), ("p99", vm["ci95"]["lat_ms"]["p99"])):
        value = vm["iops"] if figure == "iops" else vm["lat_ms"][figure]
        assert (high - low) / 2 <= 0.004 * value, figure
    # The count the pilot's relative variance predicts, within a factor of 2: n = n0 (h0 / target)².
    pilot = combine(engine.run(NOISE, duration="2s", replications=5, jobs=2))["variants"][0]["vms"][0]
    widest = max(
        (high - low) / 2 / value
        for (low, high), value in (
            (pilot["ci95"]["iops"], pilot["iops"]),
            (pilot["ci95"]["lat_ms"]["mean"], pilot["lat_ms"]["mean"]),
            (pilot["ci95"]["lat_ms"]["p99"], pilot["lat_ms"]["p99"]),
        )
    )
    predicted = 5 * (widest / 0.004) ** 2
    assert predicted / 2 <= precision["replications"] <= 2 * predicted, (predicted, precision)


def test_precision_says_when_the_cap_stopped_it(cli: CliRunner) -> None:
    shown = cli("run", str(NOISE), "--duration", "2s", "--precision", "0.01%", "--max-replications", "6")
    assert shown.returncode == 0, shown.stderr
    assert "precision: not reached: --max-replications 6 stopped the run at 6 replications" in shown.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--replications", "0"], "expected 1 to 1000, got 0; the nearest is 1"),
        (["--precision", "5"], "expected a percent above 0 and below 100, such as 5%, got '5'"),
        (["--precision", "0%"], "expected a percent above 0 and below 100"),
        (["--replications", "3", "--precision", "5%"], "not allowed with argument"),
        (["--seed", str(2**63 - 1), "--replications", "2"], "the seed 9223372036854775807 + 1 passes the largest seed"),
    ],
)
def test_bad_replication_options_get_one_line(args: list[str], message: str, cli: CliRunner) -> None:
    shown = cli("run", str(NOISE), "--duration", "2s", "--json", *args)
    assert shown.returncode == 2 and message in shown.stderr and len(shown.stderr.strip().splitlines()) == 1, shown.stderr


def test_compare_pairs_common_seeds_and_tells_a_real_difference_from_noise(tmp_path: Path, cli: CliRunner) -> None:
    runs = {
        "a": ["--replications", "5"],
        "b": ["--replications", "5", "--set", "host[0].multipath.psp.iops=1000"],
        "c": ["--replications", "4", "--seed", "100"],
        "one": [],
    }
    for name, args in runs.items():
        assert cli("run", str(NOISE), "--duration", "2s", "--quiet", "--out", str(tmp_path / name), *args).returncode == 0
    docs = {name: read_run_folder(tmp_path / name)[0] for name in runs}
    paired = {d.figure: d for d in differences(docs["a"], docs["b"])}
    assert {d.method for d in paired.values()} == {"paired over 5 common seeds"}
    a, b = docs["a"]["variants"][0]["replicas"], docs["b"]["variants"][0]["replicas"]
    expected = Interval.of([y["vms"][0]["iops"] - x["vms"][0]["iops"] for x, y in zip(a, b, strict=True)])
    assert paired["IOPS"].interval == expected and paired["IOPS"].verdict == "lower"
    # The same model on other seeds: Welch's interval, which holds 0.
    welch = differences(docs["a"], docs["c"])
    assert {d.method for d in welch} == {"Welch, 5 and 4 replications"}
    assert all(d.verdict == "not distinguishable" for d in welch)
    assert {d.verdict for d in differences(docs["a"], docs["one"])} == {"no interval"}
    shown = cli("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "page.html"))
    assert shown.returncode == 0 and "b against a" in shown.stdout and "paired over 5 common seeds" in shown.stdout


def test_welch_interval_of_a_difference() -> None:
    first, second = [1.0, 2.0, 3.0], [4.0, 6.0, 8.0, 10.0]
    interval = Interval.difference(first, second)
    a, b = statistics.variance(first) / 3, statistics.variance(second) / 4
    dof = (a + b) ** 2 / (a * a / 2 + b * b / 3)
    assert interval.mean == pytest.approx(5.0)
    assert interval.half == pytest.approx(t_quantile_975(math.floor(dof)) * math.sqrt(a + b))
    assert Interval.difference([2.0, 2.0], [3.0, 3.0]) == Interval(1.0, 0.0, 2)


def test_one_run_asked_for_gets_batch_means_intervals_that_cover_the_mean() -> None:
    """`--replications 1`: IOPS and mean latency from batches of the run's own series; on M/M/1
    at ρ = 0.9, 100 single 10 s runs, the mean latency's interval holds 1 ms in at least 90."""
    sets = ["vm[0].job[0].rate_iops=9000", "run.warmup=0.2s", "run.sample_interval=100ms"]
    covered = 0
    for trial in range(100):
        doc = with_batch_means(engine.run(MM1, ["mm1"], sets, seed=1000 * trial + 1, duration="10.2s"))
        variant = doc["variants"][0]
        low, high = variant["vms"][0]["ci95"]["lat_ms"]["mean"]
        covered += low <= 1.0 <= high
        assert "p99" not in variant["vms"][0]["ci95"]["lat_ms"], "batch means estimate means only"
    assert covered >= 90, covered
    assert variant["ci95_method"].startswith("batch means: 40 batches of 2 samples")


def test_run_replications_1_says_how_and_where_it_cannot(cli: CliRunner, tmp_path: Path) -> None:
    shown = cli("run", str(NOISE), "--duration", "30s", "--replications", "1", "--out", str(tmp_path / "long"))
    assert shown.returncode == 0, shown.stderr
    # 30 one-second samples, the first inside the 1 s warm-up: 29 batches.
    assert "±" in shown.stdout and "batch means: 29 batches of 1 samples" in shown.stderr
    short = cli("run", str(NOISE), "--duration", "3s", "--replications", "1", "--json")
    assert "too few independent batches (run longer)" in " ".join(json.loads(short.stdout)["notes"])
    assert json.loads(short.stdout)["variants"][0]["vms"][0]["ci95"] == {}
