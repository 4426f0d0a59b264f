"""The report page: one self-contained HTML file (plotly.js inlined) with the figures and tables."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import plotly.io as pio
from plotly.offline import get_plotlyjs

from sanlab.analysis import failover
from sanlab.analysis.tail import tail_iops
from sanlab.analysis.utilisation import not_covered, utilisations
from sanlab.document import Document, Variant, hosts
from sanlab.formatting import format_count, format_fraction, format_ms, format_tenths
from sanlab.notes import figure_notes
from sanlab.report import figures
from sanlab.report.figures import Figure
from sanlab.views.rows import (
    FAULTS_CAPTION,
    FLOW_CONTROL_COLUMNS,
    HOST_COLUMNS,
    HOST_TEXT_COLUMNS,
    HOSTS_CAPTION,
    STAGE_COLUMNS,
    STAGES_CAPTION,
    compact_names,
    failed_text,
    fault_rows,
    flow_controlled,
    fold_repeats,
    host_cells,
    repeat_text,
    shows_hosts,
    shows_stages,
    stage_cells,
    with_interval,
)

PLOT_CONFIG: Mapping[str, Any] = {
    "displaylogo": False,
    "responsive": True,
    "toImageButtonOptions": {"format": "png", "scale": 2},
}


@dataclass(frozen=True)
class ReportRun:
    """One run folder's content: a label for it, the engine's document (with time series), its manifest."""

    label: str
    doc: Document
    manifest: Mapping[str, Any]


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def merge_runs(runs: Sequence[ReportRun]) -> Document:
    """One document with every run's variants, named `<run label>/<variant>` when there are several runs."""
    if len(runs) == 1:
        return runs[0].doc
    merged: Document = {
        "scenario": " vs ".join(dict.fromkeys(run.doc["scenario"] for run in runs)),
        "version": runs[0].doc["version"],
        "cancelled": any(run.doc.get("cancelled", False) for run in runs),
        "variants": [
            {**variant, "name": f"{run.label}/{variant['name']}"}
            for run in runs
            for variant in run.doc["variants"]
        ],
    }
    return merged


def _plot_html(figure: Figure) -> str:
    height_px = figure.spec["layout"]["height"]
    # Plain data, written as plotly writes a checked figure (arrays packed) without checking it again.
    plot = pio.to_html(
        figures.packed(figure.spec),
        validate=False,
        full_html=False,
        include_plotlyjs=False,
        div_id=f"plot-{figure.key}",
        config=dict(PLOT_CONFIG, toImageButtonOptions={"format": "png", "scale": 2, "filename": figure.key}),
        default_height=f"{height_px}px",
    )
    return (
        f'<figure class="plot" id="{figure.key}" data-figure="{figure.key}">{plot}'
        f"<figcaption>{_esc(figure.caption)}</figcaption></figure>"
    )


def _variant_cell(name: str, color: str) -> str:
    return f'<td><span class="swatch" style="background:{color}"></span>{_esc(name)}</td>'


def _iops_cell(iops: float, top_iops: float, color: str, *, best: bool, text: str | None = None) -> str:
    """An IOPS cell shaded, in the variant's colour, to its share of `top_iops`; bold when `best`;
    `text` written in it (the IOPS, by default)."""
    width = 100.0 * iops / top_iops
    bar = f"background:linear-gradient(90deg,{color}40 {width:.1f}%,transparent {width:.1f}%)"
    shown = format_count(iops) if text is None else _esc(text)
    return f'<td class="num{" best" if best else ""}" style="{bar}">{shown}</td>'


def _comparison_table(
    doc: Document, colors: Mapping[str, str], tails_of: Mapping[str, Mapping[str, float]]
) -> str:
    """Variants × VMs: IOPS (with a bar scaled to the best), tail IOPS, MB/s and latency percentiles.

    Of a variant with more than the figures' MAX_LINES VMs, those with the highest p99 and the
    spread of p99 across all (10,000 rows help nobody)."""
    rows = []
    spreads = []
    for variant in figures.in_group_order(doc):
        tails = tails_of[variant["name"]]
        vms = variant["vms"]
        if len(vms) > figures.MAX_LINES:
            p99s = sorted(vm["lat_ms"]["p99"] for vm in vms)
            spreads.append(
                f"{_esc(variant['name'])}: the {figures.MAX_LINES} of its {len(vms):,} VMs "
                "with the highest p99; "
                f"p99 across all its VMs: {format_ms(p99s[0])} to {format_ms(p99s[-1])} ms, "
                f"median {format_ms(p99s[len(p99s) // 2])} ms."
            )
            vms = sorted(vms, key=lambda vm: vm["lat_ms"]["p99"], reverse=True)[:figures.MAX_LINES]
        rows.extend((variant, tails, vm) for vm in vms)
    if not rows:
        return ""
    top_iops = max(vm["iops"] for _, _, vm in rows) or 1.0
    groups = figures.doc_groups(doc)

    def group_of(variant: Variant) -> str:
        return "" if groups is None else groups.group(variant["name"])

    # The bars share one scale; the bold marks the best of each group, the fault cases not compared.
    best_iops: dict[str, float] = {}
    best_mean: dict[str, float] = {}
    for variant, _, vm in rows:
        group = group_of(variant)
        best_iops[group] = max(best_iops.get(group, 0.0), vm["iops"])
        best_mean[group] = min(best_mean.get(group, math.inf), vm["lat_ms"]["mean"])
    head = "".join(
        f"<th{' class=num' if index > 2 else ''}>{name}</th>"
        for index, name in enumerate(
            (
                "variant",
                "VM",
                "description",
                "IOPS",
                "tail IOPS",
                "MB/s",
                "mean ms",
                "p50 ms",
                "p99 ms",
                "p99.9 ms",
            )
        )
    )
    body = []
    previous_group = None
    for variant, tails, vm in rows:
        lat = vm["lat_ms"]
        tail = tails.get(vm["name"])
        color = colors[variant["name"]]
        group = group_of(variant)
        best = ' class="num best"' if lat["mean"] == best_mean[group] else ' class="num"'
        starts = groups is not None and group != previous_group
        previous_group = group
        body.append(
            ('<tr class="group-start">' if starts else "<tr>")
            + _variant_cell(variant["name"], color)
            + f"<td>{_esc(vm['name'])}</td>"
            f'<td class="desc">{_esc(variant["description"])}</td>'
            + _iops_cell(
                vm["iops"],
                top_iops,
                color,
                best=vm["iops"] >= best_iops[group] * (1 - figures.SAME_IOPS_TOLERANCE),
                text=with_interval(vm, "iops", format_count),
            )
            + f'<td class="num">{"–" if tail is None else format_count(tail)}</td>'
            f'<td class="num">{_esc(with_interval(vm, "mbps", format_tenths))}</td>'
            f"<td{best}>{_esc(with_interval(vm, 'mean', format_ms))}</td>"
            + "".join(
                f'<td class="num">{_esc(with_interval(vm, figure, format_ms))}</td>'
                for figure in ("p50", "p99", "p999")
            )
            + "</tr>"
        )
    return (
        '<table class="data" id="comparison"><thead><tr>'
        + head
        + "</tr></thead><tbody>"
        + "".join(body)
        + "</tbody></table>"
        + '<p class="note">Tail IOPS: the mean over the last quarter of the run (at most 60 s), '
        "where a policy that changes its mind has settled. Bold: "
        + ("each group's" if groups else "the")
        + f" most IOPS (to {100 * figures.SAME_IOPS_TOLERANCE:g} %) and lowest mean latency.</p>"
        + _replicated_note(doc)
        + "".join(f'<p class="note">{spread}</p>' for spread in spreads)
    )


REPLICATED_TABLE_NOTE = (
    "±: half-width of the 95 % interval over the replications (Student's t); tail IOPS: the first "
    "replication's; few: too few I/Os beyond the percentile in a replication to estimate it."
)
"""Under the tables of a replicated run: what `±` is, as the terminal's variants table says it."""


BATCH_MEANS_TABLE_NOTE = (
    "±: half-width of the 95 % interval from batch means of the run's own time series (IOPS and mean "
    "latency; percentiles need replications)."
)
"""Under the tables of a run of one replication whose figures have intervals (`--replications 1`)."""


def _replicated_note(doc: Document) -> str:
    """What ± is, as a note, when the figures have intervals: REPLICATED_TABLE_NOTE when a variant
    ran replications, BATCH_MEANS_TABLE_NOTE when one run's figures have them; else nothing."""
    if any("replicas" in variant for variant in doc["variants"]):
        return f'<p class="note">{_esc(REPLICATED_TABLE_NOTE)}</p>'
    if any("ci95" in vm for variant in doc["variants"] for vm in variant["vms"]):
        return f'<p class="note">{_esc(BATCH_MEANS_TABLE_NOTE)}</p>'
    return ""


def _hosts_table(doc: Document, colors: Mapping[str, str]) -> str:
    """Variants × hosts as `sanlab run` prints them: IOPS (with a bar scaled to the best), VM and
    device latency and, with flow control, its settings and state; empty when `shows_hosts` is not."""
    if not shows_hosts(doc):
        return ""
    flow_control = flow_controlled(doc)
    headers = HOST_COLUMNS + FLOW_CONTROL_COLUMNS if flow_control else HOST_COLUMNS
    classes = ["" if header in HOST_TEXT_COLUMNS else " class=num" for header in headers]
    rows = [(variant, host) for variant in doc["variants"] for host in hosts(variant)]
    top_iops = max(host["iops"] for _, host in rows) or 1.0
    # The terminal's two-line headers ("VM mean\nms") take one line here.
    head = "<th>variant</th>" + "".join(
        f"<th{css}>{_esc(' '.join(header.split()))}</th>"
        for header, css in zip(headers, classes, strict=True)
    )
    body = []
    for variant, host in rows:
        color = colors[variant["name"]]
        cells = [
            _iops_cell(host["iops"], top_iops, color, best=host["iops"] == top_iops, text=text)
            if header == "IOPS"
            else f"<td{css}>{_esc(text)}</td>"
            for header, css, text in zip(headers, classes, host_cells(host, flow_control), strict=True)
        ]
        body.append("<tr>" + _variant_cell(variant["name"], color) + "".join(cells) + "</tr>")
    note = f'<p class="note">{_esc(HOSTS_CAPTION)}.</p>' if flow_control else ""
    return (
        f'<table class="data" id="hosts"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        + note
    )


def _stages_table(doc: Document, colors: Mapping[str, str]) -> str:
    """Variants × VMs: each VM's mean latency by stage, as `sanlab run` prints it, the
    STAGES_SHOWN slowest VMs of a variant; empty for a run folder written before the engine
    reported stages."""
    if not shows_stages(doc):
        return ""
    head = "<th>variant</th><th>VM</th>" + "".join(f"<th class=num>{_esc(header)}</th>" for header in STAGE_COLUMNS)
    body, left_out = [], 0
    for variant in doc["variants"]:
        slowest = sorted(variant["vms"], key=lambda vm: -vm["lat_ms"]["mean"])
        left_out += max(0, len(slowest) - STAGES_SHOWN)
        body += [
            "<tr>" + _variant_cell(variant["name"], colors[variant["name"]]) + f"<td>{_esc(vm['name'])}</td>"
            + "".join(f"<td class=num>{_esc(text)}</td>" for text in stage_cells(vm)) + "</tr>"
            for vm in slowest[:STAGES_SHOWN]
        ]
    shown = f" The {STAGES_SHOWN} slowest VMs of each variant; {left_out:,} more in results.json." if left_out else ""
    return (
        f'<table class="data" id="stages"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        f'<p class="note">{_esc(STAGES_CAPTION[0].upper() + STAGES_CAPTION[1:])}.{shown}</p>'
    )


STAGES_SHOWN = 20
"""The report's latency-stage table shows this many VMs of a variant, the slowest first."""


UTILISATION_SHOWN = 20
"""The report's utilisation table shows this many resources of a variant, the busiest first."""


def _utilisation_table(doc: Document, colors: Mapping[str, str]) -> str:
    """Variants × resources: each resource's utilisation on one 0-1 scale and how it is measured,
    the table `sanlab headroom` names its bottleneck from (`sanlab.analysis.utilisation`), the
    UTILISATION_SHOWN busiest of a variant; and what no figure covers."""
    body: list[str] = []
    left_out = 0
    uncovered: dict[str, None] = {}
    for variant in doc["variants"]:
        found = utilisations(variant)
        left_out += max(0, len(found) - UTILISATION_SHOWN)
        uncovered.update(dict.fromkeys(not_covered(variant)))
        body += [
            "<tr>" + _variant_cell(variant["name"], colors[variant["name"]])
            + f"<td>{_esc(item['kind'])}</td><td>{_esc(item['name'])}</td>"
            f"<td class=num>{_esc(format_fraction(item['utilisation']))}</td><td>{_esc(item['how'])}</td></tr>"
            for item in found[:UTILISATION_SHOWN]
        ]  # fmt: skip
    if not body:
        return ""
    shown = (
        f" The {UTILISATION_SHOWN} busiest resources of each variant; {left_out:,} more less busy."
        if left_out
        else ""
    )
    return (
        '<table class="data" id="utilisation"><thead><tr><th>variant</th><th>resource</th><th>name</th>'
        "<th class=num>utilisation</th><th>how it is measured</th></tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
        '<p class="note">Every resource the run reports a figure for, on one scale from 0 (idle) to 1 '
        "(saturated), highest first: a server's busy share, a queue's occupancy, a cache's fullness, "
        "a limit's use; the highest is what saturates first as the load grows (<code>sanlab headroom</code> "
        f"finds how far).{shown} Not on the table (no figure in the run's document): "
        f"{_esc('; '.join(uncovered))}.</p>"
    )


def _events_table(doc: Document) -> str:
    """Every variant's path selection events, a periodic run of them (a flapping path) in one row."""
    folded = [
        (variant["name"], row) for variant in doc["variants"] for row in fold_repeats(variant["psp_events"])
    ]
    if not folded:
        return ""
    repeats = any(row.count > 1 for _, row in folded)
    rows = [
        f"<tr><td>{_esc(name)}</td><td class=num>{row.event['t_s']:.3f}</td>"
        f"<td>{_esc(row.event['device'])}</td>"
        f"<td>{_esc(row.event['event'])}</td><td>{_esc(compact_names(row.event['paths']))}</td>"
        + (f"<td>{_esc(repeat_text(row))}</td>" if repeats else "")
        + "</tr>"
        for name, row in folded
    ]
    return (
        '<table class="data" id="psp-events"><thead><tr><th>variant</th><th class=num>t, s</th>'
        "<th>device</th><th>event</th><th>paths</th>"
        + ("<th>repeats</th>" if repeats else "")
        + "</tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )


FAULT_HEADERS = ("t, s", "edge", "kind", "target", "detail", "marked, s", "max ms", "back, s")
"""The failover section's fault table: the terminal's columns (`fault_rows`)."""
FAULT_NUMERIC = frozenset({"t, s", "marked, s", "max ms", "back, s"})


def _faults_table(doc: Document) -> str:
    """Each fault edge of each variant as `sanlab run` prints it; empty without faults."""
    rows = [
        (variant["name"], cells)
        for variant in doc["variants"]
        for fault in failover.faults(variant)
        for cells in fault_rows(fault)
    ]
    if not rows:
        return ""
    head = "<th>variant</th>" + "".join(
        f"<th{' class=num' if header in FAULT_NUMERIC else ''}>{header}</th>" for header in FAULT_HEADERS
    )
    body = "".join(
        f'<tr class="fault-{_esc(cells[1])}"><td>{_esc(name)}</td>'
        + "".join(
            f"<td{' class=num' if header in FAULT_NUMERIC else ''}>{_esc(text)}</td>"
            for header, text in zip(FAULT_HEADERS, cells, strict=True)
        )
        + "</tr>"
        for name, cells in rows
    )
    return (
        f'<table class="data" id="faults"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
        f'<p class="note">{_esc(FAULTS_CAPTION)}.</p>'
    )


def _failover_counts_table(doc: Document) -> str:
    """VMs, devices and paths with I/Os retried, failed or failed over; empty when none has any."""
    rows = [(variant["name"], row) for variant in doc["variants"] for row in failover.counts(variant)]
    if not rows:
        return ""
    body = "".join(
        f"<tr><td>{_esc(name)}</td><td>{_esc(row.kind)}</td><td>{_esc(row.name)}</td>"
        f"<td class=num>{format_count(row.retried)}</td><td class=num>{_esc(failed_text(row))}</td>"
        f"<td class=num>{format_count(row.failed_over)}</td></tr>"
        for name, row in rows
    )
    return (
        '<table class="data" id="failover-counts"><thead><tr><th>variant</th><th>kind</th><th>name</th>'
        "<th class=num>retried</th><th class=num>failed</th><th class=num>failed over</th></tr></thead>"
        f"<tbody>{body}</tbody></table>"
        '<p class="note">Retried: commands sent again after an abort; failed over: moved off this path '
        "to another.</p>"
    )


def _winners_html(doc: Document) -> str:
    """The run's finding first: per group of variants (or for all), which give the most IOPS."""
    found = figures.winners(doc)
    if not found:
        return ""
    items = "".join(
        f"<li>{f'<b>{_esc(group)}</b>: ' if group else ''}{_esc(sentence)}.</li>" for group, sentence in found
    )
    return f'<ul class="winners" id="winners">{items}</ul>'


def _conservation_note(doc: Document) -> str:
    components = [(v["name"], c) for v in doc["variants"] for c in v.get("conservation", [])]
    # Results from before faults existed have no `failed`: none failed then.
    broken = [
        (name, c)
        for name, c in components
        if c["issued"] != c["completed"] + c.get("failed", 0) + c["in_flight"]
    ]
    if not broken:
        failed = " failed +" if any(c.get("failed", 0) for _, c in components) else ""
        return (
            f'<p class="ok">✓ No I/O lost: issued = completed +{failed} in flight for all {len(components)} '
            "components of every variant.</p>"
        )
    items = "".join(
        f"<li>{_esc(name)}: {_esc(c['component'])} issued {c['issued']}, completed {c['completed']}, "
        f"failed {c.get('failed', 0)}, in flight {c['in_flight']}</li>"
        for name, c in broken
    )
    return f'<div class="warn">I/O conservation broken in {len(broken)} components:<ul>{items}</ul></div>'


def _run_facts(run: ReportRun) -> list[tuple[str, str]]:
    manifest = run.manifest
    variants = run.doc["variants"]
    seeds = sorted({variant["seed"] for variant in variants})
    simulated = sorted({variant["sim_time_s"] for variant in variants})
    return [
        ("scenario file", manifest.get("scenario_file", run.doc.get("file", ""))),
        ("variants", ", ".join(variant["name"] for variant in variants)),
        ("seed", ", ".join(str(seed) for seed in seeds)),
        ("simulated", ", ".join(f"{s:g} s" for s in simulated)),
        ("wall time", f"{manifest['wall_s']:.2f} s" if "wall_s" in manifest else ""),
        ("started", manifest.get("started_utc", "")),
        ("sanlab", run.doc.get("version", "")),
        ("command", " ".join(manifest.get("argv", []))),
    ]


def _runs_html(runs: Sequence[ReportRun]) -> str:
    if len(runs) == 1:
        facts = "".join(
            f"<dt>{_esc(name)}</dt><dd>{_esc(value)}</dd>" for name, value in _run_facts(runs[0]) if value
        )
        return f'<dl class="facts">{facts}</dl>'
    names = [name for name, _ in _run_facts(runs[0])]
    head = "<th>run</th>" + "".join(f"<th>{_esc(name)}</th>" for name in names)
    body = "".join(
        f"<tr><td>{_esc(run.label)}</td>"
        + "".join(f"<td>{_esc(value)}</td>" for _, value in _run_facts(run))
        + "</tr>"
        for run in runs
    )
    return f'<table class="data runs"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _section(anchor: str, heading: str, parts: Sequence[str]) -> tuple[str, str, str] | None:
    """(anchor, heading, HTML) of a section, or None when it has nothing to show."""
    content = "".join(part for part in parts if part)
    if not content:
        return None
    return anchor, heading, f'<section id="section-{anchor}"><h2>{_esc(heading)}</h2>{content}</section>'


def _figure_html(figure: Figure | None) -> str:
    return "" if figure is None else _plot_html(figure)


def _banner(doc: Document, notes: Sequence[str] | None = None) -> str:
    """The warnings above the sections: an interrupted run, no variant, what the figures mean."""
    banner = ""
    if doc.get("cancelled"):
        banner = (
            '<div class="warn">The run was interrupted: the variants shown finished, the others did not run.'
            "</div>"
        )
    if not doc["variants"]:
        banner += '<div class="warn">No variant finished: there is nothing to plot.</div>'
    if notes is None:
        notes = figure_notes(doc)
    if notes:
        items = "".join(f"<li>{_esc(note)}</li>" for note in notes)
        banner += f'<div class="warn" id="notes">What the figures mean here:<ul>{items}</ul></div>'
    return banner


def render_report(
    runs: Sequence[ReportRun],
    extra: Sequence[tuple[str, str, str]] = (),
    *,
    notes: Sequence[str] | None = None,
) -> str:
    """The HTML report of one run, or of several side by side (`sanlab compare`); `extra`
    sections (anchor, heading, HTML) come last (the measured-against-simulated one). `notes`: the
    document's `figure_notes` when the caller has them already (each is passes over every series)."""
    doc = merge_runs(runs)
    colors = figures.variant_colors(doc)
    series = figures.series_frame(doc)
    ranges = figures.replica_ranges(doc) if figures.replicated(doc) else None
    # Once for the overview's caption and the table: each is a pass over the variant's series.
    tails = {variant["name"]: tail_iops(variant) for variant in doc["variants"]}
    sections = [
        _section(
            "overview",
            "Variants side by side",
            [
                _winners_html(doc),
                _figure_html(figures.overview_figure(doc, colors, tails)),
                _comparison_table(doc, colors, tails),
                _hosts_table(doc, colors),
            ],
        ),
        _section(
            "paths",
            "Paths",
            [
                _figure_html(figures.paths_figure(doc)),
                _figure_html(figures.path_timeline_figure(doc, series)),
                _figure_html(figures.degraded_share_figure(doc, colors)),
            ],
        ),
        _section(
            "vms",
            "VMs over time",
            [
                _figure_html(figures.vm_iops_figure(doc, series, colors, ranges=ranges)),
                _figure_html(figures.vm_latency_figure(doc, series, colors, ranges=ranges)),
            ],
        ),
        _section(
            "latency",
            "Latency distribution",
            [_figure_html(figures.latency_cdf_figure(doc, colors)), _stages_table(doc, colors)],
        ),
        _section(
            "queues",
            "Queues",
            [_figure_html(figures.device_queue_figure(doc, series, colors, ranges=ranges))],
        ),
        _section("utilisation", "Utilisation", [_utilisation_table(doc, colors)]),
        _section(
            "flow-control",
            "Host flow control",
            [
                _figure_html(figures.host_flow_control_figure(doc, series, colors, ranges=ranges)),
                _figure_html(figures.injector_figure(doc, colors)),
            ],
        ),
        _section("cores", "Array cores", [_figure_html(figures.core_util_figure(doc, series))]),
        _section("failover", "Faults and failover", [_faults_table(doc), _failover_counts_table(doc)]),
        _section("events", "Path selection events", [_events_table(doc)]),
    ]
    present = [section for section in [*sections, *extra] if section is not None]
    nav = "".join(f'<a href="#section-{anchor}">{_esc(heading)}</a>' for anchor, heading, _ in present)
    title = f"{doc['scenario']}: sanlab report" if len(runs) == 1 else f"sanlab compare: {doc['scenario']}"
    banner = _banner(doc, notes)
    regenerate = "sanlab report RUN_DIR" if len(runs) == 1 else "sanlab compare RUN_DIR..."
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="sanlab {_esc(doc.get("version", ""))}">
<title>{_esc(title)}</title>
<style>{CSS}</style>
<script type="text/javascript">{get_plotlyjs()}</script>
</head>
<body>
<header>
<h1>{_esc(doc["scenario"])}</h1>
<p class="subtitle">{"sanlab report" if len(runs) == 1 else f"sanlab compare of {len(runs)} runs"} ·
{len(doc["variants"])} variants</p>
{_runs_html(runs)}
{_conservation_note(doc)}
{banner}
<nav>{nav}</nav>
</header>
<main>
{"".join(content for _, _, content in present)}
</main>
<footer>Written by sanlab {_esc(doc.get("version", ""))}. Plots are interactive: hover for values, drag to
zoom, double-click to reset, click a legend entry to hide it. Rewrite this page with
<code>{_esc(regenerate)}</code>.</footer>
</body>
</html>
"""


CSS = """
:root { --fg: #24292f; --muted: #57606a; --line: #d0d7de; --bg: #f6f8fa; --ok: #1a7f37; --warn: #9a6700; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header, main, footer { max-width: 1280px; margin: 0 auto; padding: 0 24px; }
header { padding-top: 24px; }
h1 { margin: 0; font-size: 26px; }
h2 { margin: 32px 0 12px; font-size: 19px; border-bottom: 1px solid var(--line); padding-bottom: 6px; }
.subtitle { margin: 2px 0 12px; color: var(--muted); }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0 0 12px;
  background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: 13px; overflow-wrap: anywhere; }
nav { position: sticky; top: 0; z-index: 10; background: var(--bg); padding: 8px 0;
  border-bottom: 1px solid var(--line); }
nav a { margin-right: 16px; color: #0969da; text-decoration: none; }
figure.plot { margin: 0 0 20px; background: #fff; border: 1px solid var(--line); border-radius: 8px;
  padding: 8px 8px 4px; }
figcaption { color: var(--muted); padding: 4px 12px 8px; }
table.data { width: 100%; border-collapse: collapse; background: #fff; border: 1px solid var(--line);
  border-radius: 8px; overflow: hidden; margin-bottom: 8px; }
table.data th, table.data td { padding: 6px 10px; border-bottom: 1px solid #eaeef2; text-align: left;
  vertical-align: top; }
table.data th { background: #f6f8fa; font-weight: 600; white-space: nowrap; }
table.data .num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.data .best { font-weight: 700; }
table.data .desc { color: var(--muted); max-width: 420px; }
#faults td:first-child, #failover-counts td:first-child { white-space: nowrap; }
table.data tr.group-start td { border-top: 2px solid var(--line); }
ul.winners { list-style: none; margin: 0 0 16px; padding: 10px 16px; background: #fff;
  border: 1px solid var(--line); border-radius: 8px; font-size: 15px; }
ul.winners li { margin: 2px 0; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; }
p.note { color: var(--muted); font-size: 13px; margin: 4px 0 0; }
p.ok { color: var(--ok); margin: 4px 0 8px; }
div.warn { color: var(--warn); background: #fff8c5; border: 1px solid #d4a72c; border-radius: 6px;
  padding: 8px 12px; margin: 8px 0; }
footer { color: var(--muted); padding-top: 24px; padding-bottom: 32px; font-size: 13px; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
"""
