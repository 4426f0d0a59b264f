"""What `sanlab advise` optimises: one figure per run, higher or lower better, and for the default
objective a limit that a candidate must keep (docs/advise.md defines each exactly)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sanlab.errors import UserError
from sanlab.formatting import did_you_mean

P99_SLACK = 0.10
"""The default objective refuses a candidate under which a VM's mean p99 is more than this fraction
above today's."""


class ObjectiveError(UserError, ValueError):
    """An objective the scenario cannot have: the message names it and the valid choices."""


@dataclass(frozen=True)
class RunFigures:
    """What one run gives the objectives: each VM's IOPS and p99 (ms), and the lowest total VM IOPS
    over the run's faults (None without faults)."""

    vm_iops: Mapping[str, float]
    vm_p99_ms: Mapping[str, float]
    fault_iops_min: float | None = None


@dataclass(frozen=True)
class Objective:
    """`name` as given to --objective; `figure` names what `score` gives for one run."""

    name: str
    figure: str
    unit: str
    higher_is_better: bool
    vm: str = ""
    limits_p99: bool = False
    vms: tuple[str, ...] = field(default=())

    def score(self, run: RunFigures) -> float:
        if self.name == "iops":
            return sum(run.vm_iops.values())
        if self.name == "worst-case":
            return run.fault_iops_min if run.fault_iops_min is not None else float("nan")
        return run.vm_p99_ms[self.vm]

    def breaches(self, candidate: Sequence[RunFigures], today: Sequence[RunFigures]) -> list[str]:
        """The VMs whose mean p99 under `candidate` exceeds today's by more than P99_SLACK (the
        default objective's limit; the others have none)."""
        if not self.limits_p99:
            return []
        out = []
        for vm in self.vms:
            now = sum(run.vm_p99_ms[vm] for run in today) / len(today)
            then = sum(run.vm_p99_ms[vm] for run in candidate) / len(candidate)
            if then > now * (1 + P99_SLACK):
                out.append(f"{vm} p99 {then:.3g} ms > {now:.3g} ms + {P99_SLACK:.0%}")
        return out


def parse_objective(text: str, vms: Sequence[str], has_faults: bool, where: str) -> Objective:
    """`iops` (the default), `p99:VMNAME` or `worst-case`, checked against the scenario at `where`."""
    if text == "iops":
        return Objective("iops", "total VM IOPS", "IOPS", True, limits_p99=True, vms=tuple(vms))
    if text == "worst-case":
        if not has_faults:
            raise ObjectiveError(
                f"--objective worst-case: {where} has no [[event]] faults, so there is no worst case "
                "to improve; add [[event]] tables (docs/models/failover.md) or use --objective iops "
                "or p99:VMNAME"
            )
        figure = "lowest total VM IOPS during the faults"
        return Objective("worst-case", figure, "IOPS", True, vms=tuple(vms))
    kind, sep, vm = text.partition(":")
    if kind == "p99" and sep:
        if vm not in vms:
            hint = did_you_mean(vm, vms)
            raise ObjectiveError(
                f"--objective {text}: {where} has no VM named `{vm}`: expected one of {', '.join(vms)}{hint}"
            )
        return Objective(text, f"p99 latency of {vm}", "ms", False, vm=vm, vms=tuple(vms))
    hint = did_you_mean(text, ["iops", "worst-case", "p99:"])
    raise ObjectiveError(f"--objective {text}: expected iops, p99:VMNAME or worst-case{hint}")
