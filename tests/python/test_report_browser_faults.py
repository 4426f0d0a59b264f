"""A real run's report with faults in headless Chromium (offline): fault edges marked on the time
axes of the VM plots and of the path heatmap (swapped with the variant shown), and the failover
section's table. Uses the DevTools driver of test_report_browser."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sanlab.cli import main
from sanlab.report.figures import MAX_NAMED_VARIANTS, SAME_IOPS_TOLERANCE
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


FAULT_AT_S = 60.0
"""Every fault of the study starts here: a run a few seconds longer has them all."""

# Per plot: each panel's title by its x axis, each line's panel, legend name, colour and variant (the
# hover text's first part), and the legend as drawn (name, colour).
PANELS_JS = """
(key => {
  const gd = document.getElementById('plot-' + key);
  const titles = {};
  gd._fullLayout.annotations
    .filter(a => !(a.name || '').startsWith('fault'))
    .filter(a => a.xref.endsWith(' domain') && a.yref.endsWith(' domain'))
    .forEach(a => { titles[a.xref.split(' ')[0]] = a.text; });
  return {
    titles: Object.values(titles),
    lines: gd._fullData.map(t => ({
      panel: titles[t.xaxis], name: t.name, color: t.line.color,
      variant: t.hovertemplate.split(/ · |<br>/)[0],
    })),
    legend: Array.from(gd.querySelectorAll('.legend .traces'))
      .map(t => [t.textContent, t.querySelector('.legendlines path').style.stroke]),
  };
})
"""


@pytest.fixture(scope="module")
def study_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """All 30 variants of the failover study (six faults × five policies), cut short after the faults
    start."""
    out = tmp_path_factory.mktemp("failover-study") / "run"
    duration = f"{FAULT_AT_S + 4:g}s"
    assert main(["run", str(FAILOVER_STUDY), "--duration", duration, "--quiet", "--out", str(out)]) == 0
    return out


def _iops_by_group(run: Path) -> dict[str, dict[str, float]]:
    """Each `<fault>-<policy>` group's VM IOPS by policy, from the run folder."""
    groups: dict[str, dict[str, float]] = {}
    for variant in json.loads((run / "results.json").read_text())["variants"]:
        group, _, policy = variant["name"].rpartition("-")
        groups.setdefault(group, {})[policy] = sum(vm["iops"] for vm in variant["vms"])
    return groups


def test_the_study_is_drawn_and_summarised_per_fault(chromium: Chromium, study_run: Path) -> None:
    # One test, one page load: a 30-variant page takes seconds to draw.
    figures = load_report(chromium, study_run / "report.html", ARTIFACTS / "report-failover-study.png")
    groups = _iops_by_group(study_run)
    policies = list(next(iter(groups.values())))
    assert len(groups) * len(policies) == 30
    for key in ("vm-iops", "vm-latency", "latency-cdf"):
        found = chromium.evaluate(f"{PANELS_JS}('{key}')")
        assert found["titles"] == list(groups), key
        colors: dict[str, set[str]] = {}
        for group in groups:
            lines = [line for line in found["lines"] if line["panel"] == group]
            # Each panel: its fault's five policies, each named by the policy, no two alike in colour.
            assert [line["variant"] for line in lines] == [f"{group}-{policy}" for policy in policies], key
            assert [line["name"] for line in lines] == policies, key
            assert len({line["color"] for line in lines}) == len(policies), key
            for line in lines:
                colors.setdefault(line["name"], set()).add(line["color"])
        # A policy keeps its colour in every panel; the legend lists each policy once in it.
        assert all(len(found) == 1 for found in colors.values()), (key, colors)
        assert [name for name, _ in found["legend"]] == policies, key
        assert len({color for _, color in found["legend"]}) == len(policies), key
    # The summary: per fault, the policies within SAME_IOPS_TOLERANCE of its most IOPS.
    lines = chromium.evaluate("Array.from(document.querySelectorAll('#winners li')).map(l => l.textContent)")
    assert [line.split(":")[0] for line in lines] == list(groups)
    for line, (group, iops) in zip(lines, groups.items(), strict=True):
        best = max(iops.values())
        expected = [policy for policy, value in iops.items() if value >= best * (1 - SAME_IOPS_TOLERANCE)]
        named = line.removeprefix(f"{group}: ").split(" give")[0].replace(" and ", ", ").split(", ")
        assert named == expected, line
        assert not any(f"{fault}-{policy}" in line for fault in groups for policy in policies), line
    caption = next(figure["caption"] for figure in figures if figure["key"] == "overview")
    assert caption.count("settles at") <= MAX_NAMED_VARIANTS
    # The log axis of the degraded path's share is labelled with the numbers at its ticks.
    ticks = chromium.evaluate(
        "document.getElementById('plot-degraded-share')._fullLayout.yaxis._vals.map(v => [v.x, v.text])"
    )
    assert len(ticks) >= 3
    for exponent, text in ticks:
        assert float(text.replace(",", "")) == pytest.approx(10**exponent, rel=1e-6), ticks
    assert not _problems(chromium.events)
