"""The scenario of a Linux host: its `multipath -ll` maps' and `nvme list-subsys` subsystems'
topology (`topology.py`), with its block queue settings (`sysfs.py`) and, with an `iostat -x`
capture, each volume's load and its array's speed (`hostimport/load.py`), written by the writer
the Windows import uses too (`hostimport/topology.build_scenario`), in Linux's words."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from sanlab.errors import UserError
from sanlab.hostimport.linux.multipath import read_multipath
from sanlab.hostimport.linux.nvme import read_nvme
from sanlab.hostimport.linux.topology import from_multipath, from_nvme, merged
from sanlab.hostimport.scenario import Imported
from sanlab.hostimport.topology import build_scenario

LINUX = ("Linux", "sanlab import linux", "# scheduler: sanlab's default; its kinds share a device among VMs, not Linux's I/O schedulers")
"""The platform: its name, the command that imports it, and what the scenario says of the host's
scheduler (`build_scenario`'s `platform`)."""


def import_linux(multipath: Path | None, nvme: Path | None, sysfs: Path | None, iostat: Path | None, *, host: str, workload: str, duration: str) -> Imported:
    """The scenario of the host the listings (and the settings and capture) describe, and the
    notes: the readers' first, then the writer's."""
    if multipath is None and nvme is None:
        raise UserError("import linux: give --multipath FILE (`multipath -ll`), --nvme FILE (`nvme list-subsys`), or both")
    notes: list[str] = []
    scsi = subsystems = None
    if multipath is not None:
        maps, notes = read_multipath(multipath)
        scsi = from_multipath(maps)
    if nvme is not None:
        subsystems = from_nvme(read_nvme(nvme), first_array=len(scsi.arrays) + 1 if scsi else 1)
    top = merged(scsi, subsystems)
    keys = None
    if sysfs is not None:
        from sanlab.hostimport.linux.sysfs import read_sysfs, settings

        values, sysfs_notes = read_sysfs(sysfs)
        keys, said = settings(values, top, {v.name: v.active_disks for v in top.volumes})
        notes += [*sysfs_notes, *said]
    volume_loads = media = None
    if iostat is not None:
        from sanlab.hostimport.linux.iostat import read_iostat
        from sanlab.hostimport.load import loads

        volume_loads, media, said = loads(top, read_iostat(iostat))
        notes += said
    title = "storage listings" + (" and iostat capture" if iostat is not None else "")
    imported = build_scenario(top, host=host, workload=workload, duration=duration, keys=keys, loads=volume_loads, media=media, title=title, platform=LINUX)
    return replace(imported, notes=[*notes, *imported.notes])
