"""The warm-up a run's own data show: MSER-5 (White, 1997) on each VM's and device's IOPS and
mean latency series of a pilot run without warm-up, the largest truncation found.

Faults and scheduled events are not transients: the warm-up found never reaches past the first
fault's start (the pilot's `faults`), and a series whose truncation would is cut there and said.
MSER-5 searches the first half of a series, so the warm-up found is at most half the run.
The series and the rule are those of `sanlab.replications.transients`, which also checks every
run's configured warm-up.
"""

from __future__ import annotations

from dataclasses import dataclass

from sanlab.document import Document, first_fault_s
from sanlab.intervals import mser5
from sanlab.replications import TRANSIENT_LEAST_SAMPLES, transients


@dataclass(frozen=True)
class Warmup:
    """The warm-up found: seconds, the series that needed it most, and why it is capped if so."""

    found_s: float
    series: str
    capped_at_fault_s: float | None = None


def find_warmup(doc: Document, sample_interval_s: float) -> Warmup:
    """The warm-up of a pilot run (every variant, no warm-up, `sample_interval_s` apart)."""
    best = Warmup(0.0, "")
    for variant in doc["variants"]:
        fault_s = first_fault_s(variant)
        for name, _, values in transients(variant):
            if len(values) < TRANSIENT_LEAST_SAMPLES:
                continue
            found_s = mser5(values) * sample_interval_s
            capped = None
            if fault_s is not None and found_s > fault_s:
                found_s, capped = fault_s, fault_s
            if found_s > best.found_s:
                best = Warmup(found_s, f"{variant['name']}: {name}", capped)
    return best
