"""Host flow control: window and latency estimate over time (PARDA, SIOC), and SIOC's injector curve."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from sanlab.document import Document, HostReport, hosts
from sanlab.formatting import format_count, format_ms, format_ms_span
from sanlab.report.figures.common import Figure, layout, new_figure
from sanlab.report.figures.grid import time_lines


def _flow_control_finding(variant: str, controlled: Sequence[HostReport]) -> str:
    """Where L and the windows of a variant's flow-controlled hosts ended, against the threshold."""
    estimate = format_ms_span(host["flow_control"]["latency_estimate_ms"] for host in controlled)
    threshold = format_ms_span(host["flow_control"]["latency_threshold_ms"] for host in controlled)
    finals = {host["name"]: format_count(host["window"]["final"]) for host in controlled if host["window"]}
    if len(finals) > 1 and len(set(finals.values())) == 1:
        windows = f" and every window at {next(iter(finals.values()))}"
    elif finals:
        windows = " and the windows at " + ", ".join(f"{name} {final}" for name, final in finals.items())
    else:
        windows = ""
    return f"In {variant}, L ends at {estimate} (threshold {threshold}){windows}."


def host_flow_control_figure(
    doc: Document, series: pd.DataFrame, colors: Mapping[str, str], *, ranges: pd.DataFrame | None = None
) -> Figure | None:
    """Window and latency estimate of every flow-controlled host over time, the threshold dashed:
    the convergence plots of the PARDA paper (Gulati et al., FAST '09); with `ranges` as bands."""
    thresholds: dict[str, list[tuple[str, float, str]]] = {}
    findings = []
    for variant in doc["variants"]:
        controlled = [host for host in hosts(variant) if host["flow_control"]]
        if controlled:
            limits = sorted({host["flow_control"]["latency_threshold_ms"] for host in controlled})
            thresholds[variant["name"]] = [
                ("latency_estimate_ms", limit, f"threshold {format_ms(limit)} ms") for limit in limits
            ]
            findings.append(_flow_control_finding(variant["name"], controlled))
    return time_lines(
        "host-flow-control",
        "Host flow control: window and latency estimate",
        "Each host sets its window (its device queue depth) from L, its estimate of the cluster-wide "
        "latency: the window grows while L is below the dashed threshold and shrinks above it, so L "
        "settles near the threshold and the windows divide the array in proportion to β. "
        + " ".join(findings),
        doc,
        series,
        colors,
        kind="host",
        panels=[("window", "window, I/Os"), ("latency_estimate_ms", "latency estimate L, ms")],
        reference_lines=thresholds,
        ranges=ranges,
    )


def injector_figure(doc: Document, colors: Mapping[str, str]) -> Figure | None:
    """SIOC's injector curve: device latency against throughput at each outstanding-I/O level,
    with the automatic threshold at its percent of the peak marked."""
    curves = [(variant["name"], found) for variant in doc["variants"] for found in variant.get("injector", [])]
    if not curves:
        return None
    fig = new_figure()
    findings = []
    for variant, found in curves:
        points = found["points"]
        label = variant if len({v for v, _ in curves}) == len(curves) else f"{variant} · {found['volume']}"
        fig["data"].append(
            {
                "type": "scatter",
                "x": [point["iops"] for point in points],
                "y": [point["latency_ms"] for point in points],
                "customdata": [point["outstanding"] for point in points],
                "mode": "lines+markers",
                "line": {"color": colors[variant], "width": 2},
                "name": label,
                "hovertemplate": (
                    f"{label}<br>%{{customdata}} outstanding: %{{x:.4~g}} IOPS, %{{y:.4~g}} ms<extra></extra>"
                ),
            }
        )
        target = found["peak_iops"] * found["percent_of_peak"] / 100
        fig["data"].append(
            {
                "type": "scatter",
                "x": [target],
                "y": [found["threshold_ms"]],
                "mode": "markers",
                "marker": {"color": colors[variant], "size": 12, "symbol": "x"},
                "name": f"{label}: threshold",
                "hovertemplate": f"{label}<br>threshold %{{y:.4~g}} ms at %{{x:.4~g}} IOPS<extra></extra>",
            }
        )
        findings.append(
            f"In {variant}, the peak is {format_count(found['peak_iops'])} IOPS and the threshold "
            f"{format_ms(found['threshold_ms'])} ms ({found['percent_of_peak']:g} % of peak, "
            f"{format_count(found['io_size_bytes'] / 1024)} KiB reads)."
        )
    fig["layout"]["xaxis"] = {"title": {"text": "injector throughput, IOPS"}}
    fig["layout"]["yaxis"] = {"title": {"text": "device latency (DAVG), ms"}}
    title = "SIOC injector: the automatic threshold"
    layout(fig, title, 420)
    caption = (
        "Before the run, random reads at 1 to 64 outstanding I/Os measure the idle datastore; the "
        "threshold (×) is the latency where throughput first reaches the percent of the peak. "
        + " ".join(findings)
    )
    return Figure("sioc-injector", title, caption, fig)
