"""The report's figures: one function per figure, each returning a titled, captioned plotly figure.

Every function takes the engine's document (with each variant's time series) and returns None
when the run has nothing to show for that figure. A variant keeps its colour in every figure.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sanlab.analysis.tail import tail_iops
from sanlab.document import Document, entities, sorted_percentiles
from sanlab.formatting import format_count, format_ms, format_ms_span, format_pct_span, format_tick
from sanlab.report.groups import Groups, variant_groups

PALETTE = (
    "#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2",
    "#B279A2", "#EECA3B", "#9D755D", "#FF9DA6", "#79706E",
)  # fmt: skip
"""Tableau 10: distinct hues that stay apart for most colour-vision deficiencies."""

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
TIME_AXIS = "simulated time, s"
PATHS_SIDE_BY_SIDE_MAX = 8
"""The path figure's share and latency maps stand side by side up to this many variants, then stack."""
SLOW_PATH_FACTOR = 1.5
"""In the path figure's caption, a path is slow when its mean latency exceeds this multiple of the fastest."""
HOT_CORE_FACTOR = 1.5
"""In the core figure's caption, a core is a hot spot when its mean use exceeds this multiple of the mean."""
LOG_SCALE_RATIO = 10.0
"""Latency axes turn logarithmic when the largest value is at least this multiple of the smallest."""
LOG_TICK_STEPS = ((2.0, (1, 2, 3, 5)), (4.0, (1, 2, 5)), (math.inf, (1,)))
"""A log axis's labelled steps in each decade by the decades it spans: 1, 2, 3, 5 over up to two,
1, 2, 5 over up to four, then decades only."""
PINNED_QUEUE_FRACTION = 0.95
"""A device whose mean ACTV reaches this fraction of its queue depth (with I/Os queued) has a full queue."""
MARGINS_PX = {"l": 70, "r": 30, "t": 80, "b": 55}
OVERVIEW_MARGINS_PX = {**MARGINS_PX, "b": 95}
OVERVIEW_LEGEND_GAP_PX = 55
"""The overview's legend sits this far below its plots, under the axis titles."""
SAME_IOPS_TOLERANCE = 0.005
"""Variants with IOPS within this relative difference of the most share the win."""
SETTLED_TOLERANCE = 0.05
"""The overview's caption names variants whose tail IOPS differ from the whole run's by more than this."""
OVERLAP_TOLERANCE = 0.005
"""Lines within this relative difference are named as overlapping in a time-series caption."""
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
CDF_PERCENTILE_TICKS = (0.0, 50.0, 90.0, 99.0, 99.9, 99.99)
CDF_PANEL_PX = 340


@dataclass(frozen=True)
class Figure:
    """A plot with its page anchor (`key`), title and one-line caption."""

    key: str
    title: str
    caption: str
    plot: go.Figure


def doc_groups(doc: Document) -> Groups | None:
    """The variants grouped by name prefix (`notice-fixed` in `notice`), or None when the names have
    no such structure."""
    return variant_groups([variant["name"] for variant in doc["variants"]], len(PALETTE))


def _style(index: int) -> tuple[str, str]:
    """The colour and dash of the `index`th line: past the palette, the next round is dashed."""
    return PALETTE[index % len(PALETTE)], DASHES[(index // len(PALETTE)) % len(DASHES)]


def _style_indexes(doc: Document) -> dict[str, int]:
    """Per variant, its style's index: its suffix's with groups (a setting looks alike in every
    group), else its place in the run."""
    groups = doc_groups(doc)
    names = [variant["name"] for variant in doc["variants"]]
    if groups is None:
        return {name: index for index, name in enumerate(names)}
    return {name: groups.suffixes.index(groups.suffix(name)) for name in names}


def variant_colors(doc: Document) -> dict[str, str]:
    """One palette colour per variant: its suffix's when the variants form groups, else in run order."""
    return {name: _style(index)[0] for name, index in _style_indexes(doc).items()}


def variant_dashes(doc: Document) -> dict[str, str]:
    """One line dash per variant: solid, dashed for the second round of colours, and so on."""
    return {name: _style(index)[1] for name, index in _style_indexes(doc).items()}


def series_frame(doc: Document) -> pd.DataFrame:
    """All variants' time series as one table: variant, t_s, kind, name, metric, value.

    `kind` and `name` split the engine's entity (`path/local-0` is kind `path`, name `local-0`).
    """
    frames = []
    for variant in doc["variants"]:
        series = variant["timeseries"]
        frame = pd.DataFrame(
            {
                "t_s": series["t_s"],
                "entity": series["entity"],
                "metric": series["metric"],
                "value": series["value"],
            }
        )
        frame.insert(0, "variant", variant["name"])
        frames.append(frame)
    if not frames:
        return pd.DataFrame(columns=["variant", "t_s", "kind", "name", "metric", "value"])
    frame = pd.concat(frames, ignore_index=True)
    # Split each distinct entity once: splitting every row took 1.6 s of 1 M rows (19 variants, 320 s).
    codes, entities = pd.factorize(frame["entity"], use_na_sentinel=False)
    parts = pd.Series(entities).str.split("/", n=1, expand=True)
    frame["kind"] = parts[0].array.take(codes)
    frame["name"] = parts[1].array.take(codes) if parts.shape[1] > 1 else ""
    return frame.drop(columns="entity")


def log_ticks(low: float, high: float) -> dict[str, Any]:
    """Tick values and labels of a log axis from `low` to `high` (both > 0): numbers written out
    (0.2, 0.5, 1, 2 …), not plotly's bare minor digits."""
    decades = math.log10(high / low)
    steps = next(steps for span, steps in LOG_TICK_STEPS if decades <= span)
    values = [
        step * 10.0**exponent
        for exponent in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
        for step in steps
    ]
    # From the last tick at or below `low` to the first at or above `high`.
    first = max(index for index, value in enumerate(values) if value <= low * (1 + 1e-9))
    last = min(index for index, value in enumerate(values) if value >= high * (1 - 1e-9))
    values = values[first : last + 1]
    return {"tickvals": values, "ticktext": [format_tick(value) for value in values]}


def latency_axis(title: str, low_ms: float, high_ms: float) -> dict[str, Any]:
    """A latency axis's settings: logarithmic, with written-out ticks, when the latencies span
    LOG_SCALE_RATIO or more."""
    if low_ms > 0 and math.isfinite(high_ms) and high_ms / low_ms >= LOG_SCALE_RATIO:
        return {"title_text": f"{title} (log scale)", "type": "log", **log_ticks(low_ms, high_ms)}
    return {"title_text": title, "type": "linear"}


def _layout(fig: go.Figure, title: str, height_px: int) -> None:
    fig.update_layout(
        template="plotly_white",
        title={"text": f"<b>{title}</b>", "x": 0.0, "xanchor": "left", "font": {"size": 16}},
        height=height_px,
        font={"family": FONT, "size": 12, "color": "#24292f"},
        margin=MARGINS_PX,
        legend={"orientation": "v", "yanchor": "top", "y": 1.0, "xanchor": "left", "x": 1.02},
        hoverlabel={"font": {"family": FONT}},
    )


def in_group_order(doc: Document) -> list[Mapping[str, Any]]:
    """The variants, those of a group together (groups in order of first appearance)."""
    groups = doc_groups(doc)
    if groups is None:
        return list(doc["variants"])
    by_name = {variant["name"]: variant for variant in doc["variants"]}
    return [by_name[name] for members in groups.members.values() for name in members]


def _vm_rows(doc: Document) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(variant, row label, VM) for every VM, in group order; the label is the variant, plus the VM
    when there are several."""
    several = any(len(variant["vms"]) > 1 for variant in doc["variants"])
    return [
        (variant["name"], f"{variant['name']} · {vm['name']}" if several else variant["name"], vm)
        for variant in in_group_order(doc)
        for vm in variant["vms"]
    ]


def _group_bands(doc: Document, variants: Sequence[str]) -> list[dict[str, Any]]:
    """Shaded bands behind every other group's rows of a figure whose category rows are `variants`'s."""
    groups = doc_groups(doc)
    if groups is None:
        return []
    bands = []
    for index, members in enumerate(groups.members.values()):
        rows = [row for row, variant in enumerate(variants) if variant in members]
        if index % 2 and rows:
            bands.append(
                {
                    "type": "rect",
                    "xref": "paper",
                    "yref": "y",
                    "x0": 0.0,
                    "x1": 1.0,
                    # A category axis places row n at n.
                    "y0": rows[0] - 0.5,
                    "y1": rows[-1] + 0.5,
                    "fillcolor": "#f6f8fa",
                    "line": {"width": 0},
                    "layer": "below",
                }
            )
    return bands


def overview_figure(doc: Document, colors: Mapping[str, str]) -> Figure | None:
    """IOPS (bars) and latency (p50 to p99.9 range, mean, p99) of every VM, variants side by side."""
    rows = _vm_rows(doc)
    if not rows:
        return None
    rows, spreads = _top_p99_rows(rows)
    labels = [label for _, label, _ in rows]
    fig = make_subplots(
        rows=1,
        cols=2,
        shared_yaxes=True,
        horizontal_spacing=0.04,
        subplot_titles=("IOPS: longer is better", "latency, ms: further left is better"),
    )
    fig.add_bar(
        x=[vm["iops"] for _, _, vm in rows],
        y=labels,
        orientation="h",
        marker_color=[colors[variant] for variant, _, _ in rows],
        text=[format_count(vm["iops"]) for _, _, vm in rows],
        textposition="auto",
        customdata=[[vm["mbps"]] for _, _, vm in rows],
        hovertemplate="%{y}<br>%{x:,.0f} IOPS, %{customdata[0]:,.1f} MB/s<extra></extra>",
        showlegend=False,
        row=1,
        col=1,
    )
    range_x: list[float | None] = []
    range_y: list[str | None] = []
    for _, label, vm in rows:
        range_x += [vm["lat_ms"]["p50"], vm["lat_ms"]["p999"], None]
        range_y += [label, label, None]
    fig.add_scatter(
        x=range_x,
        y=range_y,
        mode="lines",
        line={"color": "rgba(110,119,129,0.45)", "width": 10},
        name="p50 to p99.9",
        hoverinfo="skip",
        row=1,
        col=2,
    )
    for stat, name, symbol, fill in (
        ("mean", "mean", "circle", "white"),
        ("p99", "p99", "diamond", "#24292f"),
    ):
        fig.add_scatter(
            x=[vm["lat_ms"][stat] for _, _, vm in rows],
            y=labels,
            mode="markers",
            name=name,
            marker={"symbol": symbol, "size": 11, "color": fill, "line": {"color": "#24292f", "width": 1.5}},
            hovertemplate=f"%{{y}}<br>{name} %{{x:.3~g}} ms<extra></extra>",
            row=1,
            col=2,
        )
    low_ms = min(vm["lat_ms"]["p50"] for _, _, vm in rows)
    high_ms = max(vm["lat_ms"]["p999"] for _, _, vm in rows)
    fig.update_yaxes(autorange="reversed", row=1, col=1)
    fig.update_xaxes(title_text="IOPS", rangemode="tozero", row=1, col=1)
    fig.update_xaxes(latency_axis("latency, ms", low_ms, high_ms), rangemode="tozero", row=1, col=2)
    title = "Throughput and latency by variant"
    height_px = 200 + 38 * len(rows)
    _layout(fig, title, height_px)
    # The legend under the axis titles, the same distance below the plot whatever its height.
    below = -OVERVIEW_LEGEND_GAP_PX / (height_px - OVERVIEW_MARGINS_PX["t"] - OVERVIEW_MARGINS_PX["b"])
    fig.update_layout(
        legend={"orientation": "h", "yanchor": "top", "y": below, "xanchor": "right", "x": 1.0},
        margin=OVERVIEW_MARGINS_PX,
        shapes=_group_bands(doc, [variant for variant, _, _ in rows]),
    )
    caption = _overview_caption(doc) + "".join(f" {spread}" for spread in spreads)
    return Figure("overview", title, caption, fig)


def _top_p99_rows(
    rows: Sequence[tuple[str, str, Mapping[str, Any]]],
) -> tuple[list[tuple[str, str, Mapping[str, Any]]], list[str]]:
    """Of a variant with over MAX_LINES VMs, the MAX_LINES with the highest p99 (as the comparison
    table picks), and a sentence on the spread of p99 across all of them; other variants whole."""
    by_variant: dict[str, list[tuple[str, str, Mapping[str, Any]]]] = {}
    for row in rows:
        by_variant.setdefault(row[0], []).append(row)
    kept, spreads = [], []
    for variant, own in by_variant.items():
        if len(own) <= MAX_LINES:
            kept += own
            continue
        own = sorted(own, key=lambda row: row[2]["lat_ms"]["p99"], reverse=True)
        p99s_ms = sorted(row[2]["lat_ms"]["p99"] for row in own)
        kept += own[:MAX_LINES]
        spreads.append(
            f"{variant}: the {MAX_LINES} of its {len(own):,} VMs with the highest p99; p99 across all "
            f"spans {format_ms(p99s_ms[0])} to {format_ms(p99s_ms[-1])} ms, "
            f"median {format_ms(p99s_ms[len(p99s_ms) // 2])} ms."
        )
    return kept, spreads


def _totals(doc: Document) -> dict[str, float]:
    """Each variant's IOPS, summed over its VMs."""
    return {variant["name"]: sum(vm["iops"] for vm in variant["vms"]) for variant in doc["variants"]}


def _most_iops(totals: Mapping[str, float]) -> list[str]:
    """The variants (in run order) within SAME_IOPS_TOLERANCE of the most IOPS."""
    best = max(totals.values())
    return [name for name, iops in totals.items() if iops >= best * (1 - SAME_IOPS_TOLERANCE)]


def _winner_sentence(totals: Mapping[str, float], label: Mapping[str, str]) -> str:
    """`a gives the most IOPS (N), 2.0× b (M)`: the variants with the most IOPS against the one
    with the fewest, each named by `label`."""
    most = _most_iops(totals)
    best = max(totals.values())
    if len(totals) == 1:
        return f"{label[most[0]]} alone, {format_count(best)} IOPS"
    if len(most) == len(totals):
        return f"{_names([label[name] for name in most])} give the same IOPS ({format_count(best)})"
    verb = "gives" if len(most) == 1 else "give"
    sentence = f"{_names([label[name] for name in most])} {verb} the most IOPS ({format_count(best)})"
    worst = min(totals, key=totals.__getitem__)
    if totals[worst] > 0:
        return sentence + f", {best / totals[worst]:.1f}× {label[worst]} ({format_count(totals[worst])})"
    return sentence + f"; {label[worst]} none"


def winners(doc: Document) -> list[tuple[str, str]]:
    """(group, sentence) per group of variants: which give the most IOPS, against the fewest; one
    with the group "" when the variants form no groups, none for a single variant."""
    totals = _totals(doc)
    groups = doc_groups(doc)
    if groups is None:
        return [("", _winner_sentence(totals, {name: name for name in totals}))] if len(totals) >= 2 else []
    return [
        (
            group,
            _winner_sentence(
                {name: totals[name] for name in members}, {name: groups.suffix(name) for name in members}
            ),
        )
        for group, members in groups.members.items()
    ]


def _overview_caption(doc: Document) -> str:
    what = "Bars: IOPS per VM; grey line: p50 to p99.9 latency, ○ mean, ◆ p99."
    totals = _totals(doc)
    groups = doc_groups(doc)
    if groups is None:
        found = winners(doc)
        finding = f"{found[0][1]}. " if found else ""
    else:
        # Groups with the same winners named together: six sentences say less than three clauses.
        won: dict[str, list[str]] = {}
        for group, members in groups.members.items():
            most = _most_iops({name: totals[name] for name in members})
            won.setdefault(_names([groups.suffix(name) for name in most]), []).append(group)
        finding = (
            "The most IOPS per group (the summary above has the figures): "
            + "; ".join(f"{names} in {_names(where)}" for names, where in won.items())
            + ". "
        )
    return finding + _settling(doc, totals) + what


def _settling(doc: Document, totals: Mapping[str, float]) -> str:
    """Variants whose tail IOPS differ from their whole-run IOPS by more than SETTLED_TOLERANCE:
    named up to MAX_NAMED_VARIANTS, then counted with the spread of the change."""
    changed = []
    for variant in doc["variants"]:
        by_vm = tail_iops(variant)
        tails = [by_vm.get(vm["name"]) for vm in variant["vms"]]
        total = totals[variant["name"]]
        if total > 0 and all(tail is not None for tail in tails):
            tail = sum(tail for tail in tails if tail is not None)
            if abs(tail - total) > SETTLED_TOLERANCE * total:
                changed.append((variant["name"], tail, total))
    if not changed:
        return ""
    if len(changed) <= MAX_NAMED_VARIANTS:
        settled = _names([f"{name} settles at {format_count(tail)}" for name, tail, _ in changed])
        return f"Over the last quarter of the run {settled} IOPS: a policy that changed its mind. "
    changes_pct = sorted(100 * (tail - total) / total for _, tail, total in changed)
    return (
        f"Over the last quarter of the run, {len(changed)} of {len(totals)} variants' IOPS differ from "
        f"their whole run's by more than {100 * SETTLED_TOLERANCE:g} % ({changes_pct[0]:+.0f} % to "
        f"{changes_pct[-1]:+.0f} %; the table's tail IOPS has each). "
    )


def _path_rows(doc: Document) -> tuple[list[str], list[dict[str, Mapping[str, Any]]]]:
    """Row labels and, per row, the path of each variant.

    A label is the path's name, prefixed by its device, then its host, when names alone repeat.
    """
    rows: dict[tuple[str, str, str], dict[str, Mapping[str, Any]]] = {}
    for variant in doc["variants"]:
        for path in variant["paths"]:
            rows.setdefault((path["host"], path["device"], path["name"]), {})[variant["name"]] = path
    for parts in (slice(2, 3), slice(1, 3), slice(0, 3)):
        labels = ["/".join(key[parts]) for key in rows]
        if len(set(labels)) == len(labels):
            break
    return labels, list(rows.values())


def paths_figure(doc: Document) -> Figure | None:
    """Per-path I/O share and mean latency, paths as rows and variants as columns (esxtop's view)."""
    labels, rows = _path_rows(doc)
    if not rows:
        return None
    spread = ""
    if len(rows) > MAX_LINES:
        labels, rows, spread = _slowest_paths(labels, rows)
    variants = [variant["name"] for variant in in_group_order(doc)]
    share: list[list[float | None]] = []
    latency: list[list[float | None]] = []
    share_text: list[list[str]] = []
    latency_text: list[list[str]] = []
    hover: list[list[list[Any]]] = []
    for by_variant in rows:
        share.append([])
        latency.append([])
        share_text.append([])
        latency_text.append([])
        hover.append([])
        for name in variants:
            path = by_variant.get(name)
            if path is None:
                share[-1].append(None)
                latency[-1].append(None)
                share_text[-1].append("")
                latency_text[-1].append("")
                hover[-1].append(["", "", "", 0.0, 0.0, name])
                continue
            mark = "*" if path["alua"] == "ANO" else ""
            share[-1].append(100.0 * path["share"])
            share_text[-1].append(f"{100.0 * path['share']:.1f}{mark}" if path["ios"] else mark)
            busy = path["ios"] > 0
            latency[-1].append(path["lat_ms"]["mean"] if busy else None)
            latency_text[-1].append(format_ms(path["lat_ms"]["mean"]) + mark if busy else "")
            hover[-1].append(
                [
                    path["alua"],
                    path["state"],
                    path["array"],
                    path["iops"],
                    path["lat_ms"]["p99"] if busy else 0.0,
                    name,
                ]
            )
    hovertemplate = (
        "%{y} in %{customdata[5]}<br>ALUA %{customdata[0]}, %{customdata[1]}, array %{customdata[2]}"
        "<br>%{customdata[3]:,.0f} IOPS, p99 %{customdata[4]:.3~g} ms<extra></extra>"
    )
    # Many variants stack the two maps, each the page's width, so that the cells keep their numbers.
    stacked = len(variants) > PATHS_SIDE_BY_SIDE_MAX
    fig = make_subplots(
        rows=2 if stacked else 1,
        cols=1 if stacked else 2,
        shared_xaxes=stacked,
        shared_yaxes=not stacked,
        horizontal_spacing=0.12,
        vertical_spacing=0.12,
        subplot_titles=("share of the device's I/O, %", "mean latency, ms"),
    )
    groups = doc_groups(doc)
    # Grouped variants as a two-level axis: the settings under each group's name.
    x: list[str] | list[list[str]] = (
        variants
        if groups is None
        else [[groups.group(name) for name in variants], [groups.suffix(name) for name in variants]]
    )
    for index, (z, text, what, colorscale, unit, z_range) in enumerate(
        (
            (share, share_text, " carried %{z:.1f} %", "Blues", "%", (0, 100)),
            (latency, latency_text, ": mean %{z:.3~g} ms", "OrRd", "ms", (None, None)),
        )
    ):
        row, col = (index + 1, 1) if stacked else (1, index + 1)
        if stacked:
            domain = fig.get_subplot(row, col).yaxis.domain
            colorbar = {"y": (domain[0] + domain[1]) / 2, "len": domain[1] - domain[0], "x": 1.0}
        else:
            colorbar = {"x": 0.44 if index == 0 else 1.0}
        fig.add_heatmap(
            z=z,
            x=x,
            y=labels,
            text=text,
            texttemplate="%{text}",
            customdata=hover,
            hovertemplate=hovertemplate.replace("<br>ALUA", f"{what}<br>ALUA", 1),
            colorscale=colorscale,
            zmin=z_range[0],
            zmax=z_range[1],
            colorbar={**colorbar, "title": {"text": unit}, "thickness": 12},
            xgap=2,
            ygap=2,
            row=row,
            col=col,
        )
        fig.update_yaxes(autorange="reversed", title_text="path", row=row, col=col)
    # Stacked, the upper map keeps its column labels: 30 columns are not read from below.
    fig.update_xaxes(side="bottom", showticklabels=True)
    fig.update_xaxes(title_text="variant", row=2 if stacked else 1)
    title = "Per-path I/O share and latency"
    _layout(fig, title, (2 if stacked else 1) * (190 + 24 * len(rows)))
    fig.update_layout(plot_bgcolor="#f6f8fa")
    return Figure("paths", title, _paths_caption(doc) + spread, fig)


def _slowest_mean_ms(by_variant: Mapping[str, Mapping[str, Any]]) -> float:
    """A path row's highest mean latency over the variants where it carried I/O (0 if none)."""
    return max((path["lat_ms"]["mean"] for path in by_variant.values() if path["ios"] > 0), default=0.0)


def _slowest_paths(
    labels: Sequence[str], rows: Sequence[Mapping[str, Mapping[str, Any]]]
) -> tuple[list[str], list[Mapping[str, Mapping[str, Any]]], str]:
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
            places = _names(where)
        else:
            places = f"{len(where)} groups"
        parts.append(f"{setting} {format_pct_span([share for _, share in found])} in {places}")
    return "; ".join(parts)


@dataclass(frozen=True)
class _Panel:
    """One heatmap of a variant in a variant-selectable heatmap figure."""

    variant: str
    rows: list[str]
    times_s: list[float]
    z: list[list[float | None]]
    events: list[Mapping[str, Any]]
    faults: Sequence[Mapping[str, Any]] = ()


FAULT_COLORS = {"start": "#cf222e", "end": "#1a7f37"}
"""A fault's start is marked red, its end green, a step between them (the mediator's decision) amber."""
STEP_COLOR = "#9a6700"
FAULT_SYMBOLS = {"start": "✕", "end": "✓"}
STEP_SYMBOL = "●"
MAX_NAMED_VARIANTS = 4
"""A fault mark's hover text and the overview's caption name up to this many variants, then count them."""


def _fault_edges(doc: Document) -> list[tuple[Mapping[str, Any], str]]:
    """Every variant's fault edges with the variant's name."""
    return [(edge, variant["name"]) for variant in doc["variants"] for edge in variant.get("faults", [])]


def _fault_marks(
    edges: Iterable[tuple[Mapping[str, Any], str]],
    *,
    xref: str = "x",
    yref: str = "paper",
    name_variants: bool = False,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Dashed vertical lines and hoverable ✕ (start, red) and ✓ (end, green) marks at fault edges,
    the lines over the height of `yref` (a panel's `y2 domain`), the marks over its top.

    Edges at one time and phase share a mark whose hover text lists them; with `name_variants`
    (variants sharing a plot) each names the variants it happened in.
    """
    at: dict[tuple[float, str], dict[str, list[str]]] = {}
    for edge, variant in edges:
        what = f"{edge['kind']} {edge['phase']}, {edge['target']}"
        if edge.get("detail"):
            what += f" ({edge['detail']})"
        at.setdefault((edge["t_s"], edge["phase"]), {}).setdefault(what, []).append(variant)
    shapes = []
    annotations = []
    for (t_s, phase), happened in sorted(at.items()):
        color = FAULT_COLORS.get(phase, STEP_COLOR)
        shapes.append(
            {
                "type": "line",
                "name": f"fault {phase}",
                "xref": xref,
                "yref": yref,
                "x0": t_s,
                "x1": t_s,
                "y0": 0,
                "y1": 1,
                "line": {"color": color, "width": 1.5, "dash": "dash"},
                "opacity": 0.6,
            }
        )
        lines = []
        for what, variants in happened.items():
            if name_variants:
                names = variants if len(variants) <= MAX_NAMED_VARIANTS else [f"{len(variants)} variants"]
                what += f" in {', '.join(names)}"
            lines.append(what)
        annotations.append(
            {
                "name": f"fault {phase}",
                "x": t_s,
                "y": 1.0,
                "xref": xref,
                "yref": yref,
                "yanchor": "bottom",
                "text": FAULT_SYMBOLS.get(phase, STEP_SYMBOL),
                "showarrow": False,
                "font": {"size": 13, "color": color},
                "hovertext": f"{t_s:.3f} s: " + "<br>".join(lines),
            }
        )
    return shapes, annotations


def _event_marks(events: Iterable[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Dashed vertical lines and hoverable ▼ marks at path selection events."""
    shapes = []
    annotations = []
    for event in events:
        shapes.append(
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": event["t_s"],
                "x1": event["t_s"],
                "y0": 0,
                "y1": 1,
                "line": {"color": "#24292f", "width": 1, "dash": "dot"},
            }
        )
        annotations.append(
            {
                "x": event["t_s"],
                "y": 1.0,
                "xref": "x",
                "yref": "paper",
                "yanchor": "bottom",
                "text": "▼",
                "showarrow": False,
                "font": {"size": 13, "color": "#24292f"},
                "hovertext": f"{event['t_s']:.3f} s, {event['device']}: {event['event']} "
                + ", ".join(event["paths"]),
            }
        )
    return shapes, annotations


def _variant_heatmaps(
    key: str,
    title: str,
    caption: str,
    panels: Sequence[_Panel],
    *,
    row_title: str,
    value_title: str,
    hovertemplate: str,
    colorscale: str,
    zmax: float | None = None,
    selected: str | None = None,
) -> Figure:
    """Heatmaps (rows × time) of several variants, one shown at a time, chosen from a drop-down."""
    fig = go.Figure()
    shown = next((i for i, panel in enumerate(panels) if panel.variant == selected), 0)
    marks = []
    for panel in panels:
        event_shapes, event_annotations = _event_marks(panel.events)
        fault_shapes, fault_annotations = _fault_marks((edge, panel.variant) for edge in panel.faults)
        marks.append((event_shapes + fault_shapes, event_annotations + fault_annotations))
    for index, panel in enumerate(panels):
        fig.add_heatmap(
            z=panel.z,
            x=panel.times_s,
            y=panel.rows,
            colorscale=colorscale,
            zmin=0,
            zmax=zmax,
            colorbar={"title": {"text": value_title}, "thickness": 12},
            hovertemplate=hovertemplate,
            name=panel.variant,
            visible=index == shown,
            ygap=1,
        )
    fig.update_yaxes(autorange="reversed", type="category", title_text=row_title)
    fig.update_xaxes(title_text=TIME_AXIS)
    rows = max(len(panel.rows) for panel in panels)
    _layout(fig, f"{title}: {panels[shown].variant}", 200 + 18 * rows)
    fig.update_layout(shapes=marks[shown][0], annotations=marks[shown][1], margin={"t": 100})
    if len(panels) > 1:
        fig.update_layout(
            updatemenus=[
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
                                {"visible": [i == index for i in range(len(panels))]},
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
        )
    return Figure(key, title, caption, fig)


def _pivot(
    frame: pd.DataFrame, order: Sequence[str]
) -> tuple[list[str], list[float], list[list[float | None]]]:
    """Rows (in `order`, then any others) × sample times of a one-variant, one-metric series."""
    table = frame.pivot_table(index="name", columns="t_s", values="value", aggfunc="mean")
    names = [name for name in order if name in table.index]
    names += sorted(name for name in table.index if name not in set(order))
    table = table.reindex(names)
    z = [[None if pd.isna(value) else float(value) for value in row] for row in table.to_numpy()]
    return names, [float(t) for t in table.columns], z


def path_timeline_figure(doc: Document, series: pd.DataFrame) -> Figure | None:
    """IOPS of every path over time, one variant at a time, with path selection events marked."""
    frame = series[(series["kind"] == "path") & (series["metric"] == "iops")]
    if frame.empty:
        return None
    panels = []
    hidden: dict[str, pd.Series] = {}
    for variant in doc["variants"]:
        rows = frame[frame["variant"] == variant["name"]]
        if rows.empty:
            continue
        order = [path["name"] for path in variant["paths"]]
        mean_iops = rows.groupby("name")["value"].mean()
        if len(mean_iops) > MAX_LINES:
            # The busiest paths by mean IOPS: 4,096 rows of one pixel each show nothing.
            top = mean_iops.nlargest(MAX_LINES)
            rows = rows[rows["name"].isin(top.index)]
            hidden[variant["name"]] = mean_iops
        names, times_s, z = _pivot(rows, order)
        faults = variant.get("faults", ())
        panels.append(_Panel(variant["name"], names, times_s, z, variant["psp_events"], faults))
    marked = [v["name"] for v in doc["variants"] if v["psp_events"] or v.get("faults")]
    with_events = marked[0] if marked else None
    caption = (
        "Each row is a path, its colour the IOPS it carried in each sample: a row turning pale is a path the "
        "policy stopped using; ▼ marks path selection events (hover for details)."
    )
    if _fault_edges(doc):
        caption += f" {FAULT_MARKS_TEXT}"
    if len(panels) > 1:
        caption += " Choose the variant at the top right."
    if hidden:
        caption += " " + _top_of_each({name: len(means) for name, means in hidden.items()}, "paths", "mean IOPS")
        every_mean = pd.concat(list(hidden.values()))
        caption += (
            f"; mean IOPS across all spans {format_count(every_mean.min())} to "
            f"{format_count(every_mean.max())}, median {format_count(every_mean.median())}."
        )
    return _variant_heatmaps(
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


MAX_LINES = 20
"""Entities a time-line panel draws per variant; of more, those with the highest mean."""
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
class _Line:
    """One line of a time-line or CDF panel: a variant's entity, its legend entry and style."""

    variant: str
    entity: str
    legend: str
    color: str
    dash: str


@dataclass(frozen=True)
class _Facet:
    """One small panel (one per metric) of a figure: its title and lines."""

    title: str
    lines: list[_Line]

    @property
    def variants(self) -> list[str]:
        return list(dict.fromkeys(line.variant for line in self.lines))


@dataclass(frozen=True)
class _Grid:
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


def _axis_id(axis: Any) -> str:
    """`x2` for the layout's `xaxis2`: how shapes, annotations and `matches` name an axis."""
    return str(axis.plotly_name).replace("axis", "")


def _grid_figure(
    grid: _Grid,
    titles: Sequence[str],
    axis_titles: Sequence[str],
    x_title: str,
    *,
    single_panel_px: int = SINGLE_PANEL_PX,
    marks_above: bool = False,
) -> tuple[go.Figure, int]:
    """An empty figure of the grid's panels and its height in px (`single_panel_px` per panel when
    there is one facet). Every panel shares the x axis, a metric's panels their y axis (labelled in
    the first column); each facet's title is over its first panel (over the fault marks there with
    `marks_above`), x labels under its last."""
    panel_px = single_panel_px if grid.facets == 1 else FACET_PANEL_PX
    plot_px = grid.rows * panel_px + (grid.rows - 1) * PANEL_GAP_PX
    fig = make_subplots(
        rows=grid.rows,
        cols=grid.columns,
        vertical_spacing=PANEL_GAP_PX / plot_px,
        horizontal_spacing=0.03,
    )
    used = set()
    first_y = [_axis_id(fig.get_subplot(*grid.cell(0, metric)).yaxis) for metric in range(grid.metrics)]
    # The panels' axes updated in place and the titles added in one assignment: update_xaxes(row=,
    # col=) searches every axis and add_annotation revalidates every title already there.
    title_annotations = []
    for facet, title in enumerate(titles):
        last_in_column = facet + grid.columns >= grid.facets
        for metric, axis_title in enumerate(axis_titles):
            row, col = grid.cell(facet, metric)
            used.add((row, col))
            subplot = fig.get_subplot(row, col)
            bottom = metric == grid.metrics - 1
            subplot.xaxis.update(
                matches=None if (row, col) == (1, 1) else "x",
                showticklabels=bottom,
                title_text=x_title if bottom and last_in_column else None,
            )
            own_y = _axis_id(subplot.yaxis)
            subplot.yaxis.update(
                matches=None if own_y == first_y[metric] else first_y[metric],
                showticklabels=col == 1,
                title_text=axis_title if col == 1 else None,
                rangemode="tozero",
            )
            if title and metric == 0:
                title_annotations.append(
                    {
                        "text": title,
                        "xref": f"{_axis_id(subplot.xaxis)} domain",
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
    fig.layout.annotations = fig.layout.annotations + tuple(title_annotations)
    for row in range(1, grid.rows + 1):
        for col in range(1, grid.columns + 1):
            if (row, col) not in used:
                subplot = fig.get_subplot(row, col)
                subplot.xaxis.update(visible=False)
                subplot.yaxis.update(visible=False)
    return fig, 140 + plot_px


def _line_facets(
    doc: Document,
    variants: Sequence[str],
    names: Mapping[str, Sequence[str]],
    colors: Mapping[str, str],
    groups: Groups | None,
) -> list[_Facet]:
    """A time-line figure's panels. With one entity per variant: a panel per group of variants (or
    one for all without `groups`), a line per variant in its colour, named by its suffix in groups;
    with several: a panel per variant, a line per entity, an entity alike in every panel."""
    if any(len(names[variant]) > 1 for variant in variants):
        styles: dict[str, tuple[str, str]] = {}
        return [
            _Facet(
                variant,
                [
                    _Line(variant, entity, entity, *styles.setdefault(entity, _style(len(styles))))
                    for entity in names[variant]
                ],
            )
            for variant in variants
        ]
    dashes = variant_dashes(doc)
    return _group_facets(
        groups, [_Line(v, names[v][0], _legend(groups, v), colors[v], dashes[v]) for v in variants]
    )


def _legend(groups: Groups | None, variant: str) -> str:
    """A variant's legend entry: in panels per group its suffix (the group is the panel's title)."""
    return variant if groups is None else groups.suffix(variant)


def _group_facets(groups: Groups | None, lines: Sequence[_Line]) -> list[_Facet]:
    """One panel of all `lines` or, with `groups`, one per group with its variants' lines."""
    if groups is None:
        return [_Facet("", list(lines))]
    return [
        _Facet(group, drawn)
        for group, members in groups.members.items()
        if (drawn := [line for line in lines if line.variant in members])
    ]


def _time_lines(
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
) -> Figure | None:
    """Line plots of `kind` entities over time, a panel per (metric, axis title) in `panels`.

    With one entity per variant the variants share the panels, coloured as everywhere else, one
    set of panels per group of variants when their names form groups; with several, each variant
    gets its panels and the entities take the colours (`_line_facets`).
    `reference_lines` adds dashed horizontal lines (metric, value, label) per variant to the panel
    of that metric; variants sharing a panel share a line they have in common.
    """
    metrics = [metric for metric, _ in panels]
    frame = series[(series["kind"] == kind) & (series["metric"].isin(metrics))]
    if frame.empty:
        return None
    variants = [variant["name"] for variant in doc["variants"] if variant["name"] in set(frame["variant"])]
    names = {name: list(dict.fromkeys(frame[frame["variant"] == name]["name"])) for name in variants}
    # Each drawn entity's rows from one grouping: filtering the frame per entity is quadratic at
    # 10,000 VMs, and splitting out all 10,000 groups when 20 are drawn took a second.
    entity_groups = frame.groupby(["variant", "name"], sort=False)
    # First-panel means in one pass: a filter per entity took 8 s per figure at 10,000 VMs.
    firsts = frame[frame["metric"] == metrics[0]]
    first_means = firsts.groupby(["variant", "name"], sort=False)["value"].mean()
    hidden = {}
    for variant, listed in names.items():
        if len(listed) > MAX_LINES:
            # The highest first-panel means: lines that stand out, not 10,000 that cover each other.
            means = first_means[variant]
            ranked = sorted(listed, key=lambda entity: means.get(entity, math.nan), reverse=True)
            names[variant] = ranked[:MAX_LINES]
            hidden[variant] = len(listed)
    overlay = all(len(names[variant]) == 1 for variant in variants)
    groups = doc_groups(doc) if overlay else None
    facets = _line_facets(doc, variants, names, colors, groups)
    grid = _Grid(len(facets), len(panels))
    edges = _fault_edges(doc)
    fig, height_px = _grid_figure(
        grid, [facet.title for facet in facets], [t for _, t in panels], TIME_AXIS, marks_above=bool(edges)
    )
    shown_in_legend: set[str] = set()
    for index, facet in enumerate(facets):
        for line in facet.lines:
            rows = entity_groups.get_group((line.variant, line.entity))
            for metric_index, (metric, axis_title) in enumerate(panels):
                row, column = grid.cell(index, metric_index)
                points = rows[rows["metric"] == metric].sort_values("t_s")
                fig.add_scatter(
                    x=points["t_s"],
                    y=points["value"],
                    mode="lines+markers" if len(points) <= 40 else "lines",
                    marker={"size": 5},
                    line={"color": line.color, "dash": line.dash, "width": 2},
                    name=line.legend,
                    legendgroup=line.legend,
                    showlegend=line.legend not in shown_in_legend,
                    hovertemplate=(
                        f"{line.variant} · {line.entity}<br>"
                        f"%{{x:.3~g}} s: %{{y:,.4~g}} {axis_title}<extra></extra>"
                    ),
                    row=row,
                    col=column,
                )
                shown_in_legend.add(line.legend)
    # Marks are gathered and appended in one assignment: plotly's add_shape, add_annotation and
    # add_hline revalidate every mark already there: 50 s for the 1,600 marks of a 19-variant study.
    mark_shapes: list[dict[str, Any]] = []
    mark_annotations: list[dict[str, Any]] = []
    drawn: set[tuple[int, int, float, str]] = set()
    for index, facet in enumerate(facets):
        for variant in facet.variants:
            for metric, value, label in (reference_lines or {}).get(variant, ()):
                row, column = grid.cell(index, metrics.index(metric))
                if (row, column, value, label) in drawn:
                    continue
                drawn.add((row, column, value, label))
                shape, annotation = _reference_line(fig.get_subplot(row, column), value, label)
                mark_shapes.append(shape)
                mark_annotations.append(annotation)
    for index, facet in enumerate(facets):
        here = [(edge, name) for edge, name in edges if name in facet.variants]
        for metric_index in range(len(panels)):
            subplot = fig.get_subplot(*grid.cell(index, metric_index))
            shapes, annotations = _fault_marks(
                here,
                xref=_axis_id(subplot.xaxis),
                yref=f"{_axis_id(subplot.yaxis)} domain",
                name_variants=len(facet.variants) > 1,
            )
            mark_shapes += shapes
            # The ✕ and ✓ once, over the facet's first panel.
            if metric_index == 0:
                mark_annotations += annotations
    fig.layout.shapes = fig.layout.shapes + tuple(mark_shapes)
    fig.layout.annotations = fig.layout.annotations + tuple(mark_annotations)
    if edges:
        caption += f" {FAULT_MARKS_TEXT}"
    _layout(fig, title, height_px)
    if edges and any(facet.title for facet in facets):
        # The top row's titles over its fault marks: room for both under the figure's title.
        fig.update_layout(margin={"t": MARGINS_PX["t"] + FAULT_MARK_PX}, height=height_px + FAULT_MARK_PX)
    if groups is not None:
        caption += f" {_groups_text(groups)}"
    if overlay:
        caption += _overlap_text(frame, facets)
    if hidden:
        caption += f" {_top_of_each(hidden, ENTITY_PLURALS.get(kind, kind + 's'), f'mean {panels[0][1]}')}."
    return Figure(key, title, caption, fig)


def _reference_line(subplot: Any, value: float, label: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A dashed horizontal line at `value` across a panel and its label over its left end: what
    plotly's add_hline draws, without its cost per mark already drawn."""
    xref, yref = _axis_id(subplot.xaxis), _axis_id(subplot.yaxis)
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


def _top_of_each(counts: Mapping[str, int], what: str, measure: str) -> str:
    """Which `what` a figure draws of variants with over MAX_LINES (`counts`): per variant, or for
    more than MAX_NAMED_VARIANTS variants in one clause."""
    if len(counts) <= MAX_NAMED_VARIANTS:
        return "; ".join(
            f"{variant}: the {MAX_LINES} of {count:,} {what} with the highest {measure}"
            for variant, count in counts.items()
        )
    low, high = min(counts.values()), max(counts.values())
    of = f"{low:,}" if low == high else f"{low:,} to {high:,}"
    return f"In each of {len(counts)} variants, the {MAX_LINES} of its {of} {what} with the highest {measure}"


FAULT_MARKS_TEXT = (
    "Dashed lines mark faults: ✕ where one starts, ● a step (the mediator's decision), ✓ where it ends "
    "(hover for what and where)."
)


def _names(names: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _groups_text(groups: Groups) -> str:
    """What the panels of grouped variants are."""
    return (
        f"One panel per group of variants (the name before its last `{groups.separator}`), on shared "
        "axes; a setting (the name after it) has its colour in every panel."
    )


def _overlap_text(frame: pd.DataFrame, facets: Sequence[_Facet]) -> str:
    """The lines that lie on top of each other in each panel, lines overlapping alike in several
    panels named once."""
    where: dict[str, list[str]] = {}
    for facet in facets:
        legends = {line.variant: line.legend for line in facet.lines}
        for group in _overlapping(frame, facet.variants):
            every = len(group) == len(legends) > 2
            lines = "All lines" if every else _names([legends[name] for name in group])
            where.setdefault(lines, []).append(facet.title)
    if len(facets) == 1:
        return "".join(f" {lines} overlap." for lines in where)
    return "".join(
        f" {lines} overlap in {'every panel' if len(titles) == len(facets) else _names(titles)}."
        for lines, titles in where.items()
    )


def _overlapping(frame: pd.DataFrame, variants: Sequence[str]) -> list[list[str]]:
    """Groups of variants whose series (all metrics) agree within OVERLAP_TOLERANCE: one hides the others."""
    series = {
        variant: frame[frame["variant"] == variant].sort_values(["metric", "t_s"])[["metric", "t_s", "value"]]
        for variant in variants
    }
    groups: list[list[str]] = []
    for variant in variants:
        for group in groups:
            mine, theirs = series[variant], series[group[0]]
            if (
                len(mine) == len(theirs)
                and (mine[["metric", "t_s"]].to_numpy() == theirs[["metric", "t_s"]].to_numpy()).all()
                and np.allclose(mine["value"], theirs["value"], rtol=OVERLAP_TOLERANCE, atol=0.0)
            ):
                group.append(variant)
                break
        else:
            groups.append([variant])
    return [group for group in groups if len(group) > 1]


def vm_iops_figure(doc: Document, series: pd.DataFrame, colors: Mapping[str, str]) -> Figure | None:
    """IOPS of every VM over time."""
    return _time_lines(
        "vm-iops",
        "IOPS over time per VM",
        "Flat lines are a steady state; a step is a policy changing its mind (a path dropped, a throttle "
        "engaging); the gap between lines is what the choice of variant is worth.",
        doc,
        series,
        colors,
        kind="vm",
        panels=[("iops", "IOPS")],
    )


def vm_latency_figure(doc: Document, series: pd.DataFrame, colors: Mapping[str, str]) -> Figure | None:
    """Mean latency of every VM over time."""
    return _time_lines(
        "vm-latency",
        "Latency over time per VM",
        "Mean completion latency of each sample. With a fixed number of I/Os outstanding, latency is "
        "outstanding I/Os / IOPS (Little's law): this plot and the one above tell one story.",
        doc,
        series,
        colors,
        kind="vm",
        panels=[("lat_ms_mean", "mean latency, ms")],
    )


def device_queue_figure(doc: Document, series: pd.DataFrame, colors: Mapping[str, str]) -> Figure | None:
    """ACTV (I/Os issued to the paths) and QUED (I/Os waiting in the host) of every device over time."""
    several = any(len(variant["devices"]) > 1 for variant in doc["variants"])
    depths: dict[str, list[tuple[str, float, str]]] = {}
    for variant in doc["variants"]:
        by_depth: dict[int, list[str]] = {}
        for device in variant["devices"]:
            by_depth.setdefault(device["queue_depth"], []).append(device["name"])
        depths[variant["name"]] = [
            ("actv", float(depth), f"{_names(names) + ' ' if several else ''}queue depth {depth}")
            for depth, names in sorted(by_depth.items())
        ]
    pinned = [
        f"{variant['name']}: {device['name']} (ACTV {device['actv_mean']:.3g} of {device['queue_depth']}, "
        f"QUED {device['qued_mean']:.3g})"
        for variant in doc["variants"]
        for device in variant["devices"]
        if device["actv_mean"] >= PINNED_QUEUE_FRACTION * device["queue_depth"] and device["qued_mean"] >= 0.5
    ]
    finding = (
        f" Host queue full in {'; '.join(pinned)}."
        if pinned
        else " No device fills its queue: the host queues are not the limit."
    )
    return _time_lines(
        "device-queues",
        "Device queue occupancy (esxtop ACTV / QUED)",
        "ACTV: I/Os the device has issued to the paths; QUED: I/Os waiting in the host for a slot. ACTV "
        "pinned at the dashed queue depth with QUED above zero means the host queue, not the array, "
        "sets the pace." + finding,
        doc,
        series,
        colors,
        kind="device",
        panels=[("actv", "ACTV, I/Os"), ("qued", "QUED, I/Os")],
        reference_lines=depths,
    )


def _flow_control_finding(variant: str, controlled: Sequence[Mapping[str, Any]]) -> str:
    """Where L and the windows of a variant's flow-controlled hosts ended, against the threshold."""
    estimate = format_ms_span(host["flow_control"]["latency_estimate_ms"] for host in controlled)
    threshold = format_ms_span(host["flow_control"]["latency_threshold_ms"] for host in controlled)
    finals = {host["name"]: format_count(host["window"]["final"]) for host in controlled if host["window"]}
    if len(finals) > 1 and len(set(finals.values())) == 1:
        windows = f" and every window at {next(iter(finals.values()))}"
    elif finals:
        windows = " and the windows at " + ", ".join(f"{name} {final}" for name, final in finals.items())
    else:
        windows = ""
    return f"In {variant}, L ends at {estimate} (threshold {threshold}){windows}."


def host_flow_control_figure(doc: Document, series: pd.DataFrame, colors: Mapping[str, str]) -> Figure | None:
    """Window and latency estimate of every flow-controlled host over time, the threshold dashed:
    the convergence plots of the PARDA paper (Gulati et al., FAST '09)."""
    thresholds: dict[str, list[tuple[str, float, str]]] = {}
    findings = []
    for variant in doc["variants"]:
        controlled = [host for host in entities(variant, "hosts") if host["flow_control"]]
        if controlled:
            limits = sorted({host["flow_control"]["latency_threshold_ms"] for host in controlled})
            thresholds[variant["name"]] = [
                ("latency_estimate_ms", limit, f"threshold {format_ms(limit)} ms") for limit in limits
            ]
            findings.append(_flow_control_finding(variant["name"], controlled))
    return _time_lines(
        "host-flow-control",
        "Host flow control: window and latency estimate",
        "Each host sets its window (its device queue depth) from L, its estimate of the cluster-wide "
        "latency: the window grows while L is below the dashed threshold and shrinks above it, so L "
        "settles near the threshold and the windows divide the array in proportion to β. "
        + " ".join(findings),
        doc,
        series,
        colors,
        kind="host",
        panels=[("window", "window, I/Os"), ("latency_estimate_ms", "latency estimate L, ms")],
        reference_lines=thresholds,
    )


def injector_figure(doc: Document, colors: Mapping[str, str]) -> Figure | None:
    """SIOC's injector curve: device latency against throughput at each outstanding-I/O level,
    with the automatic threshold at its percent of the peak marked."""
    curves = [(variant["name"], found) for variant in doc["variants"] for found in variant.get("injector", [])]
    if not curves:
        return None
    fig = go.Figure()
    findings = []
    for variant, found in curves:
        points = found["points"]
        label = variant if len({v for v, _ in curves}) == len(curves) else f"{variant} · {found['volume']}"
        fig.add_scatter(
            x=[point["iops"] for point in points],
            y=[point["latency_ms"] for point in points],
            customdata=[point["outstanding"] for point in points],
            mode="lines+markers",
            line={"color": colors[variant], "width": 2},
            name=label,
            hovertemplate=f"{label}<br>%{{customdata}} outstanding: %{{x:.4~g}} IOPS, %{{y:.4~g}} ms<extra></extra>",
        )
        target = found["peak_iops"] * found["percent_of_peak"] / 100
        fig.add_scatter(
            x=[target],
            y=[found["threshold_ms"]],
            mode="markers",
            marker={"color": colors[variant], "size": 12, "symbol": "x"},
            name=f"{label}: threshold",
            hovertemplate=f"{label}<br>threshold %{{y:.4~g}} ms at %{{x:.4~g}} IOPS<extra></extra>",
        )
        findings.append(
            f"In {variant}, the peak is {format_count(found['peak_iops'])} IOPS and the threshold "
            f"{format_ms(found['threshold_ms'])} ms ({found['percent_of_peak']:g} % of peak, "
            f"{format_count(found['io_size_bytes'] / 1024)} KiB reads)."
        )
    fig.update_xaxes(title_text="injector throughput, IOPS")
    fig.update_yaxes(title_text="device latency (DAVG), ms")
    title = "SIOC injector: the automatic threshold"
    _layout(fig, title, 420)
    caption = (
        "Before the run, random reads at 1 to 64 outstanding I/Os measure the idle datastore; the "
        "threshold (×) is the latency where throughput first reaches the percent of the peak. "
        + " ".join(findings)
    )
    return Figure("sioc-injector", title, caption, fig)


def _nines(percentile: float) -> float:
    """The CDF's y position of a percentile: 90 → 1, 99 → 2, 99.9 → 3 (the tail gets room)."""
    return -math.log10(1.0 - percentile / 100.0)


def latency_cdf_figure(doc: Document, colors: Mapping[str, str]) -> Figure | None:
    """Completion latency percentiles of every job and direction, from fio's percentile list."""
    curves = []
    for variant in doc["variants"]:
        for job in variant["jobs"]:
            for direction in ("read", "write"):
                lat_ns = job[direction]["lat_ns"]
                points = [
                    (float(key), value / 1e6)
                    for key, value in sorted_percentiles(lat_ns.get("percentile", {}))
                    if value > 0
                ]
                if lat_ns["N"] and points:
                    curves.append((variant["name"], f"{job['name']} {direction}", points))
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
        _Line(
            variant,
            label,
            _legend(groups, variant) + ("" if per_variant[variant] == 1 else f" · {label}"),
            colors[variant],
            styles[label],
        )
        for variant, label, _ in curves
    ]
    points_of = {(variant, label): points for variant, label, points in curves}
    facets = _group_facets(groups, lines)
    lowest = min(latency for _, _, points in every_curve for _, latency in points)
    highest = max(latency for _, _, points in every_curve for _, latency in points)
    x_axis = latency_axis("completion latency, ms", lowest, highest)
    grid = _Grid(len(facets), 1)
    fig, height_px = _grid_figure(
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
                _percentile_band(fig, variant, banded[variant], colors[variant], row=row, col=column)
        for line in facet.lines:
            points = points_of[(line.variant, line.entity)]
            name = f"{line.variant} · {line.entity}" if per_variant[line.variant] > 1 else line.variant
            fig.add_scatter(
                x=[latency for _, latency in points],
                y=[_nines(p) for p, _ in points],
                customdata=[p for p, _ in points],
                mode="lines+markers",
                line={"color": line.color, "width": 2, "dash": line.dash, "shape": "hv"},
                marker={"size": 5},
                name=line.legend,
                legendgroup=line.legend,
                showlegend=line.legend not in shown_in_legend,
                hovertemplate=f"{name}<br>p%{{customdata}}: %{{x:.4~g}} ms<extra></extra>",
                row=row,
                col=column,
            )
            shown_in_legend.add(line.legend)
    fig.update_xaxes(x_axis)
    fig.update_yaxes(
        tickvals=[_nines(p) for p in CDF_PERCENTILE_TICKS],
        ticktext=[f"{p:g}" for p in CDF_PERCENTILE_TICKS],
        range=[-0.1, _nines(99.99) + 0.2],
    )
    title = "Latency percentiles (CDF)"
    _layout(fig, title, height_px)
    worst = max(every_curve, key=lambda curve: curve[2][-1][1])
    caption = (
        "A point (x, y) reads: y % of I/Os completed within x ms; the y axis stretches the tail "
        "(90, 99, 99.9 get equal room). Further left is faster; the longest tail is variant "
        f"{worst[0]} ({worst[1]}): p{worst[2][-1][0]:g} = {format_ms(worst[2][-1][1])} ms."
    )
    if groups is not None:
        caption += f" {_groups_text(groups)}"
    caption += "".join(f" {summary}" for summary in summaries)
    return Figure("latency-cdf", title, caption, fig)


def _p99_ms(curve: tuple[str, str, list[tuple[float, float]]]) -> float:
    """A CDF curve's p99 in ms (its highest point below p99 if fio's list lacks 99)."""
    below = [latency for percentile, latency in curve[2] if percentile <= 99.0]
    return below[-1] if below else curve[2][0][1]


def _percentile_band(
    fig: go.Figure,
    variant: str,
    curves: Sequence[tuple[str, str, list[tuple[float, float]]]],
    color: str,
    *,
    row: int,
    col: int,
) -> None:
    """A shaded band from the fastest to the slowest curve at each percentile."""
    spans: dict[float, list[float]] = {}
    for _, _, points in curves:
        for percentile, latency in points:
            spans.setdefault(percentile, []).append(latency)
    percentiles = sorted(spans)
    fastest_ms = [min(spans[p]) for p in percentiles]
    slowest_ms = [max(spans[p]) for p in percentiles]
    fig.add_scatter(
        x=fastest_ms + slowest_ms[::-1],
        y=[_nines(p) for p in percentiles] + [_nines(p) for p in percentiles[::-1]],
        fill="toself",
        fillcolor=color,
        opacity=0.2,
        line={"width": 0},
        mode="lines",
        name=f"{variant} · all {len(curves):,} (band)",
        hoverinfo="skip",
        row=row,
        col=col,
    )


def _core_sort_key(name: str) -> tuple[str, int, str]:
    array, _, number = name.rpartition("/")
    return (array, int(number), "") if number.isdigit() else (name, -1, name)


def core_util_figure(doc: Document, series: pd.DataFrame) -> Figure | None:
    """Utilisation of every array core over time (entities `core/<array>/<n>`, metric `util`)."""
    frame = series[(series["kind"] == "core") & (series["metric"] == "util")].copy()
    if frame.empty:
        return None
    frame["value"] = 100.0 * frame["value"]
    panels = []
    worst: tuple[float, str, str, float, float] | None = None
    for variant in doc["variants"]:
        rows = frame[frame["variant"] == variant["name"]]
        if rows.empty:
            continue
        order = sorted(set(rows["name"]), key=_core_sort_key)
        names, times_s, z = _pivot(rows, order)
        panels.append(_Panel(variant["name"], names, times_s, z, [], variant.get("faults", ())))
        means = rows.groupby("name")["value"].mean()
        hot, average = str(means.idxmax()), float(means.mean())
        imbalance = float(means.max()) / average if average > 0 else 1.0
        if worst is None or imbalance > worst[0]:
            worst = (imbalance, variant["name"], hot, float(means.max()), average)
    assert worst is not None  # frame is not empty, so some variant has rows
    imbalance, variant_name, hot, hot_pct, average_pct = worst
    if imbalance > HOT_CORE_FACTOR:
        finding = (
            f"In {variant_name}, core {hot} averages {hot_pct:.0f} % while the mean core is at "
            f"{average_pct:.0f} %: a hot spot that limits the array."
        )
    else:
        finding = f"Load is spread: the busiest core ({hot} in {variant_name}) averages {hot_pct:.0f} %."
    caption = f"Each row is a core (array/core), its colour the share of time it was busy. {finding}"
    if _fault_edges(doc):
        caption += f" {FAULT_MARKS_TEXT}"
    return _variant_heatmaps(
        "core-util",
        "Array core utilisation",
        caption,
        panels,
        row_title="array/core",
        value_title="busy %",
        hovertemplate="core %{y} at %{x:.3~g} s: %{z:.0f} % busy<extra></extra>",
        colorscale="YlOrRd",
        zmax=100.0,
        selected=variant_name,
    )
