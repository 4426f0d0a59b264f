"""How a load factor changes the scenario (`--grow rate`): each selected VM's jobs scaled by one
factor through `--set` overrides, so that every point is a run `sanlab run --set ...` reproduces.

What is scaled depends on how the engine paces the job (`jobs[i].pacing` of its document) and
on the options its `[[vm.job]]` entry has in the resolved scenario:

- open loop (arrivals at a rate): the rate. fio `rate_iops` (each of `read,write`), else fio
  `rate` (bytes/s); vdbench (inline keys) `iorate`; a trace's `rate_iops` when it has one, else
  `iops_scale` (or `time_scale` divided by the factor when the entry sets that);
- closed loop (a number of I/Os kept outstanding): the outstanding I/Os, `iodepth` × factor (a
  trace in closed mode: `depth`; vdbench `iorate=max`: `threads`), rounded to a whole number
  (at least 1): the factor actually applied is the rounded depth over today's, and a factor that
  rounds to today's depth changes nothing. A fio job on a synchronous engine keeps one I/O
  outstanding whatever its iodepth (the engine's pacing depth says 1): its `numjobs` is scaled;
- an ioping probe is not scaled (it measures, it is not load); a fio job file, a fio command line
  or a vdbench parameter file keep their options in a text sanlab cannot override with `--set`:
  refused, naming the job, with the fix (the job's options inline).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sanlab.errors import UserError
from sanlab.headroom.points import Setup

_NUMBER = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$")
_RATE_SUFFIX = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9}
"""fio's multipliers for a count (rate_iops)."""
_SIZE_SUFFIX = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
"""fio's multipliers for a size (rate), with its default kb_base = 1024 (KiB, KB and k alike)."""


class GrowError(UserError):
    """A job whose load `--grow rate` cannot scale."""


@dataclass(frozen=True)
class Scaling:
    """One scenario value the factor multiplies."""

    vm: str
    job: str
    key: str  # as --set addresses it: vm[0].job[0].rate_iops
    parts: tuple[float | None, ...]  # today's value (several for fio's `read,write` rates)
    loop: str  # "open" or "closed"
    what: str  # what it is, for people: "rate_iops (open loop)"
    whole: bool = False  # a count of I/Os or jobs: rounded, at least 1
    divide: bool = False  # a time scale: divided by the factor

    def value(self, factor: float) -> str:
        """The TOML value at `factor`."""
        scaled = [None if part is None else self._scale(part, factor) for part in self.parts]
        if len(scaled) == 1 and scaled[0] is not None:
            return _number(scaled[0])
        return '"' + ",".join("" if part is None else _number(part) for part in scaled) + '"'

    def _scale(self, part: float, factor: float) -> float:
        if self.divide:
            return part / factor
        if self.whole:
            return float(max(1, math.floor(part * factor + 0.5)))
        return part * factor

    def applied(self, factor: float) -> float:
        """The factor this value really gets (a whole count is rounded)."""
        first = next(part for part in self.parts if part is not None)
        return self._scale(first, factor) / first if not self.divide else first / self._scale(first, factor)

    def set_line(self, factor: float) -> str:
        return f"{self.key}={self.value(factor)}"


def _number(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}" if abs(value) >= 1e-3 else repr(value)


def _parse(value: Any, suffixes: Mapping[str, float], where: str) -> tuple[float | None, ...]:
    """A fio number (`5000`, `5k`, `"3000,2000"`, `"10m"`) as its parts; `None` for an empty part."""
    if isinstance(value, bool):
        raise GrowError(f"{where}: expected a number, got {value!r}")
    if isinstance(value, (int, float)):
        return (float(value),)
    parts: list[float | None] = []
    for text in str(value).split(","):
        if not text.strip():
            parts.append(None)
            continue
        match = _NUMBER.match(text)
        unit = match.group(2).lower().removesuffix("b").removesuffix("i") if match else ""
        if not match or unit not in suffixes:
            raise GrowError(f"{where}: cannot read {value!r} as a number to scale; give it as a plain number")
        parts.append(float(match.group(1)) * suffixes[unit])
    return tuple(parts)


def _nonzero(parts: tuple[float | None, ...]) -> bool:
    return any(part for part in parts)


def _fio(job: Mapping[str, Any], key: str, vm: str, name: str, depth: int) -> Scaling:
    where = f"VM {vm} job {name}"
    if "cmdline" in job:
        raise GrowError(
            f"{where}: a fio command line keeps its rate and depth in its text, which --set cannot "
            "scale; give the job's options inline ([[vm.job]] rw, bs, iodepth, rate_iops ...)"
        )
    for option in ("rate_iops", "rate"):
        if option in job:
            suffixes = _RATE_SUFFIX if option == "rate_iops" else _SIZE_SUFFIX
            parts = _parse(job[option], suffixes, f"{where}: {option}")  # type: ignore[arg-type]
            if _nonzero(parts):
                unit = "IOPS" if option == "rate_iops" else "bytes/s"
                return Scaling(vm, name, f"{key}.{option}", parts, "open", f"{option} ({unit}, open loop)")
    iodepth = int(job.get("iodepth", 1))
    if depth < iodepth:  # a synchronous engine: one I/O outstanding per job whatever iodepth says
        numjobs = int(job.get("numjobs", 1))
        return Scaling(
            vm, name, f"{key}.numjobs", (float(numjobs),), "closed",
            f"numjobs (closed loop on a synchronous engine: {depth} outstanding per job)", whole=True,
        )  # fmt: skip
    return Scaling(
        vm,
        name,
        f"{key}.iodepth",
        (float(iodepth),),
        "closed",
        "iodepth (closed loop: outstanding I/Os)",
        whole=True,
    )


def _trace(job: Mapping[str, Any], key: str, vm: str, name: str) -> Scaling:
    if job.get("mode", "open") == "closed":
        depth = float(job.get("depth", 64))
        return Scaling(
            vm,
            name,
            f"{key}.depth",
            (depth,),
            "closed",
            "depth (closed-mode replay: outstanding I/Os)",
            whole=True,
        )
    if float(job.get("rate_iops", 0) or 0):
        return Scaling(
            vm, name, f"{key}.rate_iops", (float(job["rate_iops"]),), "open", "rate_iops (IOPS, open loop)"
        )
    if "time_scale" in job:
        scale = float(job["time_scale"])
        return Scaling(
            vm,
            name,
            f"{key}.time_scale",
            (scale,),
            "open",
            "time_scale (divided: the trace replayed faster)",
            divide=True,
        )
    scale = float(job.get("iops_scale", 1))
    return Scaling(
        vm, name, f"{key}.iops_scale", (scale,), "open", "iops_scale (the trace's own rate, open loop)"
    )


def _vdbench(job: Mapping[str, Any], key: str, vm: str, name: str) -> Scaling:
    where = f"VM {vm} job {name}"
    if "file" in job:
        raise GrowError(
            f"{where}: a vdbench parameter file keeps its iorate and threads in the file, which --set "
            'cannot scale; give the SD/WD/RD keys inline (kind = "vdbench", iorate, threads ...)'
        )
    iorate = job.get("iorate", "max")
    if isinstance(iorate, str) and iorate.strip().lower() == "max":
        threads = float(job.get("threads", 8))
        return Scaling(
            vm,
            name,
            f"{key}.threads",
            (threads,),
            "closed",
            "threads (iorate=max: a closed loop)",
            whole=True,
        )
    parts = _parse(iorate, _RATE_SUFFIX, f"{where}: iorate")
    if len(parts) != 1 or parts[0] is None:
        raise GrowError(f"{where}: iorate {iorate!r} is a list (a loop of runs); give one rate to grow from")
    return Scaling(vm, name, f"{key}.iorate", parts, "open", "iorate (IOPS, open loop)")


def _depths(jobs: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], int]:
    """Each (VM, entry)'s depth as the engine paced it (the smallest of its jobs')."""
    depths: dict[tuple[str, str], int] = {}
    for job in jobs:
        place = (job["vm"], job.get("entry", job["name"]))
        depth = int(job["pacing"]["depth"])
        depths[place] = min(depth, depths.get(place, depth))
    return depths


def plan_growth(
    resolved: Mapping[str, Any], jobs: Sequence[Mapping[str, Any]], vms: Sequence[str]
) -> tuple[list[Scaling], list[str]]:
    """The values a factor scales for the VMs `vms`, and notes on the jobs left as they are.
    `resolved` is today's resolved scenario; `jobs` the engine's job reports of today's run."""
    depths = _depths(jobs)
    scalings: list[Scaling] = []
    notes: list[str] = []
    for k, vm in enumerate(resolved.get("vm", [])):
        if vm["name"] not in vms:
            continue
        entries = list(
            dict.fromkeys(str(job.get("entry", job["name"])) for job in jobs if job["vm"] == vm["name"])
        )
        for j, job in enumerate(vm.get("job", [])):
            kind = job.get("kind", "fio")
            name = str(job.get("name") or (entries[j] if j < len(entries) else f"job[{j}]"))
            key = f"vm[{k}].job[{j}]"
            if kind == "fio":
                depth = depths.get((vm["name"], name), int(job.get("iodepth", 1)))
                scalings.append(_fio(job, key, vm["name"], name, depth))
            elif kind == "trace":
                scalings.append(_trace(job, key, vm["name"], name))
            elif kind == "vdbench":
                scalings.append(_vdbench(job, key, vm["name"], name))
            elif kind == "ioping":
                notes.append(
                    f"VM {vm['name']} job {name}: an ioping probe is not scaled (it measures, it is not load)"
                )
            else:
                raise GrowError(
                    f"VM {vm['name']} job {name}: a {kind} job keeps its options in a file --set cannot "
                    'scale; give the job\'s options inline (kind = "fio")'
                )
    if not scalings:
        raise GrowError(f"no job of VM {', '.join(vms)} has a load to grow (only probes)")
    return scalings, notes


def sets_at(scalings: Sequence[Scaling], factor: float) -> list[str]:
    """The `--set` lines of the scenario at `factor` (none at 1: today as given)."""
    if factor == 1.0:
        return []
    return [scaling.set_line(factor) for scaling in scalings]


def describe(scalings: Sequence[Scaling]) -> list[str]:
    """One line per scaled value: what the factor multiplies."""
    return [f"VM {s.vm} job {s.job}: {s.what}, today {_today(s)}" for s in scalings]


def _today(scaling: Scaling) -> str:
    return ",".join("" if part is None else _number(part) for part in scaling.parts)


@dataclass(frozen=True)
class RateGrowth:
    """`--grow rate`: the grown VMs' jobs scaled by the factor, as `--set` lines over the scenario."""

    scalings: tuple[Scaling, ...]
    scenario: str
    variant: str
    base_sets: tuple[str, ...]
    grown: tuple[str, ...]
    judged: tuple[str, ...]

    @property
    def open_loop(self) -> bool:
        return all(s.loop == "open" for s in self.scalings)

    @property
    def bisect_to_counts(self) -> bool:
        """Every scaled value a whole count (closed loops): the bracket is cut down to neighbouring
        depths, and the limit's scenario is the largest depth that holds, one the search ran."""
        return all(s.whole for s in self.scalings)

    @property
    def counts(self) -> str:
        return "whole depths (at least 1)"

    def setup(self, factor: float) -> tuple[Setup, float]:
        """The scenario at `factor`; its factor the rounded one when every value is a whole count
        rounded alike (iodepth 8 × 0.72 is 6: ×0.75)."""
        sets = tuple(sets_at(self.scalings, factor))
        applied = {s.applied(factor) for s in self.scalings if s.whole}
        rounded = len(applied) == 1 and all(s.whole for s in self.scalings)
        setup = Setup(self.scenario, self.variant, sets, self.base_sets, self.grown, self.judged)
        return setup, applied.pop() if rounded else factor
