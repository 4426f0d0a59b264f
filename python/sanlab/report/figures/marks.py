"""Marks on a time axis: dashed lines with a hoverable symbol at each fault edge (✕ start, ● step, ✓ end)
and at each path selection event (▼)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sanlab.document import Document, FaultReport, PspEventReport
from sanlab.report.figures.common import MAX_NAMED_VARIANTS

FAULT_COLORS = {"start": "#cf222e", "end": "#1a7f37"}
"""A fault's start is marked red, its end green, a step between them (the mediator's decision) amber."""

STEP_COLOR = "#9a6700"

FAULT_SYMBOLS = {"start": "✕", "end": "✓"}

STEP_SYMBOL = "●"

EVENT_COLOR = "#24292f"
"""A path selection event's mark."""


MAX_MARK_SHAPES = 100
"""A plot draws up to this many marks (fault edges, path selection events) as a plotly shape and an
annotation each; more are drawn as a few scatter traces instead (`mark_traces`), each mark still a
dashed line with its symbol and hover text. Plotly copies and revalidates its shapes and annotations
as they are added, and a flapping path gives two marks per flap: a link flapping every 1 ms for a
minute (121,000 edges) took `sanlab report` 8 minutes, 2.3 GB and a 210 MB page; as traces 10 s,
0.5 GB and 29 MB. Traces take time and memory linear in the marks. The failover study's most, a 5 s
flap for 90 s, is 36."""

MAX_HOVER_TRACES = 10
"""A kind of mark traced past MAX_MARK_SHAPES gets a trace of symbols per hover text (the time
aside) up to this many texts, each with its text once; more, one trace with a text per mark."""


@dataclass(frozen=True)
class Mark:
    """A dashed vertical line at `t_s` over a plot and a hoverable symbol over its top whose hover
    text is the time, `joint` and `what`."""

    t_s: float
    symbol: str
    color: str
    what: str
    width: float
    dash: str
    opacity: float | None = None
    name: str | None = None
    joint: str = ": "

    @property
    def hover(self) -> str:
        return f"{self.t_s:.3f} s{self.joint}{self.what}"


def fault_edges(doc: Document) -> list[tuple[FaultReport, str]]:
    """Every variant's fault edges with the variant's name."""
    return [(edge, variant["name"]) for variant in doc["variants"] for edge in variant.get("faults", [])]


def fault_marks(edges: Iterable[tuple[FaultReport, str]], *, name_variants: bool = False) -> list[Mark]:
    """A red ✕ mark where a fault starts, a green ✓ where it ends, an amber ● at a step between them.

    Edges at one time and phase share a mark whose hover text lists them; with `name_variants`
    (variants sharing a plot) each names the variants it happened in.
    """
    at: dict[tuple[float, str], dict[str, list[str]]] = {}
    # A flapping part's edges say the same but for the time: each text made once.
    texts: dict[tuple[str, str, str, str], str] = {}
    for edge, variant in edges:
        key = (edge["kind"], edge["phase"], edge["target"], edge.get("detail") or "")
        what = texts.get(key)
        if what is None:
            what = texts[key] = f"{key[0]} {key[1]}, {key[2]}" + (f" ({key[3]})" if key[3] else "")
        at.setdefault((edge["t_s"], edge["phase"]), {}).setdefault(what, []).append(variant)
    marks = []
    for (t_s, phase), happened in sorted(at.items()):
        lines = []
        for what, variants in happened.items():
            if name_variants:
                names = variants if len(variants) <= MAX_NAMED_VARIANTS else [f"{len(variants)} variants"]
                what += f" in {', '.join(names)}"
            lines.append(what)
        marks.append(
            Mark(
                t_s,
                FAULT_SYMBOLS.get(phase, STEP_SYMBOL),
                FAULT_COLORS.get(phase, STEP_COLOR),
                "<br>".join(lines),
                1.5,
                "dash",
                0.6,
                f"fault {phase}",
            )
        )
    return marks


def event_marks(events: Iterable[PspEventReport]) -> list[Mark]:
    """A dotted line and a hoverable ▼ at each path selection event."""
    return [
        Mark(
            event["t_s"],
            "▼",
            EVENT_COLOR,
            f"{event['device']}: {event['event']} " + ", ".join(event["paths"]),
            1,
            "dot",
            joint=", ",
        )
        for event in events
    ]


def mark_shapes(
    marks: Iterable[Mark], *, xref: str = "x", yref: str = "paper"
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The marks as plotly shapes (the lines, over the height of `yref`: a panel's `y2 domain`) and
    annotations (the symbols, over its top)."""
    shapes = []
    annotations = []
    for mark in marks:
        shape: dict[str, Any] = {"type": "line"}
        annotation: dict[str, Any] = {}
        if mark.name is not None:
            shape["name"] = annotation["name"] = mark.name
        shape.update(
            xref=xref,
            yref=yref,
            x0=mark.t_s,
            x1=mark.t_s,
            y0=0,
            y1=1,
            line={"color": mark.color, "width": mark.width, "dash": mark.dash},
        )
        if mark.opacity is not None:
            shape["opacity"] = mark.opacity
        shapes.append(shape)
        annotation.update(
            x=mark.t_s,
            y=1.0,
            xref=xref,
            yref=yref,
            yanchor="bottom",
            text=mark.symbol,
            showarrow=False,
            font={"size": 13, "color": mark.color},
            hovertext=mark.hover,
        )
        annotations.append(annotation)
    return shapes, annotations


def mark_traces(
    marks: Sequence[Mark], *, xaxis: str = "x", yaxis: str = "y2", symbols: bool = True
) -> list[dict[str, Any]]:
    """The marks as scatter traces, for plots with more than MAX_MARK_SHAPES, on `yaxis`: an axis
    over the plot's y axis with range 0 to 1 (`overlay_axis`). Per kind of mark (its name and style)
    one trace of its lines, and with `symbols` its symbols over the plot's top with their hover
    texts (a trace per text, up to MAX_HOVER_TRACES). Every mark's time is in the traces' x data.

    The lines are one zig-zag through (t, -1), (t, 2), (t', 2), (t', -1) ...: the axis's range
    clips it to its vertical segments, each the plot's height, at 10 bytes of page per mark."""
    kinds: dict[tuple[Any, ...], list[Mark]] = {}
    for mark in marks:
        kind = (mark.name, mark.symbol, mark.color, mark.width, mark.dash, mark.opacity)
        kinds.setdefault(kind, []).append(mark)
    traces = []
    for (name, symbol, color, width, dash, opacity), of_kind in kinds.items():
        common = {"type": "scatter", "name": name or "event", "xaxis": xaxis, "yaxis": yaxis}
        common["showlegend"] = False
        # Numpy arrays go into the page as binary, not as a number in text each.
        times_s = np.array([mark.t_s for mark in of_kind], dtype=float)
        traces.append(
            {
                **common,
                "x": np.repeat(times_s, 2),
                "y": np.resize(np.array([-1, 2, 2, -1], dtype=np.int8), 2 * len(times_s)),
                "mode": "lines",
                "line": {"color": color, "width": width, "dash": dash, "simplify": False},
                "opacity": 1.0 if opacity is None else opacity,
                "hoverinfo": "skip",
            }
        )
        if not symbols:
            continue
        symbol_trace = {
            **common,
            "mode": "text",
            "text": symbol,
            "textposition": "top center",
            "textfont": {"size": 13, "color": color},
            "cliponaxis": False,
        }
        whats: dict[str, list[float]] = {}
        for mark in of_kind:
            whats.setdefault(mark.what, []).append(mark.t_s)
        if len(whats) <= MAX_HOVER_TRACES and not any("%" in what for what in whats):
            joint = of_kind[0].joint
            traces += [
                {
                    **symbol_trace,
                    "x": np.array(at_s, dtype=float),
                    "y": np.ones(len(at_s), dtype=np.int8),
                    "hovertemplate": f"%{{x:.3f}} s{joint}{what}<extra></extra>",
                }
                for what, at_s in whats.items()
            ]
        else:
            traces.append(
                {
                    **symbol_trace,
                    "x": times_s,
                    "y": np.ones(len(times_s), dtype=np.int8),
                    "hovertext": [mark.hover for mark in of_kind],
                    "hoverinfo": "text",
                }
            )
    return traces


def overlay_axis(over: str) -> dict[str, Any]:
    """The layout of a hidden y axis over the axis `over` (`y3`) with range 0-1: mark traces drawn on
    it span the plot's height, whatever its own axis's scale."""
    return {"overlaying": over, "range": [0, 1], "visible": False, "fixedrange": True}


FAULT_MARKS_TEXT = (
    "Dashed lines mark faults: ✕ where one starts, ● a step (the mediator's decision), ✓ where it ends "
    "(hover for what and where)."
)
