"""`sanlab calibrate`: a synthetic case whose true values are known is recovered, within the
range printed beside it and within the noise of its points, the fit is deterministic for a seed,
a prediction from the calibrated file carries the range (`--predict`), Ctrl-C keeps the best so
far, and every class of bad input gets one message naming the file, row and column.

The synthetic points are simulated at seed DATA_SEED and fitted at flash4.toml's seed 11, as a
real measurement is: the points carry noise of their own, which the fit's runs do not share."""

from __future__ import annotations

import contextlib
import json
import math
import re
import statistics
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import sanlab
from sanlab import cli
from sanlab.calibrate import Calibration, calibrate, local_mapper
from sanlab.calibration.inputs import CalibrationError, parse_free, read_points
from sanlab.intervals import Interval

pytestmark = pytest.mark.e2e

DATA = Path(__file__).resolve().parents[1] / "data" / "calibrate"
FLASH4 = DATA / "flash4.toml"
"""Four flash servers with exponential service; iodepth sets the load."""
LATENCY = "array[0].media.read_latency"
DEPTH = "vm[0].job[0].iodepth"
TRUE_US = 180.0
DEPTHS = (1, 2, 4, 16)
DATA_SEED = 7
"""The seed of the synthetic measurement; the fits run at flash4.toml's seed 11 (and the ranges
at 12-16)."""


def _figures(sets: dict[str, object], depth: int, seed: int) -> tuple[float, float]:
    """IOPS and mean latency (ms) of flash4.toml's VM at `depth` outstanding."""
    vm = sanlab.run(FLASH4, set={**sets, DEPTH: depth}, seed=seed).vms.iloc[0]
    return float(vm.iops), float(vm.lat_ms_mean)


def _simulate(path: Path, sets: dict[str, object], depths: tuple[int, ...] = DEPTHS, seed: int = DATA_SEED) -> None:
    """Writes points.csv from runs at known values: the `measured` figures of the synthetic case."""
    lines = [f"{DEPTH},iops,lat_ms"]
    for depth in depths:
        iops, lat_ms = _figures(sets, depth, seed)
        lines.append(f"{depth},{iops!r},{lat_ms!r}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _largest_noise(sets: dict[str, object], seeds: range) -> float:
    """The largest run-to-run relative standard deviation of a point's figure over `seeds`."""
    runs = [[_figures(sets, depth, seed) for seed in seeds] for depth in DEPTHS]
    return max(
        statistics.stdev(values) / statistics.fmean(values)
        for at_depth in runs
        for values in zip(*at_depth, strict=True)
    )


@pytest.fixture(scope="module")
def points(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("calibrate") / "points.csv"
    _simulate(path, {LATENCY: f"{TRUE_US:g}us"})
    return path


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """One Dask cluster for this module's calibrations."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": ":0"},
    ) as cluster:
        yield cluster.scheduler_address


def _fitted_us(path: Path) -> float:
    value = tomllib.loads(path.read_text(encoding="utf-8"))["array"][0]["media"]["read_latency"]
    return float(value.removesuffix("us"))


RANGE_LINE = re.compile(rf"^  {re.escape(LATENCY)} = (?P<value>[\d.]+)us \((?P<low>[\d.]+)us–(?P<high>[\d.]+)us\)$", re.M)


def test_synthetic_service_time_is_recovered_within_its_range_and_the_fit_is_deterministic(
    cli: Callable[..., object], points: Path, scheduler: str, tmp_path: Path
) -> None:
    args = ["calibrate", str(FLASH4), "--measured", str(points), "--free", f"{LATENCY}=50us..500us",
            "--generations", "6", "--popsize", "8", "--scheduler", scheduler]  # fmt: skip
    first, second = tmp_path / "first.toml", tmp_path / "second.toml"
    done = cli(*args, "-o", str(first))
    assert done.returncode == 0, done.stderr  # type: ignore[attr-defined]
    fitted = _fitted_us(first)
    out = done.stdout  # type: ignore[attr-defined]
    assert "measured and fitted" in out and "fitted values" in out and f"calibrated scenario: {first}" in out
    # The range printed beside the value holds the truth.
    found = RANGE_LINE.search(out)
    assert found, out
    low, high = float(found["low"]), float(found["high"])
    assert float(found["value"]) == fitted and low < fitted < high
    assert low <= TRUE_US <= high, (low, fitted, high)
    assert high / low < 1.15, "four points of two figures pin the service time within a few per cent"
    # The noise of the points (seed 7) and of the fit's runs (seed 11) moves the fit itself. Each
    # figure is proportional to the service time or to its inverse, so each misplaces it by the
    # relative difference of two independent runs' noise: sqrt(2) x a run's relative standard
    # deviation (measured here over six seeds: about 2 % at one outstanding, 1 % at sixteen).
    # The fit averages those misplacements (in log), and an average of errors is no more spread
    # than the largest of them: within 2 standard deviations (95 %) of that largest.
    tolerance = 2 * math.sqrt(2) * _largest_noise({LATENCY: f"{TRUE_US:g}us"}, range(DATA_SEED, DATA_SEED + 6))
    assert 0.01 < tolerance < 0.1, tolerance
    assert abs(math.log(fitted / TRUE_US)) <= tolerance, (fitted, tolerance)
    assert "ranges: the values within noise of the fit" in out and "seeds 12-16" in out
    lines = done.stderr.splitlines()  # type: ignore[attr-defined]
    assert re.match(r"runs: the fit up to 224, the ranges up to 580 \(5 seeds; --no-range skips them\)$", lines[0]), lines[0]
    generations = [line for line in lines if line.startswith("[generation")]
    rounds = [line for line in lines if line.startswith("[range round")]
    assert len(generations) == 7 and all(
        re.match(r"\[generation \d/6\] 8 candidates × 4 points: best objective", line) for line in generations
    )
    assert rounds and len(lines) == 1 + len(generations) + len(rounds), lines

    text = first.read_text(encoding="utf-8")
    assert re.search(r'^base = ".*flash4\.toml"$', text, re.M)
    assert re.search(
        rf'^read_latency = "[\d.]+us"  # range {found["low"]}us–{found["high"]}us; fitted on points\.csv lines 2-5 \(4 points\): rms error',
        text,
        re.M,
    ), text
    assert "# ranges: the values within noise of the fit" in text
    sanlab.validate(first, cost=False)
    # The calibrated file runs, and gives what the fit printed for a point (at the fit's seed).
    vm = sanlab.run(first, set={DEPTH: 16}).vms.iloc[0]
    row = re.search(r"points\.csv line 5 +iodepth=16 +iops +[\d,]+ +(?P<fitted>[\d,]+) ", out)
    assert row, out
    assert vm.iops == pytest.approx(float(row["fitted"].replace(",", "")), rel=1e-3)
    _check_prediction(cli, first, fitted, found["low"], found["high"])

    again = cli(*args, "-o", str(second))
    assert again.returncode == 0, again.stderr  # type: ignore[attr-defined]
    assert _fitted_us(second) == fitted
    assert text.split("base =")[1] == second.read_text(encoding="utf-8").split("base =")[1]


def _check_prediction(cli: Callable[..., object], calibrated: Path, fitted: float, low: str, high: str) -> None:
    """`--predict` at 16 outstanding over 3 seeds: the fit's mean and 95 % interval are those of
    the calibrated file's own runs at those seeds, the range's ends those of the runs at the ends
    of the fitted range (the mean latency rises with the service time), and the truth's figure,
    run at the same seeds, lies inside the range the fit's spread gives."""
    done = cli("calibrate", str(calibrated), "--predict", "--set", f"{DEPTH}=16", "--replications", "3", "--json")
    assert done.returncode == 0, done.stderr  # type: ignore[attr-defined]
    document = json.loads(done.stdout)  # type: ignore[attr-defined]
    assert document["ranges"] == [{"key": LATENCY, "value": f"{fitted:g}us", "range": [f"{low}us", f"{high}us"]}]
    assert document["ends"] == [f"{LATENCY}={low}us", f"{LATENCY}={high}us"]
    (latency,) = [item for item in document["figures"] if item["figure"] == "mean"]
    seeds = range(11, 14)

    def mean_ms(service: str | None) -> list[float]:
        sets = {DEPTH: 16, **({LATENCY: service} if service else {})}
        return [float(sanlab.run(calibrated, set=sets, seed=seed).vms.iloc[0].lat_ms_mean) for seed in seeds]

    at_fit = Interval.of(mean_ms(None))
    assert latency["value"] == pytest.approx(at_fit.mean, rel=1e-9)
    assert latency["ci95"] == pytest.approx([at_fit.low, at_fit.high], rel=1e-9)
    spread_low, spread_high = latency["range"]
    assert spread_low == pytest.approx(statistics.fmean(mean_ms(f"{low}us")), rel=1e-9)
    assert spread_high == pytest.approx(statistics.fmean(mean_ms(f"{high}us")), rel=1e-9)
    assert spread_low < at_fit.mean < spread_high
    assert spread_low <= statistics.fmean(mean_ms(f"{TRUE_US:g}us")) <= spread_high


def test_two_values_one_an_integer_are_recovered_from_the_python_api(tmp_path: Path) -> None:
    points = tmp_path / "points.csv"
    _simulate(points, {LATENCY: "150us", "array[0].media.servers": 6}, depths=(1, 4, 8, 16, 32))
    calibration = Calibration(
        scenario=str(FLASH4),
        free=(parse_free(f"{LATENCY}=50us..400us"), parse_free("array[0].media.servers=1..16:int")),
        points=tuple(read_points(points)),
        seed=11,
        generations=8,
        popsize=6,
    )
    fit = calibrate(calibration, local_mapper, range_seeds=4)
    latency, servers = fit.values
    assert fit.ranges is not None and fit.ranges.seeds == (12, 13, 14, 15)
    (latency_range, servers_range) = fit.ranges.ranges
    assert latency_range.low <= 150 <= latency_range.high and latency_range.low < latency < latency_range.high
    assert servers_range.low <= 6 <= servers_range.high, servers_range
    assert servers_range.high - servers_range.low <= 2, "depths to 32 tell 6 servers from 4 and 8"
    assert latency == pytest.approx(150, rel=0.05)
    assert fit.rms < 0.05
    assert not fit.interrupted and all(low is not None and high is not None for low, high in fit.sensitivity)
    # Deterministic: the same calibration gives the same values, whichever mapper runs it.
    assert calibrate(calibration, local_mapper).values == fit.values


def test_a_range_holds_the_integers_the_points_cannot_tell_apart_and_says_it_reaches_a_bound(tmp_path: Path) -> None:
    """At one and two outstanding I/Os, four servers and five serve alike (and so does any count
    from two): the range holds both, up to the box's end, and says so."""
    from sanlab.calibration.ranges import shown

    points = tmp_path / "points.csv"
    _simulate(points, {"array[0].media.servers": 4}, depths=(1, 2))
    calibration = Calibration(
        str(FLASH4), (parse_free("array[0].media.servers=1..12:int"),), tuple(read_points(points)), seed=11,
        generations=3, popsize=4,
    )  # fmt: skip
    fit = calibrate(calibration, local_mapper, range_seeds=3)
    assert fit.ranges is not None
    (span,) = fit.ranges.ranges
    assert span.low <= 4 and span.high >= 5, span
    assert span.low == 2 and span.outside[0] == 1, "one server is told apart at two outstanding"
    assert span.high == 12 and span.at_hi and not span.at_lo
    assert shown(calibration.free[0], fit.values[0], span).endswith("(2–12 bound)")


def test_ctrl_c_keeps_the_best_candidate_so_far(points: Path) -> None:
    """KeyboardInterrupt during the third batch: the fit is the best of the first two, marked
    interrupted, without sensitivities (no wall clock involved)."""
    calibration = Calibration(
        str(FLASH4),
        (parse_free(f"{LATENCY}=50us..500us"),),
        tuple(read_points(points)),
        seed=11,
        generations=5,
        popsize=6,
    )
    seen: list[tuple[float, float]] = []
    batches = 0

    def mapper(tasks: list[sanlab.runs.RunTask]) -> list[sanlab.runs.RunOutcome]:
        nonlocal batches
        batches += 1
        if batches == 3:
            raise KeyboardInterrupt
        return local_mapper(tasks)

    def on_batch(best: object, candidates: int) -> None:
        seen.append((best.values[0], best.objective))  # type: ignore[attr-defined]

    fit = calibrate(calibration, mapper, on_batch)
    assert fit.interrupted and fit.batches == 2 and fit.evaluations == 12
    assert (fit.values[0], fit.objective) == seen[-1]
    assert fit.objective == min(objective for _, objective in seen)
    assert fit.sensitivity == [(None, None)]


def test_ctrl_c_writes_the_best_so_far_and_exits_130(
    points: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import sanlab.commands.calibrate as module
    import sanlab.runs as runs

    calls = 0

    def interrupting(client: object) -> Callable[[list[runs.RunTask]], list[runs.RunOutcome]]:
        def mapper(tasks: list[runs.RunTask]) -> list[runs.RunOutcome]:
            nonlocal calls
            calls += 1
            if calls == 2:
                raise KeyboardInterrupt
            return local_mapper(tasks)

        return mapper

    monkeypatch.setattr(module, "dask_mapper", interrupting)
    monkeypatch.setattr(module, "dask_client", lambda scheduler, workers: contextlib.nullcontext())
    out = tmp_path / "calibrated.toml"
    code = cli.main(
        [
            "calibrate",
            str(FLASH4),
            "--measured",
            str(points),
            "--free",
            f"{LATENCY}=50us..500us",
            "--quiet",
            "-o",
            str(out),
        ]
    )
    assert code == 130
    captured = capsys.readouterr()
    assert "error: interrupted after 10 candidates: wrote the best so far to" in captured.err
    assert "INTERRUPTED" in out.read_text(encoding="utf-8")
    sanlab.validate(out, cost=False)


BAD_FREE = [
    (f"{LATENCY}=fast..slow", "`fast` is not a number; a free parameter takes numeric bounds"),
    (
        f"{LATENCY}=500us..50us",
        f"the bounds are reversed or equal (LO must be below HI); did you mean {LATENCY}=50us..500us?",
    ),
    (
        f"{LATENCY}=50us..500us:integer",
        "unknown flag `:integer`; expected :int or :log; did you mean `:int`?",
    ),
    ("array[0].media.read_latncy=50us..500us", "array[0].media.read_latncy: unknown key `read_latncy`"),
    (f"{LATENCY}=50..500", "expected a duration as a string"),
    (f"{LATENCY}=50us", "expected bounds LO..HI after `=`"),
    (f"{LATENCY}=1ms..1000us", "the bounds are equal (1ms and 1000us): give an interval LO..HI with LO below HI, or fix the value with --set"),
    ("array[0].media.servers=1..16", "array[0].media.servers takes a whole number and the search tries fractions between the bounds: add :int"),
]


@pytest.mark.parametrize(("free", "message"), BAD_FREE)
def test_a_bad_free_parameter_gets_one_message(
    free: str, message: str, points: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(
        ["calibrate", str(FLASH4), "--measured", str(points), "--free", free, "-o", str(tmp_path / "x.toml")]
    )
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"error: --free {free!r}: ") and message in err[0], err[0]
    assert not (tmp_path / "x.toml").exists()


BAD_POINTS = [
    (
        "vm[0].job[0].iodpth,iops\n4,1000\n",
        "points.csv line 2, column `vm[0].job[0].iodpth`: ",
        "did you mean `iodepth`?",
    ),
    (f"{DEPTH},iops,lat_ms\n4,1000,0.2\n8,,\n", "points.csv line 3: no measured figure", "delete the row"),
    (f"{DEPTH},iops\n4,fast\n", "points.csv line 2, column `iops`: `fast` is not a measured figure", ""),
    (f"{DEPTH},iops\n4,-3\n", "points.csv line 2, column `iops`: `-3` is not a measured figure", ""),
    (f"{DEPTH},IOPS\n4,1000\n", "points.csv: column `IOPS` is neither a figure", "did you mean `iops`?"),
    (
        f"{DEPTH},vm:vn:iops\n4,1000\n",
        "points.csv line 2, column `vm:vn:iops`: no VM named `vn`",
        "did you mean `vm:vm:iops`?",
    ),
    (
        f"{DEPTH},vm:vm:latency\n4,1000\n",
        "points.csv: column `vm:vm:latency`",
        "did you mean `vm:vm:lat_ms`?",
    ),
    (
        f"{DEPTH},iops,weight\n4,1000,heavy\n",
        "points.csv line 2, column `weight`: `heavy` is not a weight",
        "",
    ),
    (f"{DEPTH},iops\n4,1000,7\n", "points.csv line 2: 3 cells for the header's 2 columns", ""),
    (f"{DEPTH},weight\n4,1\n", "points.csv: no figure column", ""),
    (
        f"{DEPTH}=4,iops\n4,1000\n",
        "points.csv: column `vm[0].job[0].iodepth=4` holds `=`",
        "the values go in the rows",
    ),
    (
        f"{LATENCY},iops\n100us,1000\n",
        f"points.csv line 2, column `{LATENCY}`: the column sets a free parameter",
        "",
    ),
]


@pytest.mark.parametrize(("text", "message", "hint"), BAD_POINTS)
def test_bad_measured_points_get_one_message_with_file_row_and_column(
    text: str, message: str, hint: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    points = tmp_path / "points.csv"
    points.write_text(text, encoding="utf-8")
    code = cli.main(
        [
            "calibrate",
            str(FLASH4),
            "--measured",
            str(points),
            "--free",
            f"{LATENCY}=50us..500us",
            "-o",
            str(tmp_path / "x.toml"),
        ]
    )
    err = capsys.readouterr().err.splitlines()
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"error: {message}") and hint in err[0], err[0]


def test_parquet_points_are_read_and_their_rows_named(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "points.parquet"
    pq.write_table(
        pa.table({DEPTH: [4, 16], "iops": [21000.0, None], "lat_ms": [0.2, 0.7], "label": ["a", None]}), path
    )
    first, second = read_points(path)
    assert (
        first.sets == (f"{DEPTH}=4",)
        and first.figures == (("iops", 21000.0), ("lat_ms", 0.2))
        and first.name == "a"
    )
    assert second.where == "points.parquet row 2" and second.figures == (("lat_ms", 0.7),)
    pq.write_table(pa.table({DEPTH: [4], "iops": [None]}), path)
    with pytest.raises(CalibrationError, match=r"^points\.parquet row 1: no measured figure"):
        read_points(path)


def test_a_scenario_with_several_variants_needs_one_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    points = tmp_path / "points.csv"
    points.write_text("vm[0].job[0].rate_iops,lat_ms\n2000,0.125\n", encoding="utf-8")
    mm1 = Path(__file__).resolve().parents[2] / "scenarios" / "validation" / "mm1.toml"
    code = cli.main(
        [
            "calibrate",
            str(mm1),
            "--measured",
            str(points),
            "--free",
            f"{LATENCY}=50us..200us",
            "-o",
            str(tmp_path / "x.toml"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "2 variants (md1, mm1); choose the one to fit with --variant" in err


def test_a_variant_that_sets_a_fitted_key_does_not_override_the_fit_and_a_short_search_is_flagged(
    tmp_path: Path, points: Path, scheduler: str, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "var.toml"
    scenario.write_text(
        f'schema_version = 1\nname = "var"\nbase = "{FLASH4}"\n[[variant]]\nname = "slow"\nset = {{ "{LATENCY}" = "400us" }}\n',
        encoding="utf-8",
    )
    out = tmp_path / "calibrated.toml"
    argv = ["calibrate", str(scenario), "--variant", "slow", "--measured", str(points), "--free", f"{LATENCY}=50us..1ms"]
    # Two generations of four: a search too short to settle.
    code = cli.main([*argv, "--generations", "2", "--popsize", "4", "--scheduler", scheduler, "--quiet", "-o", str(out)])
    assert code == 0
    text = out.read_text(encoding="utf-8")
    assert f"variant slow's own {LATENCY} dropped: fitted here" in text
    doc = tomllib.loads(text)
    assert doc["variant"][0]["set"] == {}, "the variant no longer sets the fitted key"
    # The file runs at the fitted value: the variant's 400 us is gone.
    run = sanlab.run(out, variants=["slow"])
    assert float(run.vms.iloc[0].lat_ms_mean) < 0.35
    # Eight candidates in all stop short of the minimum: a value 5 % away fits better, and the file
    # and the terminal say so.
    assert "NOT CONVERGED: a value 5 % away fits better" in text
    err = capsys.readouterr().err
    assert re.search(rf"warning: {re.escape(LATENCY)}: [\d.]+us is not a minimum \(the objective is lower 5 % away\): raise --generations or --popsize", err), err


def test_an_output_that_is_an_input_is_refused_and_both_are_kept(
    tmp_path: Path, points: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "flash4.toml"
    scenario.write_text(FLASH4.read_text(encoding="utf-8"), encoding="utf-8")
    measured = tmp_path / "points.csv"
    measured.write_bytes(points.read_bytes())
    for out in (scenario, measured, tmp_path / "." / "points.csv"):
        before = out.read_bytes()
        argv = ["calibrate", str(scenario), "--measured", str(measured), "--free", f"{LATENCY}=50us..1ms", "-o", str(out)]
        assert cli.main(argv) == 2
        assert "it is an input" in capsys.readouterr().err
        assert out.read_bytes() == before


def test_a_fit_too_large_is_refused_before_it_starts_with_its_size(
    tmp_path: Path, points: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["calibrate", str(FLASH4), "--measured", str(points), "--free", f"{LATENCY}=50us..1ms", "--popsize", "100000000"]
    assert cli.main([*argv, "-o", str(tmp_path / "x.toml")]) == 2
    err = capsys.readouterr().err
    assert "the fit would run up to 10,400,000,580 simulations" in err and err.count("\n") == 1, err
    many = tmp_path / "many.csv"
    many.write_text("vm[0].job[0].iodepth,iops\n" + "1,1000\n" * 10_001, encoding="utf-8")
    with pytest.raises(CalibrationError, match="10,001 points, above the limit of 10,000"):
        read_points(many)


def test_relative_files_are_rebased_to_the_calibrated_files_folder(tmp_path: Path) -> None:
    from sanlab import engine
    from sanlab.calibration.toml_out import calibrated_text

    source = tmp_path / "source"
    (source / "cdf").mkdir(parents=True)
    (source / "cdf" / "read.csv").write_text("100us,0.5\n200us,1\n", encoding="utf-8")
    original = source / "scenario.toml"
    original.write_text(
        f'schema_version = 1\nname = "files"\nbase = "{FLASH4}"\n[[array]]\nname = "a"\n'
        'media = { kind = "flash", read_latency = { kind = "empirical", file = "cdf/read.csv" }, write_latency = "20us" }\n',
        encoding="utf-8",
    )
    engine.validate(original)
    out = tmp_path / "elsewhere" / "calibrated.toml"
    out.parent.mkdir()
    out.write_text(calibrated_text(original, out, "cal", [], {"array[0].media.write_latency": "30us"}, {}), encoding="utf-8")
    assert tomllib.loads(out.read_text())["array"][0]["media"]["read_latency"]["file"] == "../source/cdf/read.csv"
    engine.validate(out)  # the file copied from the original still names the latency file


def test_a_fit_at_its_bound_is_flagged_and_only_the_chosen_variant_is_checked(
    tmp_path: Path, points: Path, scheduler: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The points were made at 180 us; bounds of 50..100 us cannot hold the answer. The other
    variant does not build: calibrate used to check every variant, not the one it fits."""
    scenario = tmp_path / "two.toml"
    scenario.write_text(
        f'schema_version = 1\nname = "two"\nbase = "{FLASH4}"\n'
        '[[variant]]\nname = "ok"\nset = {}\n[[variant]]\nname = "broken"\nset = { "host[0].nosuchkey" = 1 }\n',
        encoding="utf-8",
    )
    out = tmp_path / "calibrated.toml"
    argv = ["calibrate", str(scenario), "--variant", "ok", "--measured", str(points), "--free", f"{LATENCY}=50us..100us"]
    code = cli.main([*argv, "--generations", "2", "--popsize", "4", "--scheduler", scheduler, "--quiet", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert re.search(rf"warning: {re.escape(LATENCY)}: 9\d\.\d+us is within 5 % of its bound 100us and the objective rises", err), err
    assert "AT A BOUND" in out.read_text(encoding="utf-8")


def test_labels_and_columns_from_the_measured_file_reach_the_terminal_escaped() -> None:
    from types import SimpleNamespace

    from rich.console import Console

    from sanlab.calibration.inputs import Point
    from sanlab.commands.calibrate import points_table

    hostile = "\x1b[2J\x1b]0;owned\x07[/]"
    point = Point("points.csv line 2", ("vm[0].job[0].iodepth=4",), (("iops", 1000.0),), label=hostile)
    fit = SimpleNamespace(calibration=SimpleNamespace(points=[point]), figures=[{"iops": 1100.0}])
    console = Console(width=200, markup=False, record=True, force_terminal=False)
    console.print(points_table(fit))  # type: ignore[arg-type]
    text = console.export_text()
    assert "\x1b" not in text and "\x07" not in text
    assert "\\u{1b}[2J" in text and "[/]" in text


def test_a_field_past_csvs_limit_is_one_error_naming_its_line(tmp_path: Path) -> None:
    path = tmp_path / "points.csv"
    path.write_text("vm[0].job[0].iodepth,iops,label\n1,1000," + "x" * 200_000 + "\n", encoding="utf-8")
    with pytest.raises(CalibrationError, match=r"points.csv:2: field larger than field limit"):
        read_points(path)


def test_no_range_skips_the_ranges_and_json_carries_them(
    points: Path, scheduler: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["calibrate", str(FLASH4), "--measured", str(points), "--free", f"{LATENCY}=50us..500us",
            "--generations", "2", "--popsize", "4", "--scheduler", scheduler]  # fmt: skip
    skipped = tmp_path / "skipped.toml"
    assert cli.main([*argv, "--no-range", "-o", str(skipped)]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines()[0] == "runs: the fit up to 48, no ranges (--no-range)"
    assert "[range round" not in captured.err and "ranges:" not in captured.out
    text = skipped.read_text(encoding="utf-8")
    assert "# range" not in text and "# ranges:" not in text and re.search(r'^read_latency = "[\d.]+us"  # fitted on points\.csv', text, re.M)

    out = tmp_path / "json.toml"
    assert cli.main([*argv, "--range-seeds", "2", "--json", "-o", str(out)]) == 0
    captured = capsys.readouterr()
    assert "runs: the fit up to 48, the ranges up to 232 (2 seeds" in captured.err
    document = json.loads(captured.out)
    (value,) = document["values"]
    low, high = (float(x.removesuffix("us")) for x in value["range"])
    assert low <= float(value["value"].removesuffix("us")) <= high
    assert value["shown"] == f"{value['value']} ({value['range'][0]}–{value['range'][1]})"
    assert document["ranges"]["seeds"] == [12, 13] and 0 < document["ranges"]["runs"] <= 232
    assert document["ranges"]["dof"] == 7, "eight figures, one free value"
    assert f"# range {value['range'][0]}–{value['range'][1]};" in out.read_text(encoding="utf-8")


def test_the_ranges_runs_count_in_the_budget_and_need_two_seeds(
    points: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["calibrate", str(FLASH4), "--measured", str(points), "--free", f"{LATENCY}=50us..1ms", "-o", str(tmp_path / "x.toml")]
    # The fit alone, (10 + 1) x 20,100 x 4 = 884,400 runs, is within the million; the ranges'
    # (1 + 2 x 14) x 1,000 seeds x 4 = 116,000 more are not.
    assert cli.main([*argv, "--popsize", "20100", "--generations", "10", "--range-seeds", "1000"]) == 2
    err = capsys.readouterr().err
    assert "the fit would run up to 1,000,400 simulations" in err and "for the ranges with --range-seeds 1000" in err, err
    assert "--range-seeds or give --no-range" in err and err.count("\n") == 1
    assert not (tmp_path / "x.toml").exists()
    assert cli.main([*argv, "--range-seeds", "1"]) == 2
    assert "expected a count of seeds 2 to 1000, got 1" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([str(FLASH4), "--predict"], f"error: {FLASH4}: no fitted ranges in it or its bases: --predict runs a scenario"),
        (
            [str(FLASH4), "--predict", "--free", f"{LATENCY}=50us..1ms", "--popsize", "4", "--scheduler", "tcp://x:1"],
            "error: --predict runs a calibrated scenario and takes no --free, --popsize, --scheduler (a fit's options",
        ),
        ([str(FLASH4), "--free", f"{LATENCY}=50us..1ms"], "error: a fit needs --measured, -o (or give --predict"),
        (
            [str(FLASH4), "--measured", "m.csv", "--free", f"{LATENCY}=50us..1ms", "-o", "x.toml", "--replications", "3"],
            "error: --replications is --predict's: a fit runs each candidate at one seed",
        ),
        (
            [str(FLASH4), "--measured", "m.csv", "--free", f"{LATENCY}=50us..1ms", "-o", "x.toml", "--variant", "a", "--variant", "b"],
            "error: a fit takes one --variant, got 2: a, b",
        ),
    ],
)
def test_predict_and_fit_options_apart_get_one_message(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["calibrate", *argv]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(message), err


def test_predict_reads_a_range_marked_at_a_bound_and_leaves_out_a_vm_without_io(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A calibrated file's header as `sanlab calibrate` writes it (an end at the box's bound is
    marked), read through a file based on it: each end other than the fitted value runs once, the
    latency's ends bound the prediction (the latency rises with the service time, falls with the
    servers), and a VM that starts after the run's end is left out."""
    calibrated = tmp_path / "calibrated.toml"
    calibrated.write_text(
        "# ranges: the values within noise of the fit (written by hand for this test)\n"
        f"#   {LATENCY} = 180us (170us–190us)\n"
        "#   array[0].media.servers = 4 (3–4 bound)\n"
        f'schema_version = 1\nname = "calibrated"\nbase = "{FLASH4}"\n[[array]]\nname = "a"\n'
        'media = { kind = "flash", read_latency = "180us", write_latency = "20us", servers = 4, distribution = "exponential" }\n',
        encoding="utf-8",
    )
    study = tmp_path / "study.toml"
    late = '[[vm]]\nname = "late"\nhost = "h"\nvolume = "lun"\nadapter = { kind = "ideal" }\n'
    late += '[[vm.job]]\nname = "late_job"\nrw = "randread"\nbs = "4KiB"\niodepth = 1\nstartdelay = "10s"\n'
    study.write_text(
        'schema_version = 1\nname = "study"\nbase = "calibrated.toml"\n'
        '[[vm]]\nname = "vm"\nhost = "h"\nvolume = "lun"\nadapter = { kind = "ideal" }\n'
        '[[vm.job]]\nname = "job"\nrw = "randread"\nbs = "4KiB"\niodepth = 8\n' + late,
        encoding="utf-8",
    )
    assert cli.main(["calibrate", str(study), "--predict", "--replications", "2", "--workers", "1", "--quiet", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["ranges_from"] == str(calibrated)
    assert document["ends"] == [f"{LATENCY}=170us", f"{LATENCY}=190us", "array[0].media.servers=3"]
    assert {item["vm"] for item in document["figures"]} == {"vm"}
    (latency,) = [item for item in document["figures"] if item["figure"] == "mean"]
    low, high = latency["range"]
    assert low < latency["value"] < high
    # Three servers at 180 us serve 8 outstanding I/Os slower than 190 us on four: the top is theirs.
    with_three = statistics.fmean(
        float(sanlab.run(study, set={"array[0].media.servers": 3}, seed=seed).vms.set_index("name").lat_ms_mean["vm"])
        for seed in (11, 12)
    )
    assert high == pytest.approx(with_three, rel=1e-9)
