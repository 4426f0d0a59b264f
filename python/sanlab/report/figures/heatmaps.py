"""Heatmaps of rows (paths, cores) over time, one variant shown at a time and chosen from a drop-down, with
its events and faults marked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sanlab.document import FaultReport, PspEventReport
from sanlab.report.figures.common import (
    TIME_AXIS,
    Figure,
    colorscale_of,
    layout,
    new_figure,
    update,
    update_axes,
)
from sanlab.report.figures.marks import (
    MAX_MARK_SHAPES,
    event_marks,
    fault_marks,
    mark_shapes,
    mark_traces,
    overlay_axis,
)


@dataclass(frozen=True)
class Panel:
    """One heatmap of a variant in a variant-selectable heatmap figure."""

    variant: str
    rows: list[str]
    times_s: np.ndarray
    z: np.ndarray
    """Rows × times, NaN where a row has no sample (a gap, as plotly draws a missing cell): plotly
    takes an array as it is and writes it packed, where nested lists cost it a check and a copy per
    cell. In `float32`, seven significant digits, more than a colour and its hover label show."""
    events: list[PspEventReport]
    faults: Sequence[FaultReport] = ()


def variant_heatmaps(
    key: str,
    title: str,
    caption: str,
    panels: Sequence[Panel],
    *,
    row_title: str,
    value_title: str,
    hovertemplate: str,
    colorscale: str,
    zmax: float | None = None,
    selected: str | None = None,
) -> Figure:
    """Heatmaps (rows × time) of several variants, one shown at a time, chosen from a drop-down."""
    fig = new_figure()
    shown = next((i for i, panel in enumerate(panels) if panel.variant == selected), 0)
    # Each variant's marks as shapes the drop-down swaps, or past MAX_MARK_SHAPES as traces it shows
    # with the variant's heatmap.
    marks = []
    mark_owners: list[int] = []
    drawn_traces: list[dict[str, Any]] = []
    for index, panel in enumerate(panels):
        drawn = event_marks(panel.events) + fault_marks((edge, panel.variant) for edge in panel.faults)
        if len(drawn) > MAX_MARK_SHAPES:
            marks.append(mark_shapes(()))
            traces = mark_traces(drawn, xaxis="x", yaxis="y2")
            drawn_traces += [{**trace, "visible": index == shown} for trace in traces]
            mark_owners += [index] * len(traces)
        else:
            marks.append(mark_shapes(drawn))
    scale = colorscale_of(colorscale)
    for index, panel in enumerate(panels):
        heatmap = {
            "type": "heatmap",
            "z": panel.z,
            "x": panel.times_s,
            "y": panel.rows,
            "colorscale": scale,
            "zmin": 0,
            "zmax": zmax,
            "colorbar": {"title": {"text": value_title}, "thickness": 12},
            "hovertemplate": hovertemplate,
            "name": panel.variant,
            "visible": index == shown,
            "ygap": 1,
        }
        fig["data"].append({key: value for key, value in heatmap.items() if value is not None})
    update_axes(fig, "y", {"autorange": "reversed", "type": "category", "title": {"text": row_title}})
    update_axes(fig, "x", {"title": {"text": TIME_AXIS}})
    if drawn_traces:
        update(fig["layout"], {"yaxis2": overlay_axis("y")})
        fig["data"] += drawn_traces
    rows = max(len(panel.rows) for panel in panels)
    layout(fig, f"{title}: {panels[shown].variant}", 200 + 18 * rows)
    marks_shown = {"shapes": marks[shown][0], "annotations": marks[shown][1]}
    update(fig["layout"], {key: value for key, value in marks_shown.items() if value})
    update(fig["layout"], {"margin": {"t": 100}})
    if len(panels) > 1:
        update(
            fig["layout"],
            {
                "updatemenus": [
                    {
                        "type": "dropdown",
                        "active": shown,
                        "x": 1.0,
                        "xanchor": "right",
                        "y": 1.0,
                        "yanchor": "bottom",
                        "pad": {"b": 28},
                        "buttons": [
                            {
                                "label": panel.variant,
                                "method": "update",
                                "args": [
                                    {"visible": [i == index for i in [*range(len(panels)), *mark_owners]]},
                                    {
                                        "title.text": f"<b>{title}: {panel.variant}</b>",
                                        "shapes": marks[index][0],
                                        "annotations": marks[index][1],
                                    },
                                ],
                            }
                            for index, panel in enumerate(panels)
                        ],
                    }
                ]
            },
        )
    return Figure(key, title, caption, fig)


def pivot(frame: pd.DataFrame, order: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Rows (in `order`, then any others) × sample times of a one-variant, one-metric series, the
    mean where a row has several values at a time."""
    present = set(frame["name"].unique())
    names = [name for name in order if name in present]
    names += sorted(present.difference(order))
    # By position with numpy: pandas' pivot_table took a sixth of the report's time at 30 variants.
    column = frame["name"]
    if isinstance(column.dtype, pd.CategoricalDtype):
        # Each category's row, then each row's by its code: not a lookup of every row's text.
        of_category = pd.Index(names, dtype=object).get_indexer(column.cat.categories.astype(object))
        codes = column.cat.codes.to_numpy()
        rows = np.where(codes >= 0, of_category[codes], -1)
    else:
        rows = pd.Index(names, dtype=object).get_indexer(column.to_numpy(dtype=object))
    times_s, columns = np.unique(frame["t_s"].to_numpy(dtype=float), return_inverse=True)
    sums = np.zeros((len(names), len(times_s)))
    counts = np.zeros_like(sums)
    np.add.at(sums, (rows, columns), frame["value"].to_numpy(dtype=float))
    np.add.at(counts, (rows, columns), 1.0)
    with np.errstate(invalid="ignore"):
        return names, times_s, (sums / counts).astype(np.float32)
