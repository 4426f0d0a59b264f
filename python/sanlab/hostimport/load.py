"""What each volume carried in a capture of its disks (`records.DiskCapture`: an `iostat -x`
capture of a Linux host, a typeperf capture of a Windows host's PhysicalDisk counters), as a fio
job sanlab runs, and how fast its array answered, as the array's service time: the counterpart of
`workload.py` for the ESXi import (whose `DeviceLoad` writes the fio command line, and whose
closed-loop rule this shares). The capture's own names for the figures (`CaptureNames`: `aqu-sz`
or `Avg. Disk Queue Length`, a report or a sample) are the ones the comments and notes say.

A volume's figures are its map's dm device (`dm-N`, or its alias under `iostat -N`), else its
disks summed (an NVMe subsystem's: its namespaces' heads, `nvmeXnY`; a Windows MPIO disk's: its
PhysicalDisk instance). Over the reports (iostat's first since boot left out by the reader):

- rate: the mean of reads + writes per second; read share: reads over reads and writes; request
  size: bytes per second over requests per second, in whole 512-byte sectors;
- outstanding: the mean of the queue length; a **closed** loop at that depth when it is a steady
  whole number (`workload.WHOLE`, `workload.STEADY_CV`: a benchmark keeping a depth), else
  **open** at the mean rate, Poisson arrivals (an application), as the ESXi import decides;
- the array's service time: the read and write times per request (`r_await`, `w_await`; `Avg.
  Disk sec/Read`, `/Write`) of its volumes' paths (a map's SCSI disks: the dm device's adds dm's
  own queueing), else of the volumes' devices, each report weighted by its reads (writes), over
  the array's volumes weighted alike; with enough servers not to queue at the capture's load.
  These times count from a request's start below the file system to its end, so they hold the
  wire, the array, and any wait in the disk's queue: the array answers as it did at that load (as
  DAVG does for ESXi), and will not slow down at a heavier one as a real array would.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from sanlab.hostimport.records import CaptureNames, DiskCapture, DiskRow, HostInputError
from sanlab.hostimport.topology import ArrayMedia, Topology, Volume, VolumeLoad
from sanlab.hostimport.workload import (
    SECTOR_BYTES,
    STEADY_CV,
    WHOLE,
    DeviceLoad,
    beyond_a_job,
    no_service_time,
    servers_for,
)


@dataclass
class VolumeSeries:
    """A volume's sums per report (NaN-free), and the devices they came from."""

    devices: list[str]
    reads: np.ndarray
    writes: np.ndarray
    rbytes: np.ndarray
    wbytes: np.ndarray
    queue: np.ndarray
    r_await: np.ndarray
    w_await: np.ndarray


def volume_devices(vol: Volume, capture: DiskCapture) -> list[str]:
    """The devices of the capture whose figures are the volume's."""
    present = {row.device for report in capture.reports for row in report}
    for whole in (vol.dm, vol.name):
        if whole and whole in present:
            return [whole]
    if vol.disk_pattern:
        return sorted(d for d in present if re.fullmatch(vol.disk_pattern, d))
    return [d for d in vol.disks if d in present]


def volume_series(devices: list[str], capture: DiskCapture) -> VolumeSeries:
    """Per report: the devices' rates, bytes and queues summed, their awaits weighted by requests."""
    cols: dict[str, list[float]] = {k: [] for k in ("reads", "writes", "rbytes", "wbytes", "queue", "r_await", "w_await")}
    for report in capture.reports:
        rows: list[DiskRow] = [r for r in report if r.device in devices]
        reads, writes = sum(r.reads_per_s for r in rows), sum(r.writes_per_s for r in rows)
        cols["reads"].append(reads)
        cols["writes"].append(writes)
        cols["rbytes"].append(sum(r.reads_per_s * r.read_size_bytes for r in rows if r.reads_per_s > 0))
        cols["wbytes"].append(sum(r.writes_per_s * r.write_size_bytes for r in rows if r.writes_per_s > 0))
        cols["queue"].append(sum(r.queue for r in rows))
        cols["r_await"].append(sum(r.reads_per_s * r.read_await_ms for r in rows) / reads if reads > 0 else math.nan)
        cols["w_await"].append(sum(r.writes_per_s * r.write_await_ms for r in rows) / writes if writes > 0 else math.nan)
    return VolumeSeries(devices, **{k: np.array(v) for k, v in cols.items()})


def _weighted(ms: np.ndarray, n: np.ndarray) -> float:
    ok = np.isfinite(ms) & (n > 0)
    total = float(n[ok].sum())
    return float((ms[ok] * n[ok]).sum()) / total if total > 0 else math.nan


def _load(vol: Volume, s: VolumeSeries, capture: DiskCapture) -> DeviceLoad | str | None:
    """The volume's load; None when it did no I/O; else why its figures give none."""
    reads, writes = float(s.reads.mean()), float(s.writes.mean())
    iops = reads + writes
    if iops == 0:
        return None
    sectors = round((float(s.rbytes.mean()) + float(s.wbytes.mean())) / iops / SECTOR_BYTES)
    if sectors == 0:
        return f"less than half a sector per request at {iops:g} requests/s: no request size"
    outstanding = float(s.queue.mean())
    spread = float(s.queue.std()) / outstanding if outstanding > 0 else math.inf
    closed = outstanding >= 1 - WHOLE and abs(outstanding - round(outstanding)) <= WHOLE and spread < STEADY_CV
    beyond = beyond_a_job(sectors * SECTOR_BYTES, outstanding, iops, closed, "request", "the queue's mean length")
    if beyond:  # a size, depth or rate past what a job takes: said, not written (as for ESXi)
        return beyond
    r_await, w_await = _weighted(s.r_await, s.reads), _weighted(s.w_await, s.writes)
    both = _weighted(np.concatenate([s.r_await, s.w_await]), np.concatenate([s.reads, s.writes]))
    source = f"{_file_name(capture.path)}: {' + '.join(s.devices)}, {len(capture.reports)} {capture.names.report}s"
    return DeviceLoad(vol.name, iops, reads / iops, sectors * SECTOR_BYTES, outstanding, both, r_await, w_await, reads, writes, closed, source)


def _file_name(path: str) -> str:
    """A capture's file name, as the ESXi import writes it beside a job."""
    return path.rsplit("/", 1)[-1]


def _why(load: DeviceLoad, names: CaptureNames) -> str:
    loop = f"closed loop at {round(load.outstanding)} outstanding ({names.queue} {load.outstanding:.2f}, a steady whole number)" if load.closed else f"open loop at {load.iops:.6g} IOPS, Poisson arrivals ({names.queue} {load.outstanding:.2f}: arrivals, not a held depth)"
    awaits = ", ".join(f"{name} {ms:.3f} ms" for name, ms in ((names.read_await, load.davg_read_ms), (names.write_await, load.davg_write_ms)) if math.isfinite(ms))
    return f"{load.source}: {load.iops:.6g} IOPS, {100 * load.read_share:.0f} % reads, {load.size_bytes} B per request, {loop}; {awaits or 'no await'}"


def loads(top: Topology, capture: DiskCapture) -> tuple[dict[str, VolumeLoad], dict[str, ArrayMedia], list[str]]:
    """Each volume's fio job and each array's media from the capture, and the notes."""
    notes: list[str] = list(capture.notes)
    members = {v.name: volume_devices(v, capture) for v in top.volumes}
    if not any(members.values()):
        present = sorted({row.device for report in capture.reports for row in report})
        wanted = sorted({d for v in top.volumes for d in [*([v.dm] if v.dm else []), *v.disks]})
        raise HostInputError(f"{capture.path}: none of the capture's devices ({', '.join(present[:8])}) is a map's, a path's or a subsystem's ({', '.join(wanted[:8]) or 'NVMe heads nvmeXnY'}): is it from the same host?")
    out: dict[str, VolumeLoad] = {}
    measured: dict[str, list[tuple[str, DeviceLoad, VolumeSeries]]] = {}
    for vol in top.volumes:
        if not members[vol.name]:
            notes.append(f"{capture.path}: no device of {vol.name} in the capture: it runs the default workload")
            continue
        series = volume_series(members[vol.name], capture)
        load = _load(vol, series, capture)
        if isinstance(load, str):
            notes.append(f"{capture.path}: {vol.name}: {load}: it runs the default workload")
        elif load is None:
            notes.append(f"{capture.path}: {vol.name} did no I/O in the capture: it runs the default workload")
        else:
            out[vol.name] = VolumeLoad(load.fio_cmdline(), _why(load, capture.names), load.iops, load.davg_ms)
            paths = [d for d in vol.disks if any(r.device == d for rep in capture.reports for r in rep)]
            measured.setdefault(vol.array, []).append((vol.name, load, volume_series(paths, capture) if paths else series))
    used = {d for m in members.values() for d in m} | {d for v in top.volumes for d in v.disks}
    others = sorted({row.device for report in capture.reports for row in report} - used)
    if others:
        notes.append(f"{capture.path}: devices of no listed volume, not read: {', '.join(others[:8])}{' …' if len(others) > 8 else ''}")
    return out, _media(measured, capture, notes), notes


def _media(measured: dict[str, list[tuple[str, DeviceLoad, VolumeSeries]]], capture: DiskCapture, notes: list[str]) -> dict[str, ArrayMedia]:
    media: dict[str, ArrayMedia] = {}
    for array, volumes in measured.items():
        direction: dict[str, float] = {}
        requests: dict[str, float] = {}
        for name, attr, count in (("read", "r_await", "reads"), ("write", "w_await", "writes")):
            ms = np.concatenate([getattr(s, attr) for _, _, s in volumes])
            n = np.concatenate([getattr(s, count) for _, _, s in volumes])
            value = _weighted(ms, n)
            requests[name] = float(n[np.isfinite(n)].sum())
            found = no_service_time(value) if n.sum() > 0 else None
            if found:
                notes.append(f"{capture.path}: {array}: the {name}s' await ({found}) is no service time: left out")
                value = math.nan
            direction[name] = value
        read, write = direction["read"], direction["write"]
        read, write = (read if math.isfinite(read) else write), (write if math.isfinite(write) else read)
        if not math.isfinite(read):
            continue
        servers = servers_for(sum(load.outstanding for _, load, _ in volumes))
        sources = ", ".join(" + ".join(s.devices) for _, _, s in volumes)
        media[array] = ArrayMedia(
            f'{{ kind = "flash", read_latency = "{read * 1000:.1f}us", write_latency = "{write * 1000:.1f}us", servers = {servers} }}',
            f"{capture.names.read_await} and {capture.names.write_await} of {sources} at the capture's load ({_file_name(capture.path)}), each {capture.names.report} weighted by its reads (writes); servers enough not to queue",
            float(f"{read * 1000:.1f}"),
            float(f"{write * 1000:.1f}"),
            "read_latency" if requests["read"] >= requests["write"] else "write_latency",
        )
    return media
