"""`sanlab import esxi`: a host's esxcli storage listings (and an esxtop capture) in, a scenario
out; `sanlab import linux`: a Linux host's `multipath -ll` (and `nvme list-subsys`, its block
queue settings, an `iostat -x` capture) in, a scenario out; `sanlab import windows`: a Windows
host's `mpclaim` listings (and a typeperf capture) in, a scenario out (docs/from-your-host.md)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from sanlab import engine
from sanlab.commands import options
from sanlab.errors import UserError
from sanlab.export.files import refuse_inputs, replace_text
from sanlab.formatting import shown_name
from sanlab.hostimport.esxcli import LISTING, ListingError, detect_kind, read_listings
from sanlab.hostimport.esxtop import Capture, read_capture
from sanlab.hostimport.scenario import DEFAULT_WORKLOAD, Imported, build_cluster
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
    esxi.add_argument("--esxcli", nargs="+", action="append", required=True, type=Path, metavar="FILE", help="one host's listing files, or a folder of them; repeat it once per host of a cluster")
    esxi.add_argument("--esxtop", action="append", type=Path, metavar="CSV", help="an esxtop batch capture (esxtop -b) of one of the hosts: each device then runs the load it carried, its array answers at the DAVG measured; repeat it once per host, matched to the host by the capture's host name")
    esxi.add_argument("--workload", default=DEFAULT_WORKLOAD, metavar="CMDLINE", help=f"the fio command line of each device without a capture (default: {DEFAULT_WORKLOAD!r})")
    esxi.add_argument("--host", action="append", metavar="NAME", help="the host's name in the scenario (default esx1, esx2, ...); repeat it once per --esxcli")
    esxi.add_argument("--duration", default="60s", help="the scenario's simulated time (default 60s)")
    esxi.add_argument("-o", "--output", required=True, type=Path, metavar="SCENARIO", help="the scenario file to write")
    _add_calibrate(esxi, "--esxtop")
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
    _add_calibrate(linux, "--iostat")
    windows = platforms.add_parser(
        "windows",
        help="from `mpclaim -s -d` and `mpclaim -s -d N` (Windows MPIO, Microsoft DSM), with a `typeperf \\PhysicalDisk(*)\\*` capture",
        description="Reads a Windows host's `mpclaim -s -d` summary and each MPIO disk's `mpclaim -s -d N` (in one file "
        "or several, recognised by their content) and writes a scenario: a volume per MPIO disk with its load-balance "
        "policy as sanlab's mpio_* path selector, the links and their ALUA states, the arrays behind them, and a "
        "workload per volume. With --typeperf, each volume runs the load its disk carried and its array answers at "
        "the Avg. Disk sec/Read and /Write measured. Every value names the file and line it came from, or says it is "
        "sanlab's default (docs/from-your-host.md).",
    )
    windows.add_argument("--mpclaim", nargs="+", required=True, type=Path, metavar="FILE", help="the output of `mpclaim -s -d` and of `mpclaim -s -d N` for each MPIO disk N, in one file (pasted one after another) or several")
    windows.add_argument("--typeperf", type=Path, metavar="CSV", help='a capture of the disks\' counters, `typeperf "\\PhysicalDisk(*)\\*" -si 5 -sc 120 -o disks.csv`: each volume then runs the load its disk carried, its array answers at the Avg. Disk sec/Read and /Write measured')
    windows.add_argument("--workload", default=DEFAULT_WORKLOAD, metavar="CMDLINE", help=f"the fio command line of each volume without a capture (default: {DEFAULT_WORKLOAD!r})")
    windows.add_argument("--host", help="the host's name in the scenario (default: the capture's host name, else win1); a capture naming another host is refused")
    windows.add_argument("--duration", default="60s", help="the scenario's simulated time (default 60s)")
    windows.add_argument("-o", "--output", required=True, type=Path, metavar="SCENARIO", help="the scenario file to write")
    _add_calibrate(windows, "--typeperf")


def _add_calibrate(parser: argparse.ArgumentParser, capture: str) -> None:
    parser.add_argument(
        "--calibrate", action="store_true",
        help=f"with {capture}: also fit each measured array's service time (the direction most of its requests took) so that "
        "the scenario's VMs run at the capture's IOPS and latency (sanlab calibrate), writing SCENARIO's measured points beside it (NAME.points.csv) and the "
        "fitted scenario (NAME.calibrated.toml, based on SCENARIO)",
    )
    parser.add_argument("--generations", type=options.positive, default=8, metavar="N", help="with --calibrate: the fit's generations at most (default: 8)")
    parser.add_argument("--popsize", type=options.positive, default=5, metavar="N", help="with --calibrate: candidates per generation per free value (default: 5)")
    parser.add_argument("--fit-duration", default="5s", metavar="D", help="with --calibrate: the simulated time of each of the fit's runs (default: 5s)")


def _calibration_files(output: Path) -> tuple[Path, Path]:
    """The measured points and the calibrated scenario `--calibrate` writes beside `output`."""
    return output.with_name(f"{output.stem}.points.csv"), output.with_name(f"{output.stem}.calibrated.toml")


def _calibrate(args: argparse.Namespace, imported: Imported, capture: str, captured: list[Path]) -> None:
    """`--calibrate`: the capture's VM figures (IOPS, mean latency) as one measured point, each
    measured array's service time in the direction most of its requests took free within a third
    and three times the value the import set (log scale; one latency per VM cannot tell the two
    directions apart, so the other stays as measured), fitted with `sanlab calibrate`'s machinery
    in this process; the tables, then the two files."""
    from sanlab.calibrate import Calibration, calibrate, local_mapper, read_points
    from sanlab.calibration.inputs import parse_free
    from sanlab.commands.calibrate import not_converged, points_table, values_table, write_calibrated
    from sanlab.commands.terminal import console

    points_file, calibrated = _calibration_files(args.output)
    if not imported.measured or not imported.service_us:
        raise UserError(f"import {args.platform} --calibrate: the capture gave no volume's load and no array's service time to fit ({capture}): nothing to calibrate")
    columns = ["label", *(f"vm:{vm}:{figure}" for vm in imported.measured for figure in ("iops", "lat_ms"))]
    cells = [f"the capture{'s' if len(captured) > 1 else ''} {' '.join(p.name for p in captured)}", *(f"{value:.6g}" for vm in imported.measured for value in imported.measured[vm])]
    replace_text(points_file, ",".join(columns) + "\n" + ",".join(cells) + "\n", check=read_points)
    free = tuple(parse_free(f"{key}={us / 3:.1f}us..{us * 3:.1f}us:log") for key, us in imported.service_us.items())
    points = tuple(read_points(points_file))
    scenario = str(args.output.resolve())
    try:  # the seed the scenario's runs take (its `[run] seed`, else the engine's), and a first check
        seed = int(engine.run(scenario, None, [f"run.duration={args.fit_duration}"])["variants"][0]["seed"])
    except engine.ScenarioError as exc:
        raise UserError(f"import {args.platform} --calibrate: --fit-duration {args.fit_duration}: {exc}") from None
    cal = Calibration(scenario=scenario, free=free, points=points, seed=seed, sets=(f"run.duration={args.fit_duration}",), generations=args.generations, popsize=args.popsize)
    print(f"calibrating {', '.join(p.key for p in free)} on {points_file} ({len(free) * args.popsize} candidates × {args.generations} generations at most)", file=sys.stderr, flush=True)
    fit = calibrate(cal, local_mapper)
    for table in (points_table(fit), values_table(fit)):
        console().print(table)
    write_calibrated(fit, args.output, calibrated, points_file, args.argv)
    for warning in not_converged(fit):
        print(f"warning: {shown_name(warning)}", file=sys.stderr)
    print(f"calibrated scenario: {calibrated} (base: {args.output}); measured points: {points_file}")


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
    from sanlab.hostimport.linux.scenario import import_linux

    inputs = [p for p in (args.multipath, args.nvme, args.sysfs, args.iostat) if p is not None]
    _refuse(args, inputs, args.iostat, "--iostat")
    imported = import_linux(args.multipath, args.nvme, args.sysfs, args.iostat, host=args.host, workload=args.workload, duration=args.duration)
    return _write(args, imported, "--iostat", [args.iostat] if args.iostat else [])


def _windows(args: argparse.Namespace) -> int:
    """`sanlab import windows`: the readers and the builder stand in `hostimport/windows/`."""
    from sanlab.hostimport.windows.scenario import import_windows

    inputs = [*args.mpclaim, *([args.typeperf] if args.typeperf is not None else [])]
    _refuse(args, inputs, args.typeperf, "--typeperf")
    imported = import_windows(args.mpclaim, args.typeperf, host=args.host, workload=args.workload, duration=args.duration)
    return _write(args, imported, "--typeperf", [args.typeperf] if args.typeperf else [])


def _refuse(args: argparse.Namespace, inputs: list[Path], capture: Path | None, option: str) -> None:
    """No output is an input; --calibrate needs the capture, and its files are no input either."""
    if args.calibrate and capture is None:
        raise UserError(f"import {args.platform} --calibrate: give the capture ({option} FILE): its load and latency are what the fit matches")
    refuse_inputs(args.output, inputs)
    if args.calibrate:
        for path in _calibration_files(args.output):
            refuse_inputs(path, inputs, "--calibrate (the file it writes beside -o)")


def _write(args: argparse.Namespace, imported: Imported, capture: str, captured: list[Path]) -> int:
    """The scenario written (and read back), the notes, and with --calibrate the fit."""
    replace_text(args.output, imported.toml, check=_read_back(args.output))
    for note in imported.notes:
        print(f"note: {shown_name(note)}", file=sys.stderr)
    print(f"wrote {args.output}: run it with `sanlab run {args.output}`")
    if args.calibrate:
        _calibrate(args, imported, capture, captured)
    return 0


def _host_names(args: argparse.Namespace) -> list[str]:
    """The hosts' names: --host once per --esxcli, else esx1, esx2, ..."""
    count = len(args.esxcli)
    if args.host is None:
        return [f"esx{k + 1}" for k in range(count)]
    if len(args.host) != count:
        raise UserError(f"import esxi: {len(args.host)} --host for {count} --esxcli: give --host once per --esxcli (one host's listings each), in the same order, or not at all (esx1, esx2, ...)")
    twice = sorted({h for h in args.host if args.host.count(h) > 1})
    if twice:
        raise UserError(f"import esxi: --host {twice[0]} is given twice: each host needs its own name")
    return list(args.host)


def _captures(paths: list[Path], hosts: list[str], named: bool) -> tuple[list[Capture | None], list[str]]:
    """Each host's capture: by the host name in the capture's counter paths, else, when the hosts
    were not named (--host) and no capture names any of them, in the order given (with a note).
    One host and one capture: that one."""
    by_host: list[Capture | None] = [None] * len(hosts)
    if not paths:
        return by_host, []
    captures = [read_capture(p) for p in paths]
    if len(hosts) == 1 and len(captures) == 1:
        return captures, []
    if len(captures) > len(hosts):
        raise UserError(f"import esxi: {len(captures)} --esxtop for {len(hosts)} hosts ({', '.join(hosts)}): give at most one capture per host")
    by_name = [c for c in captures if c.host in hosts]
    if not named and not by_name:
        notes = [f"{c.path}: its host {c.host!r} is none of {', '.join(hosts)}: taken as {h}'s capture, by order" for c, h in zip(captures, hosts[: len(captures)], strict=True)]
        return [*captures, *[None] * (len(hosts) - len(captures))], notes
    for c in captures:
        if c.host not in hosts:
            raise UserError(f"{c.path}: line 1: the capture's host {c.host!r} is none of the hosts imported ({', '.join(hosts)}): give --host the capture's host name, or leave it out")
        k = hosts.index(c.host)
        if by_host[k] is not None:
            raise UserError(f"{c.path}: line 1: a second capture of host {c.host} (the first: {by_host[k].path}): give one capture per host")
        by_host[k] = c
    return by_host, []


def main(args: argparse.Namespace) -> int:
    if args.platform == "linux":
        return _linux(args)
    if args.platform == "windows":
        return _windows(args)
    hosts = _host_names(args)
    listed: list[list[Path]] = []
    notes: list[str] = []
    for group in args.esxcli:
        files, said = _files(group)
        if not files:
            raise UserError(f"no listing files in {', '.join(map(str, group))}")
        listed.append(files)
        notes += said
    captures = args.esxtop or []
    _refuse(args, [*(f for files in listed for f in files), *captures], captures[0] if captures else None, "--esxtop")
    by_host, said = _captures(captures, hosts, named=args.host is not None)
    notes += said
    imported = build_cluster([(h, read_listings(files), c) for h, files, c in zip(hosts, listed, by_host, strict=True)], workload=args.workload, duration=args.duration)
    return _write(args, replace(imported, notes=[*notes, *imported.notes]), "--esxtop", captures)
