"""A multipathed host's storage as the Linux and Windows imports model it, and the scenario written
from it: the arrays, the links (sanlab's `[[path]]`) with their ALUA states, the volumes with
their path selectors and block devices (`linux/topology.py` makes one of `multipath -ll` and `nvme
list-subsys`, `windows/topology.py` of `mpclaim`), and `build_scenario`, which writes it as TOML:
every value read from a listing carries a comment naming the file and line it came from, every
value nothing listed gives one saying it is sanlab's default, as the ESXi import writes them
(`scenario.py`, whose `Imported`, default workload and default flash latency this shares).

What sanlab sets per host and the platform per volume (the path selector, the queueing when no
path is left) is the volumes' most common value; each volume that differs keeps its own selector
in its `[[volume]] psp`, and a note names the volumes whose queueing differs. The platform
(`platform`: its name, the command that imports it, what the scenario says of the host's
scheduler) is the caller's: `linux/scenario.LINUX`, `windows/scenario.WINDOWS`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from sanlab.hostimport.host import Source
from sanlab.hostimport.scenario import DEFAULT_READ_LATENCY, DEFAULT_WORKLOAD, Imported, scenario_head
from sanlab.toml_text import toml_comment, toml_value


@dataclass
class Link:
    """A sanlab `[[path]]`: the adapter to one target port (or one NVMe controller)."""

    name: str
    adapter: str
    array: str
    source: Source
    controller: int | None = None
    controller_why: str = "target ports sharing a path group are one controller's"
    alua: str | None = None
    alua_why: str = ""
    down: str | None = None
    down_why: str = ""


@dataclass
class Volume:
    """A map or NVMe subsystem: a sanlab `[[volume]]` with its policy and its block devices."""

    name: str
    array: str
    # The psp table's keys (kind first) and the comment saying where they came from.
    psp: dict[str, object]
    psp_why: str
    source: Source
    # The block devices whose figures are the volume's: its dm device, then its paths' disks.
    dm: str | None = None
    disks: list[str] = field(default_factory=list)
    # All paths down means: "never" (queue), "0s" (fail at once); None for an NVMe subsystem.
    queueing: str | None = None
    queueing_why: str = ""
    # An NVMe subsystem's block devices: its namespaces' heads, `nvme<subsystem>n<nsid>`.
    disk_pattern: str | None = None
    # The disks of the path group dm sends I/O to (active/optimized, up).
    active_disks: list[str] = field(default_factory=list)


@dataclass
class Array:
    name: str
    why: str
    controllers: int | None = None
    controllers_why: str = ""


@dataclass
class Topology:
    arrays: list[Array] = field(default_factory=list)
    volumes: list[Volume] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # The host adapter's kind and why.
    adapter: tuple[str, str] = ("fc", "Fibre Channel assumed: the listings do not say the transport")


def wwid_prefix(wwid: str) -> str:
    """The part of a WWID that names the array, by our rule (`linux/topology.py`'s docstring): NAA-6 to the end
    of its vendor-specific identifier, NAA-5 to the end of its OUI, else nothing."""
    if len(wwid) == 33 and wwid.startswith("36"):
        return wwid[:17]
    if len(wwid) == 17 and wwid.startswith("35"):
        return wwid[:8]
    return ""



@dataclass
class HostKeys:
    """The `[[host]]` keys the settings give (`sysfs.py`): adapter keys and `disk_max_io_size`,
    each with its comment."""

    adapter: list[tuple[str, object, str]] = field(default_factory=list)
    host: list[tuple[str, object, str]] = field(default_factory=list)


@dataclass
class VolumeLoad:
    """What a capture says a volume carried: its fio command line and where that came from."""

    cmdline: str
    why: str
    # The capture's IOPS and mean time per request (ms), both directions weighted.
    iops: float = math.nan
    lat_ms: float = math.nan


@dataclass
class ArrayMedia:
    """An array's media table as measured, and where that came from."""

    table: str
    why: str
    # The read and write service times the table sets (µs).
    read_us: float = math.nan
    write_us: float = math.nan
    # The direction most of the array's requests took (`read_latency`, `write_latency`): the one
    # `--calibrate` fits, one latency per VM telling the two directions' times apart no better.
    dominant: str = "read_latency"


def _psp(top: Topology) -> tuple[tuple[str, str] | None, dict[str, tuple[str, str]]]:
    """The host's psp table (the volumes' most common) and each volume's where it differs."""
    tables = {v.name: (toml_value(v.psp), v.psp_why) for v in top.volumes}
    if not tables:
        return None, {}
    host_table, _ = Counter(t for t, _ in tables.values()).most_common(1)[0]
    first = next(why for t, why in tables.values() if t == host_table)
    return (host_table, first), {name: tw for name, tw in tables.items() if tw[0] != host_table}


def _queueing(volumes: Sequence[Volume], notes: list[str]) -> tuple[str, str] | None:
    said = [(v.name, v.queueing, v.queueing_why) for v in volumes if v.queueing is not None]
    if not said:
        return None
    value, count = Counter(q for _, q, _ in said).most_common(1)[0]
    why = next(w for _, q, w in said if q == value)
    others = [f"{name} ({q})" for name, q, _ in said if q != value]
    if others:
        notes.append(f"queueing with no path left: sanlab sets it per host; used apd_timeout = {value} ({count} of {len(said)} maps), not: {', '.join(others)}")
    return value, why


def _inline(keys: Sequence[tuple[str, object]]) -> str:
    return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in keys) + " }"


def _host(name: str, top: Topology, keys: HostKeys, notes: list[str], scheduler: str) -> list[str]:
    policy, _ = _psp(top)
    adapter = [("kind", top.adapter[0]), *((k, v) for k, v, _ in keys.adapter)]
    comments = [top.adapter[1], *(c for _, _, c in keys.adapter)]
    lines = ["[[host]]", f"name = {toml_value(name)}", f"adapter = {_inline(adapter)}  # {toml_comment('; '.join(comments))}"]
    lines += [f"{k} = {toml_value(v)}  # {toml_comment(c)}" for k, v, c in keys.host]
    queueing = _queueing(top.volumes, notes)
    if queueing is not None:
        lines.append(f"failover = {{ apd_timeout = {toml_value(queueing[0])} }}  # {toml_comment(queueing[1])}")
    if policy is not None:
        lines.append(f"multipath = {{ psp = {policy[0]} }}  # {toml_comment(policy[1])}")
    lines.append(scheduler)
    return [*lines, ""]


def build_scenario(top: Topology, *, host: str, workload: str, duration: str, keys: HostKeys | None = None, loads: dict[str, VolumeLoad] | None = None, media: dict[str, ArrayMedia] | None = None, title: str = "storage listings", platform: tuple[str, str, str]) -> Imported:
    """The scenario's text and the notes the user should read."""
    keys = keys or HostKeys()
    loads = loads or {}
    media = media or {}
    notes = list(top.notes)
    lines = scenario_head(
        [
            f"Imported from a {platform[0]} host's {title} by `{platform[1]}`. Comments name the",
            "listing and line each value came from, or say that a value is sanlab's default.",
        ],
        host + "_imported",
        duration,
    )
    vm_figures: dict[str, tuple[float, float]] = {}
    service_us: dict[str, float] = {}
    for index, a in enumerate(top.arrays):
        if a.name in media:
            value = media[a.name].read_us if media[a.name].dominant == "read_latency" else media[a.name].write_us
            if math.isfinite(value):
                service_us[f"array[{index}].media.{media[a.name].dominant}"] = value
        controllers = f"controllers = {a.controllers}  # {toml_comment(a.controllers_why)}" if a.controllers else f"controllers = 2  # {toml_comment(a.controllers_why)}"
        measured = media.get(a.name)
        media_line = f"media = {measured.table}  # {toml_comment(measured.why)}" if measured else f'media = {{ kind = "flash", read_latency = "{DEFAULT_READ_LATENCY}" }}  # sanlab\'s default: nothing measured says how fast the array is'
        lines += ["[[array]]", f"name = {toml_value(a.name)}  # {toml_comment(a.why)}", controllers, media_line, "# cores, cache, target queue: sanlab's defaults (none): nothing listed or captured says", ""]
    _, own = _psp(top)
    for v in top.volumes:
        lines += ["[[volume]]", f"name = {toml_value(v.name)}  # {toml_comment(str(v.source))}", f"arrays = [{toml_value(v.array)}]"]
        if v.name in own:
            lines.append(f"psp = {own[v.name][0]}  # {toml_comment(own[v.name][1])}")
        lines.append("")
    lines += _host(host, top, keys, notes, platform[2])
    for link in top.links:
        lines += ["[[path]]", f"name = {toml_value(link.name)}", f"host = {toml_value(host)}", f"array = {toml_value(link.array)}", f"adapter = {toml_value(link.adapter)}  # {toml_comment(str(link.source))}", "# link: sanlab's default (no latency, unlimited bandwidth): the listings do not measure it"]
        if link.controller is not None:
            lines.append(f"controller = {link.controller}  # {toml_comment(link.controller_why)}")
        if link.alua is not None:
            lines.append(f"alua = {toml_value(link.alua)}  # {toml_comment(link.alua_why)}")
        lines.append("")
    for k, v in enumerate(top.volumes):
        load = loads.get(v.name)
        if load and math.isfinite(load.iops) and math.isfinite(load.lat_ms):
            vm_figures[f"vm{k + 1}"] = (load.iops, load.lat_ms)
        job = [f"cmdline = {toml_value(load.cmdline)}", f"# {toml_comment(load.why)}"] if load else [f"cmdline = {toml_value(workload)}  # the default probe: nothing measured for this volume" if workload == DEFAULT_WORKLOAD else f"cmdline = {toml_value(workload)}  # --workload"]
        lines += ["[[vm]]", f"name = \"vm{k + 1}\"  # the load on {toml_comment(v.name)}", f"host = {toml_value(host)}", f"volume = {toml_value(v.name)}", 'adapter = { kind = "ideal" }  # the application\'s queues above the block device are not in the listings', "[[vm.job]]", *job, ""]
    for link in top.links:
        if link.down:
            lines += ["[[event]]", 'kind = "path_down"', f"path = {toml_value(link.name)}", 'at = "0s"', f"# the path was `{toml_comment(link.down)}` when listed ({toml_comment(link.down_why)})", ""]
    return Imported("\n".join(lines).rstrip() + "\n", notes, vm_figures, service_us)
