"""Marks on a time axis: dashed lines with a hoverable symbol at each fault edge (✕ start, ● step, ✓ end)
and at each path selection event (▼)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sanlab.document import Document, FaultReport, PspEventReport
from sanlab.report.figures.common import MAX_NAMED_VARIANTS

FAULT_COLORS = {"start": "#cf222e", "end": "#1a7f37"}
"""A fault's start is marked red, its end green, a step between them (the mediator's decision) amber."""

STEP_COLOR = "#9a6700"

FAULT_SYMBOLS = {"start": "✕", "end": "✓"}

STEP_SYMBOL = "●"


def fault_edges(doc: Document) -> list[tuple[FaultReport, str]]:
    """Every variant's fault edges with the variant's name."""
    return [(edge, variant["name"]) for variant in doc["variants"] for edge in variant.get("faults", [])]


def fault_marks(
    edges: Iterable[tuple[FaultReport, str]],
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


def event_marks(events: Iterable[PspEventReport]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
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


FAULT_MARKS_TEXT = (
    "Dashed lines mark faults: ✕ where one starts, ● a step (the mediator's decision), ✓ where it ends "
    "(hover for what and where)."
)
