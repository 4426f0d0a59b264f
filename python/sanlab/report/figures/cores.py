"""Array cores: the utilisation of each core over time."""

from __future__ import annotations

import pandas as pd

from sanlab.document import Document
from sanlab.report.figures.common import Figure, means_by_variant
from sanlab.report.figures.heatmaps import Panel, pivot, variant_heatmaps
from sanlab.report.figures.marks import FAULT_MARKS_TEXT, fault_edges

HOT_CORE_FACTOR = 1.5
"""In the core figure's caption, a core is a hot spot when its mean use exceeds this multiple of the mean."""


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
        names, times_s, z = pivot(rows, order)
        panels.append(Panel(variant["name"], names, times_s, z, [], variant.get("faults", ())))
        means = means_by_variant(rows)[variant["name"]]
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
    if fault_edges(doc):
        caption += f" {FAULT_MARKS_TEXT}"
    return variant_heatmaps(
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
