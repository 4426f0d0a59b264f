"""The report's figures are plain data handed to plotly.js unchecked: each is what plotly's own
checked figure of it would write (nothing plotly would refuse, add or change), and its subplots
are laid out as plotly's make_subplots lays them out."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest
from plotly.subplots import make_subplots

from conftest import with_cores, with_hosts, with_injector
from fault_doc import with_faults, with_replication_fault
from sanlab.report.figures import (
    Figure,
    core_util_figure,
    degraded_share_figure,
    device_queue_figure,
    host_flow_control_figure,
    injector_figure,
    latency_cdf_figure,
    overview_figure,
    packed,
    path_timeline_figure,
    paths_figure,
    series_frame,
    variant_colors,
    vm_iops_figure,
    vm_latency_figure,
)
from sanlab.report.figures.common import colorscale_of, update
from sanlab.report.figures.subplots import subplots
from test_report import _grouped, _many
from test_report_fault_edges import _flapping
from test_report_intervals import _replicated


def _figures(doc: dict[str, Any]) -> list[Figure]:
    """Every figure the page draws of `doc`."""
    colors, series = variant_colors(doc), series_frame(doc)
    drawn: list[Figure | None] = [
        overview_figure(doc, colors),
        paths_figure(doc),
        path_timeline_figure(doc, series),
        degraded_share_figure(doc, colors),
        vm_iops_figure(doc, series, colors),
        vm_latency_figure(doc, series, colors),
        latency_cdf_figure(doc, colors),
        device_queue_figure(doc, series, colors),
        host_flow_control_figure(doc, series, colors),
        injector_figure(doc, colors),
        core_util_figure(doc, series),
    ]
    return [figure for figure in drawn if figure is not None]


def _as_written(figure: dict[str, Any] | go.Figure) -> Any:
    """A figure as the page's JSON holds it, keys in any order."""
    if isinstance(figure, go.Figure):
        return json.loads(pio.to_json(figure))
    return json.loads(pio.to_json(packed(figure), validate=False))


DOCS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "plain": lambda doc: doc,
    "cores, hosts and the injector": lambda doc: with_injector(with_hosts(with_cores(doc))),
    "grouped": _grouped,
    "faults": with_faults,
    "replication fault": with_replication_fault,
    "marks past MAX_MARK_SHAPES": lambda doc: _flapping(doc, 120),
    "replicated": _replicated,
    "30 variants": lambda doc: _many(doc, 15),
}


@pytest.mark.parametrize("made", list(DOCS.values()), ids=list(DOCS))
def test_plotly_checks_every_figure_and_writes_it_unchanged(
    doc: dict[str, Any], made: Callable[[dict[str, Any]], dict[str, Any]]
) -> None:
    figures = _figures(made(doc))
    assert len(figures) >= 5
    for figure in figures:
        # go.Figure checks every property (raising on one plotly does not know) and coerces values.
        checked = figure.plot
        assert isinstance(checked, go.Figure)
        assert _as_written(figure.spec) == _as_written(checked), figure.key


def test_packing_writes_arrays_as_plotly_does() -> None:
    arrays = {
        "x": np.arange(5, dtype=np.int64),
        "y": np.linspace(0.0, 1.0, 5),
        "z": np.ones((2, 3), dtype=np.float32),
        "text": [np.arange(2, dtype=np.int64)],
    }
    figure = {"data": [{"type": "heatmap", **arrays}], "layout": {"xaxis": {"range": np.array([0.0, 1.0])}}}
    checked = _as_written(go.Figure(figure))
    checked["layout"].pop("template")  # plotly's default, which every report figure replaces
    assert _as_written(figure) == checked
    assert packed(figure)["data"][0]["x"]["dtype"] == "i1"  # narrowed as plotly narrows it


GRIDS = [
    {"rows": rows, "cols": cols, "vertical_spacing": spacing, "horizontal_spacing": 0.03}
    for rows, cols in itertools.product(range(1, 8), range(1, 4))
    for spacing in (None, 0.02, min(0.08, 1 / max(rows - 1, 1)))
] + [
    # The overview, the path maps side by side and stacked, the path health figure.
    {"rows": 1, "cols": 2, "shared_yaxes": True, "horizontal_spacing": 0.04, "subplot_titles": ("a", "b")},
    {"rows": 1, "cols": 2, "shared_yaxes": True, "horizontal_spacing": 0.12, "vertical_spacing": 0.12,
     "subplot_titles": ("a", "b")},
    {"rows": 2, "cols": 1, "shared_xaxes": True, "horizontal_spacing": 0.12, "vertical_spacing": 0.12,
     "subplot_titles": ("a", "b")},
    {"rows": 12, "cols": 1, "shared_xaxes": True, "vertical_spacing": 0.08},
    {"rows": 3, "cols": 3, "shared_xaxes": True, "shared_yaxes": True, "subplot_titles": ("a", "", "c", "d")},
    {"rows": 12, "cols": 3, "vertical_spacing": 75 / 2000, "horizontal_spacing": 0.03},
]  # fmt: skip


@pytest.mark.parametrize("arguments", GRIDS)
def test_subplots_are_laid_out_as_plotly_lays_them_out(arguments: dict[str, Any]) -> None:
    expected = make_subplots(**arguments).to_plotly_json()["layout"]
    expected.pop("template")
    assert subplots(**arguments).layout == expected


def test_subplots_refuse_what_plotly_refuses() -> None:
    with pytest.raises(ValueError, match="cannot be greater"):
        make_subplots(rows=14, cols=1, vertical_spacing=0.08)
    with pytest.raises(ValueError, match="cannot be greater"):
        subplots(14, 1, vertical_spacing=0.08)


def test_subplots_name_each_panels_axes() -> None:
    grid = subplots(2, 3)
    assert grid.axes(1, 1) == ("xaxis", "yaxis") and grid.refs(1, 1) == ("x", "y")
    assert grid.axes(2, 1) == ("xaxis4", "yaxis4") and grid.refs(2, 3) == ("x6", "y6")
    with pytest.raises(IndexError):
        grid.axes(3, 1)


def test_update_merges_as_plotly_updates() -> None:
    margin = {"l": 1, "t": 2}
    layout: dict[str, Any] = {"margin": {}}
    update(layout, {"margin": margin, "title": {"text": None}, "height": 500})
    update(layout, {"margin": {"t": 9}, "height": None})
    assert layout == {"margin": {"l": 1, "t": 9}}
    assert margin == {"l": 1, "t": 2}, "an update never changes the dict it was given"
    checked = go.Figure(layout={"margin": {"l": 1, "t": 2}, "title": {"text": None}, "height": 500})
    checked.update_layout(margin={"t": 9}, height=None)
    assert checked.to_plotly_json()["layout"] == {
        **layout,
        "template": checked.layout.template.to_plotly_json(),
    }


@pytest.mark.parametrize("name", ["Blues", "OrRd", "YlOrRd", "blues"])
def test_colour_scales_are_plotlys(name: str) -> None:
    assert colorscale_of(name) == go.Heatmap(colorscale=name).to_plotly_json()["colorscale"]
