"""Variants in parallel (`sanlab run --jobs N`): the same document whatever N, in scenario order;
the first error in scenario order; a variant's independent parts on the cores left. (Ctrl-C with several jobs: test_progress.py.) Nothing here
depends on how fast the machine is: the runs are short."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sanlab import _core
from sanlab.cli import main

ROOT = Path(__file__).resolve().parents[2]
METRO_STUDY = ROOT / "scenarios" / "studies" / "metro_cluster_psp.toml"
VDBENCH_SERIES = ROOT / "scenarios" / "examples" / "vdbench_series.toml"
ESTATE = ROOT / "tests" / "data" / "scenarios" / "estate_parts.toml"
WALL = re.compile(r'"wall_s": ?[-+0-9.eE]+')
"""The engine's own run time: the one field that differs between any two runs."""


def _without_wall(text: str) -> str:
    assert WALL.search(text), "every variant has its wall time"
    return WALL.sub('"wall_s": 0', text)


def _run_json(capsys: pytest.CaptureFixture[str], args: list[str]) -> str:
    assert main(["run", *args, "--json"]) == 0
    return _without_wall(capsys.readouterr().out)


@pytest.mark.e2e
def test_the_document_is_the_same_with_one_job_two_and_every_core(capsys: pytest.CaptureFixture[str]) -> None:
    args = [str(METRO_STUDY), "--duration", "3s"]
    one = _run_json(capsys, [*args, "--jobs", "1"])
    assert len(json.loads(one)["variants"]) > 2, "several variants, to run at once"
    assert _run_json(capsys, [*args, "--jobs", "2"]) == one
    assert _run_json(capsys, args) == one, "the default: one per core"


@pytest.mark.e2e
def test_independent_parts_on_the_cores_left_give_the_same_document(capsys: pytest.CaptureFixture[str]) -> None:
    # Three clusters that share nothing, one variant: with 2 or 3 jobs its parts run at once.
    one = _run_json(capsys, [str(ESTATE), "--jobs", "1"])
    assert _run_json(capsys, [str(ESTATE), "--jobs", "2"]) == one
    assert _run_json(capsys, [str(ESTATE), "--jobs", "3"]) == one
    assert main(["validate", str(ESTATE)]) == 0
    assert "base: 3 independent parts (no host, path or array shared)" in capsys.readouterr().out


@pytest.mark.e2e
def test_vdbench_curve_points_read_their_max_run_as_one_after_the_other_does() -> None:
    # The series' curve points take their rate from the max run before them.
    def document(jobs: int) -> str:
        return _without_wall(_core.run(str(VDBENCH_SERIES), None, [], None, "2s", None, jobs))

    one = document(1)
    names = [variant["name"] for variant in json.loads(one)["variants"]]
    assert any("%" in name for name in names), names
    assert document(3) == one


def test_jobs_below_one_is_one_line_naming_the_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(METRO_STUDY), "--jobs", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--jobs: expected 1 to 1024, got 0; the nearest is 1" in err, err
    with pytest.raises(
        _core.ScenarioError, match="expected at least 1 variant at once, got 0; the nearest is 1"
    ):
        _core.run(str(METRO_STUDY), None, [], None, "1s", None, 0)


@pytest.mark.e2e
def test_an_error_in_a_later_variant_is_reported_as_one_job_reports_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # A curve point without its max run fails when its turn comes, after a variant that runs.
    variants = ["--variant", "xfer xfersize=4k", "--variant", "curve_(50%) xfersize=8k"]
    errors = []
    for jobs in ("1", "2"):
        out = tmp_path / jobs
        run = [
            "run",
            str(VDBENCH_SERIES),
            *variants,
            "--duration",
            "1s",
            "--jobs",
            jobs,
            "--quiet",
            "--out",
            str(out),
        ]
        assert main(run) == 2
        errors.append(capsys.readouterr().err)
        assert not out.exists(), "a failed run leaves no folder"
    assert errors[0] == errors[1]
    assert "variant `curve_(50%) xfersize=8k` is a point of a vdbench curve" in errors[0], errors[0]
