"""`sanlab import esxi`: a host's esxcli storage listings (and an esxtop capture) in, a scenario
out; `sanlab import linux`: a Linux host's `multipath -ll` (and `nvme list-subsys`, its block
queue settings, an `iostat -x` capture) in, a scenario out (docs/from-your-host.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from sanlab import engine
from sanlab.errors import UserError
from sanlab.export.files import refuse_inputs, replace_text
from sanlab.formatting import shown_name
from sanlab.hostimport.esxcli import LISTING, ListingError, detect_kind, read_listings
from sanlab.hostimport.esxtop import read_capture
from sanlab.hostimport.scenario import DEFAULT_WORKLOAD, build
from sanlab.input_files import InputFileError, read_text


def register(parser: argparse.ArgumentParser) -> None:
    platforms = parser.add_subparsers(dest="platform", required=True, metavar="PLATFORM")
    esxi = platforms.add_parser(
        "esxi",
        help="from `esxcli storage` listings (core device list, nmp device list, nmp path list, core path list)",
        description="Reads the host's esxcli storage listings (text, --formatter=csv or keyvalue, recognised by "
        "their content) and writes a scenario: its devices, paths and ALUA states, each device's path selection "
        "policy, the arrays behind the targets, and a workload per device. Every value names the listing and line "
        "it came from, or says it is sanlab's default. With --esxtop, each device runs the load the capture shows and "
        "its array answers as fast as the capture's DAVG (docs/from-your-host.md).",
    )
    esxi.add_argument("--esxcli", nargs="+", required=True, type=Path, metavar="FILE", help="listing files, or folders of them")
    esxi.add_argument("--esxtop", type=Path, metavar="CSV", help="an esxtop batch capture (esxtop -b) of the same host: each device then runs the load it carried, its array answers at the DAVG measured")
    esxi.add_argument("--workload", default=DEFAULT_WORKLOAD, metavar="CMDLINE", help=f"the fio command line of each device without a capture (default: {DEFAULT_WORKLOAD!r})")
    esxi.add_argument("--host", default="esx1", help="the host's name in the scenario (default esx1)")
    esxi.add_argument("--duration", default="60s", help="the scenario's simulated time (default 60s)")
    esxi.add_argument("-o", "--output", required=True, type=Path, metavar="SCENARIO", help="the scenario file to write")
    linux = platforms.add_parser(
        "linux",
        help="from `multipath -ll` (dm-multipath), with `nvme list-subsys`, /sys/block settings and `iostat -x`",
        description="Reads a Linux host's `multipath -ll` listing (both generations) and/or its `nvme list-subsys`, and "
        "writes a scenario: a volume per map (and per NVM subsystem) with its path selector (iopolicy), the links and "
        "their ALUA (ANA) states, the arrays behind them, the queueing when no path is left, and a workload per volume. "
        "Every value names the file and line it came from, or says it is sanlab's default (docs/from-your-host.md).",
    )
    linux.add_argument("--multipath", type=Path, metavar="FILE", help="the output of `multipath -ll` (or `multipathd show topology`): dm-multipath maps")
    linux.add_argument("--nvme", type=Path, metavar="FILE", help="the output of `nvme list-subsys` (text or -o json; with a namespace, `nvme list-subsys /dev/nvme0n1`, it has the ANA states): NVMe native multipath")
    linux.add_argument("--sysfs", type=Path, metavar="FILE", help="the block devices' settings, `grep -H . /sys/block/*/queue/{nr_requests,scheduler,max_sectors_kb,rotational} /sys/block/*/device/queue_depth`: the device queue depth and the largest request")
    linux.add_argument("--iostat", type=Path, metavar="FILE", help="an `iostat -x` capture of the same host (e.g. `iostat -xty 5 120`): each volume then runs the load it carried, its array answers at the r_await/w_await measured")
    linux.add_argument("--workload", default=DEFAULT_WORKLOAD, metavar="CMDLINE", help=f"the fio command line of each volume without a capture (default: {DEFAULT_WORKLOAD!r})")
    linux.add_argument("--host", default="linux1", help="the host's name in the scenario (default linux1)")
    linux.add_argument("--duration", default="60s", help="the scenario's simulated time (default 60s)")
    linux.add_argument("-o", "--output", required=True, type=Path, metavar="SCENARIO", help="the scenario file to write")


def _files(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """The files named, and the listings among a folder's files (sorted, not recursive), with a
    note naming the folder's other files: a folder such as a support bundle's holds more than
    listings. A file named on its own must be a listing."""
    out: list[Path] = []
    skipped: list[str] = []
    for p in paths:
        if not p.is_dir():
            out.append(p)
            continue
        for f in sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith(".")):
            try:
                # Bounded: a support bundle's logs can be gigabytes; no listing passes 16 MiB.
                detect_kind(read_text(f, LISTING, errors="replace"), str(f))
                out.append(f)
            except (ListingError, InputFileError):
                skipped.append(f.name)
    notes = [f"not storage listings, skipped: {', '.join(skipped)}"] if skipped else []
    return out, notes


def _read_back(output: Path) -> Callable[[Path], None]:
    """The scenario written must be one `sanlab run` reads; its error names `output`, not the
    temporary file it is read from."""

    def check(written: Path) -> None:
        try:
            engine.validate(written)
        except engine.ScenarioError as exc:
            message = str(exc).replace(str(written), str(output))
            raise UserError(f"the scenario imported does not validate, so it was not written: {message}") from None

    return check


def _linux(args: argparse.Namespace) -> int:
    """`sanlab import linux`: the readers and the builder stand in `hostimport/linux/`."""
    from sanlab.hostimport.linux.multipath import read_multipath
    from sanlab.hostimport.linux.nvme import read_nvme
    from sanlab.hostimport.linux.scenario import build_scenario
    from sanlab.hostimport.linux.topology import from_multipath, from_nvme, merged

    if args.multipath is None and args.nvme is None:
        raise UserError("import linux: give --multipath FILE (`multipath -ll`), --nvme FILE (`nvme list-subsys`), or both")
    refuse_inputs(args.output, [p for p in (args.multipath, args.nvme, args.sysfs, args.iostat) if p is not None])
    notes: list[str] = []
    scsi = nvme = None
    if args.multipath is not None:
        maps, notes = read_multipath(args.multipath)
        scsi = from_multipath(maps)
    if args.nvme is not None:
        nvme = from_nvme(read_nvme(args.nvme), first_array=len(scsi.arrays) + 1 if scsi else 1)
    top = merged(scsi, nvme)
    keys = None
    if args.sysfs is not None:
        from sanlab.hostimport.linux.sysfs import read_sysfs, settings

        values, sysfs_notes = read_sysfs(args.sysfs)
        keys, said = settings(values, top, {v.name: v.active_disks for v in top.volumes})
        notes += [*sysfs_notes, *said]
    volume_loads = media = None
    if args.iostat is not None:
        from sanlab.hostimport.linux.iostat import read_iostat
        from sanlab.hostimport.linux.load import loads

        volume_loads, media, said = loads(top, read_iostat(args.iostat))
        notes += said
    title = "storage listings" + (" and iostat capture" if args.iostat is not None else "")
    imported = build_scenario(top, host=args.host, workload=args.workload, duration=args.duration, keys=keys, loads=volume_loads, media=media, title=title)
    replace_text(args.output, imported.toml, check=_read_back(args.output))
    for note in [*notes, *imported.notes]:
        print(f"note: {shown_name(note)}", file=sys.stderr)
    print(f"wrote {args.output}: run it with `sanlab run {args.output}`")
    return 0


def main(args: argparse.Namespace) -> int:
    if args.platform == "linux":
        return _linux(args)
    files, notes = _files(args.esxcli)
    if not files:
        raise UserError(f"no listing files in {', '.join(map(str, args.esxcli))}")
    refuse_inputs(args.output, [*files, *([args.esxtop] if args.esxtop is not None else [])])
    capture = read_capture(args.esxtop) if args.esxtop is not None else None
    imported = build(read_listings(files), host=args.host, workload=args.workload, duration=args.duration, capture=capture)
    replace_text(args.output, imported.toml, check=_read_back(args.output))
    for note in [*notes, *imported.notes]:
        print(f"note: {shown_name(note)}", file=sys.stderr)
    print(f"wrote {args.output}: run it with `sanlab run {args.output}`")
    return 0
