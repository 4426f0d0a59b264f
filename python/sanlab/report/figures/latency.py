"""The latency distribution: every job's completion latency percentiles as a CDF."""

from __future__ import annotations

import math
import operator
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sanlab.document import Document, sorted_percentiles
from sanlab.formatting import format_ms
from sanlab.report.figures.common import (
    DASHES,
    MAX_LINES,
    Figure,
    doc_groups,
    groups_text,
    latency_axis,
    layout,
    update_axes,
)
from sanlab.report.figures.grid import Grid, Line, grid_figure, group_facets, legend_name

CDF_PERCENTILE_TICKS = (0.0, 50.0, 90.0, 99.0, 99.9, 99.99)

CDF_PANEL_PX = 340


def _nines(percentile: float) -> float:
    """The CDF's y position of a percentile: 90 → 1, 99 → 2, 99.9 → 3 (the tail gets room)."""
    return -math.log10(1.0 - percentile / 100.0)


def _job_curves(doc: Document) -> list[tuple[str, str, list[tuple[float, float]]]]:
    """(variant, `job direction`, [(percentile, latency ms)]) of every job direction with I/Os."""
    curves: list[tuple[str, str, list[tuple[float, float]]]] = []
    # Each list of fio's percentile keys put in numeric order once: jobs share theirs, and a sort
    # per job took a third of this figure at 10,000 VMs.
    orders: dict[tuple[str, ...], list[tuple[str, float]]] = {}
    for variant in doc["variants"]:
        for job in variant["jobs"]:
            for direction in ("read", "write"):
                lat_ns = job[direction]["lat_ns"]
                percentiles = lat_ns.get("percentile", {})
                keys = tuple(percentiles)
                order = orders.get(keys)
                if order is None:
                    order = orders[keys] = [(key, float(key)) for key, _ in sorted_percentiles(percentiles)]
                points = [(at, percentiles[key] / 1e6) for key, at in order if percentiles[key] > 0]
                if lat_ns["N"] and points:
                    curves.append((variant["name"], f"{job['name']} {direction}", points))
    return curves


def latency_cdf_figure(doc: Document, colors: Mapping[str, str]) -> Figure | None:
    """Completion latency percentiles of every job and direction, from fio's percentile list."""
    curves = _job_curves(doc)
    if not curves:
        return None
    per_variant = Counter(variant for variant, _, _ in curves)  # counted once: 20,000 curves at 10,000 VMs
    every_curve = curves  # the axis range and the worst tail are over all, drawn or not
    summaries = []
    banded = {}
    for variant, count in per_variant.items():
        if count > MAX_LINES:
            # 10,000 curves cover each other: the band shows all, the top p99s the tail.
            banded[variant] = everyone = [curve for curve in curves if curve[0] == variant]
            top = set(map(id, sorted(everyone, key=_p99_ms, reverse=True)[:MAX_LINES]))
            curves = [curve for curve in curves if curve[0] != variant or id(curve) in top]
            summaries.append(
                f"{variant}: the {MAX_LINES} of its {count:,} job curves with the highest p99; "
                "the band spans all."
            )
    styles = {label: DASHES[i % len(DASHES)] for i, label in enumerate(dict.fromkeys(c[1] for c in curves))}
    groups = doc_groups(doc)
    lines = [
        Line(
            variant,
            label,
            legend_name(groups, variant) + ("" if per_variant[variant] == 1 else f" · {label}"),
            colors[variant],
            styles[label],
        )
        for variant, label, _ in curves
    ]
    points_of = {(variant, label): points for variant, label, points in curves}
    facets = group_facets(groups, lines)
    lowest = min(min(map(_latency, points)) for _, _, points in every_curve)
    highest = max(max(map(_latency, points)) for _, _, points in every_curve)
    x_axis = latency_axis("completion latency, ms", lowest, highest)
    grid = Grid(len(facets), 1)
    fig, panels, height_px = grid_figure(
        grid,
        [facet.title for facet in facets],
        ["percentile of I/Os, %"],
        x_axis.pop("title_text"),
        single_panel_px=CDF_PANEL_PX,
    )
    shown_in_legend: set[str] = set()
    for index, facet in enumerate(facets):
        row, column = grid.cell(index, 0)
        for variant in facet.variants:
            if variant in banded:
                band = _percentile_band(variant, banded[variant], colors[variant])
                fig["data"].append(panels.place(band, row, column))
        for line in facet.lines:
            points = points_of[(line.variant, line.entity)]
            name = f"{line.variant} · {line.entity}" if per_variant[line.variant] > 1 else line.variant
            curve = {
                "type": "scatter",
                "x": [latency for _, latency in points],
                "y": [_nines(p) for p, _ in points],
                "customdata": [p for p, _ in points],
                "mode": "lines+markers",
                "line": {"color": line.color, "width": 2, "dash": line.dash, "shape": "hv"},
                "marker": {"size": 5},
                "name": line.legend,
                "legendgroup": line.legend,
                "showlegend": line.legend not in shown_in_legend,
                "hovertemplate": f"{name}<br>p%{{customdata}}: %{{x:.4~g}} ms<extra></extra>",
            }
            fig["data"].append(panels.place(curve, row, column))
            shown_in_legend.add(line.legend)
    update_axes(fig, "x", x_axis)
    update_axes(
        fig,
        "y",
        {
            "tickvals": [_nines(p) for p in CDF_PERCENTILE_TICKS],
            "ticktext": [f"{p:g}" for p in CDF_PERCENTILE_TICKS],
            "range": [-0.1, _nines(99.99) + 0.2],
        },
    )
    title = "Latency percentiles (CDF)"
    layout(fig, title, height_px)
    worst = max(every_curve, key=lambda curve: curve[2][-1][1])
    caption = (
        "A point (x, y) reads: y % of I/Os completed within x ms; the y axis stretches the tail "
        "(90, 99, 99.9 get equal room). Further left is faster; the longest tail is variant "
        f"{worst[0]} ({worst[1]}): p{worst[2][-1][0]:g} = {format_ms(worst[2][-1][1])} ms."
    )
    if groups is not None:
        caption += f" {groups_text(groups)}"
    caption += "".join(f" {summary}" for summary in summaries)
    return Figure("latency-cdf", title, caption, fig)


_percentile = operator.itemgetter(0)
"""A CDF point's percentile."""

_latency = operator.itemgetter(1)
"""A CDF point's latency, ms."""


def _p99_ms(curve: tuple[str, str, list[tuple[float, float]]]) -> float:
    """A CDF curve's p99 in ms (its highest point below p99 if fio's list lacks 99)."""
    below = [latency for percentile, latency in curve[2] if percentile <= 99.0]
    return below[-1] if below else curve[2][0][1]


def _percentile_band(
    variant: str, curves: Sequence[tuple[str, str, list[tuple[float, float]]]], color: str
) -> dict[str, Any]:
    """A shaded band from the fastest to the slowest curve at each percentile."""
    # Curves with the same percentiles as one array each: the fastest and slowest at each point
    # from numpy (10,000 curves at 10,000 VMs), not from a list per percentile.
    alike: dict[tuple[float, ...], list[list[float]]] = {}
    for _, _, points in curves:
        alike.setdefault(tuple(map(_percentile, points)), []).append(list(map(_latency, points)))
    fastest: dict[float, float] = {}
    slowest: dict[float, float] = {}
    for at, latencies in alike.items():
        table = np.array(latencies)
        lows, highs = table.min(axis=0).tolist(), table.max(axis=0).tolist()
        for percentile, low, high in zip(at, lows, highs, strict=True):
            fastest[percentile] = min(low, fastest.get(percentile, low))
            slowest[percentile] = max(high, slowest.get(percentile, high))
    percentiles = sorted(fastest)
    fastest_ms = [fastest[p] for p in percentiles]
    slowest_ms = [slowest[p] for p in percentiles]
    return {
        "type": "scatter",
        "x": fastest_ms + slowest_ms[::-1],
        "y": [_nines(p) for p in percentiles] + [_nines(p) for p in percentiles[::-1]],
        "fill": "toself",
        "fillcolor": color,
        "opacity": 0.2,
        "line": {"width": 0},
        "mode": "lines",
        "name": f"{variant} · all {len(curves):,} (band)",
        "hoverinfo": "skip",
    }
