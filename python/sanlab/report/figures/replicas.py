"""What replications add to the figures: whiskers for the 95 % intervals of an entity's figures
(`ci95`, from `sanlab.replications`) and, behind each time line, the range its series spans across
the replications (each replication's `timeseries` in `replicas`). A run without intervals has
neither, and its figures are drawn exactly as without this module; one run with batch-means
intervals (`--replications 1`) has whiskers and no band.

The bands are the lowest to the highest value of the replications at each sample time, not a
t-interval of their mean: the line drawn is the first replication's, one draw among them, and the
range of the draws is what it belongs in (with several replications a t-interval of the mean is
far narrower than one replication's spread; with two, its half-width is 12.7 standard errors).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sanlab.document import Document
from sanlab.replications import ci95_of

INTERVAL_NAME = "95 % interval"
"""The legend entry of the whiskers."""
INTERVAL_LEGEND_GROUP = "ci95"
BAND_LEGEND_GROUP = "replica-range"
BAND_ALPHA = 0.18
"""The opacity of a band's fill, in its line's colour."""
WHISKER_COLOR = "#24292f"
NO_BANDS = pd.DataFrame(columns=["variant", "kind", "name", "metric", "t_s", "low", "high", "count"])


def replicated(doc: Document) -> bool:
    """Whether any variant of the document is the mean of several replications."""
    return any(len(variant.get("replicas", ())) > 1 for variant in doc["variants"])


def replications_text(doc: Document) -> str:
    """`4 replications`, `3 to 5 replications` when the variants ran different numbers of them, or
    `replications` when the document does not say how many (a hand-made one)."""
    counts = sorted(
        {
            count
            for variant in doc["variants"]
            if isinstance(count := variant.get("replications", len(variant.get("replicas", ()))), int)
            and count > 1
        }
    )
    if not counts:
        return "replications"
    return f"{counts[0]} replications" if len(counts) == 1 else f"{counts[0]} to {counts[-1]} replications"


def interval_source(doc: Document) -> str:
    """Where the whiskers' intervals come from, as the captions say it."""
    if replicated(doc):
        return f"over the {replications_text(doc)} (Student's t)"
    return "by batch means of the run's own time series (percentiles have none from one run)"


def bounds_of(entity: Mapping[str, Any], figure: str) -> list[float] | None:
    """An entity's 95 % interval `[low, high]` of a figure (`iops`, or a latency figure of `lat_ms`
    such as `p99`); None where it has none (no replications, or a tail of too few I/Os)."""
    return ci95_of(entity, figure)[1]


def whiskers(
    points: Sequence[tuple[float, str, list[float] | None]],
    what: str,
    value_format: str,
    *,
    showlegend: bool,
) -> dict[str, Any] | None:
    """A trace of horizontal whiskers from each point's interval (`(value, row label, [low, high]
    or None)`; a point without one has none), on a horizontal chart, or None when no point has one.

    The whiskers are plotly error bars (`error_x`, `array` up to the high bound and `arrayminus`
    down to the low one; a horizontal chart's bars take them on x) on ticks at the values, hovered
    with the bounds."""
    drawn = [(value, label, bounds) for value, label, bounds in points if bounds is not None]
    if not drawn:
        return None
    values = [value for value, _, _ in drawn]
    return {
        "type": "scatter",
        "x": values,
        "y": [label for _, label, _ in drawn],
        "mode": "markers",
        # A tick at the value, hidden under the bar's end or the mark: the legend's sign of the whiskers.
        "marker": {"symbol": "line-ns-open", "size": 10, "color": WHISKER_COLOR, "line": {"width": 1.5}},
        "error_x": {
            "type": "data",
            "symmetric": False,
            "array": [bounds[1] - value for value, _, bounds in drawn],
            "arrayminus": [value - bounds[0] for value, _, bounds in drawn],
            "color": WHISKER_COLOR,
            "thickness": 1.5,
            "width": 6,
        },
        "customdata": [bounds for _, _, bounds in drawn],
        "name": INTERVAL_NAME,
        "legendgroup": INTERVAL_LEGEND_GROUP,
        "showlegend": showlegend,
        "hovertemplate": (
            f"%{{y}}<br>{what}: 95 % interval %{{customdata[0]:{value_format}}} to "
            f"%{{customdata[1]:{value_format}}}<extra></extra>"
        ),
    }


def replica_ranges(doc: Document) -> pd.DataFrame:
    """Per variant of several replications, entity (its `kind` and `name`), metric and sample time:
    the lowest and highest value of the replications there and how many had the sample (at least
    2). One pass over every replication's series: the page computes it once for all its figures."""
    replicated_variants = [
        (variant["name"], series)
        for variant in doc["variants"]
        if len(series := [r["timeseries"] for r in variant.get("replicas", ()) if "timeseries" in r]) >= 2
    ]
    if not replicated_variants:
        return NO_BANDS
    every = [one for _, series in replicated_variants for one in series]
    rows = [len(one["t_s"]) for _, series in replicated_variants for one in series]
    # Text columns as codes into their few distinct values (as `common.series_frame`), and one
    # grouping for every variant: a frame of a million Python strings took most of the time.
    total = sum(rows)
    entity, entities = pd.factorize(np.fromiter(_chained(every, "entity"), dtype=object, count=total))
    metric, metrics = pd.factorize(np.fromiter(_chained(every, "metric"), dtype=object, count=total))
    per_variant = [sum(len(one["t_s"]) for one in series) for _, series in replicated_variants]
    frame = pd.DataFrame(
        {
            "variant": np.repeat(np.arange(len(replicated_variants)), per_variant),
            "entity": entity,
            "metric": metric,
            "t_s": np.fromiter(_chained(every, "t_s"), dtype=float, count=total),
            "value": np.fromiter(_chained(every, "value"), dtype=float, count=total),
        }
    )
    levels = ["variant", "entity", "metric", "t_s"]
    ranges = frame.groupby(levels, sort=True)["value"].agg(["min", "max", "count"])
    ranges = ranges[ranges["count"] >= 2]
    keys = {level: ranges.index.get_level_values(level).to_numpy() for level in levels}
    parts = pd.Series(entities, dtype=object).str.split("/", n=1, expand=True)
    names = np.full(len(entities), "", dtype=object)
    if parts.shape[1] > 1:
        names = parts[1].to_numpy(dtype=object)
    return pd.DataFrame(
        {
            "variant": np.asarray([name for name, _ in replicated_variants], dtype=object)[keys["variant"]],
            "kind": parts[0].to_numpy(dtype=object)[keys["entity"]],
            "name": names[keys["entity"]],
            "metric": np.asarray(metrics, dtype=object)[keys["metric"]],
            "t_s": keys["t_s"],
            "low": ranges["min"].to_numpy(),
            "high": ranges["max"].to_numpy(),
            "count": ranges["count"].to_numpy(),
        }
    )


def _chained(series: Sequence[Mapping[str, Sequence[Any]]], column: str) -> Iterator[Any]:
    """A column of several time series (`t_s`, `entity` ...) one after the other."""
    return itertools.chain.from_iterable(one[column] for one in series)


def band_index(
    ranges: pd.DataFrame, kind: str, metrics: Sequence[str]
) -> dict[tuple[str, str, str], pd.DataFrame]:
    """The ranges (`replica_ranges`) of `kind` entities' `metrics` by (variant, entity name,
    metric), each in time order; a series the replications agree on at every sample (nothing
    random on its way) has no band to draw and is left out."""
    ranges = ranges[(ranges["kind"] == kind) & ranges["metric"].isin(list(metrics))]
    if ranges.empty:
        return {}
    return {
        key: rows
        for key, rows in ranges.groupby(["variant", "name", "metric"], sort=False)
        if (rows["high"].to_numpy() > rows["low"].to_numpy()).any()
    }


def translucent(color: str, alpha: float = BAND_ALPHA) -> str:
    """`#4C78A8` as `rgba(76,120,168,0.18)`; a colour not written in hex as a translucent grey."""
    if len(color) == 7 and color.startswith("#"):
        red, green, blue = (int(color[i : i + 2], 16) for i in (1, 3, 5))
        return f"rgba({red},{green},{blue},{alpha:g})"
    return f"rgba(110,119,129,{alpha:g})"


def band_trace(rows: pd.DataFrame, color: str, where: str, axis_title: str) -> dict[str, Any]:
    """A shaded band from the lowest to the highest value of the replications at each sample time
    (`rows` of `replica_ranges`), to lie behind the line `where` names (`variant · entity`), in
    the line's colour; the bands share one legend entry (`band_legend_trace`)."""
    times_s = rows["t_s"].to_numpy(dtype=float)
    count = int(rows["count"].max())
    return {
        "type": "scatter",
        "x": np.concatenate([times_s, times_s[::-1]]),
        "y": np.concatenate([rows["high"].to_numpy(dtype=float), rows["low"].to_numpy(dtype=float)[::-1]]),
        "mode": "lines",
        "line": {"width": 0, "color": color},
        "fill": "toself",
        "fillcolor": translucent(color),
        "hoveron": "points",
        "name": f"{where}: min–max of the replications",
        "legendgroup": BAND_LEGEND_GROUP,
        "showlegend": False,
        "hovertemplate": (
            f"{where}<br>%{{x:.3~g}} s: %{{y:,.4~g}} {axis_title}, the highest (upper edge) or lowest "
            f"(lower edge) of {count} replications<extra></extra>"
        ),
    }


def band_legend_trace(doc: Document) -> dict[str, Any]:
    """The bands' one legend entry, in grey (each band has its line's colour): clicking it hides
    or shows every band of the figure."""
    return {
        "type": "scatter",
        "x": [None],
        "y": [None],
        "mode": "lines",
        "line": {"width": 0, "color": "#6e7781"},
        "fill": "toself",
        "fillcolor": translucent("#6e7781", 2 * BAND_ALPHA),
        "name": f"min–max of {replications_text(doc)}",
        "legendgroup": BAND_LEGEND_GROUP,
        "showlegend": True,
        "hoverinfo": "skip",
    }


def band_caption(doc: Document) -> str:
    """The sentence a time-line figure's caption gains when it has bands."""
    return (
        f" Shaded: the lowest to the highest value of the {replications_text(doc)} at each "
        "sample; the line is the first replication's."
    )
