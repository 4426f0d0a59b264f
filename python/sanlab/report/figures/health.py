"""The report's path-health figure: each selector's share of I/O on a degrading path over time."""

from __future__ import annotations

from collections.abc import Mapping

from sanlab.analysis import health
from sanlab.document import Document
from sanlab.report.figures.common import (
    MAX_LINES,
    TIME_AXIS,
    Figure,
    layout,
    log_ticks,
    update,
    variant_dashes,
)
from sanlab.report.figures.grid import reference_line
from sanlab.report.figures.subplots import subplots


def _degraded_lines(
    doc: Document,
) -> tuple[dict[str, list[tuple[str, list[float], list[float]]]], dict[str, tuple[float, float, float]]]:
    """Per device with a degrading path: each variant's (name, times, share %) of that path, and
    the degradation's (start, end, the share under which the path counts as left)."""
    lines: dict[str, list[tuple[str, list[float], list[float]]]] = {}
    windows: dict[str, tuple[float, float, float]] = {}
    for variant in doc["variants"]:
        # Once per variant, not per device: it parses the resolved scenario (24 s at 10,000 VMs).
        degraded = health.degradations(variant)
        if not degraded:
            continue
        every_shares = health.every_device_shares(variant)
        for device in variant["devices"]:
            shares = every_shares[device["host"], device["name"]]
            links = {health.link_of(name, device["volume"]): name for name in shares.iops}
            found = next((d for d in degraded if d.link in links), None)
            if found is None:
                continue
            path = links[found.link]
            totals = shares.totals()
            points = [
                (t_s, 100 * bad / total)
                for t_s, bad, total in zip(shares.times_s, shares.iops[path], totals, strict=True)
                if total > 0
            ]
            label = f"{device['name']}: {found.link}"
            lines.setdefault(label, []).append(
                (variant["name"], [t for t, _ in points], [share for _, share in points])
            )
            windows[label] = (found.start_s, found.end_s, 100 * health.left_below(shares))
    return lines, windows


def degraded_share_figure(doc: Document, colors: Mapping[str, str]) -> Figure | None:
    """Per device with a degrading path (a `link_latency` event), that path's share of the
    device's I/O in each sample, one line per variant, the degradation shaded and the share under
    which the path counts as left dashed. None when no variant's device has one."""
    lines, windows = _degraded_lines(doc)
    if not lines:
        return None
    hidden = ""
    if len(lines) > MAX_LINES:
        # A row per device is 300 px each: keep the devices whose degrading path kept the most I/O.
        def mean_share_pct(label: str) -> float:
            return max((sum(shares) / len(shares) for _, _, shares in lines[label] if shares), default=0.0)

        shares_pct = {label: mean_share_pct(label) for label in lines}
        top = set(sorted(lines, key=shares_pct.__getitem__, reverse=True)[:MAX_LINES])
        ordered = sorted(shares_pct.values())
        hidden = (
            f" The {MAX_LINES} of {len(lines):,} devices whose degrading path kept the highest mean share "
            f"in any variant; across all that share spans {ordered[0]:.3g} to {ordered[-1]:.3g} %, "
            f"median {ordered[len(ordered) // 2]:.3g} %."
        )
        lines = {label: traces for label, traces in lines.items() if label in top}
    # 0.08 between panels while it fits: the gaps may take at most half the height (20 panels).
    gap = 0.08 if len(lines) == 1 else min(0.08, 0.5 / (len(lines) - 1))
    panels = subplots(len(lines), 1, shared_xaxes=True, vertical_spacing=gap)
    fig = panels.figure()
    shapes, annotations = [], []
    dashes = variant_dashes(doc)
    for row, (label, traces) in enumerate(lines.items(), start=1):
        start_s, end_s, left_pct = windows[label]
        for name, times_s, shares_pct in traces:
            line = {
                "type": "scatter",
                "x": times_s,
                "y": shares_pct,
                "mode": "lines",
                "line": {"color": colors[name], "dash": dashes[name], "width": 1.5},
                "name": name,
                "legendgroup": name,
                "showlegend": row == 1,
                "hovertemplate": f"{name} · {label}<br>%{{x:.3~g}} s: %{{y:.3~g}} %<extra></extra>",
            }
            fig["data"].append(panels.place(line, row, 1))
        # Cut at the last sample: a degradation past the run's end would stretch the time axis.
        last_s = max((times_s[-1] for _, times_s, _ in traces if times_s), default=end_s)
        xref, yref = panels.refs(row, 1)
        shapes.append(
            {
                "type": "rect",
                "x0": start_s,
                "x1": min(end_s, last_s),
                "y0": 0,
                "y1": 1,
                "fillcolor": "#E45756",
                "opacity": 0.08,
                "line": {"width": 0},
                "xref": xref,
                "yref": f"{yref} domain",
            }
        )
        shape, annotation = reference_line((xref, yref), left_pct, f"left below {left_pct:g} %")
        shapes.append(shape)
        annotations.append(annotation)
        drawn_pct = [left_pct] + [share for _, _, shares_pct in traces for share in shares_pct if share > 0]
        ticks = log_ticks(min(drawn_pct), max(drawn_pct))
        y_axis = panels.axes(row, 1)[1]
        update(fig["layout"][y_axis], {"title": {"text": f"{label}, % of I/O"}, "type": "log", **ticks})
    update(fig["layout"][panels.axes(len(lines), 1)[0]], {"title": {"text": TIME_AXIS}})
    fig["layout"]["shapes"], fig["layout"]["annotations"] = shapes, annotations
    title = "Degraded path's share of I/O over time"
    layout(fig, title, 160 + 300 * len(lines))
    caption = (
        "Each line is a variant (a selector): the share of its device's I/O that the degrading path "
        "carried in each sample, on a log axis (samples with none are not drawn). The shaded span is the "
        "degradation; a selector has left the path once its line stays under the dashed share. Click a "
        "legend entry to hide it."
    ) + hidden
    return Figure("degraded-share", title, caption, fig)
