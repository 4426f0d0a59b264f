"""What every figure of the report shares: the `Figure` it returns, the palette and a variant's
colour and dash (alike in every figure), the layout, log-axis ticks, the time series as one
table, the variants in group order, and the limits (MAX_LINES) above which a figure summarises.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from sanlab.document import Document, Variant
from sanlab.formatting import format_tick
from sanlab.report.groups import Groups, variant_groups

PALETTE = (
    "#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2",
    "#B279A2", "#EECA3B", "#9D755D", "#FF9DA6", "#79706E",
)  # fmt: skip
"""Tableau 10: distinct hues that stay apart for most colour-vision deficiencies."""

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif"
TIME_AXIS = "simulated time, s"
LOG_SCALE_RATIO = 10.0
"""Latency axes turn logarithmic when the largest value is at least this multiple of the smallest."""
LOG_TICK_STEPS = ((2.0, (1, 2, 3, 5)), (4.0, (1, 2, 5)), (math.inf, (1,)))
"""A log axis's labelled steps in each decade by the decades it spans: 1, 2, 3, 5 over up to two,
1, 2, 5 over up to four, then decades only."""
MARGINS_PX = {"l": 70, "r": 30, "t": 80, "b": 55}
SAME_IOPS_TOLERANCE = 0.005
"""Variants with IOPS within this relative difference of the most share the win."""
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")


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


def line_style(index: int) -> tuple[str, str]:
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
    return {name: line_style(index)[0] for name, index in _style_indexes(doc).items()}


def variant_dashes(doc: Document) -> dict[str, str]:
    """One line dash per variant: solid, dashed for the second round of colours, and so on."""
    return {name: line_style(index)[1] for name, index in _style_indexes(doc).items()}


def series_frame(doc: Document) -> pd.DataFrame:
    """All variants' time series as one table: variant, t_s, kind, name, metric, value.

    `kind` and `name` split the engine's entity (`path/local-0` is kind `path`, name `local-0`).
    """
    variants = list(doc["variants"])
    rows = [len(variant["timeseries"]["t_s"]) for variant in variants]
    if not any(rows):
        return pd.DataFrame(columns=["variant", "t_s", "kind", "name", "metric", "value"])
    # The text columns as codes into their few distinct values (factorized in C from plain
    # objects): pandas building a million strings into its own arrays took most of this time.
    def codes(column: str) -> tuple[np.ndarray, pd.Index]:
        texts = np.fromiter(itertools.chain.from_iterable(v["timeseries"][column] for v in variants), dtype=object)
        found, uniques = pd.factorize(texts)
        return found, pd.Index(uniques, dtype="str")

    entity, entities = codes("entity")
    metric, metrics = codes("metric")
    names = pd.array([variant["name"] for variant in variants], dtype="str")
    # Split each distinct entity once: splitting every row took 1.6 s of 1 M rows (19 variants, 320 s).
    parts = pd.Series(entities).str.split("/", n=1, expand=True)
    return pd.DataFrame(
        {
            "variant": names.take(np.repeat(np.arange(len(variants)), rows)),
            "t_s": np.concatenate([np.asarray(v["timeseries"]["t_s"], dtype=float) for v in variants]),
            "kind": parts[0].array.take(entity),
            "name": parts[1].array.take(entity) if parts.shape[1] > 1 else "",
            "metric": metrics.array.take(metric),
            "value": np.concatenate([np.asarray(v["timeseries"]["value"], dtype=float) for v in variants]),
        }
    )


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


def _template(name: str, traces: Sequence[str]) -> go.layout.Template:
    """Plotly's template `name` with the trace defaults of `traces` only: a figure validates and
    copies its template, and every page carries it, so the defaults of the 21 trace types the
    report never draws cost each figure 9 ms and 3.6 kB for nothing."""
    whole = pio.templates[name]
    return go.layout.Template(layout=whole.layout, data={kind: whole.data[kind] for kind in traces})


TEMPLATE = _template("plotly_white", ("scatter", "heatmap", "bar"))


def layout(fig: go.Figure, title: str, height_px: int) -> None:
    fig.update_layout(
        template=TEMPLATE,
        title={"text": f"<b>{title}</b>", "x": 0.0, "xanchor": "left", "font": {"size": 16}},
        height=height_px,
        font={"family": FONT, "size": 12, "color": "#24292f"},
        margin=MARGINS_PX,
        legend={"orientation": "v", "yanchor": "top", "y": 1.0, "xanchor": "left", "x": 1.02},
        hoverlabel={"font": {"family": FONT}},
    )


def in_group_order(doc: Document) -> list[Variant]:
    """The variants, those of a group together (groups in order of first appearance)."""
    groups = doc_groups(doc)
    if groups is None:
        return list(doc["variants"])
    by_name = {variant["name"]: variant for variant in doc["variants"]}
    return [by_name[name] for members in groups.members.values() for name in members]


MAX_NAMED_VARIANTS = 4
"""A fault mark's hover text and the overview's caption name up to this many variants, then count them."""

MAX_LINES = 20
"""Entities a time-line panel draws per variant; of more, those with the highest mean."""


def top_of_each(counts: Mapping[str, int], what: str, measure: str) -> str:
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


def join_names(names: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def groups_text(groups: Groups) -> str:
    """What the panels of grouped variants are."""
    return (
        f"One panel per group of variants (the name before its last `{groups.separator}`), on shared "
        "axes; a setting (the name after it) has its colour in every panel."
    )
