"""docs/validation.md, "The tail against real devices": two SATA SSDs measured by fio at seven
queue depths (tests/data/tails/, SOURCES.md there), the model fitted on IOPS and mean latency at
three of them (scenarios/validation/tails_*.toml, written by `sanlab calibrate`), p99 and p99.9
predicted at all seven with 5 replications.

The page's tables are what this module prints (`.venv/bin/python tests/python/test_tail_validation.py`):
the tests fail when the page's rows differ from a run of the committed scenarios, or when the
measured points the fit read differ from the fio JSON files they were taken from.

Each calibrated file's header carries its fitted values' ranges (`#   KEY = VALUE (LOW–HIGH)`, as
`sanlab calibrate` writes them), computed again at the committed values on seeds 2-6 by
`sanlab.calibration.ranges`: the tests read them as `sanlab calibrate --predict` does, check that
their ends fit within noise and the values found just outside do not, and that the p99 over the
ranges (`--predict` on the `_depths` files) is what the page's second table gives, within the
seeds' noise, with each measured p99 placed where the page places it."""

from __future__ import annotations

import csv
import json
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from sanlab.calibrate import Calibration, local_mapper, read_points
from sanlab.calibration.inputs import FreeParam, parse_free
from sanlab.calibration.predict import fitted_ranges
from sanlab.calibration.ranges import range_seeds, within

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "tails"
SCENARIOS = ROOT / "scenarios" / "validation"
PAGE = ROOT / "docs" / "validation.md"
SECTION = "## The tail against real devices"

DEVICES = {"Intel D3-S4610": "intel_d3_s4610", "Samsung 860 PRO": "samsung_860pro"}
DEPTHS = (1, 2, 4, 8, 16, 32, 64)
FITTED = (1, 8, 64)
REPLICATIONS = 5
SEED = 1
"""The fits' seed (tails_sata_ssd.toml's `[run] seed`); their ranges were judged on seeds 2-6."""
RANGES = {
    "intel_d3_s4610": (("6", "6", "5", "7"), ("120.46us", "129.658us", "119.328us", "130.289us")),
    "samsung_860pro": (("6", "7", "5", "8"), ("93.4589us", "112.976us", "91.8041us", "115.012us")),
}
"""Per drive and free value (dies, a die's time): the range's low and high end in the calibrated
file's header, and the nearest values found outside it below and above."""
TAIL_TABLE = "| drive | depth | fit |"
SPREAD_TABLE = "| drive | depth | p99 measured |"


def measured(device: str, depth: int) -> dict[str, Any]:
    """One fio run's read figures, as fio 3.1 wrote them."""
    path = DATA / device / f"randread-{depth}-1.json"
    return json.loads(path.read_text(encoding="utf-8"))["jobs"][0]["read"]


def predicted(device: str) -> dict[int, dict[str, Any]]:
    """Each depth's VM figures and their 95 % intervals from the fitted model, 5 replications."""
    scenario = SCENARIOS / f"tails_{device}_depths.toml"
    done = subprocess.run(
        [sys.executable, "-m", "sanlab.cli", "run", str(scenario), "--replications", str(REPLICATIONS), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    variants = json.loads(done.stdout)["variants"]
    return {int(v["name"].removeprefix("qd")): v["vms"][0] for v in variants}


def _us(ms: float) -> str:
    return f"{ms * 1000:,.0f}"


def _error(ours: float, theirs: float) -> str:
    change = 100 * (ours / theirs - 1)
    return f"{'+' if change >= 0 else '−'}{abs(change):.1f} %"


def rows(name: str, device: str, figures: dict[int, dict[str, Any]]) -> list[str]:
    """The page's rows for one drive: measured against predicted, every latency in µs."""
    out = []
    for depth in DEPTHS:
        real = measured(device, depth)
        tail = real["clat_ns"]["percentile"]
        vm = figures[depth]
        cells = [name, str(depth), "fitted" if depth in FITTED else "held out"]
        cells.append(f"{real['lat_ns']['mean'] / 1000:,.0f} / {_us(vm['lat_ms']['mean'])}")
        for key, ours in (("99.000000", "p99"), ("99.900000", "p999")):
            theirs_ms = tail[key] / 1e6
            lo, hi = vm["ci95"]["lat_ms"][ours]
            cells.append(_us(theirs_ms))
            cells.append(f"{_us(vm['lat_ms'][ours])} ({_us(lo)}–{_us(hi)})")
            cells.append(_error(vm["lat_ms"][ours], theirs_ms))
        out.append("| " + " | ".join(cells) + " |")
    return out


def section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    assert SECTION in text, f"docs/validation.md has no section {SECTION!r}"
    return text.split(SECTION, 1)[1].split("\n## ", 1)[0]


def page_rows(name: str, table: str = TAIL_TABLE) -> list[str]:
    """The rows of one drive in the section's table whose header starts with `table`."""
    lines = section().splitlines()
    starts = [at for at, line in enumerate(lines) if line.startswith(table)]
    assert len(starts) == 1, f"the section should have one table headed {table!r}"
    rows = []
    for line in lines[starts[0] + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line.strip())
    return [row for row in rows if row.startswith(f"| {name} |")]


def calibrated(device: str) -> Path:
    return SCENARIOS / f"tails_{device}.toml"


def free_params(device: str) -> tuple[FreeParam, ...]:
    """The --free values of the command the calibrated file's header records."""
    header = calibrated(device).read_text(encoding="utf-8").splitlines()[1]
    words = shlex.split(header.removeprefix("# command: "))
    return tuple(parse_free(words[at + 1]) for at, word in enumerate(words) if word == "--free")


def committed(device: str, param: FreeParam) -> float:
    """The calibrated file's value of `param`, in its unit."""
    node: Any = tomllib.loads(calibrated(device).read_text(encoding="utf-8"))
    for part in param.key.split("."):
        name, _, index = part.partition("[")
        node = node[name] if not index else node[name][int(index.rstrip("]"))]
    return _number(str(node))


def _number(text: str) -> float:
    return float(re.sub(r"[a-z]+$", "", text))


def prediction(device: str) -> dict[int, dict[str, Any]]:
    """`sanlab calibrate …_depths.toml --predict --json`: each depth's VM p99 at the fit, its
    95 % interval over the seeds and its lowest and highest mean over the fit and the ranges' ends."""
    scenario = SCENARIOS / f"tails_{device}_depths.toml"
    done = subprocess.run(
        [sys.executable, "-m", "sanlab.cli", "calibrate", str(scenario), "--predict", "--json", "--quiet"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["replications"] == REPLICATIONS
    return {int(f["variant"].removeprefix("qd")): f for f in document["figures"] if f["figure"] == "p99"}


def where(measured_ms: float, figure: dict[str, Any]) -> tuple[str, float | None]:
    """Where a measured p99 lies: within the seeds' interval, within the fit's spread or beyond
    both, and then the error of the spread's nearest end (predicted − measured over measured)."""
    low, high = figure["ci95"]
    if low <= measured_ms <= high:
        return "within the seeds' interval", None
    low, high = figure["range"]
    if low <= measured_ms <= high:
        return "within the fit's spread", None
    nearest = low if measured_ms < low else high
    return "beyond both", nearest / measured_ms - 1


def spread_rows(name: str, device: str, figures: dict[int, dict[str, Any]]) -> list[str]:
    """The page's second table for one drive: the measured p99, the prediction at the fit with its
    seeds' interval, its spread over the fitted ranges, and where the measurement lies."""
    out = []
    for depth in DEPTHS:
        theirs_ms = measured(device, depth)["clat_ns"]["percentile"]["99.000000"] / 1e6
        figure = figures[depth]
        lo, hi = figure["ci95"]
        place, off = where(theirs_ms, figure)
        cells = [name, str(depth), _us(theirs_ms), f"{_us(figure['value'])} ({_us(lo)}–{_us(hi)})"]
        cells.append("–".join(_us(x) for x in figure["range"]))
        cells.append(place)
        cells.append("–" if off is None else _error(1 + off, 1))
        out.append("| " + " | ".join(cells) + " |")
    return out


@pytest.mark.parametrize("name", list(DEVICES))
def test_the_fitted_points_are_the_fio_files(name: str) -> None:
    device = DEVICES[name]
    with (DATA / f"{device}_points.csv").open(encoding="utf-8") as file:
        points = list(csv.DictReader(line for line in file if not line.startswith("#")))
    assert [int(p["vm[0].job[0].iodepth"]) for p in points] == list(DEPTHS)
    for point in points:
        depth = int(point["vm[0].job[0].iodepth"])
        real = measured(device, depth)
        assert point["iops"] == f"{real['iops']:.0f}"
        assert point["lat_ms"] == f"{real['lat_ns']['mean'] / 1e6:.4f}"
        assert int(point["weight"]) == (1 if depth in FITTED else 0)
        job = json.loads((DATA / device / f"randread-{depth}-1.json").read_text(encoding="utf-8"))["jobs"][0]
        options = job["job options"]
        assert (options["rw"], options["bs"], options["iodepth"], options["numjobs"]) == ("randread", "4k", str(depth), "1")


@pytest.mark.parametrize("name", list(DEVICES))
def test_the_page_prints_what_the_fitted_model_gives(name: str) -> None:
    device = DEVICES[name]
    expected = rows(name, device, predicted(device))
    assert page_rows(name) == expected, "\n".join(["the page's rows should be:", *expected])


@pytest.mark.parametrize("name", list(DEVICES))
def test_each_calibrated_file_carries_the_ranges_the_page_gives(name: str) -> None:
    """Read as `--predict` reads them, from the _depths file through its base; each range inside
    the fit's box, holding the committed value, and shown on the page as the header writes it."""
    device = DEVICES[name]
    source, ranges = fitted_ranges(SCENARIOS / f"tails_{device}_depths.toml")
    assert source == calibrated(device)
    free = free_params(device)
    assert [(r.key, r.value, r.low, r.high) for r in ranges] == [
        (param.key, param.format(committed(device, param)), low, high)
        for param, (low, high, _, _) in zip(free, RANGES[device], strict=True)
    ]
    text = section()
    for param, span in zip(free, ranges, strict=True):
        assert param.lo <= _number(span.low) <= committed(device, param) <= _number(span.high) <= param.hi
        line = f"{span.key} = {span.value} ({span.low}–{span.high})"
        assert line in text, f"the page should show the range {line!r}"


@pytest.mark.parametrize("name", list(DEVICES))
def test_the_ranges_ends_fit_within_noise_and_the_values_just_outside_do_not(name: str) -> None:
    """The rule of `sanlab.calibration.ranges` on the seeds the ranges were found on (60 runs of
    0.5 s at depths 1, 8 and 64)."""
    device = DEVICES[name]
    free = free_params(device)
    fitted = tuple(committed(device, param) for param in free)
    calibration = Calibration(
        str(SCENARIOS / "tails_sata_ssd.toml"),
        free,
        tuple(read_points(DATA / f"{device}_points.csv")),
        seed=SEED,
        variant="base",
    )
    candidates: list[tuple[float, ...]] = []
    expected: list[bool] = []
    for index, ends in enumerate(RANGES[device]):
        for end, keep in zip(ends, (True, True, False, False), strict=True):
            value = _number(end)
            if value != fitted[index]:
                candidates.append(tuple(value if i == index else v for i, v in enumerate(fitted)))
                expected.append(keep)
    judged = within(calibration, fitted, candidates, local_mapper, range_seeds(SEED, 5))
    for values, keep, got in zip(candidates, expected, judged, strict=True):
        assert got == keep, f"{values}: {'outside' if keep else 'inside'} the range, the header says {'inside' if keep else 'outside'}"


def _cells(row: str) -> list[str]:
    return [cell.strip() for cell in row.strip("|").split("|")]


def _numbers(cell: str) -> list[float]:
    return [float(x.replace(",", "")) for x in re.findall(r"[0-9][0-9,]*(?:\.[0-9]+)?", cell)]


@pytest.mark.parametrize("name", list(DEVICES))
def test_the_p99_over_the_fitted_ranges_is_what_the_page_says(name: str) -> None:
    """Each figure within the seeds' noise of the run (half its 95 % interval at the fit, and the
    page's rounding to 1 µs); where each measured p99 lies exactly as the run places it."""
    device = DEVICES[name]
    figures = prediction(device)
    expected = spread_rows(name, device, figures)
    page = page_rows(name, SPREAD_TABLE)
    assert len(page) == len(DEPTHS), "\n".join(["the page's rows should be:", *expected])
    for depth, row, wanted in zip(DEPTHS, page, expected, strict=True):
        got, want = _cells(row), _cells(wanted)
        figure = figures[depth]
        noise_us = 0.5 + 500 * (figure["ci95"][1] - figure["ci95"][0])
        assert got[:3] == want[:3], f"depth {depth}: {row} should be {wanted}"
        for cell, ours in ((got[3], [figure["value"], *figure["ci95"]]), (got[4], figure["range"])):
            assert _numbers(cell) == pytest.approx([1000 * x for x in ours], abs=noise_us), f"depth {depth}: {row} should be {wanted}"
        assert got[5] == want[5], f"depth {depth}: the measured p99 lies {want[5]}, the page says {got[5]}"
        if want[6] != "–":
            theirs_us = _numbers(got[2])[0]
            (off,) = _numbers(want[6])
            assert _numbers(got[6]) == pytest.approx([off], abs=100 * noise_us / theirs_us + 0.05)
            assert got[6][0] == want[6][0], f"depth {depth}: the nearest end's error's sign"


if __name__ == "__main__":
    for drive, folder in DEVICES.items():
        print("\n".join(rows(drive, folder, predicted(folder))))
    print()
    for drive, folder in DEVICES.items():
        print("\n".join(spread_rows(drive, folder, prediction(folder))))
