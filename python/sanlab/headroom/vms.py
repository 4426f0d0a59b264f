"""`--grow vms`: more VMs like today's, or fewer. A point is a whole count n of grown VMs: today's
scenario as resolved (its variant and `--set` applied) with n − k copies of the grown VMs (n > k,
today's k), copy j of the (j mod k)-th, on its host and volume, so the copies spread over the
hosts as today's VMs do (a copy's named jobs get its name: `oltp-db-copy1`); or, when today's count
fails the SLOs, with k − n of the grown VMs dropped (1 ≤ n < k), the last first, the judged ones
last, so that a judged VM is left while one is. Each count is a scenario file written into the headroom folder
(`vms-<n>.toml`, by `sanlab.toml_text`), checked by the engine's own reader before it runs; the
folder was empty when the search began, so a written file is never one of its inputs.

The SLOs judge the worst VM among the judged originals and their copies."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sanlab import engine
from sanlab.errors import UserError
from sanlab.headroom.points import Setup
from sanlab.toml_text import toml_key, toml_value

FILE_KEYS = ("file",)
"""Keys whose value is a file named relative to the scenario (a trace, a vdbench parameter file,
an empirical distribution): written absolute, since the copy lives in another folder."""


class VmGrowthError(UserError):
    """A scenario whose VMs cannot be copied."""


def _absolute(value: Any, folder: Path) -> Any:
    """`value` with every relative file name under FILE_KEYS made absolute against `folder`."""
    if isinstance(value, dict):
        return {
            key: str(folder / item)
            if key in FILE_KEYS and isinstance(item, str) and not Path(item).is_absolute()
            else _absolute(item, folder)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_absolute(item, folder) for item in value]
    return value


def copy_names(grown: Sequence[str], taken: Sequence[str], extra: int) -> list[tuple[str, str]]:
    """`extra` copies, round robin over `grown`: (original, copy name), `db-copy1`, `web-copy1`,
    `db-copy2` ..., skipping a name already taken."""
    used = set(taken)
    found: list[tuple[str, str]] = []
    for j in range(extra):
        original = grown[j % len(grown)]
        number = j // len(grown) + 1
        name = f"{original}-copy{number}"
        while name in used:
            number += 1
            name = f"{original}-copy{number}"
        used.add(name)
        found.append((original, name))
    return found


def scenario_text(table: Mapping[str, Any]) -> str:
    """A scenario table as TOML: plain keys first, then tables, then arrays of tables, each entry's
    values inline (a VM's jobs as an array of inline tables)."""
    plain = {k: v for k, v in table.items() if not isinstance(v, dict) and not _tables(v)}
    lines = _pairs(plain)
    for key, value in table.items():
        if isinstance(value, dict):
            lines += ["", f"[{toml_key(key)}]", *_pairs(value)]
        elif _tables(value):
            for entry in value:
                lines += ["", f"[[{toml_key(key)}]]", *_pairs(entry)]
    return "\n".join(lines) + "\n"


def _pairs(table: Mapping[str, Any]) -> list[str]:
    return [f"{toml_key(k)} = {toml_value(v)}" for k, v in table.items()]


def _tables(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) for item in value)


def _copy_of(vm: Mapping[str, Any], name: str) -> dict[str, Any]:
    """VM `vm` as `name`: a named job renamed `<job>-<name>` (job names are file names, one per
    run); an unnamed one is named after its VM already."""
    jobs = [
        {**job, "name": f"{job['name']}-{name}"} if "name" in job else dict(job) for job in vm.get("job", [])
    ]
    return {**copy.deepcopy(dict(vm)), "name": name, **({"job": jobs} if "job" in vm else {})}


@dataclass
class VmGrowth:
    """`--grow vms`: factor f is round(f × k) VMs, at least 1."""

    scenario: str
    variant: str
    base_sets: tuple[str, ...]
    resolved: Mapping[str, Any]  # today's resolved scenario (variant and --set applied)
    grown: tuple[str, ...]
    judged: tuple[str, ...]
    folder: Path  # where the scenarios with copies are written
    open_loop: bool
    written: dict[int, Path] = field(default_factory=dict)
    bisect_to_counts = True

    @property
    def counts(self) -> str:
        return "whole VM counts (at least 1)"

    def count(self, factor: float) -> int:
        """round(f × k) VMs, at least 1."""
        return max(1, math.floor(factor * len(self.grown) + 0.5))

    def kept(self, n: int) -> tuple[str, ...]:
        """The grown VMs left at a count n below today's: the judged ones first, each in the
        order given, so that the last are dropped first and a judged VM stays while one can."""
        order = sorted(self.grown, key=lambda name: name not in self.judged)
        keep = set(order[:n])
        return tuple(name for name in self.grown if name in keep)

    def setup(self, factor: float) -> tuple[Setup, float]:
        n, k = self.count(factor), len(self.grown)
        if n == k:  # today, as given
            return Setup(
                self.scenario,
                self.variant,
                (),
                self.base_sets,
                self.grown,
                self.judged,
                vms=k,
                origins=self.grown,
            ), 1.0
        if n < k:
            kept = self.kept(n)
            dropped = [name for name in self.grown if name not in kept]
            judged = tuple(name for name in self.judged if name not in dropped)
            path = self.written.get(n) or self._write(n, (), dropped)
            return Setup(str(path), "base", (), (), kept, judged, vms=n, origins=kept), n / k
        copies = copy_names(self.grown, [vm["name"] for vm in self.resolved.get("vm", [])], n - k)
        grown = (*self.grown, *(name for _, name in copies))
        judged = (*self.judged, *(name for original, name in copies if original in self.judged))
        origins = (*self.grown, *(original for original, _ in copies))
        path = self.written.get(n) or self._write(n, copies, ())
        return Setup(str(path), "base", (), (), grown, judged, vms=n, origins=origins), n / k

    def _write(self, n: int, copies: Sequence[tuple[str, str]], dropped: Sequence[str]) -> Path:
        table = _absolute(copy.deepcopy(dict(self.resolved)), Path(self.scenario).resolve().parent)
        table.pop("variant", None)
        by_name = {vm["name"]: vm for vm in table.get("vm", [])}
        for original, name in copies:
            table["vm"].append(_copy_of(by_name[original], name))
        table["vm"] = [vm for vm in table.get("vm", []) if vm["name"] not in dropped]
        path = self.folder / f"vms-{n}.toml"
        if path.resolve() == Path(self.scenario).resolve():
            raise VmGrowthError(f"--grow vms: {path} would overwrite the scenario; choose another --out")
        path.write_text(scenario_text(table), encoding="utf-8")
        try:
            engine.validate(path)
        except engine.ScenarioError as exc:
            raise VmGrowthError(
                f"--grow vms: the scenario with {n} VMs ({path}) does not pass the engine's checks: {exc}"
            ) from None
        self.written[n] = path
        return path
