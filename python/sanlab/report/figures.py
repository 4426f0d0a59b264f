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

from sanlab.fio import sorted_percentiles
from sanlab.results import Document, entities
from sanlab.tables import format_count, format_ms, tail_iops

PALETTE = (
    "#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2",
    "#B279A2", "#EECA3B", "#9D755D", "#FF9DA6", "#79706E",
)  # fmt: skip
"""Tableau 10: distinct hues that stay apart for most colour-vision deficiencies."""

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
TIME_AXIS = "simulated time, s"
SLOW_PATH_FACTOR = 1.5
"""In the path figure's caption, a path is slow when its mean latency exceeds this multiple of the fastest."""
HOT_CORE_FACTOR = 1.5
"""In the core figure's caption, a core is a hot spot when its mean use exceeds this multiple of the mean."""
LOG_SCALE_RATIO = 10.0
"""Latency axes turn logarithmic when the largest value is at least this multiple of the smallest."""
PINNED_QUEUE_FRACTION = 0.95
"""A device whose mean ACTV reaches this fraction of its queue depth (with I/Os queued) has a full queue."""
SETTLED_TOLERANCE = 0.05
"""The overview's caption names variants whose tail IOPS differ from the whole run's by more than this."""
OVERLAP_TOLERANCE = 0.005
"""Lines within this relative difference are named as overlapping in a time-series caption."""
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
CDF_PERCENTILE_TICKS = (0.0, 50.0, 90.0, 99.0, 99.9, 99.99)


@dataclass(frozen=True)
class Figure:
    """A plot with its page anchor (`key`), title and one-line caption."""

    key: str
    title: str
    caption: str
    plot: go.Figure


def variant_colors(doc: Document) -> dict[str, str]:
    """One palette colour per variant, in run order."""
    return {variant["name"]: PALETTE[index % len(PALETTE)] for index, variant in enumerate(doc["variants"])}


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
    parts = frame["entity"].str.split("/", n=1, expand=True)
    frame["kind"] = parts[0]
    frame["name"] = parts[1] if parts.shape[1] > 1 else ""
    return frame.drop(columns="entity")


def _layout(fig: go.Figure, title: str, height_px: int) -> None:
    fig.update_layout(
        template="plotly_white",
        title={"text": f"<b>{title}</b>", "x": 0.0, "xanchor": "left", "font": {"size": 16}},
        height=height_px,
        font={"family": FONT, "size": 12, "color": "#24292f"},
        margin={"l": 70, "r": 30, "t": 80, "b": 55},
        legend={"orientation": "v", "yanchor": "top", "y": 1.0, "xanchor": "left", "x": 1.02},
        hoverlabel={"font": {"family": FONT}},
    )


def _vm_rows(doc: Document) -> list[tuple[str, str, Mapping[str, Any]]]:
    """(variant, row label, VM) for every VM; the label is the variant, plus the VM when there are several."""
    several = any(len(variant["vms"]) > 1 for variant in doc["variants"])
    return [
        (variant["name"], f"{variant['name']} · {vm['name']}" if several else variant["name"], vm)
        for variant in doc["variants"]
        for vm in variant["vms"]
    ]


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
    low = min(vm["lat_ms"]["p50"] for _, _, vm in rows)
    high = max(vm["lat_ms"]["p999"] for _, _, vm in rows)
    log_latency = low > 0 and high / low >= LOG_SCALE_RATIO
    fig.update_yaxes(autorange="reversed", row=1, col=1)
    fig.update_xaxes(title_text="IOPS", rangemode="tozero", row=1, col=1)
    fig.update_xaxes(
        title_text="latency, ms" + (" (log scale)" if log_latency else ""),
        type="log" if log_latency else "linear",
        rangemode="tozero",
        row=1,
        col=2,
    )
    title = "Throughput and latency by variant"
    _layout(fig, title, 200 + 38 * len(rows))
    fig.update_layout(legend={"orientation": "h", "yanchor": "top", "y": -0.22, "xanchor": "right", "x": 1.0})
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


def _overview_caption(doc: Document) -> str:
    totals = {variant["name"]: sum(vm["iops"] for vm in variant["vms"]) for variant in doc["variants"]}
    what = "Bars: IOPS per VM; grey line: p50 to p99.9 latency, ○ mean, ◆ p99."
    finding = ""
    if len(totals) >= 2:
        best = max(totals, key=totals.__getitem__)
        worst = min(totals, key=totals.__getitem__)
        finding = f"{best} gives the most IOPS ({format_count(totals[best])})"
        if totals[worst] > 0:
            ratio = totals[best] / totals[worst]
            finding += f", {ratio:.1f}× {worst} ({format_count(totals[worst])}). "
        else:
            finding += f"; {worst} none. "
    return finding + _settling(doc, totals) + what


def _settling(doc: Document, totals: Mapping[str, float]) -> str:
    """Variants whose tail IOPS differ from their whole-run IOPS by more than SETTLED_TOLERANCE."""
    changed = []
    for variant in doc["variants"]:
        by_vm = tail_iops(variant)
        tails = [by_vm.get(vm["name"]) for vm in variant["vms"]]
        total = totals[variant["name"]]
        if total > 0 and all(tail is not None for tail in tails):
            tail = sum(tail for tail in tails if tail is not None)
            if abs(tail - total) > SETTLED_TOLERANCE * total:
                changed.append(f"{variant['name']} settles at {format_count(tail)}")
    if not changed:
        return ""
    return f"Over the last quarter of the run {_names(changed)} IOPS: a policy that changed its mind. "


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
    variants = [variant["name"] for variant in doc["variants"]]
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
                hover[-1].append(["", "", "", 0.0, 0.0])
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
                ]
            )
    hovertemplate = (
        "%{y} in %{x}<br>ALUA %{customdata[0]}, %{customdata[1]}, array %{customdata[2]}"
        "<br>%{customdata[3]:,.0f} IOPS, p99 %{customdata[4]:.3~g} ms<extra></extra>"
    )
    fig = make_subplots(
        rows=1,
        cols=2,
        shared_yaxes=True,
        horizontal_spacing=0.12,
        subplot_titles=("share of the device's I/O, %", "mean latency, ms"),
    )
    fig.add_heatmap(
        z=share,
        x=variants,
        y=labels,
        text=share_text,
        texttemplate="%{text}",
        customdata=hover,
        hovertemplate=hovertemplate.replace("<br>ALUA", " carried %{z:.1f} %<br>ALUA"),
        colorscale="Blues",
        zmin=0,
        zmax=100,
        colorbar={"title": {"text": "%"}, "x": 0.44, "thickness": 12},
        xgap=2,
        ygap=2,
        row=1,
        col=1,
    )
    fig.add_heatmap(
        z=latency,
        x=variants,
        y=labels,
        text=latency_text,
        texttemplate="%{text}",
        customdata=hover,
        hovertemplate=hovertemplate.replace("<br>ALUA", ": mean %{z:.3~g} ms<br>ALUA"),
        colorscale="OrRd",
        colorbar={"title": {"text": "ms"}, "x": 1.0, "thickness": 12},
        xgap=2,
        ygap=2,
        row=1,
        col=2,
    )
    fig.update_yaxes(autorange="reversed", title_text="path", row=1, col=1)
    fig.update_xaxes(title_text="variant", side="bottom")
    title = "Per-path I/O share and latency"
    _layout(fig, title, 190 + 24 * len(rows))
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
        slow = sum(path["share"] for path in busy if path["lat_ms"]["mean"] > SLOW_PATH_FACTOR * fastest)
        slow_shares.append((variant["name"], slow))
    what = (
        "One column per variant; * marks active-non-optimized paths, cells without a number carried no I/O."
    )
    loaded = [f"{name} {100 * share:.0f} %" for name, share in slow_shares if share >= 0.005]
    if not loaded:
        return f"{what} No variant sends I/O to a path over {SLOW_PATH_FACTOR:g}× the fastest path's latency."
    idle = len(slow_shares) - len(loaded)
    rest = f", {'the other' if idle == 1 else f'the other {idle}'} none" if idle else ""
    return (
        f"{what} I/O sent to paths over {SLOW_PATH_FACTOR:g}× slower than the fastest: "
        f"{', '.join(loaded)}{rest}."
    )


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
"""A fault mark's hover text names up to this many variants, then counts them."""


def _fault_edges(doc: Document) -> list[tuple[Mapping[str, Any], str]]:
    """Every variant's fault edges with the variant's name."""
    return [(edge, variant["name"]) for variant in doc["variants"] for edge in variant.get("faults", [])]


def _fault_marks(
    edges: Iterable[tuple[Mapping[str, Any], str]], *, xref: str = "x", name_variants: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Dashed vertical lines and hoverable ✕ (start, red) and ✓ (end, green) marks at fault edges.

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
                "yref": "paper",
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
                "yref": "paper",
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
    hidden = []
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
            hidden.append(
                f"{variant['name']}: the {MAX_LINES} of {len(mean_iops):,} paths with the highest mean IOPS; "
                f"mean IOPS across all spans {format_count(mean_iops.min())} to "
                f"{format_count(mean_iops.max())}, "
                f"median {format_count(mean_iops.median())}."
            )
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
    caption += "".join(f" {line}" for line in hidden)
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
    """Line plots of `kind` entities over time, one row per (metric, axis title) panel.

    With one entity per variant the variants share each panel, coloured as everywhere else;
    with several, each variant gets a column and the entities take the colours.
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
    hidden = []
    for variant, entities in names.items():
        if len(entities) > MAX_LINES:
            # The highest first-panel means: lines that stand out, not 10,000 that cover each other.
            means = first_means[variant]
            ranked = sorted(entities, key=lambda entity: means.get(entity, math.nan), reverse=True)
            names[variant] = ranked[:MAX_LINES]
            hidden.append(f"{variant}: the {MAX_LINES} of {len(entities):,} with the highest mean {panels[0][1]}.")
    overlay = all(len(entities) == 1 for entities in names.values())
    columns = 1 if overlay else len(variants)
    fig = make_subplots(
        rows=len(panels),
        cols=columns,
        shared_xaxes=True,
        shared_yaxes=True,
        vertical_spacing=0.1,
        horizontal_spacing=0.03,
        column_titles=None if overlay else variants,
    )
    entity_colors: dict[str, str] = {}
    shown_in_legend: set[str] = set()
    for column_index, variant in enumerate(variants, start=1):
        for entity in names[variant]:
            if overlay:
                legend, color, column = variant, colors[variant], 1
            else:
                color = entity_colors.setdefault(entity, PALETTE[len(entity_colors) % len(PALETTE)])
                legend, column = entity, column_index
            rows = entity_groups.get_group((variant, entity))
            for row_index, (metric, axis_title) in enumerate(panels, start=1):
                points = rows[rows["metric"] == metric].sort_values("t_s")
                fig.add_scatter(
                    x=points["t_s"],
                    y=points["value"],
                    mode="lines+markers" if len(points) <= 40 else "lines",
                    marker={"size": 5},
                    line={"color": color, "width": 2},
                    name=legend,
                    legendgroup=legend,
                    showlegend=legend not in shown_in_legend,
                    hovertemplate=(
                        f"{variant} · {entity}<br>%{{x:.3~g}} s: %{{y:,.4~g}} {axis_title}<extra></extra>"
                    ),
                    row=row_index,
                    col=column,
                )
                shown_in_legend.add(legend)
    drawn: set[tuple[int, int, float, str]] = set()
    for column_index, variant in enumerate(variants, start=1):
        for metric, value, label in (reference_lines or {}).get(variant, ()):
            row, column = metrics.index(metric) + 1, 1 if overlay else column_index
            if (row, column, value, label) in drawn:
                continue
            drawn.add((row, column, value, label))
            fig.add_hline(
                y=value,
                line={"color": "#6e7781", "dash": "dash", "width": 1},
                annotation_text=label,
                annotation_position="top left",
                annotation_font={"size": 11, "color": "#6e7781"},
                row=row,
                col=column,
            )
    for column_index, variant in enumerate(variants, start=1):
        if overlay and column_index > 1:
            break
        drawn_here = variants if overlay else [variant]
        edges = [(edge, name) for edge, name in _fault_edges(doc) if name in drawn_here]
        xref = fig.get_subplot(1, 1 if overlay else column_index).xaxis.plotly_name.replace("axis", "")
        shapes, annotations = _fault_marks(edges, xref=xref, name_variants=overlay and len(variants) > 1)
        for shape in shapes:
            fig.add_shape(shape)
        for annotation in annotations:
            fig.add_annotation(annotation)
    if _fault_edges(doc):
        caption += f" {FAULT_MARKS_TEXT}"
    for row_index, (_, axis_title) in enumerate(panels, start=1):
        fig.update_yaxes(title_text=axis_title, rangemode="tozero", row=row_index, col=1)
    for column in range(1, columns + 1):
        fig.update_xaxes(title_text=TIME_AXIS, row=len(panels), col=column)
    _layout(fig, title, 140 + 250 * len(panels))
    if overlay:
        caption += "".join(f" {_names(group)} overlap." for group in _overlapping(frame, variants))
    caption += "".join(f" {line}" for line in hidden)
    return Figure(key, title, caption, fig)


FAULT_MARKS_TEXT = (
    "Dashed lines mark faults: ✕ where one starts, ● a step (the mediator's decision), ✓ where it ends "
    "(hover for what and where)."
)


def _names(names: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


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


def _span_ms(values: Iterable[float]) -> str:
    """`30.0 ms` when the latencies print alike, `29.8–31.2 ms` when not."""
    texts = list(dict.fromkeys(format_ms(value) for value in sorted(values)))
    return f"{texts[0]} ms" if len(texts) == 1 else f"{texts[0]}–{texts[-1]} ms"


def _flow_control_finding(variant: str, controlled: Sequence[Mapping[str, Any]]) -> str:
    """Where L and the windows of a variant's flow-controlled hosts ended, against the threshold."""
    estimate = _span_ms(host["flow_control"]["latency_estimate_ms"] for host in controlled)
    threshold = _span_ms(host["flow_control"]["latency_threshold_ms"] for host in controlled)
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
    fig = go.Figure()
    every_curve = curves  # the axis range and the worst tail are over all, drawn or not
    summaries = []
    for variant, count in per_variant.items():
        if count > MAX_LINES:
            # 10,000 curves cover each other: the band shows all, the top p99s the tail.
            everyone = [curve for curve in curves if curve[0] == variant]
            _percentile_band(fig, variant, everyone, colors[variant])
            top = set(map(id, sorted(everyone, key=_p99_ms, reverse=True)[:MAX_LINES]))
            curves = [curve for curve in curves if curve[0] != variant or id(curve) in top]
            summaries.append(
                f"{variant}: the {MAX_LINES} of its {count:,} job curves with the highest p99; "
                "the band spans all."
            )
    styles = {label: DASHES[i % len(DASHES)] for i, label in enumerate(dict.fromkeys(c[1] for c in curves))}
    for variant, label, points in curves:
        name = variant if per_variant[variant] == 1 else f"{variant} · {label}"
        fig.add_scatter(
            x=[latency for _, latency in points],
            y=[_nines(p) for p, _ in points],
            customdata=[p for p, _ in points],
            mode="lines+markers",
            line={"color": colors[variant], "width": 2, "dash": styles[label], "shape": "hv"},
            marker={"size": 5},
            name=name,
            hovertemplate=f"{name}<br>p%{{customdata}}: %{{x:.4~g}} ms<extra></extra>",
        )
    lowest = min(latency for _, _, points in every_curve for _, latency in points)
    highest = max(latency for _, _, points in every_curve for _, latency in points)
    log_scale = highest / lowest >= LOG_SCALE_RATIO
    fig.update_xaxes(
        title_text="completion latency, ms" + (" (log scale)" if log_scale else ""),
        type="log" if log_scale else "linear",
    )
    fig.update_yaxes(
        title_text="percentile of I/Os, %",
        tickvals=[_nines(p) for p in CDF_PERCENTILE_TICKS],
        ticktext=[f"{p:g}" for p in CDF_PERCENTILE_TICKS],
        range=[-0.1, _nines(99.99) + 0.2],
    )
    title = "Latency percentiles (CDF)"
    _layout(fig, title, 480)
    worst = max(every_curve, key=lambda curve: curve[2][-1][1])
    caption = (
        "A point (x, y) reads: y % of I/Os completed within x ms; the y axis stretches the tail "
        "(90, 99, 99.9 get equal room). Further left is faster; the longest tail is variant "
        f"{worst[0]} ({worst[1]}): p{worst[2][-1][0]:g} = {format_ms(worst[2][-1][1])} ms."
    )
    caption += "".join(f" {summary}" for summary in summaries)
    return Figure("latency-cdf", title, caption, fig)


def _p99_ms(curve: tuple[str, str, list[tuple[float, float]]]) -> float:
    """A CDF curve's p99 in ms (its highest point below p99 if fio's list lacks 99)."""
    below = [latency for percentile, latency in curve[2] if percentile <= 99.0]
    return below[-1] if below else curve[2][0][1]


def _percentile_band(
    fig: go.Figure, variant: str, curves: Sequence[tuple[str, str, list[tuple[float, float]]]], color: str
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
