"""A scenario from what a host's esxcli listings say (`host.Listings`): its adapters, devices,
paths with their ALUA states, each device's path selection policy, the arrays behind the targets,
and a workload per device. Every value taken from a listing carries a TOML comment naming the file
and line it came from; every value the listings cannot give carries one saying it is sanlab's
default.

A device's path selection policy is its volume's `psp` where it differs from the host's (the
devices' most common one). What sanlab models per host but ESXi sets per device (the LUN queue
depth, DSNRO, the QUEUE FULL settings) is taken from the devices when they agree; when they differ,
the most common value is used and every device that differs is named in a note
(`Imported.notes`) and a comment.

Arrays are inferred from the targets: one array per target node (the WWNN of an FC target, the
iSCSI target name), and within it one controller per target port group the paths report (TPG id
order). That is our rule: a listing names ports, not arrays, and arrays differ in how they number
their nodes.
"""

from __future__ import annotations

import difflib
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from sanlab.errors import UserError
from sanlab.hostimport.esxtop import ADAPTER_QUEUE, DEVICE, Capture
from sanlab.hostimport.host import CoreDevice, CorePath, Listings, NmpDevice, NmpPath, Source
from sanlab.hostimport.workload import DeviceLoad, device_loads, servers_for, service_ms
from sanlab.toml_text import toml_comment, toml_value

# The workload each device gets when no capture says what it carries: light enough to leave the
# queues empty, so the paths and policies can be seen at once.
DEFAULT_WORKLOAD = "--name=probe --rw=randread --bs=4k --iodepth=1"
# A flash array's read service time when nothing measured says otherwise (sanlab's flash default).
DEFAULT_READ_LATENCY = "150us"

# Group State of `esxcli storage nmp path list` -> sanlab's ALUA state names. A path listed
# `transitioning` stays so for the run (no I/O: the listing does not say what state it was going to).
GROUP_STATES = {"active": "AO", "active unoptimized": "ANO", "standby": "standby", "unavailable": "unavailable", "transitioning": "transitioning"}
# Group states of a path that carries nothing and has no ALUA state to give: a dead path, and one
# whose target port group is offline (SPC-4; it leaves the state only when the array brings it
# back). sanlab takes their link down from the start (`path_down` at 0s).
DOWN_STATES = ("dead", "offline")
# Path Selection Policy -> sanlab's kind, for the policies a host's NMP ships with.
# VMW_PSP_FIXED_AP is ESX 4.1's fixed with array preference (gone in 5.0, where FIXED took its
# ALUA awareness): sanlab's fixed, which already prefers an optimized path; the array preference
# beyond ALUA states is not modelled, as the scenario's comment says.
PSPS = {"VMW_PSP_RR": "rr", "VMW_PSP_FIXED": "fixed", "VMW_PSP_MRU": "mru", "VMW_PSP_FIXED_AP": "fixed"}
PSP_SAID = {"VMW_PSP_FIXED_AP": "ESX 4.1's fixed with array preference, imported as sanlab's fixed: the array preference is not modelled beyond ALUA states"}
# The Storage Array Type Plugins ESXi 4.x-8.x ship with. sanlab takes each path's ALUA state from
# the path listing's group state, whatever the SATP; an SATP not among these is said in a note.
SATPS = (
    "VMW_SATP_ALUA", "VMW_SATP_ALUA_CX", "VMW_SATP_CX", "VMW_SATP_DEFAULT_AA", "VMW_SATP_DEFAULT_AP",
    "VMW_SATP_EQL", "VMW_SATP_EVA", "VMW_SATP_INV", "VMW_SATP_LOCAL", "VMW_SATP_LSI", "VMW_SATP_MSA",
    "VMW_SATP_NETAPP", "VMW_SATP_SVC", "VMW_SATP_SYMM",
)


class HostImportError(UserError, ValueError):
    """A host the listings cannot make a scenario of; the message says which file and what."""


@dataclass
class Imported:
    """The scenario's text and what the user should know about it."""

    toml: str
    notes: list[str] = field(default_factory=list)
    # What a capture measured, for `sanlab import … --calibrate`: each VM's IOPS and mean latency
    # (ms) as the host saw them, and each array's service time the scenario sets from it in the
    # direction most of its requests took (the `--set` key, µs), the fit's starting point. Empty without a capture (and for ESXi, so far).
    measured: dict[str, tuple[float, float]] = field(default_factory=dict)
    service_us: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class _Path:
    """One ESXi path (adapter, target, LUN): a device's way over one link."""

    name: str
    device: str
    link: str
    alua: str | None
    # "dead" or "offline" when the path is down, else None.
    down: str | None
    source: Source
    # The target's node (`_target_node`), its port group, the adapter: None where no listing says.
    node: str | None
    tpg: int | None
    adapter: str


@dataclass(frozen=True)
class _Link:
    """A sanlab `[[path]]`: an adapter to a target port (`vmhbaA:Cc:Tt`), which carries every
    device of its array; ESXi lists it once per LUN (`vmhbaA:Cc:Tt:Ll`)."""

    name: str
    adapter: str
    array: str
    controller: int | None
    alua: str | None
    # What the listing says when every path of the link is down ("dead", "offline"), else None.
    down: str | None
    source: Source


def _psp_table(device: NmpDevice, path_names: dict[str, dict[str, str]]) -> tuple[str, str]:
    """sanlab's psp table for a device's policy, and the comment that says where it came from.
    `path_names`: per device, ESXi runtime name -> the name sanlab gives that device's path."""
    path_name = path_names.get(device.name, {})
    kind = PSPS.get(device.psp)
    if kind is None:
        known = ", ".join(PSPS)
        near = difflib.get_close_matches(device.psp.upper(), list(PSPS), n=1, cutoff=0.0)
        raise HostImportError(f"{device.source}: device {device.name}: path selection policy `{device.psp}` is not one sanlab models for ESXi's NMP (known: {known}; nearest: {near[0]})")
    config = device.psp_options
    why = f"{device.psp} {device.psp_config}" + (f"; {PSP_SAID[device.psp]}" if device.psp in PSP_SAID else "")

    def whole(key: str) -> int:
        try:
            return int(config[key])
        except ValueError:
            raise HostImportError(f"{device.source}: device {device.name}: {key}={config[key]} in its path selection policy config is not a whole number") from None

    ano = ["use_ano = true"] if config.get("useANO") == "1" else []
    if kind == "rr" and config.get("policy") == "latency":
        # ESXi's latency policy: latencyEvalTime in ms, samplingCycles.
        keys = [*([f'latency_eval_time = "{whole("latencyEvalTime")}ms"'] if "latencyEvalTime" in config else []), *([f"num_sampling_cycles = {whole('samplingCycles')}"] if "samplingCycles" in config else []), *ano]
        return "{ " + ", ".join(['kind = "rr_latency"', *keys]) + " }", why
    if kind == "rr":
        keys = [f"iops = {whole('iops')}"] if "iops" in config else []
        if config.get("policy") == "bytes":
            keys = ['type = "bytes"', f"bytes = {whole('bytes')}"]
        return "{ " + ", ".join(['kind = "rr"', *keys, *ano]) + " }", why
    if kind == "fixed" and "preferred" in config:
        if config["preferred"] not in path_name:
            # A runtime name the path listing gives to another device is none of this one's
            # (it was written as this device's preferred path, which the engine refused).
            other = next((d for d, names in path_names.items() if config["preferred"] in names), None)
            elsewhere = f", and the path listing gives {config['preferred']} to device {other}" if other else ""
            raise HostImportError(f"{device.source}: device {device.name}: FIXED prefers {config['preferred']}, which is none of its listed paths ({', '.join(sorted(path_name)) or 'none'}){elsewhere}: give the listings of one host, taken at one time")
        return f'{{ kind = "fixed", preferred = {toml_value(path_name[config["preferred"]])} }}', why
    return f'{{ kind = "{kind}" }}', why


def _satp_notes(devices: Sequence[NmpDevice]) -> list[str]:
    """A note for each SATP that is not one ESXi ships with (a vendor's, or a name mistyped)."""
    out = []
    for d in devices:
        if d.satp not in SATPS:
            near = difflib.get_close_matches(d.satp.upper(), SATPS, n=1, cutoff=0.0)
            out.append(f"{d.source}: device {d.name}: storage array type `{d.satp}` is not one ESXi ships with (nearest: {near[0]}): its paths' ALUA states are taken from the path listing's group states")
    return out


def _target_node(target: str) -> str:
    """The node a target port belongs to: the WWNN of `fc.<wwnn>:<wwpn>`, else the name itself
    (an iSCSI target name, a SAS address)."""
    if target.startswith("fc.") and ":" in target:
        return target[3:].split(":", 1)[0]
    return target


def _adapter(runtime_name: str) -> str:
    return runtime_name.split(":", 1)[0]


def _same_host(listings: Listings) -> None:
    """Listings of one host share its paths and devices; ones with nothing in common come from
    different hosts, which would be merged into a host that does not exist."""
    def files(records: Sequence[object]) -> str:
        return ", ".join(sorted({r.source.file for r in records}))  # type: ignore[attr-defined]

    nmp, core = {p.runtime_name for p in listings.nmp_paths}, {p.runtime_name for p in listings.core_paths}
    if nmp and core and not nmp & core:
        raise HostImportError(f"the path listings share no path ({files(listings.nmp_paths)} against {files(listings.core_paths)}): give listings of one host")
    path_devices = {p.device for p in [*listings.nmp_paths, *listings.core_paths]}
    for records in (listings.nmp_devices, listings.core_devices):
        if records and path_devices and not {d.name for d in records} & path_devices:
            raise HostImportError(f"{files(records)} lists none of the paths' devices ({', '.join(sorted(path_devices))}): give listings of one host")


def _link_name(runtime_name: str) -> str:
    """`vmhba2:C0:T1:L7` -> `vmhba2:C0:T1`: the adapter and target port, whatever the LUN."""
    parts = runtime_name.split(":")
    return ":".join(parts[:-1]) if len(parts) == 4 and parts[3].startswith("L") else runtime_name


def _paths(listings: Listings) -> list[_Path]:
    """Every ESXi path of the listings, with the link it runs over."""
    nmp: dict[str, NmpPath] = {p.runtime_name: p for p in listings.nmp_paths}
    core: dict[str, CorePath] = {p.runtime_name: p for p in listings.core_paths}
    names = list(dict.fromkeys([*core, *nmp]))
    if not names:
        raise HostImportError("no paths: give `esxcli storage nmp path list` or `esxcli storage core path list` among the listings")
    out = []
    for n in names:
        np_, cp = nmp.get(n), core.get(n)
        if np_ and cp and np_.device != cp.device:
            # One runtime name, two devices: listings of two hosts, or taken before and after a rescan.
            raise HostImportError(f"{np_.source}: path {n} leads to device {np_.device}, but {cp.source} gives path {n} to device {cp.device}: expected the listings of one host, taken at one time")
        group = np_.group_state if np_ else None
        source = np_.source if np_ else cp.source  # type: ignore[union-attr]
        alua = GROUP_STATES.get(group) if group else None
        if group and group not in DOWN_STATES and alua is None:
            raise HostImportError(f"{source}: path {n}: group state `{group}` is not one ESXi prints (expected one of {', '.join([*GROUP_STATES, *DOWN_STATES])})")
        down = group if group in DOWN_STATES else "dead" if cp is not None and cp.state == "dead" else None
        node = _target_node(cp.target) if cp else None
        adapter = cp.adapter if cp else _adapter(n)
        out.append(_Path(n, np_.device if np_ else cp.device, _link_name(n), alua, down, source, node, np_.tpg_id if np_ else None, adapter))  # type: ignore[union-attr]
    return out


def _link_nodes(paths: Sequence[_Path]) -> tuple[dict[str, list[_Path]], dict[str, str], dict[str, int | None]]:
    """The paths by link, each link's target node ("array" where no listing names it) and its
    target port group."""
    by_link: dict[str, list[_Path]] = {}
    for p in paths:
        by_link.setdefault(p.link, []).append(p)
    nodes = {link: next((p.node for p in ps if p.node is not None), "array") for link, ps in by_link.items()}
    tpg_of = {link: next((p.tpg for p in ps if p.tpg is not None), None) for link, ps in by_link.items()}
    return by_link, nodes, tpg_of


def _links(paths: Sequence[_Path], notes: list[str], arrays: dict[str, str] | None = None, tpgs: dict[str, list[int]] | None = None) -> list[_Link]:
    """The links the paths run over, each on the array of its target node (the WWNN of an FC
    target, else the target's name) and the controller of its target port group. A cluster gives
    `arrays` (target node -> array) and `tpgs` (target node -> its port groups) over all its hosts."""
    by_link, nodes, tpg_of = _link_nodes(paths)
    if arrays is None:
        arrays = {node: f"array{k + 1}" for k, node in enumerate(dict.fromkeys(nodes.values()))}
    if tpgs is None:
        tpgs = {}
        for link, tpg in tpg_of.items():
            if tpg is not None:
                tpgs.setdefault(nodes[link], []).append(tpg)
    out = []
    for link, ps in by_link.items():
        states = Counter(p.alua for p in ps if p.alua is not None)
        alua = states.most_common(1)[0][0] if states else None
        if len(states) > 1:
            notes.append(f"link {link}: its devices report {dict(states)}; sanlab gives a link one ALUA state: used {alua}")
        tpg = tpg_of[link]
        controller = sorted(set(tpgs[nodes[link]])).index(tpg) if tpg is not None else None
        down = [p for p in ps if p.down]
        said = " or ".join(sorted({p.down for p in down if p.down}))
        if down and len(down) < len(ps):
            notes.append(f"link {link}: {said} for {', '.join(p.name for p in down)} only; sanlab's link carries every device of its array: left up")
        out.append(_Link(link, ps[0].adapter, arrays[nodes[link]], controller, alua, said if len(down) == len(ps) else None, ps[0].source))
    return out


def _agreed(values: Iterable[tuple[str, int | None, Source]], what: str, notes: list[str]) -> tuple[int | None, str]:
    """The value the devices agree on (or the most common), and the comment saying so."""
    seen = [(d, v, s) for d, v, s in values if v is not None]
    if not seen:
        return None, ""
    counts = Counter(v for _, v, _ in seen)
    value, _ = counts.most_common(1)[0]
    first = next(s for _, v, s in seen if v == value)
    others = [f"{d} ({v}, {s})" for d, v, s in seen if v != value]
    if others:
        notes.append(f"{what}: sanlab sets it per host; used {value} ({counts[value]} of {len(seen)} devices), not: {', '.join(others)}")
    return value, f"{what}, {first}" + (f"; {len(others)} devices differ" if others else "")


def scenario_head(comments: Sequence[str], name: str, duration: str) -> list[str]:
    """The lines every imported scenario starts with: its comment lines, the schema, its name and
    its duration."""
    return [*(f"# {line}" for line in comments), "schema_version = 1", f"name = {toml_value(name)}", "", "[run]", f"duration = {toml_value(duration)}", ""]


def build(listings: Listings, *, host: str = "esx1", workload: str = DEFAULT_WORKLOAD, duration: str = "60s", capture: Capture | None = None) -> Imported:
    """The scenario the listings describe. Each device runs what the esxtop `capture` shows it
    carried (`workload.py`), or `workload` (a fio command line) without one or for a device the
    capture does not have; the arrays answer as fast as the capture's DAVG says, or at sanlab's
    default."""
    notes: list[str] = []
    _same_host(listings)
    paths = _paths(listings)
    links = _links(paths, notes)
    nmp_devices = {d.name: d for d in listings.nmp_devices}
    notes += _satp_notes(listings.nmp_devices)
    core_devices: dict[str, CoreDevice] = {d.name: d for d in listings.core_devices}
    devices = list(dict.fromkeys(p.device for p in paths))
    unknown = [d for d in [*nmp_devices, *core_devices] if d not in devices]
    if unknown:
        notes.append(f"devices without a path in the path listings, left out: {', '.join(unknown)}")
    lines = scenario_head(
        [
            "Imported from a host's esxcli storage listings by `sanlab import esxi`. Comments name the",
            "listing and line each value came from, or say that a value is sanlab's default.",
        ],
        host + "_imported",
        duration,
    )
    loads = _capture_loads(capture, devices, notes)
    array_of = {link.name: link.array for link in links}
    device_arrays = [(p.device, array_of[p.link]) for p in paths]
    arrays = list(dict.fromkeys(link.array for link in links))
    for a in arrays:
        tpgs = [link.controller for link in links if link.array == a and link.controller is not None]
        controllers = f"controllers = {max(tpgs) + 1}  # one per target port group its paths report" if tpgs else "controllers = 2  # sanlab's default: no path listing reports a target port group"
        lines += ["[[array]]", f'name = "{a}"', controllers, _media(a, device_arrays, loads, notes), "# cores, cache, target queue: sanlab's defaults (none): nothing listed or captured says", ""]
    policy, own = _policies(devices, nmp_devices, _device_path_names(paths, array_of))
    lines += _volumes(devices, device_arrays, own, notes)
    adapters = list(dict.fromkeys(link.adapter for link in links))
    lines += _host(host, devices, policy, nmp_devices, core_devices, notes, _adapter_kind(listings, notes), _adapter_queue(capture, adapters, notes))
    lines += _path_tables(host, links)
    lines += _vms(host, devices, workload, loads)
    for link in links:
        if link.down:
            lines += ["[[event]]", 'kind = "path_down"', f"path = {toml_value(link.name)}", 'at = "0s"', f"# {link.down} when listed ({toml_comment(str(link.source))})", ""]
    vm_figures = {f"vm{k + 1}": (loads[d].iops, loads[d].gavg_ms) for k, d in enumerate(devices) if d in loads and math.isfinite(loads[d].gavg_ms)}
    measured = {a: [loads[d] for d in dict.fromkeys(d for d, x in device_arrays if x == a) if d in loads] for a in arrays}
    return Imported("\n".join(lines).rstrip() + "\n", notes, vm_figures, _service_us(arrays, measured))


def _service_us(arrays: Sequence[str], measured_on: dict[str, list[DeviceLoad]]) -> dict[str, float]:
    """Each measured array's service time (`arrays` in the scenario's order, `measured_on` the
    loads of their devices), as `_media` writes it, in the direction most of its devices' commands
    took (`Imported.service_us`)."""
    out: dict[str, float] = {}
    for index, array in enumerate(arrays):
        measured = measured_on.get(array, [])
        read_ms, write_ms, _ = service_ms(measured)
        reads = sum(m.reads_per_s for m in measured) >= sum(m.writes_per_s for m in measured)
        value = read_ms if reads else write_ms
        if measured and math.isfinite(value):
            out[f"array[{index}].media.{'read' if reads else 'write'}_latency"] = float(f"{value * 1000:.1f}")
    return out


def _capture_loads(capture: Capture | None, devices: Sequence[str], notes: list[str]) -> dict[str, DeviceLoad]:
    """Each device's load in the capture (none without one), with the notes on what it lacks."""
    if capture is None:
        return {}
    captured = capture.instances(DEVICE)
    if not captured:
        raise HostImportError(f"{capture.path}: no {DEVICE} group: the import reads each device's commands, latency and queues from it (capture with esxtop -b -a)")
    if not set(captured) & set(devices):
        raise HostImportError(f"{capture.path}: none of the capture's devices ({', '.join(sorted(captured))}) is in the listings ({', '.join(devices)}): are they from the same host?")
    notes.extend(capture.notes)
    loads, reasons = device_loads(capture)
    notes += [f"{capture.path}: {DEVICE}({d}): {reasons[d]}: it runs the default workload" for d in devices if d in reasons]
    missing = [d for d in devices if d not in loads and d not in reasons]
    if missing:
        notes.append(f"{capture.path}: no I/O for {', '.join(missing)}: they run the default workload")
    if capture.unused_counters:
        notes.append(f"{capture.path}: {len(capture.unused_counters)} counters present and not used: " + ", ".join(capture.unused_counters))
    return loads


def _sanlab_path_names(paths: Sequence[_Path], array_of: dict[str, str]) -> dict[str, str]:
    """ESXi runtime name -> the name sanlab gives that device's path: its link's, followed by
    `:<device>` when the link carries several devices (every device on the link's array)."""
    devices_on = Counter(array for _, array in {(p.device, array_of[p.link]) for p in paths})
    return {p.name: p.link + (f":{p.device}" if devices_on[array_of[p.link]] > 1 else "") for p in paths}


def _device_path_names(paths: Sequence[_Path], array_of: dict[str, str]) -> dict[str, dict[str, str]]:
    """`_sanlab_path_names` per device: the runtime names of each device's own paths."""
    names = _sanlab_path_names(paths, array_of)
    out: dict[str, dict[str, str]] = {}
    for p in paths:
        out.setdefault(p.device, {})[p.name] = names[p.name]
    return out


def _volumes(devices: Sequence[str], device_arrays: Sequence[tuple[str, str]], own_psp: dict[str, tuple[str, str]], notes: list[str]) -> list[str]:
    lines: list[str] = []
    pairs: list[tuple[str, str]] = []
    for d in devices:
        on = list(dict.fromkeys(a for dev, a in device_arrays if dev == d))
        if len(on) > 2:
            raise HostImportError(f"device {d}: its paths reach {len(on)} target nodes ({', '.join(on)}); sanlab models a volume on one array or a replicated pair")
        if len(on) == 2 and tuple(on) not in pairs:
            pairs.append((on[0], on[1]))
        lines += ["[[volume]]", f"name = {toml_value(d)}", f"arrays = [{', '.join(toml_value(a) for a in on)}]"]
        if d in own_psp:
            lines.append(f"psp = {own_psp[d][0]}  # {toml_comment(own_psp[d][1])}")
        lines.append("")
    for a, b in pairs:
        notes.append(f"arrays {a} and {b} serve the same devices: modelled as an active-active pair with sanlab's default replication link")
        lines += ["[[replication]]  # the same devices behind both: an active-active pair (link: sanlab's default)", f'arrays = ["{a}", "{b}"]', ""]
    return lines


# Transport of `esxcli storage core path list` -> sanlab's host adapter kind.
ADAPTERS = {"fc": "fc", "iscsi": "sw_iscsi"}


def _adapter_kind(listings: Listings, notes: list[str]) -> tuple[str, str]:
    """The host adapter's kind, from the paths' transport, and where that came from."""
    transports = Counter(p.transport for p in listings.core_paths if p.transport)
    if not transports:
        return "fc", "Fibre Channel assumed: no `esxcli storage core path list` gives the transport"
    transport, count = transports.most_common(1)[0]
    first = next(p.source for p in listings.core_paths if p.transport == transport)
    if len(transports) > 1:
        notes.append(f"paths over several transports ({dict(transports)}): sanlab gives a host one adapter kind: used {transport}")
    if transport not in ADAPTERS:
        notes.append(f"transport {transport}: not one sanlab models an adapter for (fc, iscsi): an ideal adapter stands in")
        return "ideal", f"transport {transport}, {first}"
    return ADAPTERS[transport], f"transport {transport}{' (software iSCSI assumed)' if transport == 'iscsi' else ''}, {first}"


def _adapter_queue(capture: Capture | None, adapters: Sequence[str], notes: list[str]) -> tuple[int | None, str]:
    """The host's adapter queue: the sum of its HBAs' `Adapter Q Depth` in the capture (sanlab
    has one adapter queue per host); an HBA whose depth averages below one command is said and
    left out."""
    if capture is None:
        return None, ""
    depths = {}
    for a in adapters:
        values = capture.series.get((ADAPTER_QUEUE, a), {}).get("Adapter Q Depth")
        finite = values[np.isfinite(values)] if values is not None else np.array([])
        if finite.size and round(float(finite.mean())) < 1:
            notes.append(f"{capture.path}: {ADAPTER_QUEUE}({a}) Adapter Q Depth averages {float(finite.mean()):g}: no queue depth, left out of the host's")
        elif finite.size:
            depths[a] = round(float(finite.mean()))
    if not depths:
        return None, ""
    return sum(depths.values()), f"Adapter Q Depth of {', '.join(f'{a} {d}' for a, d in depths.items())} summed, {capture.path.name}"


def _host(host: str, devices: Sequence[str], policy: tuple[str, str] | None, nmp: dict[str, NmpDevice], core: dict[str, CoreDevice], notes: list[str], adapter_kind: tuple[str, str], adapter_queue: tuple[int | None, str]) -> list[str]:
    present = [core[d] for d in devices if d in core]
    depth, depth_note = _agreed(((d.name, d.max_queue_depth, d.source) for d in present), "Device Max Queue Depth", notes)
    dsnro, dsnro_note = _agreed(((d.name, d.dsnro, d.source) for d in present), "No of outstanding IOs with competing worlds (DSNRO)", notes)
    sample, _ = _agreed(((d.name, d.queue_full_sample_size, d.source) for d in present), "Queue Full Sample Size", notes)
    threshold, _ = _agreed(((d.name, d.queue_full_threshold, d.source) for d in present), "Queue Full Threshold", notes)
    adapter = [f'kind = "{adapter_kind[0]}"']
    comments = [adapter_kind[1]]
    if depth is not None and adapter_kind[0] != "ideal":
        adapter.append(f"lun_queue_depth = {depth}")
        comments.append(depth_note)
    if adapter_queue[0] is not None and adapter_kind[0] != "ideal":
        adapter.append(f"queue_depth = {adapter_queue[0]}")
        comments.append(adapter_queue[1])
    if sample:
        adapter.append(f"qfull_sample_size = {sample}")
        if threshold:
            adapter.append(f"qfull_threshold = {threshold}")
    lines = ["[[host]]", f"name = {toml_value(host)}", f"adapter = {{ {', '.join(adapter)} }}  # {toml_comment('; '.join(comments))}"]
    if dsnro is not None:
        lines.append(f'scheduler = {{ kind = "esxi", dsnro = {dsnro} }}  # {toml_comment(dsnro_note)}')
    if policy is not None:
        lines.append(f"multipath = {{ psp = {policy[0]} }}  # {toml_comment(policy[1])}")
    if not nmp:
        lines.append("# multipath: no `esxcli storage nmp device list`: sanlab's default policy (fixed)")
    return [*lines, ""]


def _policies(devices: Sequence[str], nmp: dict[str, NmpDevice], path_names: dict[str, dict[str, str]]) -> tuple[tuple[str, str] | None, dict[str, tuple[str, str]]]:
    """The host's policy (the devices' most common one that names no path of its own) and each
    device's where it differs (a volume's own `psp`)."""
    tables = {d: _psp_table(nmp[d], path_names) for d in devices if d in nmp}
    counts = Counter(t for t, _ in tables.values() if "preferred" not in t)
    if not tables:
        return None, {}
    host_table = counts.most_common(1)[0][0] if counts else '{ kind = "fixed" }'
    first = next((d for d, (t, _) in tables.items() if t == host_table), None)
    host = (host_table, f"{tables[first][1]}, {nmp[first].source}" if first else "sanlab's fixed policy: every device names its preferred path")
    own = {d: (t, f"{why}, {nmp[d].source}") for d, (t, why) in tables.items() if t != host_table}
    return host, own


def _path_tables(host: str, links: Sequence[_Link]) -> list[str]:
    lines: list[str] = []
    for p in links:
        lines += ["[[path]]", f"name = {toml_value(p.name)}", f"host = {toml_value(host)}", f'array = "{p.array}"', f"adapter = {toml_value(p.adapter)}", "# link: sanlab's default (no latency, unlimited bandwidth): neither listings nor esxtop measure it"]
        if p.controller is not None:
            lines.append(f"controller = {p.controller + 1}  # target port group order on its array")
        if p.alua is not None:
            lines.append(f'alua = "{p.alua}"  # {toml_comment(str(p.source))}')
        lines.append("")
    return lines


def _media(array: str, device_arrays: Sequence[tuple[str, str]], loads: dict[str, DeviceLoad], notes: list[str], measured: list[DeviceLoad] | None = None) -> str:
    """The array's flash media: as fast as its devices' DAVG in the capture, else sanlab's default.
    A cluster gives the `measured` loads of every host on the array's devices."""
    if measured is None:
        measured = [loads[d] for d in dict.fromkeys(d for d, a in device_arrays if a == array) if d in loads]
    read_ms, write_ms, davg_notes = service_ms(measured)
    notes += davg_notes
    if not measured or math.isnan(read_ms):
        if measured:
            notes.append(f"{array}: no DAVG of {', '.join(m.device for m in measured)} gives a service time: sanlab's default flash read latency ({DEFAULT_READ_LATENCY})")
        return f'media = {{ kind = "flash", read_latency = "{DEFAULT_READ_LATENCY}" }}  # sanlab\'s default: nothing measured says how fast the array is'
    servers = servers_for(sum(m.outstanding for m in measured))
    return (
        f'media = {{ kind = "flash", read_latency = "{read_ms * 1000:.1f}us", write_latency = "{write_ms * 1000:.1f}us", servers = {servers} }}'
        f"  # DAVG per direction at the capture's load, weighted by reads (writes) over {toml_comment(', '.join(dict.fromkeys(m.device for m in measured)))}; servers enough not to queue"
    )


def _vms(host: str, devices: Sequence[str], workload: str, loads: dict[str, DeviceLoad], prefix: str = "") -> list[str]:
    lines: list[str] = []
    for k, d in enumerate(devices):
        load = loads.get(d)
        job = [f"cmdline = {toml_value(load.fio_cmdline())}", f"# {toml_comment(load.why())}"] if load else [f"cmdline = {toml_value(workload)}  # the default probe: nothing measured for this device" if workload == DEFAULT_WORKLOAD else f"cmdline = {toml_value(workload)}  # --workload"]
        lines += ["[[vm]]", f"name = {toml_value(f'{prefix}vm{k + 1}')}  # the load on {toml_comment(d)}", f"host = {toml_value(host)}", f"volume = {toml_value(d)}", 'adapter = { kind = "ideal" }  # the guest\'s queues are not in the listings', "[[vm.job]]", *job, ""]
    return lines


def build_cluster(hosts: Sequence[tuple[str, Listings, Capture | None]], *, workload: str = DEFAULT_WORKLOAD, duration: str = "60s") -> Imported:
    """The scenario of several ESXi hosts, each `(name, its listings, its capture or None)`. One
    host is `build`'s scenario, unchanged. Devices of the same identity (the naa/eui/t10 name) on
    several hosts are one volume; the arrays, and their controllers, are the target nodes and port
    groups of all the hosts' paths; each host has its own paths (named `host:vmhbaA:Cc:Tt`),
    adapter, queue depths, policy and VMs (one per device it lists, running its capture's load).
    A device's own policy becomes its volume's `psp` only where every host listing it agrees
    (sanlab sets a volume's policy on every host), else each host's policy applies, with a note."""
    if len(hosts) == 1:
        name, listings, capture = hosts[0]
        return build(listings, host=name, workload=workload, duration=duration, capture=capture)
    notes: list[str] = []
    per: list[tuple[str, Listings, Capture | None, list[_Path]]] = []
    for name, listings, capture in hosts:
        try:
            _same_host(listings)
            paths = _paths(listings)
        except HostImportError as exc:
            raise HostImportError(f"host {name}: {exc}") from None
        listings = _host_local(name, listings)
        per.append((name, listings, capture, [replace(p, link=f"{name}:{p.link}", device=_local_name(name, p.device)) for p in paths]))
    per, arrays, tpgs = _cluster_arrays(per, notes)
    lines = scenario_head(
        [
            f"Imported from {len(hosts)} ESXi hosts' esxcli storage listings by `sanlab import esxi`: a cluster.",
            "Comments name the listing and line each value came from, or say that a value is sanlab's default.",
        ],
        "cluster_imported",
        duration,
    )
    hosts_built = []
    # Host -> device -> the sanlab name of its first optimized path, the one sanlab's fixed takes.
    first_ao: dict[str, dict[str, str]] = {}
    device_arrays: list[tuple[str, str]] = []
    measured: dict[str, list[DeviceLoad]] = {}
    for name, listings, capture, paths in per:
        said: list[str] = []
        links = _links(paths, said, arrays, tpgs)
        nmp = {d.name: d for d in listings.nmp_devices}
        said += _satp_notes(listings.nmp_devices)
        core = {d.name: d for d in listings.core_devices}
        devices = list(dict.fromkeys(p.device for p in paths))
        unknown = [d for d in [*nmp, *core] if d not in devices]
        if unknown:
            said.append(f"devices without a path in the path listings, left out: {', '.join(unknown)}")
        loads = _capture_loads(capture, [d[len(name) + 1:] if d.startswith(f"{name}:mpx.") else d for d in devices], said)
        loads = {_local_name(name, d): load for d, load in loads.items()}
        array_of = {link.name: link.array for link in links}
        host_arrays = [(p.device, array_of[p.link]) for p in paths]
        device_arrays += host_arrays
        for d, a in dict.fromkeys(host_arrays):
            if d in loads:
                measured.setdefault(a, []).append(loads[d])
        policy, own = _policies(devices, nmp, _device_path_names(paths, array_of))
        said_psp = list(dict.fromkeys(f"{d.psp}: {PSP_SAID[d.psp]}" for d in nmp.values() if d.psp in PSP_SAID))
        if policy is not None and said_psp and not any(PSP_SAID[d.psp] in policy[1] for d in nmp.values() if d.psp in PSP_SAID):
            policy = (policy[0], f"{policy[1]}; {'; '.join(said_psp)}")
        hosts_built.append((name, listings, capture, links, nmp, core, devices, loads, policy, own, said))
        link_at = {link.name: (k, link.alua) for k, link in enumerate(links)}
        names = _sanlab_path_names(paths, array_of)
        first_ao[name] = {d: min((link_at[p.link][0], names[p.name]) for p in paths if p.device == d and link_at[p.link][1] == "AO")[1] for d in devices if any(p.device == d and link_at[p.link][1] == "AO" for p in paths)}
    volume_psp = _volume_policies(hosts_built, [d for d, _ in device_arrays], first_ao, notes)
    devices_all = list(dict.fromkeys(d for d, _ in device_arrays))
    written = [a for a in dict.fromkeys(arrays.values()) if a in {x for _, x in device_arrays}]
    for a in written:
        node_tpgs = [sorted(set(tpgs[n])).index(t) for n, t in ((n, t) for n, ts in tpgs.items() if arrays[n] == a for t in ts)]
        controllers = f"controllers = {max(node_tpgs) + 1}  # one per target port group its paths report, on every host" if node_tpgs else "controllers = 2  # sanlab's default: no path listing reports a target port group"
        lines += ["[[array]]", f'name = "{a}"', controllers, _media(a, device_arrays, {}, notes, measured.get(a, [])), "# cores, cache, target queue: sanlab's defaults (none): nothing listed or captured says", ""]
    lines += _volumes(devices_all, device_arrays, volume_psp, notes)
    events: list[str] = []
    for name, listings, capture, links, nmp, core, devices, loads, policy, _own, said in hosts_built:
        adapters = list(dict.fromkeys(link.adapter for link in links))
        lines += _host(name, devices, policy, nmp, core, said, _adapter_kind(listings, said), _adapter_queue(capture, adapters, said))
        lines += _path_tables(name, links)
        lines += _vms(name, devices, workload, loads, prefix=f"{name}_")
        for link in links:
            if link.down:
                events += ["[[event]]", 'kind = "path_down"', f"path = {toml_value(link.name)}", 'at = "0s"', f"# {link.down} when listed ({toml_comment(str(link.source))})", ""]
        notes += [f"{name}: {n}" for n in said]
    lines += events
    vm_figures = {f"{name}_vm{k + 1}": (loads[d].iops, loads[d].gavg_ms) for name, *_, devices, loads, _p, _o, _s in hosts_built for k, d in enumerate(devices) if d in loads and math.isfinite(loads[d].gavg_ms)}
    return Imported("\n".join(lines).rstrip() + "\n", notes, vm_figures, _service_us(written, measured))


_HostPaths = tuple[str, Listings, "Capture | None", list[_Path]]


def _cluster_arrays(per: list[_HostPaths], notes: list[str]) -> tuple[list[_HostPaths], dict[str, str], dict[str, list[int]]]:
    """The hosts' paths, with the target node of the paths of a host whose listings name none
    taken from the other hosts'; each target node's array, and its port groups, over all hosts."""
    per = list(per)
    # A host without `esxcli storage core path list` names no target: its paths reach the target
    # node the other hosts' paths to the same device reach, where that is one.
    known: dict[str, set[str]] = {}
    for *_, paths in per:
        for p in paths:
            if p.node is not None:
                known.setdefault(p.device, set()).add(p.node)
    for k, (name, listings, capture, paths) in enumerate(per):
        lent = {p.device for p in paths if p.node is None and len(known.get(p.device, ())) == 1}
        if lent:
            notes.append(f"{name}: no core path listing names the targets of {', '.join(sorted(lent))}: taken as the other hosts' listings name them")
            per[k] = (name, listings, capture, [replace(p, node=next(iter(known[p.device]))) if p.device in lent and p.node is None else p for p in paths])
    # Arrays by target node, controllers by target port group, over every host's paths.
    arrays: dict[str, str] = {}
    tpgs: dict[str, list[int]] = {}
    for *_, paths in per:
        _, nodes, tpg_of = _link_nodes(paths)
        for link, node in nodes.items():
            arrays.setdefault(node, f"array{len(arrays) + 1}")
            if tpg_of[link] is not None:
                tpgs.setdefault(node, []).append(tpg_of[link])  # type: ignore[arg-type]
    return per, arrays, tpgs


def _local_name(host: str, device: str) -> str:
    """A device's volume name in a cluster: its own, but `host:mpx.…` for an `mpx.` device, the
    name ESXi makes up for a device without an identity of its own (a local disk, a CD-ROM), which
    another host may give to another device."""
    return f"{host}:{device}" if device.startswith("mpx.") else device


def _host_local(host: str, listings: Listings) -> Listings:
    """The listings with their `mpx.` devices named `host:mpx.…` (`_local_name`)."""
    return Listings(
        core_devices=[replace(d, name=_local_name(host, d.name)) for d in listings.core_devices],
        nmp_devices=[replace(d, name=_local_name(host, d.name)) for d in listings.nmp_devices],
        nmp_paths=[replace(p, device=_local_name(host, p.device)) for p in listings.nmp_paths],
        core_paths=[replace(p, device=_local_name(host, p.device)) for p in listings.core_paths],
    )


def _volume_policies(hosts_built: Sequence[tuple], devices: Sequence[str], first_ao: dict[str, dict[str, str]], notes: list[str]) -> dict[str, tuple[str, str]]:
    """A device's own policy becomes its volume's where every host listing it agrees (sanlab sets
    a volume's policy on every host); else each host's own policy applies to it, with a note,
    which says when each host's FIXED prefers the path sanlab's fixed takes anyway."""
    volume_psp: dict[str, tuple[str, str]] = {}
    for d in dict.fromkeys(devices):
        tables = {h[0]: h[9].get(d, h[8]) for h in hosts_built if d in h[4]}
        if not any(d in h[9] for h in hosts_built):
            continue
        chosen = {t[0] for t in tables.values() if t is not None}
        if len(chosen) == 1 and None not in tables.values():
            volume_psp[d] = next(t for t in tables.values() if t is not None)
            continue
        preferred = {h: re.fullmatch(r'\{ kind = "fixed", preferred = "(.*)" \}', t[0]) if t else None for h, t in tables.items()}
        if all(m is not None and first_ao.get(h, {}).get(d) == m.group(1) for h, m in preferred.items()):
            notes.append(f"device {d}: FIXED on each host, preferring its first optimized path ({', '.join(m.group(1) for m in preferred.values() if m)}), which sanlab's fixed takes on each host: no volume policy needed")
            continue
        notes.append(f"device {d}: its path selection policy differs between hosts ({'; '.join(f'{h}: {t[0] if t else None}' for h, t in tables.items())}); sanlab sets a volume's policy on every host: each host's own policy applies to it")
    return volume_psp
