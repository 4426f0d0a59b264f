"""A flapping fault's thousands of edges in the HTML report: past MAX_MARK_SHAPES marks a plot draws
them as a bounded number of scatter traces, not a plotly shape and annotation per edge (which took
minutes and gigabytes: issue 27), and every edge is still drawn, in the traces' x data."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import with_cores
from fault_doc import with_faults
from sanlab.export.runfolder import write_run_folder
from sanlab.report import ReportRun, render_report
from sanlab.report.figures import (
    core_util_figure,
    path_timeline_figure,
    series_frame,
    variant_colors,
    vm_iops_figure,
)
from sanlab.report.figures.marks import MAX_HOVER_TRACES, MAX_MARK_SHAPES, Mark, mark_traces
from test_report import _grouped
from test_report_browser import ARTIFACTS, Chromium, _click, chromium, load_report

__all__ = ["chromium"]  # the fixture, used by the browser test below

MANIFEST = {"argv": ["sanlab", "run", "tiny.toml"], "wall_s": 0.5}

FLAP_S = 0.002
"""The flapping link's period: latency up for 1 ms in every 2 ms, from FLAP_FROM_S."""

FLAP_FROM_S = 34.0
"""After with_faults' last edge: no flap shares a mark with its edges."""


def _flapping(doc: dict[str, Any], flaps: int, variant_name: str = "rr") -> dict[str, Any]:
    """The document with `with_faults`'s three faults in `variant_name` and a link latency flapping
    `flaps` times from FLAP_FROM_S: 2 * `flaps` more edges."""
    with_faults(doc, variant_name)
    for variant in doc["variants"]:
        if variant["name"] == variant_name:
            for n in range(flaps):
                for phase, t_s in (
                    ("start", FLAP_FROM_S + n * FLAP_S),
                    ("end", FLAP_FROM_S + (n + 0.5) * FLAP_S),
                ):
                    variant["faults"].append(
                        {
                            "t_s": round(t_s, 6),
                            "kind": "link_latency",
                            "phase": phase,
                            "target": "path rem-1",
                            "paths": ["rem-1"],
                            "detail": "5 ms",
                            "max_io_latency_ms": 5.0,
                        }
                    )
    return doc


def _edge_times(doc: dict[str, Any], variant_name: str, phase: str) -> set[float]:
    variant = next(v for v in doc["variants"] if v["name"] == variant_name)
    return {edge["t_s"] for edge in variant["faults"] if edge["phase"] == phase}


def _fault_shapes(layout: Any) -> list[Any]:
    """The fault marks among a layout's (or a drop-down's) shapes and annotations."""
    items = [item for kind in ("shapes", "annotations") for item in layout[kind]]
    items = [item if isinstance(item, dict) else item.to_plotly_json() for item in items]
    return [item for item in items if (item.get("name") or "").startswith("fault")]


def _fault_traces(plot: Any) -> list[Any]:
    return [trace for trace in plot.data if (trace.name or "").startswith("fault")]


def _symbols(plot: Any, phase: str) -> list[Any]:
    return [t for t in _fault_traces(plot) if t.name == f"fault {phase}" and t.mode == "text"]


@pytest.mark.parametrize("flaps", [1_000, 10_000])
def test_thousands_of_edges_are_a_bounded_number_of_traces(doc: dict[str, Any], flaps: int) -> None:
    faulty = _flapping(doc, flaps)
    figure = vm_iops_figure(faulty, series_frame(faulty), variant_colors(faulty))
    assert figure is not None
    plot = figure.plot
    # Not a shape or annotation per edge: per phase a trace of lines and one of symbols per
    # hover text (the time aside): with_faults' path down with notice, silent flaps and slower
    # link, the flapping link; whatever the number of flaps.
    assert _fault_shapes(plot.layout) == [], figure.key
    traces = _fault_traces(plot)
    assert sorted((t.name, t.mode) for t in traces) == [
        ("fault end", "lines"),
        *[("fault end", "text")] * 3,
        ("fault start", "lines"),
        *[("fault start", "text")] * 4,
    ]
    # Every edge is drawn: its time in the symbols' x data, twice in the lines' (a zig-zag
    # through -1 and 2 on an axis 0-1 over the panel's).
    for phase in ("start", "end"):
        expected = _edge_times(faulty, "rr", phase)
        symbols = _symbols(plot, phase)
        assert set(np.concatenate([t.x for t in symbols]).tolist()) == expected
        (lines,) = [t for t in traces if t.name == f"fault {phase}" and t.mode == "lines"]
        assert len(lines.x) == 2 * len(expected) and set(lines.x.tolist()) == expected
        assert set(lines.y.tolist()) == {-1, 2}
    axis = plot.layout[traces[0].yaxis.replace("y", "yaxis")]
    assert (axis.overlaying, tuple(axis.range), axis.visible) == ("y", (0, 1), False)
    # One hover text per kind of edge (each symbol's time added by the template), not per edge.
    (flap_starts,) = [t for t in _symbols(plot, "start") if "rem-1" in t.hovertemplate]
    assert (
        flap_starts.hovertemplate == "%{x:.3f} s: link_latency start, path rem-1 (5 ms) in rr<extra></extra>"
    )
    assert flap_starts.hovertext is None and len(flap_starts.x) == flaps


def test_a_heatmap_swaps_the_traced_marks_with_its_variant(doc: dict[str, Any]) -> None:
    faulty = with_cores(_flapping(doc, 2_000))
    series = series_frame(faulty)
    for figure in (path_timeline_figure(faulty, series), core_util_figure(faulty, series)):
        assert figure is not None
        plot = figure.plot
        assert _fault_shapes(plot.layout) == [], figure.key
        traces = _fault_traces(plot)
        assert len(traces) == 9 and all(t.visible for t in traces), "rr, with the faults, shown first"
        assert set(np.concatenate([t.x for t in _symbols(plot, "start")]).tolist()) == _edge_times(
            faulty, "rr", "start"
        )
        buttons = {b.label: b.args[0]["visible"] for b in plot.layout.updatemenus[0].buttons}
        assert all(len(visible) == len(plot.data) for visible in buttons.values())
        marks = [i for i, trace in enumerate(plot.data) if trace in traces]
        assert [buttons["rr"][i] for i in marks] == [True] * len(marks)
        assert [buttons["latency"][i] for i in marks] == [False] * len(marks)
        # The other variant's heatmap has no mark, drawn or traced.
        latency = next(b for b in plot.layout.updatemenus[0].buttons if b.label == "latency")
        assert _fault_shapes({kind: latency.args[1][kind] for kind in ("shapes", "annotations")}) == []


def test_grouped_panels_trace_on_their_own_axes(doc: dict[str, Any]) -> None:
    faulty = _flapping(_grouped(doc), 1_000, "silent-rr")
    figure = vm_iops_figure(faulty, series_frame(faulty), variant_colors(faulty))
    assert figure is not None
    plot = figure.plot
    traces = _fault_traces(plot)
    assert len(traces) == 9 and {t.xaxis for t in traces} == {"x2"}, "silent's panel, the second"
    (overlay,) = {t.yaxis for t in traces}
    assert plot.layout[overlay.replace("y", "yaxis")].overlaying == "y2"
    # The panel's own y axis (a data trace's) is not the overlay.
    assert overlay not in {t.yaxis for t in plot.data if t not in traces}


def test_up_to_the_limit_marks_stay_shapes(doc: dict[str, Any]) -> None:
    # with_faults' 11 edges plus flaps: 11 + 2 * 44 = 99 marks, one under MAX_MARK_SHAPES.
    faulty = _flapping(doc, (MAX_MARK_SHAPES - 11) // 2)
    figure = vm_iops_figure(faulty, series_frame(faulty), variant_colors(faulty))
    assert figure is not None
    marks = len(_fault_shapes(figure.plot.layout)) // 2
    assert marks == 11 + 2 * ((MAX_MARK_SHAPES - 11) // 2) <= MAX_MARK_SHAPES
    assert _fault_traces(figure.plot) == []


def test_many_hover_texts_are_one_trace_with_a_text_per_mark() -> None:
    marks = [
        Mark(float(n), "✕", "#cf222e", f"path p-{n} down", 1.5, "dash", 0.6, "fault start")
        for n in range(500)
    ]
    traces = mark_traces(marks)
    assert len(marks) > MAX_HOVER_TRACES and len(traces) == 2
    symbols = traces[1]
    assert symbols["hovertext"][7] == "7.000 s: path p-7 down" and len(symbols["x"]) == 500


def test_a_page_of_thousands_of_edges(doc: dict[str, Any]) -> None:
    page = render_report([ReportRun("run", _flapping(doc, 5_000), MANIFEST)])
    # No shape per edge anywhere on the page: the few fault shapes left are none.
    assert page.count('"name":"fault start"') <= 20
    assert "section-failover" in page


# The ✕ and ✓ text points of a plot's fault traces that Chromium drew, and its fault shapes.
DRAWN_JS = """
(key => {
  const gd = document.getElementById('plot-' + key);
  const symbols = Array.from(gd.querySelectorAll('.textpoint text')).map(t => t.textContent);
  return {
    starts: symbols.filter(t => t === '✕').length,
    ends: symbols.filter(t => t === '✓').length,
    shapes: (gd._fullLayout.shapes || []).filter(s => (s.name || '').startsWith('fault')).length,
  };
})
"""


def test_traced_marks_render_in_the_browser(chromium: Chromium, doc: dict[str, Any], tmp_path: Path) -> None:
    faulty = _flapping(doc, 2_000)
    started = datetime(2026, 11, 26, 2, 30, tzinfo=UTC)
    write_run_folder(faulty, tmp_path / "run", argv=["sanlab"], started=started, wall_s=0.1)
    load_report(chromium, tmp_path / "run" / "report.html", ARTIFACTS / "report-fault-edges.png")
    starts, ends = len(_edge_times(faulty, "rr", "start")), len(_edge_times(faulty, "rr", "end"))
    for key in ("vm-iops", "path-timeline"):
        drawn = chromium.evaluate(f"{DRAWN_JS}('{key}')")
        assert drawn == {"starts": starts, "ends": ends, "shapes": 0}, key
    # The drop-down's other variant hides rr's traced marks.
    plot = "document.getElementById('plot-path-timeline')"
    _click(chromium, f"{plot}.querySelector('.updatemenu-header')")
    _click(chromium, f"Array.from({plot}.querySelectorAll('.updatemenu-dropdown-button'))"
                     ".find(b => b.textContent === 'latency')")  # fmt: skip
    assert chromium.evaluate(f"{DRAWN_JS}('path-timeline')") == {"starts": 0, "ends": 0, "shapes": 0}
