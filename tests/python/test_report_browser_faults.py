"""A real run's report with faults in headless Chromium (offline): fault edges marked on the time
axes of the VM plots and of the path heatmap (swapped with the variant shown), and the failover
section's table. Uses the DevTools driver of test_report_browser."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sanlab.cli import main
from test_report_browser import (
    ARTIFACTS,
    Chromium,
    _assert_rendered,
    _click,
    _problems,
    chromium,
    load_report,
)

__all__ = ["chromium"]  # the fixture, used by the tests below

pytestmark = pytest.mark.e2e

FAILOVER_STUDY = Path(__file__).resolve().parents[2] / "scenarios" / "studies" / "failover.toml"
VARIANTS = ("notice-fixed", "flapping-alua_rr")

# Names, x positions and texts of the fault marks (annotations and dashed lines) of one plot.
FAULT_MARKS_JS = """
(key => {
  const gd = document.getElementById('plot-' + key);
  const named = items => (items || []).filter(i => (i.name || '').startsWith('fault'));
  return {
    annotations: named(gd._fullLayout.annotations).map(a => [a.x, a.text]),
    lines: named(gd._fullLayout.shapes).length,
    drawn: Array.from(gd.querySelectorAll('.annotation-text')).map(t => t.textContent)
      .filter(t => t === '✕' || t === '✓').length,
  };
})
"""


@pytest.fixture(scope="module")
def failover_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two variants of the failover study: a path down with notice under FIXED, a flapping path
    under RR over the preferred array."""
    out = tmp_path_factory.mktemp("failover") / "run"
    args = ["run", str(FAILOVER_STUDY), "--quiet", "--out", str(out)]
    for variant in VARIANTS:
        args += ["--variant", variant]
    assert main(args) == 0
    return out


def _edges(run: Path) -> dict[str, list[dict[str, Any]]]:
    """Each variant's fault edges, as the engine wrote them into the run folder."""
    results = json.loads((run / "results.json").read_text())
    return {variant["name"]: variant.get("faults", []) for variant in results["variants"]}


def test_fault_edges_are_marked_on_the_time_axes(chromium: Chromium, failover_run: Path) -> None:
    figures = load_report(chromium, failover_run / "report.html", ARTIFACTS / "report-failover.png")
    _assert_rendered(
        figures,
        {"overview", "paths", "path-timeline", "vm-iops", "vm-latency", "latency-cdf", "device-queues"},
    )
    edges = _edges(failover_run)
    assert all(edges[variant] for variant in VARIANTS), "the engine reported the faults"
    # The variants share the VM plots: one mark per time and phase over both.
    expected = sorted({(edge["t_s"], edge["phase"]) for found in edges.values() for edge in found})
    symbols = {"start": "✕", "end": "✓"}
    for key in ("vm-iops", "vm-latency", "device-queues"):
        marks = chromium.evaluate(f"{FAULT_MARKS_JS}('{key}')")
        assert sorted(marks["annotations"]) == sorted([t, symbols[phase]] for t, phase in expected), key
        assert marks["drawn"] == len(expected), f"{key}: every mark is drawn"
        assert marks["lines"] >= len(expected), key
    caption = next(figure["caption"] for figure in figures if figure["key"] == "vm-iops")
    assert "Dashed lines mark faults" in caption


def test_the_heatmap_marks_the_faults_of_the_variant_shown(chromium: Chromium, failover_run: Path) -> None:
    load_report(chromium, failover_run / "report.html", ARTIFACTS / "report-failover-top.png")
    edges = _edges(failover_run)
    plot = "document.getElementById('plot-path-timeline')"
    shown = chromium.evaluate(f"{plot}._fullData.filter(t => t.visible === true).map(t => t.name)")
    assert shown == ["notice-fixed"]
    marks = chromium.evaluate(f"{FAULT_MARKS_JS}('path-timeline')")
    assert len(marks["annotations"]) == len(edges["notice-fixed"]) == 2
    _click(chromium, f"{plot}.querySelector('.updatemenu-header')")
    _click(chromium, f"Array.from({plot}.querySelectorAll('.updatemenu-dropdown-button'))"
                     ".find(b => b.textContent === 'flapping-alua_rr')")  # fmt: skip
    marks = chromium.evaluate(f"{FAULT_MARKS_JS}('path-timeline')")
    assert len(marks["annotations"]) == len(edges["flapping-alua_rr"]) > 10
    assert marks["drawn"] == len(edges["flapping-alua_rr"])
    assert not _problems(chromium.events)


def test_the_failover_section_lists_the_faults(chromium: Chromium, failover_run: Path) -> None:
    load_report(chromium, failover_run / "report.html", ARTIFACTS / "report-failover-section.png")
    rows = chromium.evaluate(
        "Array.from(document.querySelectorAll('#faults tbody tr')).map(r => "
        "Array.from(r.cells).map(c => c.textContent))"
    )
    # One start and one end for the path down; the flaps as one start and one end row.
    assert [row[:4] for row in rows] == [
        ["notice-fixed", "60.000", "start", "path_down"],
        ["notice-fixed", "120.000", "end", "path_down"],
        ["flapping-alua_rr", "60.000", "start", "path_down"],
        ["flapping-alua_rr", "62.000", "end", "path_down"],
    ]
    assert rows[0][6] == "0.010", "marked dead 10 ms after the fault (the notice delay)"
    visible = chromium.evaluate("document.getElementById('section-failover').getBoundingClientRect().height")
    assert visible > 100
