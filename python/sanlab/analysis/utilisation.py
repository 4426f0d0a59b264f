"""What is busy in a run: every resource the engine's document gives a figure for, with its
utilisation on one 0-1 scale and how it is measured (docs/headroom.md#what-saturates-first says
what is covered and what is not). `sanlab headroom` names the highest at its limit the bottleneck
and takes its service demands for the operational-law bounds; `sanlab run`'s report shows the table.

Each resource is `{kind, name, utilisation, how, demand, vms}`: `how` says what the figure is,
`demand` whether it is a server's busy share (the utilisation law U = X·D holds, so it gives a
service demand D), `vms` the VMs whose I/Os cross it. A queue's occupancy (ACTV / DQLEN) and a
cache's fullness are not demands: they do not grow in proportion to throughput."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from sanlab.resolved import resolved_scenario

_BANDWIDTH = re.compile(r"^\s*([0-9_]+(?:\.[0-9_]*)?)\s*(Gb/s|Mb/s|Kb/s|GB/s|MB/s|GiB/s|MiB/s|b/s)\s*$")
_BPS = {"Gb/s": 1e9, "Mb/s": 1e6, "Kb/s": 1e3, "GB/s": 8e9, "MB/s": 8e6, "GiB/s": 8.0 * 2**30,
        "MiB/s": 8.0 * 2**20, "b/s": 1.0}  # fmt: skip
"""The engine's bandwidth units (sanlab-spec `parse_bandwidth_bps`), in bits per second."""


def number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def bandwidth_bps(text: Any) -> float | None:
    """`"16Gb/s"` in bits per second, as the engine reads it; None for none or another form."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text) or None
    match = _BANDWIDTH.match(str(text)) if text is not None else None
    return float(match.group(1).replace("_", "")) * _BPS[match.group(2)] if match else None


class Topology:
    """Which VMs cross which host device, path, volume and array, from the document's reports
    and its resolved scenario; indexed once, so that a table of 10,000 VMs is linear in them."""

    def __init__(self, variant: Mapping[str, Any]) -> None:
        resolved = resolved_scenario(variant)
        self.volume_of = {vm["name"]: vm.get("volume") for vm in resolved.get("vm", [])}
        self.host_of = {vm["name"]: vm.get("host") for vm in variant.get("vms", [])}
        self.iops = {vm["name"]: float(vm.get("iops") or 0.0) for vm in variant.get("vms", [])}
        arrays_of = {v["name"]: list(v.get("arrays") or []) for v in resolved.get("volume", [])}
        self._arrays_of = arrays_of
        self.devices = list(variant.get("devices", []))
        self._carried = {(d["host"], d.get("volume")) for d in self.devices}
        self._on_host: dict[Any, list[str]] = {}
        for vm, host in self.host_of.items():
            self._on_host.setdefault(host, []).append(vm)
        self._of_volume: dict[Any, list[str]] = {}
        self._of_array: dict[str, list[str]] = {}
        for vm, volume in self.volume_of.items():
            self._of_volume.setdefault(volume, []).append(vm)
            for array in dict.fromkeys(arrays_of.get(volume, [])):
                self._of_array.setdefault(array, []).append(vm)

    def device_vms(self, device: Mapping[str, Any]) -> list[str]:
        """The VMs on the device's host whose volume it is; a VM whose volume no device of its
        host carries (a vVol behind a protocol endpoint) crosses its host's PE devices."""
        host, volume = device["host"], device.get("volume")
        pe = str(volume).startswith("PE ")
        found = []
        for vm in self._on_host.get(host, []):
            mine = self.volume_of.get(vm)
            if mine == volume or (pe and (host, mine) not in self._carried):
                found.append(vm)
        return found

    def array_vms(self, array: str) -> list[str]:
        return list(self._of_array.get(array, []))

    def volume_vms(self, volume: str) -> list[str]:
        return list(self._of_volume.get(volume, []))

    def replicated_vms(self, first: str, second: str) -> list[str]:
        """The VMs whose volume lives on both arrays (replicated between them)."""
        return [vm for vm, volume in self.volume_of.items() if {first, second} <= set(self._arrays_of.get(volume, []))]


def _path_links(resolved: Mapping[str, Any]) -> dict[str, float | None]:
    """Each path's link bandwidth (bits/s, per direction; None: unlimited), by the path's name
    as the engine names it (`name` or `<host>-<array>`, numbered from 0 with `count` > 1)."""
    links: dict[str, float | None] = {}
    for entry in resolved.get("path", []):
        prefix = entry.get("name") or f"{entry['host']}-{entry['array']}"
        count = int(entry.get("count", 1))
        bandwidth = bandwidth_bps((entry.get("link") or {}).get("bandwidth"))
        for i in range(count):
            links[prefix if count == 1 else f"{prefix}-{i}"] = bandwidth
    return links


def _item(kind: str, name: str, utilisation: float, how: str, demand: bool, vms: Sequence[str],
          **extra: Any) -> dict[str, Any]:  # fmt: skip
    return {"kind": kind, "name": name, "utilisation": utilisation, "how": how, "demand": demand,
            "vms": sorted(vms), **extra}  # fmt: skip


def _arrays(variant: Mapping[str, Any], top: Topology) -> list[dict[str, Any]]:
    found = []
    media = {a["name"]: a.get("media") or {} for a in resolved_scenario(variant).get("array", [])}
    for array in variant.get("arrays", []):
        name, vms = array["name"], top.array_vms(array["name"])
        group = array.get("disk_group") or None
        busy = number(array.get("utilisation"))
        if busy is not None:
            how = (
                "the disks' mean busy share"
                if group
                else f"busy servers / servers ({int(media.get(name, {}).get('servers', 64))}), the array's report"
            )
            found.append(_item("array media", name, busy, how, True, vms))
        for key, kind in (("cores", "array core"), ("controllers", "array controller")):
            for part in array.get(key) or []:
                util = number(part.get("util"))
                if util is not None:
                    found.append(
                        _item(
                            kind, f"{name}/{part['name']}", util, "busy share (the array's report)", True, vms
                        )
                    )
        if group:
            disks = group.get("disk_utilisation") or []
            if disks:
                k = max(range(len(disks)), key=lambda i: disks[i])
                found.append(_item(
                    "drive", f"{name}/disk{k}", float(disks[k]),
                    f"busy share of the busiest of {len(disks)} drives (disk_utilisation)", True, vms,
                ))  # fmt: skip
            size = number(group.get("write_cache_bytes")) or 0.0
            if size > 0:
                waited = int(group.get("writes_waited") or 0)
                mean = number(group.get("dirty_bytes_mean"))
                # A run folder written before the engine averaged it has the end's snapshot only.
                dirty, how = (
                    (mean, "dirty bytes / cache size, time-averaged over the measured time")
                    if mean is not None
                    else (float(group.get("dirty_bytes_now") or 0), "dirty bytes / cache size at the run's end")
                )
                found.append(_item(
                    "write cache", name, dirty / size, f"{how} ({waited} writes waited for room)", False, vms,
                ))  # fmt: skip
    return found


def _device_limit(device: Mapping[str, Any], host: Mapping[str, Any] | None,
                  resolved_host: Mapping[str, Any]) -> str:  # fmt: skip
    """What sets the device's DQLEN: a PARDA/SIOC window, adaptive queue depth, DSNRO or the
    LUN queue depth."""
    depth = int(device.get("queue_depth") or 0)
    dqlen = float(device["dqlen_mean"])
    flow = (host or {}).get("flow_control")
    window = (host or {}).get("window")
    if flow:
        mean = f" (mean {window['mean']:.1f})" if window else ""
        return f"{str(flow.get('kind', 'flow control')).upper()} window{mean}, under the LUN depth {depth}"
    if dqlen < depth - 0.5:
        if int(device.get("qfull") or 0) > 0:
            return f"adaptive queue depth after {device['qfull']} QUEUE FULL (LUN depth {depth})"
        dsnro = int((resolved_host.get("scheduler") or {}).get("dsnro", 32))
        return f"DSNRO {dsnro}: the LUN depth {depth} clamped while VMs compete"
    return f"the LUN queue depth {depth}"


def _devices(variant: Mapping[str, Any], top: Topology) -> list[dict[str, Any]]:
    found = []
    hosts = {h["name"]: h for h in variant.get("hosts", [])}
    resolved_hosts = {h["name"]: h for h in resolved_scenario(variant).get("host", [])}
    for device in variant.get("devices", []):
        dqlen, actv = number(device.get("dqlen_mean")), number(device.get("actv_mean"))
        if dqlen is None or actv is None or dqlen <= 0:
            continue
        limit = _device_limit(device, hosts.get(device["host"]), resolved_hosts.get(device["host"], {}))
        found.append(_item(
            "device queue", f"{device['host']}/{device['name']}", actv / dqlen,
            f"ACTV {actv:.1f} / DQLEN {dqlen:.1f} (esxtop's time means); DQLEN set by {limit}",
            False, top.device_vms(device), limit=limit,
        ))  # fmt: skip
    return found


PATH_DIRECTIONS = ("host to array", "array to host")
"""A host link's outbound and inbound directions, as the table names them."""


def _replication_bandwidths(resolved: Mapping[str, Any]) -> dict[str, float | None]:
    """Each replication link's bandwidth (bits/s; None: unlimited), by the engine's name `A<->B`."""
    return {
        "<->".join(map(str, entry.get("arrays") or [])): bandwidth_bps((entry.get("link") or {}).get("bandwidth"))
        for entry in resolved.get("replication", [])
    }


def _queue(kind: str, name: str, queue: Mapping[str, Any] | None, vms: Sequence[str]) -> list[dict[str, Any]]:
    """A queue of `depth` slots: its time-averaged occupancy over its depth (esxtop's ACTV / QLEN);
    none for a queue too deep to fill (an `ideal` adapter) or a run folder without it."""
    depth = int((queue or {}).get("depth") or 0)
    if not queue or depth <= 0 or depth >= IDEAL_DEPTH:
        return []
    actv, qued = float(queue["actv_mean"]), float(queue["qued_mean"])
    how = f"ACTV {actv:.1f} / depth {depth} over the measured time; {qued:.1f} waiting for a slot on average"
    return [_item(kind, name, actv / depth, how, False, vms)]


IDEAL_DEPTH = 1 << 20
"""The `ideal` adapters' queue depth (host/adapters.rs): no limit, for analytic checks."""


def _queues(variant: Mapping[str, Any], top: Topology) -> list[dict[str, Any]]:
    """Each VM's virtual disk and adapter queues and each host's storage adapter queue."""
    found = []
    for vm in variant.get("vms", []):
        found += _queue("VM disk queue", vm["name"], vm.get("disk_queue"), [vm["name"]])
        found += _queue("VM adapter queue", vm["name"], vm.get("adapter_queue"), [vm["name"]])
    for host in variant.get("hosts", []):
        on_host = [vm for vm, h in top.host_of.items() if h == host["name"]]
        found += _queue("host adapter queue", host["name"], host.get("adapter_queue"), on_host)
    return found


def link_utilisations(variant: Mapping[str, Any], top: Topology) -> list[dict[str, Any]]:
    """Each link with a bandwidth, per direction: its transmitter's busy share over the measured
    time, as the engine measures it (a data frame of B bytes busies it B × 8 / bandwidth; control
    frames are 0 bytes). A host-to-array link is named as its path and carries the VMs of its
    devices; a replication link `A<->B` carries the VMs of the volumes replicated between A and B.
    A run folder written before the engine reported links has none (said in `not_covered`)."""
    resolved = resolved_scenario(variant)
    bandwidths = {**_path_links(resolved), **_replication_bandwidths(resolved)}
    devices = {d["name"]: d for d in variant.get("devices", [])}
    path_vms: dict[str, set[str]] = {}
    for path in variant.get("paths", []):
        device = devices.get(path["device"])
        path_vms.setdefault(path["name"], set()).update(top.device_vms(device) if device else [])
    found = []
    for link in variant.get("links", []):
        name, kind = link["name"], link["kind"]
        bandwidth = bandwidths.get(name)
        if bandwidth is None:
            continue  # unlimited: it cannot saturate
        if kind == "path":
            vms, (out, back) = path_vms.get(name, set()), PATH_DIRECTIONS
        else:
            first, _, second = name.partition("<->")
            vms, out, back = set(top.replicated_vms(first, second)), f"{first} to {second}", f"{second} to {first}"
        for key, direction in (("outbound", out), ("inbound", back)):
            part = link[key]
            found.append(_item(
                "link" if kind == "path" else "replication link", f"{name} ({direction})", float(part["busy"]),
                f"transmitter busy share over the measured time ({float(part['mbps']):,.1f} MB/s of data over "
                f"{bandwidth / 1e9:g} Gb/s)", True, sorted(vms), path=name if kind == "path" else None,
                direction=direction,
            ))  # fmt: skip
    return found


SOLIDFIRE_CURVE = ((4096, 100.0), (8192, 160.0), (16384, 270.0), (32768, 500.0), (65536, 1000.0),
                   (131072, 1950.0), (262144, 3900.0), (524288, 7600.0), (1048576, 15000.0))  # fmt: skip
"""A request's cost by size, /100 in 4 KiB units: the engine's default (array/qos.rs)."""


BURST_LEFT_S = 0.01
"""A QoS volume with more burst credit than this at the end released at its burst all along."""


def qos_units(size: float, curve: Sequence[Sequence[float]] = SOLIDFIRE_CURVE) -> float:
    """The units of one request of `size` bytes, as the engine counts them (array/qos.rs `units`):
    linear between the curve's points, proportional beyond its last."""
    points = [(float(a), float(b)) for a, b in curve]
    if size <= points[0][0]:
        return points[0][1] / 100
    for (a, ca), (b, cb) in zip(points, points[1:], strict=False):
        if size <= b:
            return (ca + (cb - ca) * (size - a) / (b - a)) / 100
    last, cost = points[-1]
    return cost * size / last / 100


def _qos(variant: Mapping[str, Any], top: Topology) -> list[dict[str, Any]]:
    """A SolidFire-style volume max: units released per second over `max` (over `burst` when
    burst credit is left at the run's end: above `max` a volume spends it). The units are the
    released requests at their mean size (the volume's VMs' MB/s over the requests released:
    exact when its requests are alike, as a fio job's fixed `bs` split alike)."""
    found = []
    curves = {
        v["name"]: (v.get("qos") or {}).get("cost_curve") or SOLIDFIRE_CURVE
        for v in resolved_scenario(variant).get("volume", [])
    }
    mbps = {vm["name"]: float(vm.get("mbps") or 0.0) for vm in variant.get("vms", [])}
    for volume in variant.get("volumes", []):
        qos = volume.get("qos")
        if not qos or not number(qos.get("max")):
            continue
        name, released = volume["name"], float(qos.get("released_iops") or 0.0)
        vms = top.volume_vms(name)
        bytes_s = sum(mbps.get(vm, 0.0) for vm in vms) * 1e6
        size = bytes_s / released if released > 0 else 4096.0
        units = released * qos_units(size, curves.get(name, SOLIDFIRE_CURVE))
        credit = float(qos.get("credit_s") or 0.0)
        burst = number(qos.get("burst"))
        # Burst credit left at the end: the volume could release at its burst all along.
        key, rate = ("burst", burst) if burst and credit > BURST_LEFT_S else ("max", float(qos["max"]))
        how = (
            f"{units:,.0f} units/s released ({released:,.1f} requests/s of {size / 1024:,.1f} KiB on average) / "
            f"{key} {rate:g} (burst credit left at the end {credit:.2f} s; mean hold "
            f"{float(qos.get('held_ms_mean') or 0.0):,.1f} ms)"
        )
        found.append(_item("volume QoS", name, units / rate, how, True, vms))
    return found


def _vm_limits(variant: Mapping[str, Any]) -> list[dict[str, Any]]:
    """mClock's per-VM limit (IOPS): the VM's IOPS over it (a lower bound for requests over
    32 KiB, which cost more than one unit)."""
    found = []
    iops = {vm["name"]: float(vm.get("iops") or 0.0) for vm in variant.get("vms", [])}
    for vm in resolved_scenario(variant).get("vm", []):
        limit = number(vm.get("limit"))
        if limit and vm["name"] in iops:
            found.append(_item(
                "VM limit", vm["name"], iops[vm["name"]] / limit,
                f"IOPS / mClock limit {limit:g} (a lower bound: a request over 32 KiB costs more)",
                True, [vm["name"]],
            ))  # fmt: skip
    return found


def utilisations(variant: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every resource's utilisation in one run, highest first."""
    top = Topology(variant)
    links = link_utilisations(variant, top)
    found = [
        *_arrays(variant, top),
        *_devices(variant, top),
        *_queues(variant, top),
        *links,
        *_qos(variant, top),
        *_vm_limits(variant),
    ]
    found.sort(key=lambda item: -item["utilisation"])
    return found


def not_covered(variant: Mapping[str, Any]) -> list[str]:
    """Resources that can saturate but have no figure in this run's document."""
    missing = [
        "array front-end ports (the engine does not model them: a path's link is its own, up to the "
        "array's queue)",
    ]
    if "links" not in variant:
        missing.append("links (a run folder written before the engine measured them)")
    if variant.get("vms") and "disk_queue" not in variant["vms"][0]:
        missing.append("VM and host adapter queues (a run folder written before the engine measured them)")
    if any(not a.get("cores") for a in variant.get("arrays", [])):
        missing.append("controllers of arrays without modelled cores (no busy time)")
    return missing
