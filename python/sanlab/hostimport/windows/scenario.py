"""The scenario of a Windows host: its `mpclaim` listings' topology (`topology.py`) and, with a
typeperf capture, each volume's load and its array's speed (`hostimport/load.py`, which reads the
capture's samples as it reads iostat's reports), written by the scenario writer the Linux import
uses (`hostimport/topology.build_scenario`), in Windows' words."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from sanlab.hostimport.load import loads
from sanlab.hostimport.records import DiskCapture
from sanlab.hostimport.scenario import Imported
from sanlab.hostimport.topology import Topology, build_scenario
from sanlab.hostimport.windows.mpclaim import read_mpclaim
from sanlab.hostimport.windows.records import MpclaimListing, WindowsInputError
from sanlab.hostimport.windows.topology import from_mpclaim
from sanlab.hostimport.windows.typeperf import disk_number, read_typeperf

WINDOWS = ("Windows", "sanlab import windows", "# scheduler: sanlab's default; its kinds share a device among VMs: the listings say nothing of the host's own")
DEFAULT_HOST = "win1"


def match_disks(top: Topology, listing: MpclaimListing, capture: DiskCapture) -> None:
    """Each volume's disk in the capture: the PhysicalDisk instance of its system disk number
    (`disk2` is `PhysicalDisk(2 E:)`); a capture holding none of them is another host's."""
    present = list(dict.fromkeys(row.device for report in capture.reports for row in report))
    by_number = {disk_number(d): d for d in present}
    system = {f"disk{s.system_disk}": s.system_disk for s in listing.summary.values()}
    for vol in top.volumes:
        number = system.get(vol.name)
        vol.disks = [by_number[number]] if number in by_number else []
    if not any(vol.disks for vol in top.volumes):
        wanted = ", ".join(f"Disk {system[v.name]}" for v in top.volumes if v.name in system) or "none: no `mpclaim -s -d` summary names the system disks"
        raise WindowsInputError(f"{capture.path}: line 1: none of the capture's disks ({', '.join(present[:8])}) is an MPIO disk's ({wanted}): is it from the same host ({capture.host})?")


def import_windows(mpclaim: Sequence[Path], typeperf: Path | None, *, host: str | None, workload: str, duration: str) -> Imported:
    """The scenario of the host the listings (and the capture) describe, and the notes."""
    listing = read_mpclaim(mpclaim)
    top = from_mpclaim(listing)
    volume_loads = media = None
    title = "mpclaim listings"
    notes: list[str] = []
    if typeperf is not None:
        capture = read_typeperf(typeperf)
        if host is not None and capture.host and capture.host.lower() != host.lower():
            raise WindowsInputError(f"{typeperf}: line 1: the capture's counters name host {capture.host!r}, not {host!r} (--host): give the capture of {host}, or --host {capture.host}")
        match_disks(top, listing, capture)
        volume_loads, media, notes = loads(top, capture)
        title += " and typeperf capture"
        host = host or capture.host
    imported = build_scenario(top, host=host or DEFAULT_HOST, workload=workload, duration=duration, loads=volume_loads, media=media, title=title, platform=WINDOWS)
    return replace(imported, notes=[*notes, *imported.notes])
