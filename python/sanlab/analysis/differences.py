"""Whether two runs differ: each VM figure of a variant both runs have, the second minus the
first with its 95 % interval from their replications, and whether the interval excludes 0.

Paired when both runs used the same seeds (common random numbers: replication r of each side
is one pair, their differences the replications of the difference); Welch's interval when the
seeds differ. Runs of one replication have no interval; figures no seed changes (both sides
`seed_matters` false) differ exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sanlab.document import Document, Variant
from sanlab.intervals import Interval

FIGURES = (("IOPS", ("iops",)), ("mean ms", ("lat_ms", "mean")), ("p99 ms", ("lat_ms", "p99")))
"""The VM figures compared, with where each is in a VM's report."""


@dataclass(frozen=True)
class Difference:
    """One figure of one VM: the first run's value, the second's, and the difference's interval
    (None when either run has a single replication of a variant whose seed matters)."""

    variant: str
    vm: str
    figure: str
    first: float
    second: float
    interval: Interval | None
    method: str

    @property
    def verdict(self) -> str:
        if self.interval is None:
            return "no interval"
        if not self.interval.excludes(0.0):
            return "not distinguishable"
        return "higher" if self.interval.mean > 0 else "lower"


def _value(entity: Mapping[str, Any], where: tuple[str, ...]) -> float:
    value: Any = entity
    for key in where:
        value = value[key]
    return float(value)


def _samples(variant: Variant, vm: str, where: tuple[str, ...]) -> tuple[list[float], list[int]]:
    """A VM figure in each replication of a variant, with the replications' seeds."""
    replicas = variant.get("replicas") or [{"seed": variant["seed"], "vms": variant["vms"]}]
    values, seeds = [], []
    for replica in replicas:
        found = [entity for entity in replica["vms"] if entity["name"] == vm]
        if found:
            values.append(_value(found[0], where))
            seeds.append(int(replica["seed"]))
    return values, seeds


def _interval(first: Variant, second: Variant, vm: str, where: tuple[str, ...]) -> tuple[Interval | None, str]:
    a, seeds_a = _samples(first, vm, where)
    b, seeds_b = _samples(second, vm, where)
    if not first.get("seed_matters", True) and not second.get("seed_matters", True):
        return Interval(b[0] - a[0], 0.0, 1), "exact (nothing random)"
    if seeds_a == seeds_b and len(a) >= 2:
        return Interval.of([y - x for x, y in zip(a, b, strict=True)]), f"paired over {len(a)} common seeds"
    if len(a) >= 2 and len(b) >= 2:
        return Interval.difference(a, b), f"Welch, {len(a)} and {len(b)} replications"
    return None, "one replication: run both with --replications"


def differences(first: Document, second: Document) -> list[Difference]:
    """Every FIGURES figure of every VM in a variant both runs have, in the first run's order."""
    theirs = {variant["name"]: variant for variant in second["variants"]}
    found = []
    for variant in first["variants"]:
        other = theirs.get(variant["name"])
        if other is None:
            continue
        for vm in variant["vms"]:
            match = [entity for entity in other["vms"] if entity["name"] == vm["name"]]
            if not match:
                continue
            for figure, where in FIGURES:
                interval, method = _interval(variant, other, vm["name"], where)
                found.append(
                    Difference(variant["name"], vm["name"], figure, _value(vm, where), _value(match[0], where), interval, method)
                )
    return found


def methods(found: Sequence[Difference]) -> list[str]:
    """The methods the intervals used, each once."""
    return list(dict.fromkeys(difference.method for difference in found))
