"""docs/validation.md, "The tail against real devices": two SATA SSDs measured by fio at seven
queue depths (tests/data/tails/, SOURCES.md there), the model fitted on IOPS and mean latency at
three of them (scenarios/validation/tails_*.toml, written by `sanlab calibrate`), p99 and p99.9
predicted at all seven with 5 replications.

The page's table is what this module prints (`.venv/bin/python tests/python/test_tail_validation.py`):
the tests fail when the page's rows differ from a run of the committed scenarios, or when the
measured points the fit read differ from the fio JSON files they were taken from."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

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


def page_rows(name: str) -> list[str]:
    text = PAGE.read_text(encoding="utf-8")
    assert SECTION in text, f"docs/validation.md has no section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return [line.strip() for line in section.splitlines() if line.startswith(f"| {name} |")]


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


if __name__ == "__main__":
    for drive, folder in DEVICES.items():
        print("\n".join(rows(drive, folder, predicted(folder))))
