"""The settings `sanlab advise` may change, read from the resolved scenario: each one key a user
sets (as `--set` addresses it) and the values it may take there. docs/advise.md says why each
value list is what it is; the sources are in docs/references.md."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sanlab import engine
from sanlab.toml_text import toml_value

PSP_SETTINGS: dict[str, tuple[dict[str, Any], ...]] = {
    # ESXi's round robin switching every I/O, at its default 1,000 I/Os and at its default 10 MiB.
    "rr": ({"kind": "rr", "iops": 1}, {"kind": "rr", "iops": 1000}, {"kind": "rr", "type": "bytes"}),
}
"""The settings advise tries of a selector whose defaults alone are not the question; every other
selector is tried at its defaults."""

NOT_OFFERED = frozenset({"mpio_weighted_paths"})
"""Selectors advise does not try: Weighted Paths' weights are the administrator's knowledge, not a default."""


@functools.cache
def platform_psps() -> dict[str, tuple[dict[str, Any], ...]]:
    """The selectors each platform's multipathing offers, as the engine's registry groups them
    (`sanlab kinds psp`), with the settings advise tries of each."""
    offered: dict[str, tuple[dict[str, Any], ...]] = {}
    for kind in engine.kinds():
        if kind["extension_point"] != "psp":
            continue
        settings = () if kind["kind"] in NOT_OFFERED else PSP_SETTINGS.get(kind["kind"], ({"kind": kind["kind"]},))
        offered[kind["platform"]] = (*offered.get(kind["platform"], ()), *settings)
    return offered


@functools.cache
def platform_of_psp() -> dict[str, str]:
    """A host's platform, told by the selector its scenario gives it (a host has no other platform key)."""
    return {kind["kind"]: kind["platform"] for kind in engine.kinds() if kind["extension_point"] == "psp"}


DEFAULT_PSP = {"kind": "fixed"}
"""What a host without `multipath.psp` runs (the engine's default)."""

QUEUE_DEPTHS = (16, 32, 64, 128, 256)
"""LUN queue depth and DSNRO: powers of two up to 256, ESXi's largest DSNRO (per device, `esxcli
storage core device set -O`); a LUN depth above the DSNRO a shared device is clamped to gains
nothing, so both go to 256 at most (Denneman, 2010: set them alike)."""

DEFAULT_DSNRO = 32
"""Disk.SchedNumReqOutstanding's default (VMware vSphere blog, 2013)."""

SIOC_THRESHOLDS_MS = (10, 20, 30, 50, 100)
"""SIOC's manual congestion threshold takes 5-100 ms (30 ms by default): a spread across it."""

SHARES = ("low", "normal", "high")
"""A VM's disk shares: ESXi's three named levels."""

QOS_FACTORS = (0.5, 2.0)
"""A volume's QoS max and burst halved or doubled (its min, a guarantee, is kept)."""


@dataclass(frozen=True)
class Knob:
    """One setting: its key, the values it may take (TOML text, as `--set` reads them) and which of
    them the scenario has today. Knobs with the same `group` act together (`coupled`)."""

    key: str
    what: str
    values: tuple[str, ...]
    today: str
    group: str = ""

    def set_line(self, value: str) -> str:
        return f"{self.key}={value}"


SEPARATOR = " / "
"""Between the parts of a coupled value (`128 / 128`); no knob's value holds it."""


@dataclass(frozen=True)
class Coupled:
    """Settings that act together, searched as one: each value is a combination of its parts'
    values (`a / b / c`), `choices` the values each part takes in it (all of the part's, or its
    best few when the whole space is too large to run)."""

    parts: tuple[Knob, ...]
    choices: tuple[tuple[str, ...], ...]

    @classmethod
    def of(cls, parts: Sequence[Knob]) -> Coupled:
        return cls(tuple(parts), tuple(part.values for part in parts))

    @property
    def key(self) -> str:
        return " & ".join(part.key for part in self.parts)

    @property
    def whole(self) -> bool:
        """Every combination of the parts' values is among the values."""
        pairs = zip(self.choices, self.parts, strict=True)
        return all(len(chosen) == len(part.values) for chosen, part in pairs)

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(self.join(combination) for combination in itertools.product(*self.choices))

    @property
    def today(self) -> str:
        return self.join(part.today for part in self.parts)

    @staticmethod
    def join(values: Iterable[str]) -> str:
        return SEPARATOR.join(values)

    @staticmethod
    def split(value: str) -> list[str]:
        return value.split(SEPARATOR)


def coupled(knobs: Sequence[Knob]) -> list[Coupled]:
    """The knobs to search together, by group in the knobs' order: each host's LUN queue depth
    with its DSNRO, each flow-controlled volume's threshold with its VMs' shares. A group with one
    knob left (the others kept) is searched alone."""
    groups: dict[str, list[Knob]] = {}
    for knob in knobs:
        if knob.group:
            groups.setdefault(knob.group, []).append(knob)
    return [Coupled.of(parts) for parts in groups.values() if len(parts) > 1]


def _canonical(value: Any) -> Any:
    """Tables with `kind` first and their other keys sorted: one text per value, however written."""
    if not isinstance(value, dict):
        return value
    keys = sorted(value, key=lambda key: (key != "kind", key))
    return {key: _canonical(value[key]) for key in keys}


def _knob(key: str, what: str, today: Any, values: Sequence[Any], group: str = "") -> Knob | None:
    """A knob with today's value first, or None when no value differs from today's."""
    today_text = toml_value(_canonical(today))
    texts = [today_text, *(toml_value(_canonical(value)) for value in values)]
    unique = tuple(dict.fromkeys(texts))
    return Knob(key, what, unique, today_text, group) if len(unique) > 1 else None


def _hosts_of_volumes(scenario: Mapping[str, Any]) -> dict[str, set[str]]:
    hosts: dict[str, set[str]] = {}
    for vm in scenario.get("vm", []):
        hosts.setdefault(vm.get("volume", ""), set()).add(vm.get("host", ""))
    return hosts


def psp_knobs(scenario: Mapping[str, Any]) -> tuple[list[Knob], list[str]]:
    """A selector knob per host whose devices use the host's selector, and per volume that sets its
    own; with notes on those whose platform offers no other modelled selector."""
    knobs: list[Knob] = []
    notes: list[str] = []
    volumes = scenario.get("volume", [])
    own_psp = {volume["name"] for volume in volumes if "psp" in volume}
    hosts_of = _hosts_of_volumes(scenario)
    places = [
        (
            f"host[{index}].multipath.psp",
            f"host {host['name']}'s path selection",
            host.get("multipath", {}).get("psp", DEFAULT_PSP),
        )
        for index, host in enumerate(scenario.get("host", []))
        if any(host["name"] in hosts_of.get(v["name"], ()) and v["name"] not in own_psp for v in volumes)
    ] + [
        (f"volume[{index}].psp", f"volume {volume['name']}'s path selection", volume["psp"])
        for index, volume in enumerate(volumes)
        if "psp" in volume and volume["name"] in hosts_of
    ]
    for key, what, written in places:
        # A kind's name alone stands for its defaults, as in the scenario file.
        today = {"kind": written} if isinstance(written, str) else written
        platform = platform_of_psp().get(today.get("kind", ""), "")
        offered = platform_psps().get(platform, ())
        knob = _knob(key, f"{what} ({platform})", today, offered)
        if knob is None:
            notes.append(f"{key}: {platform} offers no other selector sanlab models; not varied")
        else:
            knobs.append(knob)
    return knobs, notes


def queue_knobs(scenario: Mapping[str, Any], lun_depths: Mapping[str, int]) -> list[Knob]:
    """Per host: its LUN queue depth (today's as its devices ran: `lun_depths` by host, the adapter's
    default when the scenario sets none), and its DSNRO when two VMs or more may share a device."""
    knobs: list[Knob | None] = []
    vms = scenario.get("vm", [])
    for index, host in enumerate(scenario.get("host", [])):
        name = host["name"]
        if host.get("adapter", {}).get("kind") == "ideal" or name not in lun_depths:
            continue  # an ideal adapter has no queue limit; a host without devices has nothing to tune
        key = f"host[{index}]"
        # A shared device's depth is the smaller of the two: raising either alone cannot deepen it.
        group = f"{key} queues"
        knobs.append(
            _knob(
                f"{key}.adapter.lun_queue_depth",
                f"host {name}'s LUN queue depth",
                lun_depths[name],
                QUEUE_DEPTHS,
                group,
            )
        )
        if sum(vm.get("host") == name for vm in vms) > 1:  # DSNRO acts only between competing VMs
            today = host.get("scheduler", {}).get("dsnro", DEFAULT_DSNRO)
            knobs.append(_knob(f"{key}.scheduler.dsnro", f"host {name}'s DSNRO", today, QUEUE_DEPTHS, group))
    return [knob for knob in knobs if knob]


def preference_knobs(scenario: Mapping[str, Any]) -> list[Knob]:
    """Per array of an active-active pair: its preferred hosts (the ALUA preference it advertises),
    today's list with one host added or removed."""
    paired = {name for pair in scenario.get("replication", []) for name in pair.get("arrays", [])}
    hosts = [host["name"] for host in scenario.get("host", [])]
    knobs: list[Knob | None] = []
    for index, array in enumerate(scenario.get("array", [])):
        if array["name"] not in paired:
            continue  # a lone array's paths are all optimized: no preference to advertise
        today = list(array.get("preferred_hosts", []))
        steps = [[*today, host] if host not in today else [h for h in today if h != host] for host in hosts]
        knobs.append(
            _knob(f"array[{index}].preferred_hosts", f"array {array['name']}'s preferred hosts", today, steps)
        )
    return [knob for knob in knobs if knob]


THRESHOLDS = {"sioc": ("congestion_threshold", "SIOC"), "parda": ("latency_threshold", "PARDA")}
"""Each flow control's latency threshold key and name; both default to 30 ms."""


def volume_knobs(scenario: Mapping[str, Any]) -> list[Knob]:
    """Per volume some VM uses: its SIOC (manual mode) or PARDA latency threshold, and its QoS max
    and burst."""
    knobs: list[Knob | None] = []
    used = _hosts_of_volumes(scenario)
    for index, volume in enumerate(scenario.get("volume", [])):
        key, name = f"volume[{index}]", volume["name"]
        if name not in used:
            continue
        control = volume.get("flow_control", {})
        threshold = THRESHOLDS.get(control.get("kind", ""))
        if threshold and control.get("threshold_mode", "manual") == "manual":
            part, flow = threshold
            thresholds = [f"{ms}ms" for ms in SIOC_THRESHOLDS_MS]
            today = control.get(part, "30ms")
            what = f"volume {name}'s {flow} threshold"
            knobs.append(_knob(f"{key}.flow_control.{part}", what, today, thresholds, _flow_group(name)))
        qos = volume.get("qos")
        if qos and "max" in qos:
            scaled = [
                {**qos, **{part: round(qos[part] * factor) for part in ("max", "burst") if part in qos}}
                for factor in QOS_FACTORS
            ]
            kept = [q for q in scaled if q["max"] >= q.get("min", 0)]
            knobs.append(_knob(f"{key}.qos", f"volume {name}'s QoS max and burst", qos, kept))
    return [knob for knob in knobs if knob]


def _flow_group(volume: str) -> str:
    """A volume's flow-control threshold and its VMs' shares act together: the shares divide the
    windows only while latency is above the threshold, and below it they change nothing."""
    return f"volume {volume} flow control"


def share_knobs(scenario: Mapping[str, Any]) -> list[Knob]:
    """Per VM whose volume has flow control (SIOC, PARDA): its shares."""
    controlled = {volume["name"] for volume in scenario.get("volume", []) if "flow_control" in volume}
    knobs = [
        _knob(
            f"vm[{index}].shares",
            f"VM {vm['name']}'s shares",
            vm.get("shares", "normal"),
            SHARES,
            _flow_group(vm["volume"]),
        )
        for index, vm in enumerate(scenario.get("vm", []))
        if vm.get("volume") in controlled
    ]
    return [knob for knob in knobs if knob]


def knobs_of(scenario: Mapping[str, Any], lun_depths: Mapping[str, int]) -> tuple[list[Knob], list[str]]:
    """Every knob, in the order the search visits them: the array side first (a preference every
    host sees), then each host's selector, its queues, then flow control, QoS and shares."""
    psps, notes = psp_knobs(scenario)
    knobs = [
        *preference_knobs(scenario),
        *psps,
        *queue_knobs(scenario, lun_depths),
        *volume_knobs(scenario),
        *share_knobs(scenario),
    ]
    return knobs, notes
