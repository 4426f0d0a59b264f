"""The calibrated PARDA study's array (scenarios/studies/parda/paper_hosts_calibrated.toml) is
the minimum of its fit: no neighbour of the committed values fits Table 3 better, and the fit's
error is what the file and docs/studies/parda_calibrated.md say."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from sanlab.calibrate import Calibration, local_mapper, read_points
from sanlab.calibration.fit import Evaluator, rms_error
from sanlab.calibration.inputs import parse_free

pytestmark = pytest.mark.e2e

PARDA = Path(__file__).resolve().parents[2] / "scenarios" / "studies" / "parda"
WINDOW = "array[0].media.reorder_window=1..32:int"
OVERHEAD = "array[0].media.command_overhead=0us..2ms"


def test_the_committed_fit_is_the_minimum_of_its_objective() -> None:
    media = tomllib.loads((PARDA / "paper_hosts_calibrated.toml").read_text(encoding="utf-8"))["array"][0]["media"]
    window, overhead_us = float(media["reorder_window"]), float(media["command_overhead"].removesuffix("us"))
    points = tuple(read_points(PARDA / "table3_uncontrolled.csv"))
    calibration = Calibration(
        scenario=str(PARDA / "paper_hosts.toml"),
        free=(parse_free(WINDOW), parse_free(OVERHEAD)),
        points=points,
        seed=1,
    )
    neighbours = [
        (window - 1, overhead_us),
        (window + 1, overhead_us),
        (window, overhead_us * 0.95),
        (window, overhead_us * 1.05),
    ]
    (fitted, figures), *around = Evaluator(calibration, local_mapper, lambda best, n: None).run(
        [(window, overhead_us), *neighbours]
    )
    for (values, (objective, _)) in zip(neighbours, around, strict=True):
        assert objective > fitted, f"{values} fits Table 3 better ({objective:.4g}) than the committed values ({fitted:.4g})"
    assert rms_error(fitted, points) < 0.02, rms_error(fitted, points)
    for name, measured in points[0].figures:
        assert figures[0][name] == pytest.approx(measured, rel=0.04), name
