"""Reader for a block device's settings as users paste them from sysfs,

    grep -H . /sys/block/*/queue/{nr_requests,scheduler,max_sectors_kb,rotational} /sys/block/*/device/queue_depth

(or `find /sys/block/sdX/queue -type f -exec grep -aH . {} \\;`): one `path:value` line per file,
into `SysfsValue` records, and what they give the scenario (`settings`).

The attributes read (the kernel's Documentation/ABI/stable/sysfs-block and the SCSI disk's
`device/queue_depth`): `queue/nr_requests`, `queue/scheduler` (the active one in brackets),
`queue/max_sectors_kb`, `queue/rotational`, `device/queue_depth`. Other attributes of the same
form are skipped and counted; a line that is not `/sys/…:value` is one `LinuxInputError`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from sanlab.hostimport.linux.records import LinuxInputError, Source, SysfsValue
from sanlab.hostimport.text import nearest, plain_lines, refuse_foreign
from sanlab.hostimport.topology import HostKeys, Topology
from sanlab.input_files import read_text

SYSFS = "sysfs values as `grep -H . /sys/block/*/queue/… /sys/block/*/device/queue_depth` prints them"
READ = ("queue/nr_requests", "queue/scheduler", "queue/max_sectors_kb", "queue/rotational", "device/queue_depth")
NUMERIC = ("queue/nr_requests", "queue/max_sectors_kb", "queue/rotational", "device/queue_depth")
# blk-mq's schedulers and the single-queue ones of older kernels (block/Kconfig.iosched).
SCHEDULERS = ("none", "mq-deadline", "bfq", "kyber", "noop", "deadline", "cfq")
_LINE = re.compile(r"^/sys/(?:block|class/block|devices/\S*?/block)/(?P<dev>[^/\s:]+)/(?P<attr>[^:]+):(?P<value>.*)$")
# sanlab's bounds: an fc adapter's LUN queue depth (1..4096), Disk.DiskMaxIOSize (32..32767 KiB).
MAX_LUN_DEPTH = 4096
MAX_IO_KIB = (32, 32767)


def _scheduler(value: str, where: Source, device: str) -> str:
    """The active scheduler of `mq-deadline kyber [bfq] none` (a lone name is the active one)."""
    active = re.findall(r"\[([^\]]+)\]", value)
    names = value.replace("[", " ").replace("]", " ").split()
    chosen = active[0] if len(active) == 1 else names[0] if len(names) == 1 else None
    if chosen is None:
        raise LinuxInputError(f"{where}: {device} queue/scheduler `{value}`: expected the schedulers with the active one in brackets, as `mq-deadline kyber [bfq] none`")
    if chosen not in SCHEDULERS:
        raise LinuxInputError(f"{where}: {device} queue/scheduler `{chosen}` is not one the kernel has: expected one of {', '.join(SCHEDULERS)} (nearest: {nearest(chosen, SCHEDULERS)})")
    return chosen


def parse_sysfs(text: str, file: str = "<text>") -> tuple[list[SysfsValue], list[str]]:
    """The values read, and a note of the attributes skipped."""
    lines = plain_lines(text)
    refuse_foreign(lines, file, SYSFS, "--sysfs", LinuxInputError)
    out: list[SysfsValue] = []
    skipped: Counter[str] = Counter()
    seen: dict[tuple[str, str], Source] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = Source(file, number)
        m = _LINE.match(line.strip())
        if m is None:
            raise LinuxInputError(f"{where}: `{line.strip()[:80]}`: expected /sys/block/DEVICE/ATTRIBUTE:VALUE, as `grep -H . /sys/block/*/queue/nr_requests` prints it")
        device, attribute, value = m.group("dev"), m.group("attr"), m.group("value").strip()
        if attribute not in READ:
            skipped[attribute] += 1
            continue
        if (device, attribute) in seen:
            raise LinuxInputError(f"{where}: {device} {attribute} is also at {seen[(device, attribute)]}: expected each file once (one host, one grep)")
        seen[(device, attribute)] = where
        if attribute == "queue/scheduler":
            value = _scheduler(value, where, device)
        elif attribute in NUMERIC and not re.fullmatch(r"\d+", value):
            raise LinuxInputError(f"{where}: {device} {attribute} is `{value[:40]}`: expected a whole number (two files' lines run together, or a line cut short?)")
        out.append(SysfsValue(device, attribute, value, where))
    if not out:
        raise LinuxInputError(f"{file}:1: none of {', '.join(READ)} in the file: expected {SYSFS}")
    notes = [f"{file}: {sum(skipped.values())} lines of other attributes skipped ({', '.join(sorted(skipped)[:6])}{' …' if len(skipped) > 6 else ''})"] if skipped else []
    return out, notes


def read_sysfs(path: Path) -> tuple[list[SysfsValue], list[str]]:
    return parse_sysfs(read_text(path, SYSFS), str(path))


@dataclass
class _Found:
    """The values by device and attribute."""

    values: dict[tuple[str, str], SysfsValue] = field(default_factory=dict)

    def get(self, device: str, attribute: str) -> SysfsValue | None:
        return self.values.get((device, attribute))


def _most_common(per_volume: dict[str, tuple[int, str]], what: str, notes: list[str]) -> tuple[int, str] | None:
    if not per_volume:
        return None
    value, count = Counter(v for v, _ in per_volume.values()).most_common(1)[0]
    why = next(w for v, w in per_volume.values() if v == value)
    others = [f"{name} ({v})" for name, (v, _) in per_volume.items() if v != value]
    if others:
        notes.append(f"{what}: sanlab sets it per host; used {value} ({count} of {len(per_volume)} volumes), not: {', '.join(others)}")
    return value, why


def settings(values: list[SysfsValue], top: Topology, active_disks: dict[str, list[str]]) -> tuple[HostKeys, list[str]]:
    """The host keys the values give, and notes of what they say that sanlab does not model.
    `active_disks`: per volume, the disks of the path group dm sends I/O to."""
    found = _Found({(v.device, v.attribute): v for v in values})
    keys, notes = HostKeys(), []
    scsi = [v for v in top.volumes if v.disks]
    used = {d for v in scsi for d in [*v.disks, *([v.dm] if v.dm else [])]}
    nvme = [v for v in top.volumes if v.disk_pattern]
    used |= {v.device for v in values for vol in nvme if vol.disk_pattern and re.fullmatch(vol.disk_pattern, v.device)}
    listed = sorted({v.device for v in values})
    if not set(listed) & used:
        raise LinuxInputError(f"{values[0].source}: none of the sysfs devices ({', '.join(listed[:8])}) is a disk or dm device of the listed volumes ({', '.join(sorted(used)[:8]) or 'none'}): are they from the same host?")
    depths: dict[str, tuple[int, str]] = {}
    sizes: dict[str, tuple[int, str]] = {}
    for vol in scsi:
        per_path = [(d, found.get(d, "device/queue_depth")) for d in active_disks.get(vol.name, vol.disks)]
        listed = [(d, v) for d, v in per_path if v is not None]
        if listed:
            total = sum(int(v.value) for _, v in listed)
            why = f"device/queue_depth of {' + '.join(f'{d} {v.value}' for d, v in listed)} ({listed[0][1].source}): the paths of the group dm uses, each holding that many commands"
            cap = found.get(vol.dm, "queue/nr_requests") if vol.dm else None
            if cap is not None and int(cap.value) < total:
                total, why = int(cap.value), f"{vol.dm} queue/nr_requests {cap.value} ({cap.source}), below its paths' device/queue_depth summed"
            depths[vol.name] = (total, why)
        limit = found.get(vol.dm, "queue/max_sectors_kb") if vol.dm else None
        if limit is None:
            limits = [v for v in (found.get(d, "queue/max_sectors_kb") for d in vol.disks) if v is not None]
            limit = min(limits, key=lambda v: int(v.value)) if limits else None
        if limit is not None:
            sizes[vol.name] = (int(limit.value), f"{limit.device} queue/max_sectors_kb, {limit.source}: a larger request is split, each piece its own request")
    depth = _most_common(depths, "the device queue depth", notes)
    if depth is not None and depth[0] < 1:  # a queue of no command: said, not written (as an HBA's below one)
        notes.append(f"device queue depth {depth[0]} ({depth[1]}) holds no command: not written, the adapter's default used")
        depth = None
    if depth is not None:
        value = depth[0]
        if value > MAX_LUN_DEPTH:
            notes.append(f"device queue depth {value} ({depth[1]}) is above sanlab's {MAX_LUN_DEPTH} for an adapter: used {MAX_LUN_DEPTH}")
            value = MAX_LUN_DEPTH
        if top.adapter[0] != "ideal":
            keys.adapter.append(("lun_queue_depth", value, depth[1]))
        else:
            notes.append(f"device queue depth {value} ({depth[1]}): the ideal adapter standing in has no queue to set")
    size = _most_common(sizes, "the largest request (max_sectors_kb)", notes)
    if size is not None:
        if MAX_IO_KIB[0] <= size[0] <= MAX_IO_KIB[1]:
            keys.host.append(("disk_max_io_size", f"{size[0]}KiB", size[1]))
        else:
            notes.append(f"max_sectors_kb {size[0]} ({size[1]}) is outside what sanlab splits at ({MAX_IO_KIB[0]}..{MAX_IO_KIB[1]} KiB): not written")
    _said(values, used, notes)
    return keys, notes


def _said(values: list[SysfsValue], used: set[str], notes: list[str]) -> None:
    """Notes of what the values say that sanlab does not model, and of the devices left out."""
    of_ours = [v for v in values if v.device in used]
    schedulers: dict[str, list[str]] = {}
    for v in of_ours:
        if v.attribute == "queue/scheduler":
            schedulers.setdefault(v.value, []).append(v.device)
    for name, devices in schedulers.items():
        what = "requests reach the device in arrival order, as sanlab's device queue takes them" if name in ("none", "noop") else "its reordering is not modelled (sanlab's scheduler kinds share a device among VMs, as ESXi's)"
        notes.append(f"I/O scheduler {name} ({', '.join(devices)}): {what}; sanlab's scheduler left at its default")
    pools = sorted({int(v.value) for v in of_ours if v.attribute == "queue/nr_requests" and not v.device.startswith("dm-")})
    if pools:
        notes.append(f"queue/nr_requests {', '.join(map(str, pools))} of the paths: the block layer's request pool above each disk's queue, not modelled")
    spinning = [v.device for v in of_ours if v.attribute == "queue/rotational" and v.value == "1" and not v.device.startswith("dm-")]
    if spinning:
        notes.append(f"queue/rotational 1 ({', '.join(spinning[:6])}{' …' if len(spinning) > 6 else ''}): the disk says it spins (a SCSI disk does unless its LUN reports otherwise); the array's media is not taken from it")
    others = sorted({v.device for v in values} - used)
    if others:
        notes.append(f"sysfs values of devices no map or subsystem uses, not read: {', '.join(others[:8])}{' …' if len(others) > 8 else ''}")
