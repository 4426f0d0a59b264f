"""What every figure of the report shares: the `Figure` it returns, the palette and a variant's
colour and dash (alike in every figure), the layout, log-axis ticks, the time series as one
table, the variants in group order, and the limits (MAX_LINES) above which a figure summarises.

A figure is plain data, as plotly.js reads it (`{"data": [traces], "layout": {...}}`): plotly's
object model checks and copies every property as it is set, which was most of the report's time.
`Figure.plot` gives plotly's checked object of the same figure, for tests and notebooks.
"""

from __future__ import annotations

import base64
import functools
import inspect
import itertools
import json
import math
import pkgutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    import plotly.graph_objects as go

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


Spec = dict[str, Any]
"""A plotly figure, a trace or a layout as plain data."""


@dataclass(frozen=True)
class Figure:
    """A plot (`spec`, plain data) with its page anchor (`key`), title and one-line caption."""

    key: str
    title: str
    caption: str
    spec: Spec

    @property
    def plot(self) -> go.Figure:
        """The figure as plotly's object, every property checked by plotly (a figure plotly would
        refuse raises here)."""
        import plotly.graph_objects as go

        return go.Figure(self.spec)


def new_figure() -> Spec:
    return {"data": [], "layout": {}}


def update(target: dict[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """`changes` merged into `target` as plotly's `update` merges them: a dict into the dict there,
    None removes a property, anything else replaces it. Dicts are copied, never shared, so a
    later update of one figure changes no other; a dict left empty is not kept (plotly drops an
    object with nothing set)."""
    for key, value in changes.items():
        if value is None:
            target.pop(key, None)
        elif isinstance(value, Mapping):
            inner = target.get(key)
            if isinstance(inner, dict):
                update(inner, value)
            elif merged := update({}, value):
                target[key] = merged
        else:
            target[key] = value
    return target


def axis_names(layout: Mapping[str, Any], letter: str) -> list[str]:
    """The layout's `x` (or `y`) axes, `xaxis`, `xaxis2` ..., as plotly's update_xaxes finds them."""
    prefix = f"{letter}axis"
    return [key for key in layout if key == prefix or (key.startswith(prefix) and key[5:].isdigit())]


def update_axes(fig: Spec, letter: str, changes: Mapping[str, Any]) -> None:
    """`changes` to every `x` (or `y`) axis of the figure (plotly's update_xaxes without row or
    col); a figure without one gets the first."""
    names = axis_names(fig["layout"], letter) or [f"{letter}axis"]
    for name in names:
        update(fig["layout"].setdefault(name, {}), changes)
    for name in names:
        if not fig["layout"][name]:
            del fig["layout"][name]


def colorscale_of(name: str) -> list[list[Any]]:
    """Plotly's named colour scale (`Blues`) as the list of (position, colour) it writes for it."""
    colors = _named_colorscales().get(name.lower())
    if colors is None:
        raise ValueError(f"no plotly colour scale {name!r}")
    last = len(colors) - 1
    return [[(1.0 * index) / (1.0 * last), color] for index, color in enumerate(colors)]


@functools.cache
def _named_colorscales() -> dict[str, list[str]]:
    """Every named colour scale, as plotly's colorscale check finds them (later modules win)."""
    from plotly import colors

    return {
        name.lower(): scale
        for module in (colors.sequential, colors.diverging, colors.cyclical)
        for name, scale in inspect.getmembers(module)
        if isinstance(scale, list) and not name.endswith("_r") and not name.startswith("_")
    }


UNPACKED_KEYS = frozenset({"geojson", "layer", "layers", "range"})
"""Where plotly leaves an array as it is when it writes a figure."""

PACKED_DTYPES = {
    "int8": "i1", "uint8": "u1", "int16": "i2", "uint16": "u2", "int32": "i4", "uint32": "u4",
    "float32": "f4", "float64": "f8",
}  # fmt: skip
"""Numpy's types as plotly.js's typed arrays name them."""


def packed_array(array: np.ndarray) -> Any:
    """A numpy array as plotly writes one into a page: its bytes in base64 with their type (64-bit
    integers narrowed to the smallest type that holds them), not a number in text each."""
    if array.size == 0:
        return array
    if array.dtype == np.int64:
        for narrow in (np.int8, np.int16, np.int32):
            limits = np.iinfo(narrow)
            if limits.min <= array.min() and array.max() <= limits.max:
                array = array.astype(narrow)
                break
    code = PACKED_DTYPES.get(str(array.dtype))
    if code is None:
        return array
    typed = {"dtype": code, "bdata": base64.b64encode(np.ascontiguousarray(array)).decode("ascii")}
    if array.ndim > 1:
        typed["shape"] = str(array.shape)[1:-1]
    return typed


def packed(value: Any) -> Any:
    """A figure (or part of one) with its numpy arrays packed (`packed_array`) where plotly packs
    them: a property's value, not an item of a list. The figure itself is left as it is."""
    if isinstance(value, dict):
        return {
            key: item
            if key in UNPACKED_KEYS
            else packed_array(item)
            if isinstance(item, np.ndarray)
            else packed(item)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [packed(item) for item in value]
    return value


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
    The text columns are categorical: the figures filter, sort and group them again and again,
    and pandas compares codes far faster than strings.
    """
    variants = list(doc["variants"])
    rows = [len(variant["timeseries"]["t_s"]) for variant in variants]
    if not any(rows):
        return pd.DataFrame(columns=["variant", "t_s", "kind", "name", "metric", "value"])

    # Each row's codes into the column's few distinct values, factorized in C from plain objects.
    def codes(texts: Any) -> tuple[np.ndarray, np.ndarray]:
        found, uniques = pd.factorize(np.asarray(texts, dtype=object), use_na_sentinel=True)
        return found, np.asarray(uniques, dtype=object)

    def column(codes_of_rows: np.ndarray, categories: np.ndarray) -> pd.Categorical:
        return pd.Categorical.from_codes(codes_of_rows, categories=pd.Index(categories, dtype=object))

    def chained(name: str) -> np.ndarray:
        every = itertools.chain.from_iterable(v["timeseries"][name] for v in variants)
        return np.fromiter(every, dtype=object)

    entity, entities = codes(chained("entity"))
    metric, metrics = codes(chained("metric"))
    # Split each distinct entity once: splitting every row took 1.6 s of 1 M rows (19 variants, 320 s).
    parts = pd.Series(entities, dtype=object).str.split("/", n=1, expand=True)
    kind_of, kinds = codes(parts[0])
    if parts.shape[1] > 1:
        name_of, names = codes(parts[1])  # an entity without `/` has no name (code -1)
    else:
        name_of, names = np.zeros(len(entities), dtype=np.intp), np.array([""], dtype=object)
    return pd.DataFrame(
        {
            "variant": column(
                np.repeat(np.arange(len(variants)), rows),
                np.array([v["name"] for v in variants], dtype=object),
            ),
            "t_s": np.concatenate([np.asarray(v["timeseries"]["t_s"], dtype=float) for v in variants]),
            "kind": column(kind_of[entity], kinds),
            "name": column(name_of[entity], names),
            "metric": column(metric, metrics),
            "value": np.concatenate([np.asarray(v["timeseries"]["value"], dtype=float) for v in variants]),
        }
    )


def means_by_variant(rows: pd.DataFrame) -> dict[str, pd.Series]:
    """Per variant of `rows` (a part of `series_frame`), the mean `value` of each `name`, the names
    in text order: ties (nlargest, idxmax) go to the name first in that order, not in the
    categories'. One grouping of all the variants' rows: a grouping per variant cost 3 ms each."""
    means = rows.groupby(["variant", "name"], observed=True, sort=False)["value"].mean()
    variants = means.index.get_level_values(0).astype(object).to_numpy()
    names = means.index.get_level_values(1).astype(object).to_numpy()
    values = means.to_numpy()
    found: dict[str, pd.Series] = {}
    for variant in dict.fromkeys(variants.tolist()):
        mine = variants == variant
        found[variant] = pd.Series(values[mine], index=pd.Index(names[mine], dtype=object)).sort_index()
    return found


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


def _template(name: str, traces: Sequence[str]) -> dict[str, Any]:
    """Plotly's template `name` (read as plotly reads it, from its package's JSON) with the trace
    defaults of `traces` only: every page carries the template of each figure, and those of the
    21 trace types the report never draws cost 3.6 kB a figure for nothing."""
    data = pkgutil.get_data("plotly", f"package_data/templates/{name}.json")
    assert data is not None, name
    whole = json.loads(data)
    return {"data": {kind: whole["data"][kind] for kind in traces}, "layout": whole["layout"]}


TEMPLATE = _template("plotly_white", ("scatter", "heatmap", "bar"))


def layout(fig: Spec, title: str, height_px: int) -> None:
    update(
        fig["layout"],
        {
            "title": {"text": f"<b>{title}</b>", "x": 0.0, "xanchor": "left", "font": {"size": 16}},
            "height": height_px,
            "font": {"family": FONT, "size": 12, "color": "#24292f"},
            "margin": MARGINS_PX,
            "legend": {"orientation": "v", "yanchor": "top", "y": 1.0, "xanchor": "left", "x": 1.02},
            "hoverlabel": {"font": {"family": FONT}},
        },
    )
    # Shared by every figure, not copied: nothing changes a template once set.
    fig["layout"]["template"] = TEMPLATE


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
