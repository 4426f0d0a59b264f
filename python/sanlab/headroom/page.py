"""headroom.html: the short answer, the load-latency curve of each latency SLO with its 95 %
intervals, the SLO's line and the limit marked (the cliff), and the utilisations today and at the
limit. Self-contained (plotly.js inlined), as the run report and advice.html are."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from sanlab.formatting import format_count, format_ms
from sanlab.headroom.answer import HEADROOM_FILE, text_lines
from sanlab.headroom.bottleneck import describe
from sanlab.headroom.search import factor_text
from sanlab.report.page import CSS, PLOT_CONFIG
from sanlab.views.rows import STAGE_COLUMNS, STAGES, STAGES_CAPTION

PAGE_FILE = "headroom.html"
LIMIT_COLOR = "#d62728"


def _esc(value: object) -> str:
    return html.escape(str(value))


def curve_figure(doc: Mapping[str, Any]) -> go.Figure:
    """Each latency SLO's figure (mean, 95 % interval) against the measured IOPS of every point,
    its limit as a dashed line, and the limit's IOPS as a red line with its interval shaded."""
    chart = go.Figure()
    points = doc["curve"]
    for slo in doc["slos"]:
        if slo["figure"] == "iops":
            continue
        figures = [point["figures"][slo["text"]] for point in points]
        means = [figure["mean"] for figure in figures]
        plus = [(figure["ci95"][1] - figure["mean"]) if figure["ci95"] else 0.0 for figure in figures]
        minus = [(figure["mean"] - figure["ci95"][0]) if figure["ci95"] else 0.0 for figure in figures]
        chart.add_trace(
            go.Scatter(
                x=[point["iops"]["mean"] for point in points],
                y=means,
                mode="lines+markers",
                name=f"{slo['figure']} (worst VM)",
                error_y={"type": "data", "array": plus, "arrayminus": minus},
                text=[f"×{point['factor']:.4g}, {len(point['seeds'])} seeds" for point in points],
            )
        )
        chart.add_hline(y=slo["limit"], line_dash="dash")
        # On a log axis an annotation's y is the exponent (add_hline's own label lands off the line).
        chart.add_annotation(
            x=1, xref="paper", y=math.log10(slo["limit"]), yref="y", text=slo["label"], showarrow=False,
            xanchor="right", yanchor="bottom" if len(chart.layout.annotations) % 2 == 0 else "top",
        )  # fmt: skip
    if doc.get("factor") and doc.get("limit_iops"):
        limit = doc["limit_iops"]
        low, high = (limit * bound / doc["factor"] for bound in doc["factor_ci95"])
        chart.add_vrect(x0=low, x1=high, fillcolor=LIMIT_COLOR, opacity=0.15, line_width=0)
        chart.add_vline(x=limit, line_color=LIMIT_COLOR, annotation_text=f"limit {limit:,.0f} IOPS")
    chart.update_layout(
        height=460,
        margin={"l": 20, "r": 20, "t": 30, "b": 40},
        xaxis_title="total IOPS of the selected VMs (mean over the seeds)",
        yaxis_title="latency, ms (log): mean ± 95 % CI",
        yaxis_type="log",
        title={"text": "Load and latency: the SLO's figure at every point tried"},
    )
    return chart


def _utilisation_rows(doc: Mapping[str, Any]) -> str:
    today = {
        (item["kind"], item["name"]): item["utilisation"] for item in doc["utilisation"].get("today", [])
    }
    rows = []
    for item in doc["utilisation"].get("limit") or doc["utilisation"].get("today", []):
        before = today.get((item["kind"], item["name"]))
        rows.append(
            f"<tr><td>{_esc(describe(item))}</td><td>{'' if before is None else f'{before:.2f}'}</td>"
            f"<td>{item['utilisation']:.2f}</td><td>{_esc(item.get('how', ''))}</td></tr>"
        )
    return "".join(rows)


def _stage_points(doc: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """Today's point, the bracket's low end (the largest load that holds: the limit) and its high
    end (the smallest that fails), each with what it is, those the search ran."""
    low, high = doc["bracket"]
    wanted = [(1.0, "today"), (low, "at the limit (holds)"), (high, "past it (fails)")]
    found, seen = [], set()
    for factor, what in wanted:
        point = next((row for row in doc["curve"] if row["factor"] == factor), None)
        if point is not None and factor not in seen:
            seen.add(factor)
            found.append((what, point))
    return found


def _stages_rows(doc: Mapping[str, Any]) -> str:
    rows = []
    for what, point in _stage_points(doc):
        for vm, stages in (point.get("stages_ms") or {}).items():
            # a point of an older engine has no cache stage (its media time holds it)
            cells = [format_ms(stages[stage]) if stage in stages else "–" for stage in STAGES]
            cells.append(format_ms(stages["mean"]))
            rows.append(
                f"<tr><td>{_esc(what)}, {_esc(factor_text(point['factor']))}</td>"
                f"<td class=num>{_esc(format_count(point['iops']['mean']))}</td><td>{_esc(vm)}</td>"
                + "".join(f"<td class=num>{_esc(cell)}</td>" for cell in cells)
                + "</tr>"
            )
    return "".join(rows)


def _stages(doc: Mapping[str, Any]) -> str:
    """The small table of where the judged VMs' latency goes, today and at the limit: the worst
    VM of each SLO at the point, its stages the means over the point's seeds."""
    rows = _stages_rows(doc)
    if not rows:
        return ""
    head = "".join(f"<th class=num>{_esc(header)}</th>" for header in STAGE_COLUMNS)
    return (
        '<section><h2>Where the latency goes, today and at the limit</h2><table class="data" id="stages">'
        f"<thead><tr><th>load</th><th class=num>IOPS</th><th>VM (the worst)</th>{head}</tr></thead>"
        f'<tbody>{rows}</tbody></table><p class="note">The worst judged VM of each SLO at the point, its '
        "figures the means over the point's seeds; IOPS the grown VMs'. "
        f"{_esc(STAGES_CAPTION[0].upper() + STAGES_CAPTION[1:])}.</p></section>"
    )


def _not_covered(doc: Mapping[str, Any]) -> str:
    items = "".join(f"<li>{_esc(line)}</li>" for line in doc.get("not_covered") or [])
    return f"<p>Not on the table (no figure in the engine's document):</p><ul>{items}</ul>" if items else ""


def page(doc: Mapping[str, Any]) -> str:
    """The page of one headroom.json document."""
    plot = pio.to_html(curve_figure(doc), full_html=False, include_plotlyjs=False, config=dict(PLOT_CONFIG))
    text = "\n".join(text_lines(doc))
    slos = " and ".join(slo["label"] for slo in doc["slos"])
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="generator" content="sanlab {_esc(doc["version"])}">
<title>{_esc(doc["scenario"])}: sanlab headroom</title>
<style>{CSS}</style>
<script type="text/javascript">{get_plotlyjs()}</script>
</head>
<body>
<header><h1>{_esc(doc["scenario"])}</h1>
<p class="subtitle">sanlab headroom · {_esc(slos)} · variant {_esc(doc["variant"])}</p></header>
<main>
<section><h2>Answer</h2><pre>{_esc(text)}</pre></section>
<section><h2>Load and latency</h2><figure class="plot" data-figure="headroom-curve">{plot}<figcaption>Every point the search
tried: the SLO's figure of the worst selected VM, mean over the seeds with its 95 % interval,
against the IOPS the selected VMs delivered; dashed: the SLO; red: the limit and its interval.
</figcaption></figure></section>
<section><h2>Utilisation</h2><table><thead><tr><th>resource</th><th>today</th><th>at the limit</th>
<th>how it is measured</th></tr></thead><tbody>{_utilisation_rows(doc)}</tbody></table>
{_not_covered(doc)}</section>
{_stages(doc)}
</main>
<footer>Written by sanlab {_esc(doc["version"])}; the figures are in {HEADROOM_FILE} beside this page.</footer>
</body>
</html>
"""
