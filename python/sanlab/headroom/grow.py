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
  outstanding whatever its iodepth, and a thinktime caps them at thinktime_blocks: its `numjobs`
  is scaled;
- a fio command line (`cmdline`, as `sanlab import` writes one per device) is rewritten: each
  of its jobs gets the value above as fio reads the line (options before the first `--name`, or
  under `--name=global`, apply to the jobs after them; a job's own option wins), scaled in place
  where the job sets it, else added after its `--name`; the point's `--set` is the whole line;
- an ioping probe is not scaled (it measures, it is not load); a fio job file or a vdbench
  parameter file keep their options in a file sanlab cannot override with `--set`: refused,
  naming the job, with the fix (the job's options inline).
"""

from __future__ import annotations

import math
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sanlab.errors import UserError
from sanlab.headroom.points import Setup
from sanlab.toml_text import toml_value

_NUMBER = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*$")
_RATE_SUFFIX = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9}
"""fio's multipliers for a count (rate_iops)."""
_SIZE_SUFFIX = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
"""fio's multipliers for a size (rate), with its default kb_base = 1024 (KiB, KB and k alike)."""


SYNC_ENGINES = ("sync", "psync", "vsync", "pvsync", "pvsync2", "mmap", "splice", "libzbc", "mtd", "sg")
"""fio's synchronous ioengines (the engine's `SYNC_ENGINES`): one I/O outstanding per job, so a
closed loop grows by its numjobs. With iodepth 1 the engine's pacing depth cannot tell them."""
CMDLINE_ENGINE = "psync"
"""A fio command line's ioengine when it names none (fio's Linux default; the engine's too)."""
TOML_ENGINE = "libaio"
"""An inline `[[vm.job]]`'s ioengine when it names none (`sanlab kinds fio`)."""


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

    def described(self) -> str:
        return f"{self.what}, today {_joined(self.parts)}"


def _joined(parts: tuple[float | None, ...]) -> str:
    """fio's way: `1000,333.333`, an empty part for a direction not given."""
    return ",".join("" if part is None else _number(part) for part in parts)


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


def _per_job(depth: int, iodepth: int, engine: str, thinktime: Any) -> bool:
    """A closed fio job whose outstanding I/Os grow by its numjobs, not its iodepth: a synchronous
    engine keeps one per job, and a thinktime caps them at thinktime_blocks (the engine's pacing
    depth below iodepth says either, except at iodepth 1)."""
    thinks = thinktime is not None and str(thinktime).strip() not in ("", "0")
    return depth < iodepth or engine in SYNC_ENGINES or thinks


def _fio(job: Mapping[str, Any], key: str, vm: str, name: str, depth: int) -> Scaling:
    where = f"VM {vm} job {name}"
    for option in ("rate_iops", "rate"):
        if option in job:
            suffixes = _RATE_SUFFIX if option == "rate_iops" else _SIZE_SUFFIX
            parts = _parse(job[option], suffixes, f"{where}: {option}")  # type: ignore[arg-type]
            if _nonzero(parts):
                unit = "IOPS" if option == "rate_iops" else "bytes/s"
                return Scaling(vm, name, f"{key}.{option}", parts, "open", f"{option} ({unit}, open loop)")
    iodepth = int(job.get("iodepth", 1))
    if _per_job(depth, iodepth, str(job.get("ioengine", TOML_ENGINE)), job.get("thinktime")):
        numjobs = int(job.get("numjobs", 1))
        return Scaling(
            vm, name, f"{key}.numjobs", (float(numjobs),), "closed",
            f"numjobs (closed loop on a synchronous engine or a thinktime: {depth} outstanding per job)", whole=True,
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


_RATES = {
    "rate": _SIZE_SUFFIX,
    "rate_iops": _RATE_SUFFIX,
    "rate_min": _SIZE_SUFFIX,
    "rate_iops_min": _RATE_SUFFIX,
}
"""A fio job's rate options: `rate` wins over `rate_iops` (as in fio), so every one a job has is
scaled; the minimums too, so that the job's own check keeps its meaning."""
_ALIASES = {"ratemin": "rate_min"}
_CMDLINE_KEYS = {*_RATES, "iodepth", "numjobs", "ioengine", "thinktime"}


@dataclass(frozen=True)
class _Word:
    """A command-line option sanlab scales or reads: `--key=value` (one word) or `--key value`."""

    index: int  # its word (the key's)
    key: str  # the option's name, an alias as its option
    value: str
    joined: bool  # value in the same word after `=`


@dataclass
class _Section:
    """A job of the command line: its `--name` word, the options it sets, the globals before it."""

    name: str
    name_end: int  # the last word of its `--name` (the value, when separate)
    own: list[_Word] = field(default_factory=list)
    inherited: dict[str, str] = field(default_factory=dict)

    def option(self, key: str) -> str | None:
        """The option as fio reads it for this job: its own last, else the globals before it."""
        own = [word.value for word in self.own if word.key == key]
        return own[-1] if own else self.inherited.get(key)


def _option_of(word: str) -> tuple[str, str | None] | None:
    """`--key=value`, `-key=value`, `--key`, `-key` as (key, value) for a key sanlab reads (`name`
    and _CMDLINE_KEYS), else None: every other word is left as it is."""
    if not word.startswith("-") or word in ("-", "--"):
        return None
    key, equals, value = word.lstrip("-").partition("=")
    key = _ALIASES.get(key, key)
    if key != "name" and key not in _CMDLINE_KEYS:
        return None
    return key, value if equals else None


def read_cmdline(text: str) -> tuple[list[str], list[_Section]]:
    """A fio command line's words and its jobs, as fio's `parse_cmd_line` reads them: options before
    the first `--name` (or after `--name=global...`) apply to the jobs named after them; each
    `--name` starts a job. None of the keys read is a flag, so `--key value` takes the next word."""
    words = shlex.split(text)
    sections: list[_Section] = []
    globals_: dict[str, str] = {}
    k = 0
    while k < len(words):
        found = _option_of(words[k])
        start = k
        k += 1
        if found is None:
            continue
        key, value = found
        joined = value is not None
        if value is None:
            if k >= len(words):
                break  # the engine refuses a key without its value: nothing to scale here
            value = words[k]
            k += 1
        if key == "name":
            if value.startswith("global"):
                sections.append(_Section("", -1))  # a marker: what follows is global again
            else:
                sections.append(_Section(value, k - 1, inherited=dict(globals_)))
            continue
        if sections and sections[-1].name:
            sections[-1].own.append(_Word(start, key, value, joined))
        else:
            globals_[key] = value
    return words, [section for section in sections if section.name]


@dataclass(frozen=True)
class _Edit:
    """One value of one job of a command line that the factor scales."""

    section: str
    key: str
    parts: tuple[float | None, ...]
    whole: bool


@dataclass(frozen=True)
class CmdlineScaling:
    """A fio command line (`[[vm.job]] cmdline`) whose jobs' rates (open loops) or outstanding
    I/Os (closed loops) the factor scales: at each factor, the whole line rewritten (a `--set` of
    `cmdline`). Answers as `Scaling` does."""

    vm: str
    job: str
    key: str  # vm[0].job[0].cmdline
    text: str
    edits: tuple[_Edit, ...]
    loop: str  # "open", "closed", or "mixed" (some jobs of each)
    what: str
    divide: bool = False

    @property
    def whole(self) -> bool:
        return all(edit.whole for edit in self.edits)

    @property
    def parts(self) -> tuple[float | None, ...]:
        return self.edits[0].parts

    def _scaled(self, edit: _Edit, factor: float) -> str:
        scaling = Scaling(self.vm, self.job, self.key, edit.parts, self.loop, self.what, whole=edit.whole)
        return scaling.value(factor).strip('"')

    def line(self, factor: float) -> str:
        """The command line at `factor`, as its words joined by a POSIX shell's quoting."""
        words, sections = read_cmdline(self.text)
        out = [[word] for word in words]
        by_name = {section.name: section for section in sections}
        for edit in self.edits:
            section = by_name[edit.section]
            value = self._scaled(edit, factor)
            own = [word for word in section.own if word.key == edit.key]
            for word in own:  # each of the job's own settings; the last one is what fio keeps
                if word.joined:
                    out[word.index] = [f"{words[word.index].partition('=')[0]}={value}"]
                else:
                    out[word.index + 1] = [value]
            if not own:  # from the globals or fio's default: the job's own setting, after its --name
                out[section.name_end].append(f"--{edit.key}={value}")
        return shlex.join(word for group in out for word in group)

    def value(self, factor: float) -> str:
        return toml_value(self.line(factor))

    def applied(self, factor: float) -> float:
        """The factor the first value really gets (a whole count is rounded)."""
        edit = self.edits[0]
        first = next(part for part in edit.parts if part is not None)
        scaled = Scaling(self.vm, self.job, self.key, (first,), self.loop, self.what, whole=edit.whole)
        return float(scaled.value(factor)) / first

    def set_line(self, factor: float) -> str:
        return f"{self.key}={self.value(factor)}"

    def described(self) -> str:
        return self.what  # today's values are in it, job by job


AnyScaling = Scaling | CmdlineScaling


def _cmdline(
    job: Mapping[str, Any], key: str, vm: str, name: str, depths: Mapping[str, int]
) -> CmdlineScaling:
    """The values of a fio command line's jobs a factor scales. `depths`: each job's (section's)
    outstanding I/Os as the engine paced it, when today's run reported them."""
    where = f"VM {vm} job {name}: cmdline"
    text = str(job["cmdline"])
    try:
        _, sections = read_cmdline(text)
    except ValueError as exc:  # shlex: an unbalanced quote, which the engine refuses too
        raise GrowError(f"{where}: cannot split it into words: {exc}") from None
    edits: list[_Edit] = []
    loops: set[str] = set()
    said: list[str] = []
    for section in sections:
        rates = {
            option: _parse(value, suffixes, f"{where}: job {section.name}: {option}")
            for option, suffixes in _RATES.items()
            if (value := section.option(option)) is not None
        }
        pacing = [option for option in ("rate", "rate_iops") if _nonzero(rates.get(option, ()))]
        if pacing:
            loops.add("open")
            edits += [
                _Edit(section.name, option, parts, False)
                for option, parts in rates.items()
                if _nonzero(parts)
            ]
            shown = " and ".join(f"{option} {_joined(rates[option])}" for option in pacing)
            said.append(f"{section.name}: {shown} (open loop)")
            continue
        loops.add("closed")
        iodepth = int(_parse(section.option("iodepth") or "1", _RATE_SUFFIX, f"{where}: iodepth")[0] or 1)
        engine = section.option("ioengine") or CMDLINE_ENGINE
        depth = depths.get(section.name, iodepth)
        if _per_job(depth, iodepth, engine, section.option("thinktime")):
            numjobs = float(
                int(_parse(section.option("numjobs") or "1", _RATE_SUFFIX, f"{where}: numjobs")[0] or 1)
            )
            edits.append(_Edit(section.name, "numjobs", (numjobs,), True))
            why = (
                f"{engine}: one I/O outstanding per job"
                if engine in SYNC_ENGINES
                else "a thinktime: its clones grow"
            )
            said.append(f"{section.name}: numjobs {numjobs:g} (closed loop on {why})")
        else:
            edits.append(_Edit(section.name, "iodepth", (float(iodepth),), True))
            said.append(f"{section.name}: iodepth {iodepth} (closed loop: outstanding I/Os)")
    if not edits:
        raise GrowError(f"{where}: no job (--name=...) in {text!r}; fio needs one")
    loop = loops.pop() if len(loops) == 1 else "mixed"
    what = f"fio command line, job{'s' if len(said) > 1 else ''} " + "; ".join(said)
    return CmdlineScaling(vm, name, f"{key}.cmdline", text, tuple(edits), loop, what)


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
            'cannot scale; give the SD/WD/RD keys inline (kind = "vdbench", iorate, threads ...), or grow '
            "whole VMs like it with --grow vms"
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


def _depths(jobs: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str, str], int]:
    """Each (VM, entry, fio job)'s depth as the engine paced it (the smallest of its clones'), and
    each (VM, entry, "")'s, the smallest of the entry's jobs'."""
    depths: dict[tuple[str, str, str], int] = {}
    for job in jobs:
        depth = int(job["pacing"]["depth"])
        section = str(job.get("fio_place", {}).get("name", ""))
        for place in {
            (job["vm"], job.get("entry", job["name"]), ""),
            (job["vm"], job.get("entry", job["name"]), section),
        }:
            depths[place] = min(depth, depths.get(place, depth))
    return depths


def plan_growth(
    resolved: Mapping[str, Any], jobs: Sequence[Mapping[str, Any]], vms: Sequence[str]
) -> tuple[list[AnyScaling], list[str]]:
    """The values a factor scales for the VMs `vms`, and notes on the jobs left as they are.
    `resolved` is today's resolved scenario; `jobs` the engine's job reports of today's run."""
    depths = _depths(jobs)
    scalings: list[AnyScaling] = []
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
            if kind == "fio" and "cmdline" in job:
                entry = entries[j] if j < len(entries) else name
                mine = {
                    section: depth
                    for (v, e, section), depth in depths.items()
                    if (v, e) == (vm["name"], entry)
                }
                scalings.append(_cmdline(job, key, vm["name"], name, mine))
            elif kind == "fio":
                depth = depths.get((vm["name"], name, ""), int(job.get("iodepth", 1)))
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
                    'scale; give the job\'s options inline (kind = "fio"), or grow whole VMs like it with --grow vms'
                )
    if not scalings:
        raise GrowError(f"no job of VM {', '.join(vms)} has a load to grow (only probes)")
    return scalings, notes


def sets_at(scalings: Sequence[AnyScaling], factor: float) -> list[str]:
    """The `--set` lines of the scenario at `factor` (none at 1: today as given)."""
    if factor == 1.0:
        return []
    return [scaling.set_line(factor) for scaling in scalings]


def describe(scalings: Sequence[AnyScaling]) -> list[str]:
    """One line per scaled value: what the factor multiplies."""
    return [f"VM {s.vm} job {s.job}: {s.described()}" for s in scalings]


@dataclass(frozen=True)
class RateGrowth:
    """`--grow rate`: the grown VMs' jobs scaled by the factor, as `--set` lines over the scenario."""

    scalings: tuple[AnyScaling, ...]
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
