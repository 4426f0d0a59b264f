"""The calibrated studies' fitted files are the minimum of their fits: no neighbour of the
committed values fits the measurement better, the fitted points are as close as the study pages
say, and the points left out of the fit (weight 0) are predicted as closely as they say.

- PARDA on the paper's array (docs/studies/parda_calibrated.md): Table 3, uncontrolled.
- An NVMe SSD's queue-depth curve (docs/studies/nvme_calibrated.md): three of ezFIO's nine points.

A change to the models that moves a minimum fails here; the file is then written again with the
`sanlab calibrate` command its header records."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sanlab.calibrate import Calibration, local_mapper, read_points
from sanlab.calibration.fit import Evaluator, rms_error
from sanlab.calibration.inputs import FreeParam, parse_free

pytestmark = pytest.mark.e2e

STUDIES = Path(__file__).resolve().parents[2] / "scenarios" / "studies"


@dataclass(frozen=True)
class Fitted:
    scenario: Path
    calibrated: Path
    measured: Path
    free: tuple[str, ...]
    fitted_error: float
    """The largest relative error a fitted figure may have."""
    predicted_error: float
    """The largest relative error a figure of a weight-0 point may have."""

    def value(self, param: FreeParam) -> float:
        node: Any = tomllib.loads(self.calibrated.read_text(encoding="utf-8"))
        for part in param.key.split("."):
            name, _, index = part.partition("[")
            node = node[name] if not index else node[name][int(index.rstrip("]"))]
        return float(re.sub(r"[a-z]+$", "", str(node)))


PARDA = Fitted(
    STUDIES / "parda" / "paper_hosts.toml",
    STUDIES / "parda" / "paper_hosts_calibrated.toml",
    STUDIES / "parda" / "table3_uncontrolled.csv",
    ("array[0].media.reorder_window=1..32:int", "array[0].media.command_overhead=0us..2ms"),
    fitted_error=0.04,
    predicted_error=0.0,
)
NVME = Fitted(
    STUDIES / "flash" / "firecuda530.toml",
    STUDIES / "flash" / "firecuda530_calibrated.toml",
    STUDIES / "flash" / "firecuda530_ezfio.csv",
    ("array[0].cores.cores_per_controller=4..256:int:log", "array[0].cores.owner_time=5us..500us:log"),
    fitted_error=0.07,
    predicted_error=0.12,
)


@pytest.mark.parametrize("study", [PARDA, NVME], ids=["parda", "nvme"])
def test_the_committed_fit_is_the_minimum_of_its_objective(study: Fitted) -> None:
    free = tuple(parse_free(text) for text in study.free)
    fitted = tuple(study.value(param) for param in free)
    points = tuple(read_points(study.measured))
    calibration = Calibration(scenario=str(study.scenario), free=free, points=points, seed=1)
    neighbours = []
    for index, param in enumerate(free):
        step = 1.0 if param.integer else 0.05 * fitted[index]
        for moved in (fitted[index] - step, fitted[index] + step):
            if param.lo <= moved <= param.hi:
                neighbours.append(tuple(moved if i == index else v for i, v in enumerate(fitted)))
    (objective, figures), *around = Evaluator(calibration, local_mapper, lambda best, n: None).run(
        [fitted, *neighbours]
    )
    for values, (other, _) in zip(neighbours, around, strict=True):
        assert other > objective, f"{values} fits better ({other:.4g}) than the committed {fitted} ({objective:.4g})"
    assert rms_error(objective, points) < study.fitted_error
    for point, simulated in zip(points, figures, strict=True):
        tolerance = study.fitted_error if point.weight > 0 else study.predicted_error
        for name, measured in point.figures:
            assert simulated[name] == pytest.approx(measured, rel=tolerance), f"{point.where} {name}"
