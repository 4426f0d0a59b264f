"""The overview: IOPS and latency of every VM, variants side by side, and the sentence on which variants
win."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sanlab.analysis.tail import tail_iops
from sanlab.document import Document, VmReport
from sanlab.formatting import format_count, format_ms
from sanlab.report.figures.common import (
    MARGINS_PX,
    MAX_LINES,
    MAX_NAMED_VARIANTS,
    SAME_IOPS_TOLERANCE,
    Spec,
    Figure,
    doc_groups,
    in_group_order,
    join_names,
    latency_axis,
    layout,
    update,
)
from sanlab.report.figures.replicas import INTERVAL_NAME, bounds_of, interval_source, whiskers
from sanlab.report.figures.subplots import Subplots, subplots

SETTLED_TOLERANCE = 0.05
"""The overview's caption names variants whose tail IOPS differ from the whole run's by more than this."""


def _vm_rows(doc: Document) -> list[tuple[str, str, VmReport]]:
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


def _latency_traces(
    fig: Spec, panels: Subplots, rows: Sequence[tuple[str, str, VmReport]], legend_here: bool
) -> None:
    """The latency panel: each VM's p50 to p99.9 span, the mean's and p99's whiskers (in the
    legend once, `legend_here` when the IOPS bars have none) and markers."""
    labels = [label for _, label, _ in rows]
    range_x: list[float | None] = []
    range_y: list[str | None] = []
    for _, label, vm in rows:
        range_x += [vm["lat_ms"]["p50"], vm["lat_ms"]["p999"], None]
        range_y += [label, label, None]
    spans = {
        "type": "scatter",
        "x": range_x,
        "y": range_y,
        "mode": "lines",
        "line": {"color": "rgba(110,119,129,0.45)", "width": 10},
        "name": "p50 to p99.9",
        "hoverinfo": "skip",
    }
    fig["data"].append(panels.place(spans, 1, 2))
    for stat in ("mean", "p99"):
        # Under the markers; in the legend once, with the IOPS bars' whiskers or, without them, here.
        latency_whiskers = whiskers(
            [(vm["lat_ms"][stat], label, bounds_of(vm, stat)) for _, label, vm in rows],
            f"{stat} ms",
            ".3~g",
            showlegend=legend_here and stat == "mean",
        )
        if latency_whiskers is not None:
            fig["data"].append(panels.place(latency_whiskers, 1, 2))
    for stat, name, symbol, fill in (
        ("mean", "mean", "circle", "white"),
        ("p99", "p99", "diamond", "#24292f"),
    ):
        marks = {
            "type": "scatter",
            "x": [vm["lat_ms"][stat] for _, _, vm in rows],
            "y": labels,
            "mode": "markers",
            "name": name,
            "marker": {
                "symbol": symbol,
                "size": 11,
                "color": fill,
                "line": {"color": "#24292f", "width": 1.5},
            },
            "hovertemplate": f"%{{y}}<br>{name} %{{x:.3~g}} ms<extra></extra>",
        }
        fig["data"].append(panels.place(marks, 1, 2))


def overview_figure(
    doc: Document, colors: Mapping[str, str], tails: Mapping[str, Mapping[str, float]] | None = None
) -> Figure | None:
    """IOPS (bars) and latency (p50 to p99.9 range, mean, p99) of every VM, variants side by side;
    `tails`: each variant's `tail_iops`, when the page has them already."""
    rows = _vm_rows(doc)
    if not rows:
        return None
    rows, spreads = _top_p99_rows(rows)
    labels = [label for _, label, _ in rows]
    panels = subplots(
        1,
        2,
        shared_yaxes=True,
        horizontal_spacing=0.04,
        subplot_titles=("IOPS: longer is better", "latency, ms: further left is better"),
    )
    fig = panels.figure()
    bars = {
        "type": "bar",
        "x": [vm["iops"] for _, _, vm in rows],
        "y": labels,
        "orientation": "h",
        "marker": {"color": [colors[variant] for variant, _, _ in rows]},
        "text": [format_count(vm["iops"]) for _, _, vm in rows],
        "textposition": "auto",
        "customdata": [[vm["mbps"]] for _, _, vm in rows],
        "hovertemplate": "%{y}<br>%{x:,.0f} IOPS, %{customdata[0]:,.1f} MB/s<extra></extra>",
        "showlegend": False,
    }
    fig["data"].append(panels.place(bars, 1, 1))
    iops_whiskers = whiskers(
        [(vm["iops"], label, bounds_of(vm, "iops")) for _, label, vm in rows], "IOPS", ",.0f", showlegend=True
    )
    if iops_whiskers is not None:
        fig["data"].append(panels.place(iops_whiskers, 1, 1))
        # The count at the bar's start, clear of the whisker at its end.
        bars["insidetextanchor"] = "start"
    _latency_traces(fig, panels, rows, legend_here=iops_whiskers is None)
    low_ms = min(vm["lat_ms"]["p50"] for _, _, vm in rows)
    high_ms = max(vm["lat_ms"]["p999"] for _, _, vm in rows)
    iops_x, iops_y = panels.axes(1, 1)
    latency_x = panels.axes(1, 2)[0]
    update(fig["layout"][iops_y], {"autorange": "reversed"})
    update(fig["layout"][iops_x], {"title": {"text": "IOPS"}, "rangemode": "tozero"})
    latency = latency_axis("latency, ms", low_ms, high_ms)
    latency["title"] = {"text": latency.pop("title_text")}
    update(fig["layout"][latency_x], {**latency, "rangemode": "tozero"})
    title = "Throughput and latency by variant"
    height_px = 200 + 38 * len(rows)
    layout(fig, title, height_px)
    # The legend under the axis titles, the same distance below the plot whatever its height.
    below = -OVERVIEW_LEGEND_GAP_PX / (height_px - OVERVIEW_MARGINS_PX["t"] - OVERVIEW_MARGINS_PX["b"])
    update(
        fig["layout"],
        {
            "legend": {"orientation": "h", "yanchor": "top", "y": below, "xanchor": "right", "x": 1.0},
            "margin": OVERVIEW_MARGINS_PX,
        },
    )
    bands = _group_bands(doc, [variant for variant, _, _ in rows])
    if bands:
        fig["layout"]["shapes"] = bands
    if tails is None:
        tails = {variant["name"]: tail_iops(variant) for variant in doc["variants"]}
    caption = _overview_caption(doc, tails) + "".join(f" {spread}" for spread in spreads)
    drawn = [name for figure, name in (("iops", "IOPS"), ("mean", "mean"), ("p99", "p99"))
             if any(bounds_of(vm, figure) is not None for _, _, vm in rows)]  # fmt: skip
    if drawn:
        caption += f" Whiskers: the {INTERVAL_NAME} of {join_names(drawn)} {interval_source(doc)}."
    return Figure("overview", title, caption, fig)


def _top_p99_rows(
    rows: Sequence[tuple[str, str, VmReport]],
) -> tuple[list[tuple[str, str, VmReport]], list[str]]:
    """Of a variant with over MAX_LINES VMs, the MAX_LINES with the highest p99 (as the comparison
    table picks), and a sentence on the spread of p99 across all of them; other variants whole."""
    by_variant: dict[str, list[tuple[str, str, VmReport]]] = {}
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
        return f"{join_names([label[name] for name in most])} give the same IOPS ({format_count(best)})"
    verb = "gives" if len(most) == 1 else "give"
    sentence = f"{join_names([label[name] for name in most])} {verb} the most IOPS ({format_count(best)})"
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


def _overview_caption(doc: Document, tails: Mapping[str, Mapping[str, float]]) -> str:
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
            won.setdefault(join_names([groups.suffix(name) for name in most]), []).append(group)
        finding = (
            "The most IOPS per group (the summary above has the figures): "
            + "; ".join(f"{names} in {join_names(where)}" for names, where in won.items())
            + ". "
        )
    return finding + _settling(doc, totals, tails) + what


def _settling(doc: Document, totals: Mapping[str, float], tails_of: Mapping[str, Mapping[str, float]]) -> str:
    """Variants whose tail IOPS differ from their whole-run IOPS by more than SETTLED_TOLERANCE:
    named up to MAX_NAMED_VARIANTS, then counted with the spread of the change."""
    changed = []
    for variant in doc["variants"]:
        by_vm = tails_of[variant["name"]]
        tails = [by_vm.get(vm["name"]) for vm in variant["vms"]]
        total = totals[variant["name"]]
        if total > 0 and all(tail is not None for tail in tails):
            tail = sum(tail for tail in tails if tail is not None)
            if abs(tail - total) > SETTLED_TOLERANCE * total:
                changed.append((variant["name"], tail, total))
    if not changed:
        return ""
    if len(changed) <= MAX_NAMED_VARIANTS:
        settled = join_names([f"{name} settles at {format_count(tail)}" for name, tail, _ in changed])
        return f"Over the last quarter of the run {settled} IOPS: a policy that changed its mind. "
    changes_pct = sorted(100 * (tail - total) / total for _, tail, total in changed)
    return (
        f"Over the last quarter of the run, {len(changed)} of {len(totals)} variants' IOPS differ from "
        f"their whole run's by more than {100 * SETTLED_TOLERANCE:g} % ({changes_pct[0]:+.0f} % to "
        f"{changes_pct[-1]:+.0f} %; the table's tail IOPS has each). "
    )


OVERVIEW_MARGINS_PX = {**MARGINS_PX, "b": 95}

OVERVIEW_LEGEND_GAP_PX = 55
"""The overview's legend sits this far below its plots, under the axis titles."""
