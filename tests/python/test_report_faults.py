"""Faults in the HTML report without a browser: marks at each fault edge on the time axes, the
failover section's tables, the conservation check counting failed I/Os; none of it for a healthy run."""

from __future__ import annotations

import re
from typing import Any

from conftest import with_cores
from fault_doc import with_faults, with_replication_fault
from sanlab.report import ReportRun, render_report
from sanlab.report.figures import (
    FAULT_MARK_PX,
    FAULT_MARKS_TEXT,
    core_util_figure,
    path_timeline_figure,
    series_frame,
    variant_colors,
    vm_iops_figure,
)
from test_report import GROUPS, _grouped

MANIFEST = {"argv": ["sanlab", "run", "tiny.toml"], "wall_s": 0.5}


def _marks(layout: Any, kind: str) -> list[Any]:
    return [item for item in layout[kind] if (item.name or "").startswith("fault")]


def test_vm_iops_marks_each_fault_edge_once(doc: dict[str, Any]) -> None:
    faulty = with_faults(doc)
    figure = vm_iops_figure(faulty, series_frame(faulty), variant_colors(faulty))
    assert figure is not None
    annotations = _marks(figure.plot.layout, "annotations")
    # 5 s, 10 s, 15 s, then four flaps (start and end each): 11 edges, one line and one mark each.
    assert [(a.x, a.text) for a in annotations][:4] == [(5.0, "✕"), (10.0, "✓"), (15.0, "✕"), (20.0, "✕")]
    assert len(annotations) == len(_marks(figure.plot.layout, "shapes")) == 11
    assert annotations[0].hovertext == "5.000 s: path_down start, path loc-0 (notice) in rr"
    assert FAULT_MARKS_TEXT in figure.caption


def test_edges_at_one_time_share_a_mark(doc: dict[str, Any]) -> None:
    faulty = with_faults(doc, "rr")
    with_faults(faulty, "latency")
    figure = vm_iops_figure(faulty, series_frame(faulty), variant_colors(faulty))
    assert figure is not None
    annotations = _marks(figure.plot.layout, "annotations")
    assert len(annotations) == 11
    assert annotations[0].hovertext.endswith("in rr, latency")


def test_heatmaps_mark_the_shown_variants_faults(doc: dict[str, Any]) -> None:
    faulty = with_cores(with_faults(doc))
    series = series_frame(faulty)
    for figure in (path_timeline_figure(faulty, series), core_util_figure(faulty, series)):
        assert figure is not None
        # The variant with faults is shown first; the drop-down swaps the marks with the variant.
        assert len(_marks(figure.plot.layout, "annotations")) == 11, figure.key
        buttons = figure.plot.layout.updatemenus[0].buttons
        marks = {
            b.label: [a for a in b.args[1]["annotations"] if a.get("name", "").startswith("fault")]
            for b in buttons
        }
        assert (len(marks["rr"]), len(marks["latency"])) == (11, 0)


def test_failover_section(doc: dict[str, Any]) -> None:
    page = render_report([ReportRun("run", with_faults(doc), MANIFEST)])
    assert '<section id="section-failover"><h2>Faults and failover</h2>' in page
    assert page.count('<tr class="fault-start">') == 3 and page.count('<tr class="fault-end">') == 2
    assert "<td>not back</td>" in page.replace("<td class=num>", "<td>")
    assert re.search(
        r"<td>path</td><td>loc-0</td><td class=num>0</td><td class=num>0</td><td class=num>25</td>", page
    )
    assert "No I/O lost: issued = completed + failed + in flight" in page


def test_healthy_runs_have_no_fault_parts(doc: dict[str, Any]) -> None:
    page = render_report([ReportRun("run", doc, MANIFEST)])
    assert "section-failover" not in page
    assert "fault start" not in page and FAULT_MARKS_TEXT not in page
    assert "No I/O lost: issued = completed + in flight" in page


def test_lost_io_is_flagged_with_failed_counted(doc: dict[str, Any]) -> None:
    faulty = with_faults(doc)
    faulty["variants"][0]["conservation"][0]["failed"] = 1
    page = render_report([ReportRun("run", faulty, MANIFEST)])
    assert "I/O conservation broken in 1 components" in page
    assert "failed 1, in flight 32" in page


def test_a_fault_step_has_its_own_mark(doc: dict[str, Any]) -> None:
    faulty = with_replication_fault(doc)
    figure = vm_iops_figure(faulty, series_frame(faulty), variant_colors(faulty))
    assert figure is not None
    marks = [(a.x, a.text, a.font.color) for a in _marks(figure.plot.layout, "annotations")]
    assert marks == [(10.0, "✕", "#cf222e"), (15.0, "●", "#9a6700"), (30.0, "✓", "#1a7f37")]
    page = render_report([ReportRun("run", faulty, MANIFEST)])
    assert '<tr class="fault-mediator">' in page


def test_the_events_table_folds_a_flapping_path(doc: dict[str, Any]) -> None:
    page = render_report([ReportRun("run", with_faults(doc), MANIFEST)])
    table = page[page.index('<table class="data" id="psp-events">') :]
    table = table[: table.index("</table>")]
    assert "<th>repeats</th>" in table
    assert "<td>×4 every 4 s, last 32.500</td>" in table
    assert table.count("<tr>") == 1 + 2 + 2 + 1, "head, the notice's two, the flaps' two, latency's drop"


def test_grouped_panels_mark_their_own_variants_faults(doc: dict[str, Any]) -> None:
    faulty = with_faults(_grouped(doc), "silent-rr")
    figure = vm_iops_figure(faulty, series_frame(faulty), variant_colors(faulty))
    assert figure is not None
    annotations = _marks(figure.plot.layout, "annotations")
    shapes = _marks(figure.plot.layout, "shapes")
    # The 11 edges in silent's panel (the second), none in notice's.
    assert len(annotations) == len(shapes) == 11
    places = {(a.xref, a.yref) for a in annotations}
    assert places == {(s.xref, s.yref) for s in shapes} == {("x2", "y2 domain")}
    # The panel titles sit over the marks.
    titles = [a for a in figure.plot.layout.annotations if a.text in GROUPS]
    assert [a.yshift for a in titles] == [FAULT_MARK_PX] * len(GROUPS)


def test_sixteen_degrading_paths_each_get_a_panel() -> None:
    """degraded_many.toml: 16 devices, each with a path degrading; the gap between their panels
    shrinks so that all 16 fit (0.08 of the height each would not: a run failed to write its
    report)."""
    from pathlib import Path

    from sanlab import engine
    from sanlab.report.figures import degraded_share_figure

    doc = engine.run(Path(__file__).resolve().parents[1] / "data" / "scenarios" / "degraded_many.toml")
    figure = degraded_share_figure(doc, variant_colors(doc))
    assert figure is not None
    spec = figure.plot.to_dict()
    axes = sorted(key for key in spec["layout"] if key.startswith("yaxis"))
    assert len(axes) == 16
    lows = sorted(spec["layout"][axis]["domain"][0] for axis in axes)
    assert lows[0] >= 0 and all(b > a for a, b in zip(lows, lows[1:], strict=False))
    page = render_report([ReportRun("run", doc, MANIFEST)])
    assert 'id="degraded-share"' in page or "Degraded path" in page
