"""The advice a search gives: as a document (advice.json, --json), as terminal lines and as a small
self-contained page (advice.html) in the report's style."""

from __future__ import annotations

import html
import math
import shlex
from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from sanlab.advise.search import (
    TODAY,
    Point,
    Search,
    outcomes,
    paired_gain,
    runner_up,
    set_lines,
)
from sanlab.intervals import Interval
from sanlab.report.page import CSS, PLOT_CONFIG

ADVICE_FILE = "advice.json"
PAGE_FILE = "advice.html"
KEPT_COLOR = "#1f77b4"
"""The value each step kept; the others are grey."""
OTHER_COLOR = "#b8c2cc"


def _interval(interval: Interval) -> dict[str, Any]:
    half = None if math.isinf(interval.half) else interval.half
    return {"mean": interval.mean, "ci95_half": half, "seeds": interval.n}


def _candidate(search: Search, point: Point) -> dict[str, Any]:
    return {"set": set_lines(point, search.knobs), **_interval(search.interval(point))}


def advice_document(search: Search, chosen: Point, header: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the command prints and writes: header (scenario, variant, objective, duration,
    seeds), today, the recommendation and its gain, the runner-up, each knob's outcome and every
    step of the search."""
    changed = dict(chosen)
    last = outcomes(search)
    # A group's key joins its parts' keys (`a & b`): changed when any part is.
    told = {
        key: "changed" if any(part in changed for part in key.split(" & ")) else step.outcome
        for key, step in last.items()
    }
    # What a step found is claimed only where it stood at the recommendation with every value run
    # (a search stopped by its budget or its passes may have moved on from a step).
    here = {key: step for key, step in last.items() if step.at == chosen}
    whole = {key: told[key] for key, step in here.items() if step.whole}
    narrowed = [key for key, step in here.items() if not step.whole and told[key] != "changed"]
    group_of = {part: key for key in last for part in key.split(" & ")}
    second = runner_up(search, chosen)
    unsettled = [
        f"{step.knob} (pass {step.pass_number}): {step.note}" for step in search.steps if not step.settled
    ]
    gain = paired_gain(search, chosen)
    today = search.interval(TODAY)
    return {
        **header,
        "notes": [*header["notes"], *search.notes],
        "today": _interval(today),
        "recommended": {
            **_candidate(search, chosen),
            "gain": _interval(gain),
            "gain_percent": 100 * gain.mean / today.mean if today.mean else None,
        },
        "runner_up": None
        if second is None
        else {
            **_candidate(search, second[0]),
            "minus_recommended": _interval(second[1]),
            "parted_from_recommended": search.parted(second[0], chosen),
        },
        "settled": not unsettled and not search.stopped,
        "why_not_settled": [*unsettled, *([search.stopped] if search.stopped else [])],
        "did_not_matter": [key for key, outcome in whole.items() if outcome == "no difference"],
        "today_is_best": [key for key, outcome in whole.items() if outcome == "kept"],
        "kept_among_best_few": narrowed,
        "knobs": [
            {
                "key": knob.key,
                "what": knob.what,
                "values": list(knob.values),
                "today": knob.today,
                "outcome": told.get(group_of.get(knob.key, ""), "not visited"),
            }
            for knob in search.knobs
        ],
        "steps": [
            {
                "knob": step.knob,
                "pass": step.pass_number,
                "chosen": step.chosen,
                "outcome": step.outcome,
                "settled": step.settled,
                "note": step.note,
                "values": {value: _interval(interval) for value, interval in step.values.items()},
                "refused": step.infeasible,
                "failed": step.failed,
            }
            for step in search.steps
        ],
        "runs": search.runs,
    }


def _figure(value: Mapping[str, Any], unit: str) -> str:
    digits = 0 if unit == "IOPS" else 3
    half = value["ci95_half"]
    text = f"{value['mean']:,.{digits}f}"
    return f"{text} ± {half:,.{digits}f} {unit}" if half is not None else f"{text} {unit} (one seed)"


def _sets(lines: list[str]) -> list[str]:
    return [f"  --set {shlex.quote(line)}" for line in lines] or ["  (today's settings)"]


def text_lines(doc: Mapping[str, Any]) -> list[str]:
    """The advice for the terminal: `--set` lines to paste into `sanlab run`, then the evidence."""
    unit = doc["objective"]["unit"]
    rec = doc["recommended"]
    seeds = doc["seeds"]
    lines = [
        f"advise {doc['scenario']} (variant {doc['variant']}): {doc['objective']['text']}",
        f"{doc['duration_s']:g} s simulated per run, {seeds['initial']} seeds from {seeds['first']} per "
        f"candidate (up to {seeds['cap']} while undecided), {doc['runs']} runs",
        f"today:       {_figure(doc['today'], unit)}",
    ]
    if rec["set"]:
        pct = f" ({rec['gain_percent']:+.1f} %)" if rec["gain_percent"] is not None else ""
        lines += [
            f"recommended: {_figure(rec, unit)}, change {_figure(rec['gain'], unit)}{pct}",
            *_sets(rec["set"]),
        ]
    else:
        lines.append("recommended: keep today's settings: no value tried did better")
    second = doc["runner_up"]
    if second is not None:
        lines += [f"runner-up:   {_figure(second, unit)}", f"  {_runner_up_rank(doc)}", *_sets(second["set"])]
    if doc["did_not_matter"]:
        lines.append(
            "did not matter (no value parted from the one kept): " + ", ".join(doc["did_not_matter"])
        )
    if doc["today_is_best"]:
        lines.append(
            "today's value is among the best, the rest as recommended (every value or combination "
            f"run; others worse): {', '.join(doc['today_is_best'])}"
        )
    if doc["kept_among_best_few"]:
        lines.append(
            "today's values kept in a joint step over each part's best few values only (not every "
            f"combination): {', '.join(doc['kept_among_best_few'])}"
        )
    lines += [f"note: {note}" for note in doc["notes"]]
    if doc["settled"]:
        lines.append("settled: at each step the best value parted from the others, or tied with them exactly")
    else:
        lines += [f"not settled: {why}" for why in doc["why_not_settled"]]
    return lines


def _runner_up_rank(doc: Mapping[str, Any]) -> str:
    """Where the runner-up stands against the recommendation on the seeds both ran: its own mean
    can be the higher one (fewer seeds, or within the noise where the search keeps its place)."""
    second, unit = doc["runner_up"], doc["objective"]["unit"]
    difference = second["minus_recommended"]
    better = (difference["mean"] > 0) == doc["objective"]["higher_is_better"] and difference["mean"] != 0
    seeds = difference["seeds"]
    text = f"minus the recommendation, seed by seed over {seeds} seeds: {_figure(difference, unit)}"
    if second["parted_from_recommended"]:
        why = "better than the recommendation, parted: the search passed it" if better else "parted"
    elif better:
        why = (
            "not parted: a better mean within the seeds' noise, and the search moves only to a value "
            "parted from where it stands"
        )
    else:
        why = "not parted"
    return f"{text}; {why}"


def _esc(value: object) -> str:
    return html.escape(str(value))


def page(doc: Mapping[str, Any]) -> str:
    """advice.html: the lines above, a chart of every value tried at each step with its interval,
    and the steps' table. Self-contained (plotly.js inlined), as the run report."""
    unit = doc["objective"]["unit"]
    labels, means, halves, colors = [], [], [], []
    for number, step in enumerate(doc["steps"], 1):
        for value, figure in step["values"].items():
            labels.append(f"{number}. {step['knob']}={value}")
            means.append(figure["mean"])
            halves.append(figure["ci95_half"] or 0.0)
            colors.append(KEPT_COLOR if value == step["chosen"] else OTHER_COLOR)
    bars = go.Bar(
        x=means, y=labels, orientation="h", marker_color=colors, error_x={"type": "data", "array": halves}
    )
    chart = go.Figure(bars)
    chart.update_layout(
        height=max(300, 22 * len(labels) + 80),
        margin={"l": 20, "r": 20, "t": 30, "b": 40},
        xaxis_title=f"{doc['objective']['figure']}, {unit}: mean ± 95 % CI",
        yaxis={"autorange": "reversed"},
    )
    plot = pio.to_html(chart, full_html=False, include_plotlyjs=False, config=dict(PLOT_CONFIG))
    rows = "".join(
        f"<tr><td>{step['pass']}</td><td><code>{_esc(step['knob'])}</code></td><td><code>{_esc(step['chosen'])}"
        f"</code></td><td>{_esc(step['outcome'])}</td><td>{_esc(step['note'])}</td></tr>"
        for step in doc["steps"]
    )
    text = "\n".join(text_lines(doc))
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="generator" content="sanlab {_esc(doc["version"])}">
<title>{_esc(doc["scenario"])}: sanlab advise</title>
<style>{CSS}</style>
<script type="text/javascript">{get_plotlyjs()}</script>
</head>
<body>
<header><h1>{_esc(doc["scenario"])}</h1>
<p class="subtitle">sanlab advise · {_esc(doc["objective"]["text"])}</p></header>
<main>
<section><h2>Advice</h2><pre>{_esc(text)}</pre></section>
<section><h2>Every value tried</h2><figure class="plot">{plot}<figcaption>Each step varies one
setting from where the search stood; bars are the objective's mean over the seeds (blue: the
value kept), whiskers its 95 % interval.</figcaption></figure></section>
<section><h2>Steps</h2><table><thead><tr><th>pass</th><th>setting</th><th>value kept</th>
<th>outcome</th><th>note</th></tr></thead><tbody>{rows}</tbody></table></section>
</main>
<footer>Written by sanlab {_esc(doc["version"])}; the figures are in {ADVICE_FILE} beside this page.</footer>
</body>
</html>
"""
