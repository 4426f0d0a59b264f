"""Service-level objectives of `sanlab headroom`: `p99<=5ms`, `mean<=1ms`, `iops>=2000`, parsed
once with one clear error, and judged at a point from its seeds' figures (docs/headroom.md).

A latency SLO is a ceiling on a figure of every selected VM: per seed, the worst VM's figure
(the largest) is the SLO's figure; its 95 % interval over the seeds (`sanlab.intervals`) decides
the verdict when it lies wholly on one side of the limit. `iops>=N` is a floor on the selected
VMs' total IOPS, judged the same way."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sanlab.errors import UserError
from sanlab.intervals import Interval

LATENCY_FIGURES = ("mean", "p50", "p95", "p99", "p99.9", "max")
"""The latency figures an SLO may name, as `sanlab run` shows them."""
COLUMN = {"mean": "mean", "p50": "p50", "p95": "p95", "p99": "p99", "p99.9": "p999", "max": "max"}
"""A figure's key in the engine's `lat_ms` (and the runs' `lat_ms_<key>` columns)."""
UNITS_MS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1000.0}

EXPECTED = (
    "expected FIGURE<=LATENCY (FIGURE one of mean, p50, p95, p99, p99.9, max; LATENCY a number with "
    "ns, us, ms or s, e.g. p99<=5ms) or iops>=N (e.g. iops>=2000)"
)
_FORM = re.compile(
    r"^\s*([A-Za-z][A-Za-z0-9.]*)\s*(<=|>=|<|>|=)\s*([0-9][0-9_,]*(?:\.[0-9]+)?)\s*([A-Za-zµ]*)\s*$"
)


class SloError(UserError):
    """An `--slo` expression sanlab cannot read."""


@dataclass(frozen=True)
class Slo:
    """One objective: a ceiling on a latency figure (ms) or a floor on total IOPS."""

    text: str
    figure: str  # one of LATENCY_FIGURES, or "iops"
    limit: float  # ms for latency, IOPS for the floor

    @property
    def ceiling(self) -> bool:
        return self.figure != "iops"

    @property
    def key(self) -> str:
        """The figure's name in the JSON (`p99`, `p999`, `iops`)."""
        return COLUMN.get(self.figure, self.figure)

    def label(self) -> str:
        """As people read it: `p99 ≤ 1 ms`, `IOPS ≥ 2,000`."""
        if self.ceiling:
            return f"{self.figure} ≤ {self.limit:g} ms"
        return f"IOPS ≥ {self.limit:,.0f}"

    def statistic(self, vm_figures: Mapping[str, Mapping[str, float]]) -> float:
        """This SLO's figure in one run: the worst selected VM's latency figure (ms), or the
        selected VMs' total IOPS. `vm_figures`: VM name -> {"iops", "mean", "p99", ...}."""
        if self.ceiling:
            return max(figures[self.key] for figures in vm_figures.values())
        return sum(figures["iops"] for figures in vm_figures.values())

    def holds(self, value: float) -> bool:
        return value <= self.limit if self.ceiling else value >= self.limit

    def verdict(self, interval: Interval) -> str:
        """`holds` or `fails` when the 95 % interval lies wholly on one side of the limit (an exact
        figure, zero width, too), else `undecided`."""
        low, high = interval.low, interval.high
        if self.ceiling:
            return "holds" if high <= self.limit else "fails" if low > self.limit else "undecided"
        return "holds" if low >= self.limit else "fails" if high < self.limit else "undecided"


def parse_slo(text: str) -> Slo:
    """An `--slo` expression as an Slo; SloError naming the expression and what is expected."""
    match = _FORM.match(text)
    if not match:
        raise SloError(f"--slo {text!r}: {EXPECTED}")
    name, operator, number, unit = match.groups()
    figure = name.lower()
    value = float(number.replace("_", "").replace(",", ""))
    if figure == "iops":
        if operator != ">=":
            raise SloError(f"--slo {text!r}: an IOPS objective is a floor, iops>=N; {EXPECTED}")
        if unit and unit.lower() not in ("k",):
            raise SloError(
                f"--slo {text!r}: IOPS take no unit (or k for thousands), got {unit!r}; {EXPECTED}"
            )
        return Slo(text, "iops", value * (1000.0 if unit else 1.0))
    if figure not in LATENCY_FIGURES:
        raise SloError(f"--slo {text!r}: unknown figure {name!r}; {EXPECTED}")
    if operator != "<=":
        raise SloError(f"--slo {text!r}: a latency objective is a ceiling, {figure}<=LATENCY; {EXPECTED}")
    scale = UNITS_MS.get(unit.lower() if unit != "µs" else unit)
    if scale is None:
        what = "no unit" if not unit else f"unit {unit!r}"
        raise SloError(f"--slo {text!r}: {what}; a latency needs ns, us, ms or s; {EXPECTED}")
    if value <= 0:
        raise SloError(f"--slo {text!r}: the latency limit must be above 0; {EXPECTED}")
    return Slo(text, figure, value * scale)


def parse_slos(texts: Sequence[str]) -> list[Slo]:
    """Every `--slo`; at least one is needed."""
    if not texts:
        raise SloError(f"at least one --slo is needed; {EXPECTED}")
    return [parse_slo(text) for text in texts]
