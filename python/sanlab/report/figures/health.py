"""The report's path-health figure: each selector's share of I/O on a degrading path over time."""

from __future__ import annotations

from collections.abc import Mapping

from plotly.subplots import make_subplots

from sanlab.analysis import health
from sanlab.document import Document
from sanlab.report.figures.common import MAX_LINES, TIME_AXIS, Figure, layout, log_ticks, variant_dashes


def degraded_share_figure(doc: Document, colors: Mapping[str, str]) -> Figure | None:
    """Per device with a degrading path (a `link_latency` event), that path's share of the
    device's I/O in each sample, one line per variant, the degradation shaded and the share under
    which the path counts as left dashed. None when no variant's device has one."""
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
    fig = make_subplots(rows=len(lines), cols=1, shared_xaxes=True, vertical_spacing=0.08)
    dashes = variant_dashes(doc)
    for row, (label, traces) in enumerate(lines.items(), start=1):
        start_s, end_s, left_pct = windows[label]
        for name, times_s, shares_pct in traces:
            fig.add_scatter(
                x=times_s,
                y=shares_pct,
                mode="lines",
                line={"color": colors[name], "dash": dashes[name], "width": 1.5},
                name=name,
                legendgroup=name,
                showlegend=row == 1,
                hovertemplate=f"{name} · {label}<br>%{{x:.3~g}} s: %{{y:.3~g}} %<extra></extra>",
                row=row,
                col=1,
            )
        # After the traces: plotly leaves shapes out of subplots that have none yet. Cut at the last
        # sample: a degradation past the run's end would stretch the time axis.
        last_s = max((times_s[-1] for _, times_s, _ in traces if times_s), default=end_s)
        fig.add_vrect(
            x0=start_s, x1=min(end_s, last_s), fillcolor="#E45756", opacity=0.08, line_width=0, row=row, col=1
        )
        fig.add_hline(
            y=left_pct,
            line={"color": "#6e7781", "dash": "dash", "width": 1},
            annotation_text=f"left below {left_pct:g} %",
            annotation_position="top left",
            annotation_font={"size": 11, "color": "#6e7781"},
            row=row,
            col=1,
        )
        drawn_pct = [left_pct] + [share for _, _, shares_pct in traces for share in shares_pct if share > 0]
        ticks = log_ticks(min(drawn_pct), max(drawn_pct))
        fig.update_yaxes(title_text=f"{label}, % of I/O", type="log", **ticks, row=row, col=1)
    fig.update_xaxes(title_text=TIME_AXIS, row=len(lines), col=1)
    title = "Degraded path's share of I/O over time"
    layout(fig, title, 160 + 300 * len(lines))
    caption = (
        "Each line is a variant (a selector): the share of its device's I/O that the degrading path "
        "carried in each sample, on a log axis (samples with none are not drawn). The shaded span is the "
        "degradation; a selector has left the path once its line stays under the dashed share. Click a "
        "legend entry to hide it."
    ) + hidden
    return Figure("degraded-share", title, caption, fig)
