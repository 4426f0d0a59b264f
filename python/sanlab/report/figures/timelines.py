"""VMs and devices over time: IOPS, latency, and the device queues (ACTV, QUED)."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from sanlab.document import Document
from sanlab.report.figures.common import Figure, join_names
from sanlab.report.figures.grid import time_lines

PINNED_QUEUE_FRACTION = 0.95
"""A device whose mean ACTV reaches this fraction of its queue depth (with I/Os queued) has a full queue."""


def vm_iops_figure(
    doc: Document, series: pd.DataFrame, colors: Mapping[str, str], *, ranges: pd.DataFrame | None = None
) -> Figure | None:
    """IOPS of every VM over time (with `ranges`, `replicas.replica_ranges`, as bands)."""
    return time_lines(
        "vm-iops",
        "IOPS over time per VM",
        "Flat lines are a steady state; a step is a policy changing its mind (a path dropped, a throttle "
        "engaging); the gap between lines is what the choice of variant is worth.",
        doc,
        series,
        colors,
        kind="vm",
        panels=[("iops", "IOPS")],
        ranges=ranges,
    )


def vm_latency_figure(
    doc: Document, series: pd.DataFrame, colors: Mapping[str, str], *, ranges: pd.DataFrame | None = None
) -> Figure | None:
    """Mean latency of every VM over time (with `ranges` as bands)."""
    return time_lines(
        "vm-latency",
        "Latency over time per VM",
        "Mean completion latency of each sample. With a fixed number of I/Os outstanding, latency is "
        "outstanding I/Os / IOPS (Little's law): this plot and the one above tell one story.",
        doc,
        series,
        colors,
        kind="vm",
        panels=[("lat_ms_mean", "mean latency, ms")],
        ranges=ranges,
    )


def device_queue_figure(
    doc: Document, series: pd.DataFrame, colors: Mapping[str, str], *, ranges: pd.DataFrame | None = None
) -> Figure | None:
    """ACTV (I/Os issued to the paths) and QUED (I/Os waiting in the host) of every device over time
    (with `ranges` as bands)."""
    several = any(len(variant["devices"]) > 1 for variant in doc["variants"])
    depths: dict[str, list[tuple[str, float, str]]] = {}
    for variant in doc["variants"]:
        by_depth: dict[int, list[str]] = {}
        for device in variant["devices"]:
            by_depth.setdefault(device["queue_depth"], []).append(device["name"])
        depths[variant["name"]] = [
            ("actv", float(depth), f"{join_names(names) + ' ' if several else ''}queue depth {depth}")
            for depth, names in sorted(by_depth.items())
        ]
    pinned = [
        f"{variant['name']}: {device['name']} (ACTV {device['actv_mean']:.3g} of {device['queue_depth']}, "
        f"QUED {device['qued_mean']:.3g})"
        for variant in doc["variants"]
        for device in variant["devices"]
        if device["actv_mean"] >= PINNED_QUEUE_FRACTION * device["queue_depth"] and device["qued_mean"] >= 0.5
    ]
    finding = (
        f" Host queue full in {'; '.join(pinned)}."
        if pinned
        else " No device fills its queue: the host queues are not the limit."
    )
    return time_lines(
        "device-queues",
        "Device queue occupancy (esxtop ACTV / QUED)",
        "ACTV: I/Os the device has issued to the paths; QUED: I/Os waiting in the host for a slot. ACTV "
        "pinned at the dashed queue depth with QUED above zero means the host queue, not the array, "
        "sets the pace." + finding,
        doc,
        series,
        colors,
        kind="device",
        panels=[("actv", "ACTV, I/Os"), ("qued", "QUED, I/Os")],
        reference_lines=depths,
        ranges=ranges,
    )
