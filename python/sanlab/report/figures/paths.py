"""The paths section: per-path I/O share and latency (esxtop's view) and path IOPS over time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import pandas as pd

from sanlab.document import Document, PathReport
from sanlab.formatting import format_count, format_ms, format_pct_span
from sanlab.report.figures.common import (
    MAX_LINES,
    MAX_NAMED_VARIANTS,
    Figure,
    Spec,
    colorscale_of,
    doc_groups,
    in_group_order,
    join_names,
    layout,
    means_by_variant,
    top_of_each,
    update,
    update_axes,
)
from sanlab.report.figures.heatmaps import Panel, pivot, variant_heatmaps
from sanlab.report.figures.marks import FAULT_MARKS_TEXT, fault_edges
from sanlab.report.figures.subplots import Subplots, subplots
from sanlab.report.groups import Groups

PATHS_SIDE_BY_SIDE_MAX = 8
"""The path figure's share and latency maps stand side by side up to this many variants, then stack."""

SLOW_PATH_FACTOR = 1.5
"""In the path figure's caption, a path is slow when its mean latency exceeds this multiple of the fastest."""


def _path_rows(doc: Document) -> tuple[list[str], list[dict[str, PathReport]]]:
    """Row labels and, per row, the path of each variant.

    A label is the path's name, prefixed by its device, then its host, when names alone repeat.
    """
    rows: dict[tuple[str, str, str], dict[str, PathReport]] = {}
    for variant in doc["variants"]:
        for path in variant["paths"]:
            rows.setdefault((path["host"], path["device"], path["name"]), {})[variant["name"]] = path
    for parts in (slice(2, 3), slice(1, 3), slice(0, 3)):
        labels = ["/".join(key[parts]) for key in rows]
        if len(set(labels)) == len(labels):
            break
    return labels, list(rows.values())


class _PathCell(NamedTuple):
    """A path's cell in a variant's column of the path figure: its share and mean latency with their
    texts, and the hover data (ALUA state, path state, array, IOPS, p99 latency ms, variant)."""

    share: float | None
    share_text: str
    latency: float | None
    latency_text: str
    hover: list[Any]


def _path_cell(path: PathReport | None, variant: str) -> _PathCell:
    """The cell of `path` in `variant`'s column, blank where the variant has no such path."""
    if path is None:
        return _PathCell(None, "", None, "", ["", "", "", 0.0, 0.0, variant])
    mark = "*" if path["alua"] == "ANO" else ""
    busy = path["ios"] > 0
    return _PathCell(
        share=100.0 * path["share"],
        share_text=f"{100.0 * path['share']:.1f}{mark}" if path["ios"] else mark,
        latency=path["lat_ms"]["mean"] if busy else None,
        latency_text=format_ms(path["lat_ms"]["mean"]) + mark if busy else "",
        hover=[
            path["alua"],
            path["state"],
            path["array"],
            path["iops"],
            path["lat_ms"]["p99"] if busy else 0.0,
            variant,
        ],
    )


def paths_figure(doc: Document) -> Figure | None:
    """Per-path I/O share and mean latency, paths as rows and variants as columns (esxtop's view)."""
    labels, rows = _path_rows(doc)
    if not rows:
        return None
    spread = ""
    if len(rows) > MAX_LINES:
        labels, rows, spread = _slowest_paths(labels, rows)
    variants = [variant["name"] for variant in in_group_order(doc)]
    cells = [[_path_cell(by_variant.get(name), name) for name in variants] for by_variant in rows]
    # Many variants stack the two maps, each the page's width, so that the cells keep their numbers.
    stacked = len(variants) > PATHS_SIDE_BY_SIDE_MAX
    panels = subplots(
        2 if stacked else 1,
        1 if stacked else 2,
        shared_xaxes=stacked,
        shared_yaxes=not stacked,
        horizontal_spacing=0.12,
        vertical_spacing=0.12,
        subplot_titles=("share of the device's I/O, %", "mean latency, ms"),
    )
    fig = panels.figure()
    groups = doc_groups(doc)
    # Grouped variants as a two-level axis: the settings under each group's name.
    x: list[str] | list[list[str]] = (
        variants
        if groups is None
        else [[groups.group(name) for name in variants], [groups.suffix(name) for name in variants]]
    )
    _add_path_maps(fig, panels, cells, x, labels, stacked=stacked)
    # Stacked, the upper map keeps its column labels: 30 columns are not read from below.
    update_axes(fig, "x", {"side": "bottom", "showticklabels": True})
    lowest = panels.rows
    for col in range(1, panels.cols + 1):
        update(fig["layout"][panels.axes(lowest, col)[0]], {"title": {"text": "variant"}})
    title = "Per-path I/O share and latency"
    layout(fig, title, (2 if stacked else 1) * (190 + 24 * len(rows)))
    update(fig["layout"], {"plot_bgcolor": "#f6f8fa"})
    return Figure("paths", title, _paths_caption(doc) + spread, fig)


def _add_path_maps(
    fig: Spec,
    panels: Subplots,
    cells: Sequence[Sequence[_PathCell]],
    x: list[str] | list[list[str]],
    labels: Sequence[str],
    *,
    stacked: bool,
) -> None:
    """The share map and the latency map of `cells`, each with its colour bar: side by side, or one
    over the other when `stacked`."""
    hovertemplate = (
        "%{y} in %{customdata[5]}<br>ALUA %{customdata[0]}, %{customdata[1]}, array %{customdata[2]}"
        "<br>%{customdata[3]:,.0f} IOPS, p99 %{customdata[4]:.3~g} ms<extra></extra>"
    )
    share = [[cell.share for cell in row] for row in cells]
    share_text = [[cell.share_text for cell in row] for row in cells]
    latency = [[cell.latency for cell in row] for row in cells]
    latency_text = [[cell.latency_text for cell in row] for row in cells]
    hover = [[cell.hover for cell in row] for row in cells]
    for index, (z, text, what, colorscale, unit, z_range) in enumerate(
        (
            (share, share_text, " carried %{z:.1f} %", "Blues", "%", (0, 100)),
            (latency, latency_text, ": mean %{z:.3~g} ms", "OrRd", "ms", (None, None)),
        )
    ):
        row, col = (index + 1, 1) if stacked else (1, index + 1)
        y_axis = panels.axes(row, col)[1]
        if stacked:
            domain = fig["layout"][y_axis]["domain"]
            colorbar = {"y": (domain[0] + domain[1]) / 2, "len": domain[1] - domain[0], "x": 1.0}
        else:
            colorbar = {"x": 0.44 if index == 0 else 1.0}
        heatmap = {
            "type": "heatmap",
            "z": z,
            "x": x,
            "y": labels,
            "text": text,
            "texttemplate": "%{text}",
            "customdata": hover,
            "hovertemplate": hovertemplate.replace("<br>ALUA", f"{what}<br>ALUA", 1),
            "colorscale": colorscale_of(colorscale),
            "zmin": z_range[0],
            "zmax": z_range[1],
            "colorbar": {**colorbar, "title": {"text": unit}, "thickness": 12},
            "xgap": 2,
            "ygap": 2,
        }
        fig["data"].append(panels.place({k: v for k, v in heatmap.items() if v is not None}, row, col))
        update(fig["layout"][y_axis], {"autorange": "reversed", "title": {"text": "path"}})


def _slowest_mean_ms(by_variant: Mapping[str, PathReport]) -> float:
    """A path row's highest mean latency over the variants where it carried I/O (0 if none)."""
    return max((path["lat_ms"]["mean"] for path in by_variant.values() if path["ios"] > 0), default=0.0)


def _slowest_paths(
    labels: Sequence[str], rows: Sequence[Mapping[str, PathReport]]
) -> tuple[list[str], list[Mapping[str, PathReport]], str]:
    """The MAX_LINES path rows with the highest mean latency, in their order, and a sentence on the
    spread across all: 4,096 rows of cells help nobody."""
    means_ms = [_slowest_mean_ms(by_variant) for by_variant in rows]
    top = set(sorted(range(len(rows)), key=means_ms.__getitem__, reverse=True)[:MAX_LINES])
    busy_ms = sorted(mean for mean in means_ms if mean > 0)
    spread = f" The {MAX_LINES} of {len(rows):,} paths with the highest mean latency in any variant"
    if busy_ms:
        spread += (
            f"; across all busy paths it spans {format_ms(busy_ms[0])} to {format_ms(busy_ms[-1])} ms, "
            f"median {format_ms(busy_ms[len(busy_ms) // 2])} ms"
        )
    return (
        [label for i, label in enumerate(labels) if i in top],
        [row for i, row in enumerate(rows) if i in top],
        spread + ".",
    )


def _paths_caption(doc: Document) -> str:
    slow_shares = []
    for variant in doc["variants"]:
        busy = [path for path in variant["paths"] if path["ios"] > 0]
        if not busy:
            continue
        fastest = min(path["lat_ms"]["mean"] for path in busy)
        # Of the variant's I/O, not summed per-device shares: two devices would make 200 %.
        slow_ios = sum(path["ios"] for path in busy if path["lat_ms"]["mean"] > SLOW_PATH_FACTOR * fastest)
        slow_shares.append((variant["name"], slow_ios / sum(path["ios"] for path in busy)))
    what = (
        "One column per variant; * marks active-non-optimized paths, cells without a number carried no I/O."
    )
    loaded = [(name, share) for name, share in slow_shares if share >= 0.005]
    if not loaded:
        return f"{what} No variant sends I/O to a path over {SLOW_PATH_FACTOR:g}× the fastest path's latency."
    idle = len(slow_shares) - len(loaded)
    rest = f", {'the other' if idle == 1 else f'the other {idle}'} none" if idle else ""
    return (
        f"{what} I/O sent to paths over {SLOW_PATH_FACTOR:g}× slower than the fastest: "
        f"{_shares_text(loaded, doc_groups(doc))}{rest}."
    )


def _shares_text(loaded: Sequence[tuple[str, float]], groups: Groups | None) -> str:
    """Each variant's share, up to MAX_NAMED_VARIANTS of them (the highest, the others counted with
    their span); with groups, per setting: its span and the groups it has it in."""
    if groups is None:
        ranked = list(loaded)
        if len(ranked) > MAX_NAMED_VARIANTS:
            ranked.sort(key=lambda item: item[1], reverse=True)
        named = [f"{name} {100 * share:.0f} %" for name, share in ranked[:MAX_NAMED_VARIANTS]]
        others = [share for _, share in ranked[MAX_NAMED_VARIANTS:]]
        return ", ".join(named + ([f"{len(others)} more {format_pct_span(others)}"] if others else []))
    by_setting: dict[str, list[tuple[str, float]]] = {}
    for name, share in loaded:
        by_setting.setdefault(groups.suffix(name), []).append((groups.group(name), share))
    parts = []
    for setting, found in by_setting.items():
        where = [group for group, _ in found]
        if len(where) == len(groups.members):
            places = "every group"
        elif len(where) <= MAX_NAMED_VARIANTS:
            places = join_names(where)
        else:
            places = f"{len(where)} groups"
        parts.append(f"{setting} {format_pct_span([share for _, share in found])} in {places}")
    return "; ".join(parts)


def path_timeline_figure(doc: Document, series: pd.DataFrame) -> Figure | None:
    """IOPS of every path over time, one variant at a time, with path selection events marked."""
    frame = series[(series["kind"] == "path") & (series["metric"] == "iops")]
    if frame.empty:
        return None
    panels = []
    hidden: dict[str, pd.Series] = {}
    # Each variant's rows and means from one grouping each, not a filter and a grouping per variant.
    by_variant = dict(iter(frame.groupby("variant", observed=True, sort=False)))
    means = means_by_variant(frame)
    for variant in doc["variants"]:
        rows = by_variant.get(variant["name"])
        if rows is None or rows.empty:
            continue
        order = [path["name"] for path in variant["paths"]]
        mean_iops = means[variant["name"]]
        if len(mean_iops) > MAX_LINES:
            # The busiest paths by mean IOPS: 4,096 rows of one pixel each show nothing.
            top = mean_iops.nlargest(MAX_LINES)
            rows = rows[rows["name"].isin(top.index)]
            hidden[variant["name"]] = mean_iops
        names, times_s, z = pivot(rows, order)
        faults = variant.get("faults", ())
        panels.append(Panel(variant["name"], names, times_s, z, variant["psp_events"], faults))
    marked = [v["name"] for v in doc["variants"] if v["psp_events"] or v.get("faults")]
    with_events = marked[0] if marked else None
    caption = (
        "Each row is a path, its colour the IOPS it carried in each sample: a row turning pale is a path the "
        "policy stopped using; ▼ marks path selection events (hover for details)."
    )
    if fault_edges(doc):
        caption += f" {FAULT_MARKS_TEXT}"
    if len(panels) > 1:
        caption += " Choose the variant at the top right."
    if hidden:
        caption += " " + top_of_each({name: len(means) for name, means in hidden.items()}, "paths", "mean IOPS")
        every_mean = pd.concat(list(hidden.values()))
        caption += (
            f"; mean IOPS across all spans {format_count(every_mean.min())} to "
            f"{format_count(every_mean.max())}, median {format_count(every_mean.median())}."
        )
    return variant_heatmaps(
        "path-timeline",
        "Path IOPS over time",
        caption,
        panels,
        row_title="path",
        value_title="IOPS",
        hovertemplate="%{y} at %{x:.3~g} s: %{z:,.0f} IOPS<extra></extra>",
        colorscale="Blues",
        selected=with_events,
    )
