"""The calibrated studies' fitted values, each with the range the study page gives it: the
committed value lies in its range, the range's ends fit the measurement within noise of the fit
and the values found just outside them do not (the rule of `sanlab.calibration.ranges`, on the
same seeds the page's ranges were found on), the fitted points are as close as the pages say, and
the points left out of the fit (weight 0) are predicted as closely as they say.

The calibrated file's header carries the same ranges, as `sanlab calibrate --predict` reads them.

- PARDA on the paper's array (docs/studies/parda_calibrated.md): Table 3, uncontrolled.
- An NVMe SSD's queue-depth curve (docs/studies/nvme_calibrated.md): three of ezFIO's nine points.

A change to the models that moves a fit or its range fails here; the file is then written again
with the `sanlab calibrate` command its header records, and the page's ranges with it."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sanlab.calibrate import Calibration, dask_mapper, local_mapper, read_points
from sanlab.calibration.fit import Evaluator, rms_error
from sanlab.calibration.inputs import FreeParam, parse_free
from sanlab.calibration.predict import fitted_ranges
from sanlab.calibration.ranges import range_seeds, within

pytestmark = pytest.mark.e2e

STUDIES = Path(__file__).resolve().parents[2] / "scenarios" / "studies"
SEED = 1
"""The seed of the committed fits (their scenarios' `[run] seed`); the ranges were judged on
seeds 2-6."""


@dataclass(frozen=True)
class Fitted:
    scenario: Path
    calibrated: Path
    measured: Path
    free: tuple[str, ...]
    ranges: tuple[tuple[str, str, str | None, str | None], ...]
    """Per free value, as the page gives it: the range's low and high end, and the nearest value
    found outside it below and above (None: the range reaches the box's end that way)."""
    fitted_error: float
    """The largest relative error a fitted figure may have."""
    predicted_error: float
    """The largest relative error a figure of a weight-0 point may have."""

    def value(self, param: FreeParam) -> float:
        node: Any = tomllib.loads(self.calibrated.read_text(encoding="utf-8"))
        for part in param.key.split("."):
            name, _, index = part.partition("[")
            node = node[name] if not index else node[name][int(index.rstrip("]"))]
        return _number(str(node))

    def calibration(self) -> Calibration:
        free = tuple(parse_free(text) for text in self.free)
        return Calibration(str(self.scenario), free, tuple(read_points(self.measured)), seed=SEED)


def _number(text: str) -> float:
    return float(re.sub(r"[a-z]+$", "", text))


PARDA = Fitted(
    STUDIES / "parda" / "paper_hosts.toml",
    STUDIES / "parda" / "paper_hosts_calibrated.toml",
    STUDIES / "parda" / "table3_uncontrolled.csv",
    ("array[0].media.reorder_window=1..32:int", "array[0].media.command_overhead=0us..2ms"),
    ranges=(("13", "17", "12", "18"), ("815.456us", "898.799us", "807.799us", "907.32us")),
    fitted_error=0.04,
    predicted_error=0.0,
)
NVME = Fitted(
    STUDIES / "flash" / "firecuda530.toml",
    STUDIES / "flash" / "firecuda530_calibrated.toml",
    STUDIES / "flash" / "firecuda530_ezfio.csv",
    ("array[0].cores.cores_per_controller=4..256:int:log", "array[0].cores.owner_time=5us..500us:log"),
    ranges=(("12", "121", "11", "126"), ("20.0025us", "74.7932us", "18.4209us", "81.2148us")),
    fitted_error=0.07,
    predicted_error=0.12,
)


@pytest.fixture(scope="module")
def mapper() -> Iterator[Any]:
    """Two Dask workers for the ranges' runs (PARDA's are 300 simulated seconds each)."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, dashboard_address=None, scheduler_kwargs={"dashboard_address": ":0"}
        ) as cluster,
        Client(cluster) as client,
    ):
        yield dask_mapper(client)


@pytest.mark.parametrize("study", [PARDA, NVME], ids=["parda", "nvme"])
def test_the_committed_fit_matches_its_points_as_the_page_says(study: Fitted) -> None:
    calibration = study.calibration()
    fitted = tuple(study.value(param) for param in calibration.free)
    ((objective, figures),) = Evaluator(calibration, local_mapper, lambda best, n: None).run([fitted])
    assert rms_error(objective, calibration.points) < study.fitted_error
    for point, simulated in zip(calibration.points, figures, strict=True):
        tolerance = study.fitted_error if point.weight > 0 else study.predicted_error
        for name, measured in point.figures:
            assert simulated[name] == pytest.approx(measured, rel=tolerance), f"{point.where} {name}"


@pytest.mark.parametrize("study", [PARDA, NVME], ids=["parda", "nvme"])
def test_each_fitted_value_lies_in_the_range_its_page_gives(study: Fitted, mapper: Any) -> None:
    calibration = study.calibration()
    fitted = tuple(study.value(param) for param in calibration.free)
    candidates: list[tuple[float, ...]] = []
    expected: list[bool] = []
    for index, (param, ends) in enumerate(zip(calibration.free, study.ranges, strict=True)):
        low, high, out_low, out_high = (None if end is None else _number(end) for end in ends)
        assert low is not None and high is not None and low <= fitted[index] <= high, (param.key, ends)
        for value, keep in ((low, True), (high, True), (out_low, False), (out_high, False)):
            if value is not None and value != fitted[index]:
                candidates.append(tuple(value if i == index else v for i, v in enumerate(fitted)))
                expected.append(keep)
        if out_low is None:
            assert low == param.lo, f"{param.key}: a range with nothing outside below reaches the box's end"
        if out_high is None:
            assert high == param.hi, f"{param.key}: a range with nothing outside above reaches the box's end"
    judged = within(calibration, fitted, candidates, mapper, range_seeds(SEED, 5))
    for values, keep, got in zip(candidates, expected, judged, strict=True):
        assert got == keep, f"{values}: {'outside' if keep else 'inside'} the range, the page says {'inside' if keep else 'outside'}"


@pytest.mark.parametrize(
    ("study", "scenario"),
    [(PARDA, STUDIES / "parda_calibrated.toml"), (NVME, STUDIES / "flash" / "firecuda530_calibrated.toml")],
    ids=["parda", "nvme"],
)
def test_the_calibrated_file_carries_the_ranges_its_page_gives(study: Fitted, scenario: Path) -> None:
    """Read as `--predict` reads them: from the study's scenario, through its bases."""
    source, ranges = fitted_ranges(scenario)
    assert source == study.calibrated
    free = study.calibration().free
    assert [(r.key, r.value, r.low, r.high) for r in ranges] == [
        (param.key, param.format(study.value(param)), low, high)
        for param, (low, high, _, _) in zip(free, study.ranges, strict=True)
    ]
