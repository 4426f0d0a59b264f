"""The warm-up a run's own data show: MSER-5 (White, 1997) on each VM's and device's IOPS and
mean latency series of a pilot run without warm-up, the largest truncation found.

Faults and scheduled events are not transients: the warm-up found never reaches past the first
fault's start (the pilot's `faults`), and a series whose truncation would is cut there and said.
MSER-5 searches the first half of a series, so the warm-up found is at most half the run.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from sanlab.document import Document, Variant
from sanlab.intervals import MSER_BATCH, mser5

SERIES = ("iops", "lat_ms_mean")
"""The metrics of each VM's and device's time series that MSER-5 reads."""
ENTITY_PREFIXES = ("vm/", "device/")
LEAST_SAMPLES = 10 * MSER_BATCH
"""Fewer samples than this and a series says too little to find a warm-up in (ten batches)."""


@dataclass(frozen=True)
class Warmup:
    """The warm-up found: seconds, the series that needed it most, and why it is capped if so."""

    found_s: float
    series: str
    capped_at_fault_s: float | None = None


def _series(variant: Variant) -> Iterator[tuple[str, list[float]]]:
    """Each VM's and device's SERIES in time order, named `variant: entity metric`."""
    series = variant["timeseries"]
    found: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for t_s, entity, metric, value in zip(series["t_s"], series["entity"], series["metric"], series["value"], strict=True):
        if metric in SERIES and entity.startswith(ENTITY_PREFIXES):
            found.setdefault((entity, metric), []).append((t_s, value))
    for (entity, metric), points in found.items():
        points.sort()
        # An interval without I/O has no latency: 0 there, as nothing was measured.
        yield f"{variant['name']}: {entity} {metric}", [value if math.isfinite(value) else 0.0 for _, value in points]


def first_fault_s(variant: Variant) -> float | None:
    """When the variant's first fault starts, or None without faults."""
    starts = [edge["t_s"] for edge in variant.get("faults", []) if edge.get("phase") == "start"]
    return min(starts) if starts else None


def find_warmup(doc: Document, sample_interval_s: float) -> Warmup:
    """The warm-up of a pilot run (every variant, no warm-up, `sample_interval_s` apart)."""
    best = Warmup(0.0, "")
    for variant in doc["variants"]:
        fault_s = first_fault_s(variant)
        for name, values in _series(variant):
            if len(values) < LEAST_SAMPLES:
                continue
            found_s = mser5(values) * sample_interval_s
            capped = None
            if fault_s is not None and found_s > fault_s:
                found_s, capped = fault_s, fault_s
            if found_s > best.found_s:
                best = Warmup(found_s, name, capped)
    return best

