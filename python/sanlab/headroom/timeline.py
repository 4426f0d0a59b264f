"""`--growth 4%/month`: the time until the SLO breaks if the load grows at that compound rate.
Load × (1 + g)^t reaches the limit's factor after t = ln(factor) / ln(1 + g) periods; the
factor's 95 % interval maps to a time interval by the same formula (it is increasing)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sanlab.errors import UserError

PERIODS = ("week", "month", "year")
EXPECTED = "expected PERCENT%/PERIOD, a compound growth rate above 0 (PERIOD one of week, month, year), e.g. 4%/month"
_FORM = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*%\s*/\s*([A-Za-z]+)\s*$")


class GrowthRateError(UserError):
    """A `--growth` expression sanlab cannot read."""


@dataclass(frozen=True)
class GrowthRate:
    text: str
    share: float  # per period: 0.04 for 4 %
    period: str

    def periods_to(self, factor: float) -> float:
        """Periods until today's load times (1 + share)^t reaches `factor` (negative: passed)."""
        return math.log(factor) / math.log1p(self.share)

    def answer(self, doc: dict[str, Any]) -> dict[str, Any]:
        """`time_to_limit` of headroom.json: periods until the limit, with the factor's interval
        carried over; when nothing tried failed, at least the periods to the furthest load that held."""
        found: dict[str, Any] = {"growth": self.text, "per_period": self.share, "period": self.period}
        factor, span = doc["factor"], doc["factor_ci95"]
        low, _ = doc["bracket"]
        if factor is not None:
            found["periods"] = self.periods_to(factor)
            found["periods_ci95"] = [self.periods_to(span[0]), self.periods_to(span[1])]
        elif low is not None:
            found["at_least_periods"] = self.periods_to(low)
        return found


def parse_growth(text: str) -> GrowthRate:
    """`4%/month` as a GrowthRate; one line naming the expression and what is expected."""
    match = _FORM.match(text)
    if not match:
        raise GrowthRateError(f"--growth {text!r}: {EXPECTED}")
    percent, period = float(match.group(1)), match.group(2).lower()
    if period not in PERIODS:
        raise GrowthRateError(f"--growth {text!r}: unknown period {match.group(2)!r}; {EXPECTED}")
    if percent <= 0:
        raise GrowthRateError(f"--growth {text!r}: a rate of 0 never reaches the limit; {EXPECTED}")
    return GrowthRate(text, percent / 100, period)


def time_line(found: Mapping[str, Any], slos: str, one: bool) -> str:
    """The terminal's line: `at 4%/month compound growth, the SLO p99 ≤ 1 ms breaks in 25.3 months
    (95 % interval 24.9 to 25.8)`."""
    growth, unit = found["growth"], f"{found['period']}s"
    if "periods" in found:
        periods, (low, high) = found["periods"], found["periods_ci95"]
        if periods <= 0:
            return f"at {growth} compound growth: {slos} already {'fails' if one else 'fail'} today (the limit is below today's load)"
        return (
            f"at {growth} compound growth, {slos} {'breaks' if one else 'break'} in {periods:.1f} {unit} "
            f"(95 % interval {max(low, 0.0):.1f} to {high:.1f})"
        )
    if "at_least_periods" in found:
        return f"at {growth} compound growth, {slos} {'holds' if one else 'hold'} for at least {found['at_least_periods']:.1f} {unit} (the furthest load tried)"
    return f"at {growth} compound growth: no limit found to reach"
