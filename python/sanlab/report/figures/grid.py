"""Small multiples of time lines: panels per metric and per group of variants (or per variant), shared
axes, reference lines and fault marks; `time_lines` draws such a figure from the time series."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sanlab.document import Document, FaultReport
from sanlab.report.figures.common import (
    MARGINS_PX,
    MAX_LINES,
    TIME_AXIS,
    Figure,
    Spec,
    doc_groups,
    groups_text,
    join_names,
    layout,
    line_style,
    top_of_each,
    update,
    variant_dashes,
)
from sanlab.report.figures.marks import (
    FAULT_MARKS_TEXT,
    MAX_MARK_SHAPES,
    fault_edges,
    fault_marks,
    mark_shapes,
    mark_traces,
    overlay_axis,
)
from sanlab.report.figures.replicas import (
    band_caption,
    band_index,
    band_legend_trace,
    band_trace,
    replica_ranges,
    replicated,
)
from sanlab.report.figures.subplots import Subplots, subplots
from sanlab.report.groups import Groups

OVERLAP_TOLERANCE = 0.005
"""Lines within this relative difference are named as overlapping in a time-series caption."""

ENTITY_PLURALS = {"vm": "VMs"}
"""Plurals of entity kinds that are not the kind and an s."""

MAX_FACET_COLUMNS = 3
"""Small multiples wrap after this many panels side by side."""

SINGLE_PANEL_PX = 250
"""Height of a panel when a figure has one per metric; small multiples' are FACET_PANEL_PX."""

FACET_PANEL_PX = 190

PANEL_GAP_PX = 75
"""Between rows of panels: room for the time labels, the fault marks and the title of the next."""

FAULT_MARK_PX = 18
"""Height of a ✕ or ✓ over a panel."""


@dataclass(frozen=True)
class Line:
    """One line of a time-line or CDF panel: a variant's entity, its legend entry and style."""

    variant: str
    entity: str
    legend: str
    color: str
    dash: str


@dataclass(frozen=True)
class Facet:
    """One small panel (one per metric) of a figure: its title and lines."""

    title: str
    lines: list[Line]

    @property
    def variants(self) -> list[str]:
        return list(dict.fromkeys(line.variant for line in self.lines))


@dataclass(frozen=True)
class Grid:
    """Small multiples: facets in rows of at most MAX_FACET_COLUMNS, each facet a column of one
    panel per metric."""

    facets: int
    metrics: int

    @property
    def columns(self) -> int:
        return min(self.facets, MAX_FACET_COLUMNS)

    @property
    def rows(self) -> int:
        return -(-self.facets // self.columns) * self.metrics

    def cell(self, facet: int, metric: int) -> tuple[int, int]:
        """(row, column), from 1, of a facet's panel of a metric."""
        return facet // self.columns * self.metrics + metric + 1, facet % self.columns + 1


def grid_figure(
    grid: Grid,
    titles: Sequence[str],
    axis_titles: Sequence[str],
    x_title: str,
    *,
    single_panel_px: int = SINGLE_PANEL_PX,
    marks_above: bool = False,
) -> tuple[Spec, Subplots, int]:
    """An empty figure of the grid's panels, the panels, and its height in px (`single_panel_px`
    per panel when there is one facet). Every panel shares the x axis, a metric's panels their y
    axis (labelled in the first column); each facet's title is over its first panel (over the
    fault marks there with `marks_above`), x labels under its last."""
    panel_px = single_panel_px if grid.facets == 1 else FACET_PANEL_PX
    plot_px = grid.rows * panel_px + (grid.rows - 1) * PANEL_GAP_PX
    panels = subplots(
        grid.rows,
        grid.columns,
        vertical_spacing=PANEL_GAP_PX / plot_px,
        horizontal_spacing=0.03,
    )
    fig = panels.figure()
    axes: dict[str, dict[str, Any]] = {}
    title_annotations = []
    used = set()
    first_y = [panels.refs(*grid.cell(0, metric))[1] for metric in range(grid.metrics)]
    for facet, title in enumerate(titles):
        last_in_column = facet + grid.columns >= grid.facets
        for metric, axis_title in enumerate(axis_titles):
            row, col = grid.cell(facet, metric)
            used.add((row, col))
            x_name, y_name = panels.axes(row, col)
            bottom = metric == grid.metrics - 1
            own_x, own_y = panels.refs(row, col)
            axes[x_name] = {
                "matches": None if (row, col) == (1, 1) else "x",
                "showticklabels": bottom,
                "title": {"text": x_title if bottom and last_in_column else None},
            }
            axes[y_name] = {
                "matches": None if own_y == first_y[metric] else first_y[metric],
                "showticklabels": col == 1,
                "title": {"text": axis_title if col == 1 else None},
                "rangemode": "tozero",
            }
            if title and metric == 0:
                title_annotations.append(
                    {
                        "text": title,
                        "xref": f"{own_x} domain",
                        "yref": f"{own_y} domain",
                        "x": 0.0,
                        "y": 1.0,
                        "xanchor": "left",
                        "yanchor": "bottom",
                        "yshift": FAULT_MARK_PX if marks_above else 0,
                        "showarrow": False,
                        "font": {"size": 13},
                    }
                )
    for row in range(1, grid.rows + 1):
        for col in range(1, grid.columns + 1):
            if (row, col) not in used:
                x_name, y_name = panels.axes(row, col)
                axes[x_name] = {"visible": False}
                axes[y_name] = {"visible": False}
    update(fig["layout"], axes)
    if title_annotations:
        fig["layout"]["annotations"] = fig["layout"].get("annotations", []) + title_annotations
    return fig, panels, 140 + plot_px


def _line_facets(
    doc: Document,
    variants: Sequence[str],
    names: Mapping[str, Sequence[str]],
    colors: Mapping[str, str],
    groups: Groups | None,
) -> list[Facet]:
    """A time-line figure's panels. With one entity per variant: a panel per group of variants (or
    one for all without `groups`), a line per variant in its colour, named by its suffix in groups;
    with several: a panel per variant, a line per entity, an entity alike in every panel."""
    if any(len(names[variant]) > 1 for variant in variants):
        styles: dict[str, tuple[str, str]] = {}
        return [
            Facet(
                variant,
                [
                    Line(variant, entity, entity, *styles.setdefault(entity, line_style(len(styles))))
                    for entity in names[variant]
                ],
            )
            for variant in variants
        ]
    dashes = variant_dashes(doc)
    return group_facets(
        groups, [Line(v, names[v][0], legend_name(groups, v), colors[v], dashes[v]) for v in variants]
    )


def legend_name(groups: Groups | None, variant: str) -> str:
    """A variant's legend entry: in panels per group its suffix (the group is the panel's title)."""
    return variant if groups is None else groups.suffix(variant)


def group_facets(groups: Groups | None, lines: Sequence[Line]) -> list[Facet]:
    """One panel of all `lines` or, with `groups`, one per group with its variants' lines."""
    if groups is None:
        return [Facet("", list(lines))]
    return [
        Facet(group, drawn)
        for group, members in groups.members.items()
        if (drawn := [line for line in lines if line.variant in members])
    ]


def time_lines(
    key: str,
    title: str,
    caption: str,
    doc: Document,
    series: pd.DataFrame,
    colors: Mapping[str, str],
    *,
    kind: str,
    panels: Sequence[tuple[str, str]],
    reference_lines: Mapping[str, Sequence[tuple[str, float, str]]] | None = None,
    ranges: pd.DataFrame | None = None,
) -> Figure | None:
    """Line plots of `kind` entities over time, a panel per (metric, axis title) in `panels`.

    With one entity per variant the variants share the panels, coloured as everywhere else, one
    set of panels per group of variants when their names form groups; with several, each variant
    gets its panels and the entities take the colours (`_line_facets`).
    `reference_lines` adds dashed horizontal lines (metric, value, label) per variant to the panel
    of that metric; variants sharing a panel share a line they have in common.
    A variant of several replications has a band of their range behind each line: from `ranges`
    (`replicas.replica_ranges`, computed once for the page), else from the document.
    """
    metrics = [metric for metric, _ in panels]
    frame = series[(series["kind"] == kind) & (series["metric"].isin(metrics))]
    if frame.empty:
        return None
    names, hidden = _drawn_entities(doc, frame, metrics[0])
    overlay = all(len(listed) == 1 for listed in names.values())
    groups = doc_groups(doc) if overlay else None
    facets = _line_facets(doc, list(names), names, colors, groups)
    grid = Grid(len(facets), len(panels))
    edges = fault_edges(doc)
    fig, grid_panels, height_px = grid_figure(
        grid, [facet.title for facet in facets], [t for _, t in panels], TIME_AXIS, marks_above=bool(edges)
    )
    if ranges is None and replicated(doc):
        ranges = replica_ranges(doc)
    bands = {} if ranges is None else band_index(ranges, kind, metrics)
    banded = _add_lines(fig, grid_panels, grid, facets, panels, frame, bands)
    if banded:
        fig["data"].append(grid_panels.place(band_legend_trace(doc), 1, 1))
    _add_marks(fig, grid_panels, grid, facets, metrics, reference_lines or {}, edges)
    layout(fig, title, height_px)
    if edges and any(facet.title for facet in facets):
        # The top row's titles over its fault marks: room for both under the figure's title.
        taller = {"margin": {"t": MARGINS_PX["t"] + FAULT_MARK_PX}, "height": height_px + FAULT_MARK_PX}
        update(fig["layout"], taller)
    if edges:
        caption += f" {FAULT_MARKS_TEXT}"
    if groups is not None:
        caption += f" {groups_text(groups)}"
    if overlay:
        caption += _overlap_text(frame, facets)
    if banded:
        caption += band_caption(doc)
    if hidden:
        caption += f" {top_of_each(hidden, ENTITY_PLURALS.get(kind, kind + 's'), f'mean {panels[0][1]}')}."
    return Figure(key, title, caption, fig)


def _drawn_entities(
    doc: Document, frame: pd.DataFrame, first_metric: str
) -> tuple[dict[str, list[str]], dict[str, int]]:
    """The entities drawn of each variant in `frame`, variants in the document's order, and how many
    entities each variant with over MAX_LINES has: of those, the MAX_LINES highest in mean
    `first_metric` are drawn."""
    # Each variant's entities in order of first appearance, from one pass, not a filter per variant.
    pairs = frame[["variant", "name"]].drop_duplicates()
    listed: dict[str, list[str]] = {}
    for variant, entity in zip(pairs["variant"].tolist(), pairs["name"].tolist(), strict=True):
        listed.setdefault(variant, []).append(entity)
    names = {v["name"]: listed[v["name"]] for v in doc["variants"] if v["name"] in listed}
    # First-panel means in one pass: a filter per entity took 8 s per figure at 10,000 VMs.
    firsts = frame[frame["metric"] == first_metric]
    first_means = firsts.groupby(["variant", "name"], sort=False, observed=True)["value"].mean()
    hidden = {}
    for variant, listed in names.items():
        if len(listed) > MAX_LINES:
            # The highest first-panel means: lines that stand out, not 10,000 that cover each other.
            # A dict's lookups: a pandas Series' took 35 us each, 0.7 s at 10,000 VMs.
            means = first_means[variant].to_dict()
            ranked = sorted(listed, key=lambda entity: means.get(entity, math.nan), reverse=True)
            names[variant] = ranked[:MAX_LINES]
            hidden[variant] = len(listed)
    return names, hidden


def _add_lines(
    fig: Spec,
    grid_panels: Subplots,
    grid: Grid,
    facets: Sequence[Facet],
    panels: Sequence[tuple[str, str]],
    frame: pd.DataFrame,
    ranges: Mapping[tuple[str, str, str], pd.DataFrame] | None = None,
) -> bool:
    """Each facet's lines in each of its panels, every legend entry shown once; behind a line
    whose variant ran replications, the band of their range (`ranges`, by variant, entity and
    metric). Whether any band was drawn."""
    # Each line's points by position from one sort and one grouping: filtering the frame per
    # entity is quadratic at 10,000 VMs, and a filter and sort per line was a third of a figure.
    ordered = frame.sort_values(["variant", "name", "metric", "t_s"])
    line_rows = ordered.groupby(["variant", "name", "metric"], sort=False, observed=True).indices
    times_s, values = ordered["t_s"].to_numpy(dtype=float), ordered["value"].to_numpy(dtype=float)
    shown_in_legend: set[str] = set()
    no_rows = np.empty(0, dtype=np.intp)
    bands = 0
    for index, facet in enumerate(facets):
        for line in facet.lines:
            for metric_index, (metric, axis_title) in enumerate(panels):
                cell = grid.cell(index, metric_index)
                points = line_rows.get((line.variant, line.entity, metric), no_rows)
                shown = line.legend in shown_in_legend
                band = (ranges or {}).get((line.variant, line.entity, metric))
                if band is not None:
                    band_of = band_trace(band, line.color, f"{line.variant} · {line.entity}", axis_title)
                    fig["data"].append(grid_panels.place(band_of, *cell))
                    bands += 1
                trace = _line_trace(line, times_s[points], values[points], axis_title, showlegend=not shown)
                fig["data"].append(grid_panels.place(trace, *cell))
                shown_in_legend.add(line.legend)
    return bands > 0


def _line_trace(
    line: Line, times_s: np.ndarray, values: np.ndarray, axis_title: str, *, showlegend: bool
) -> dict[str, Any]:
    """One line's trace in one panel; markers on the points too when they are few enough to see."""
    return {
        "type": "scatter",
        "x": times_s,
        "y": values,
        "mode": "lines+markers" if len(times_s) <= 40 else "lines",
        "marker": {"size": 5},
        "line": {"color": line.color, "dash": line.dash, "width": 2},
        "name": line.legend,
        "legendgroup": line.legend,
        "showlegend": showlegend,
        "hovertemplate": (
            f"{line.variant} · {line.entity}<br>%{{x:.3~g}} s: %{{y:,.4~g}} {axis_title}<extra></extra>"
        ),
    }


def _add_marks(
    fig: Spec,
    grid_panels: Subplots,
    grid: Grid,
    facets: Sequence[Facet],
    metrics: Sequence[str],
    reference_lines: Mapping[str, Sequence[tuple[str, float, str]]],
    edges: Sequence[tuple[FaultReport, str]],
) -> None:
    """The reference lines and fault marks of every panel (fault marks past MAX_MARK_SHAPES as
    traces on axes of their own)."""
    shapes, annotations = _reference_marks(grid_panels, grid, facets, metrics, reference_lines)
    fault_shapes, fault_annotations, traces, overlays = _fault_marks(grid_panels, grid, facets, edges)
    for key, marks in (("shapes", shapes + fault_shapes), ("annotations", annotations + fault_annotations)):
        if marks:
            fig["layout"][key] = fig["layout"].get(key, []) + marks
    if overlays:
        update(fig["layout"], overlays)
        fig["data"] += traces


def _reference_marks(
    grid_panels: Subplots,
    grid: Grid,
    facets: Sequence[Facet],
    metrics: Sequence[str],
    reference_lines: Mapping[str, Sequence[tuple[str, float, str]]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The shapes and labels of each facet's variants' reference lines, a line the variants of a
    panel have in common drawn once."""
    shapes: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    drawn: set[tuple[int, int, float, str]] = set()
    for index, facet in enumerate(facets):
        for variant in facet.variants:
            for metric, value, label in reference_lines.get(variant, ()):
                row, column = grid.cell(index, metrics.index(metric))
                if (row, column, value, label) in drawn:
                    continue
                drawn.add((row, column, value, label))
                shape, annotation = reference_line(grid_panels.refs(row, column), value, label)
                shapes.append(shape)
                annotations.append(annotation)
    return shapes, annotations


def _fault_marks(
    grid_panels: Subplots, grid: Grid, facets: Sequence[Facet], edges: Sequence[tuple[FaultReport, str]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Each facet's fault marks: their shapes, their annotations, and for a facet with over
    MAX_MARK_SHAPES marks, traces instead on hidden 0-1 axes over its panels (the axes' layout,
    numbered after the grid's own)."""
    shapes: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    traces: list[dict[str, Any]] = []
    overlays: dict[str, dict[str, Any]] = {}
    for index, facet in enumerate(facets):
        members = set(facet.variants)
        marks = fault_marks(
            ((edge, name) for edge, name in edges if name in members),
            name_variants=len(facet.variants) > 1,
        )
        for metric_index in range(grid.metrics):
            xref, yref = grid_panels.refs(*grid.cell(index, metric_index))
            # The lines on every panel, the ✕ and ✓ once, over the facet's first panel.
            if len(marks) > MAX_MARK_SHAPES:
                number = grid.rows * grid.columns + len(overlays) + 1
                overlays[f"yaxis{number}"] = overlay_axis(yref)
                traces += mark_traces(marks, xaxis=xref, yaxis=f"y{number}", symbols=metric_index == 0)
                continue
            panel_shapes, panel_annotations = mark_shapes(marks, xref=xref, yref=f"{yref} domain")
            shapes += panel_shapes
            if metric_index == 0:
                annotations += panel_annotations
    return shapes, annotations, traces, overlays


def reference_line(refs: tuple[str, str], value: float, label: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A dashed horizontal line at `value` across the panel of the axes `refs` (`x2`, `y2`) and its
    label over its left end: what plotly's add_hline draws there."""
    xref, yref = refs
    shape = {
        "type": "line",
        "xref": f"{xref} domain",
        "yref": yref,
        "x0": 0,
        "x1": 1,
        "y0": value,
        "y1": value,
        "line": {"color": "#6e7781", "dash": "dash", "width": 1},
    }
    annotation = {
        "text": label,
        "font": {"size": 11, "color": "#6e7781"},
        "showarrow": False,
        "xref": f"{xref} domain",
        "yref": yref,
        "x": 0,
        "xanchor": "left",
        "y": value,
        "yanchor": "bottom",
    }
    return shape, annotation


def _overlap_text(frame: pd.DataFrame, facets: Sequence[Facet]) -> str:
    """The lines that lie on top of each other in each panel, lines overlapping alike in several
    panels named once."""
    where: dict[str, list[str]] = {}
    for facet in facets:
        legends = {line.variant: line.legend for line in facet.lines}
        for group in _overlapping(frame, facet.variants):
            every = len(group) == len(legends) > 2
            lines = "All lines" if every else join_names([legends[name] for name in group])
            where.setdefault(lines, []).append(facet.title)
    if len(facets) == 1:
        return "".join(f" {lines} overlap." for lines in where)
    return "".join(
        f" {lines} overlap in {'every panel' if len(titles) == len(facets) else join_names(titles)}."
        for lines, titles in where.items()
    )


def _overlapping(frame: pd.DataFrame, variants: Sequence[str]) -> list[list[str]]:
    """Groups of variants whose series (all metrics) agree within OVERLAP_TOLERANCE: one hides the others."""
    # One sort of the facet's rows, then a slice per variant: a sort per variant in pandas was a
    # tenth of the report's time at 30 variants.
    rows = frame[frame["variant"].isin(variants)].sort_values(["variant", "metric", "t_s"])
    names = rows["variant"].to_numpy()
    keys = rows[["metric", "t_s"]].to_numpy()
    values = rows["value"].to_numpy(dtype=float)
    starts = np.flatnonzero(np.r_[True, names[1:] != names[:-1]])
    ends = np.r_[starts[1:], len(names)]
    spans = {names[start]: (start, end) for start, end in zip(starts, ends)}
    empty = (0, 0)
    groups: list[list[str]] = []
    for variant in variants:
        mine = slice(*spans.get(variant, empty))
        for group in groups:
            theirs = slice(*spans.get(group[0], empty))
            if (
                mine.stop - mine.start == theirs.stop - theirs.start
                and (keys[mine] == keys[theirs]).all()
                and np.allclose(values[mine], values[theirs], rtol=OVERLAP_TOLERANCE, atol=0.0)
            ):
                group.append(variant)
                break
        else:
            groups.append([variant])
    return [group for group in groups if len(group) > 1]
