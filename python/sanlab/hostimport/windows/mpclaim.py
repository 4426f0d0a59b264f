"""Reader for the Microsoft DSM's `mpclaim` listings, in any mix: `mpclaim -s -d` (the summary, a
row per MPIO disk: its system disk, load-balance policy code and DSM) and `mpclaim -s -d N` (one
disk: its policy by name, its access, the controlling DSM, serial number, and a line per path with
its state, SCSI address and weight, and, for ALUA disks, a `TPG_State` line). A file may hold
several outputs pasted one after another, the console's prompt lines (`PS C:\\> mpclaim -s -d 2`)
included; `--mpclaim` may name several files.

The policy codes are mpclaim's (`FOO RR RRWS LQD WP LB`, `VS` for a vendor DSM's own), the
names those `mpclaim -s -d N` prints (Microsoft, MPIO policies; docs/references.md,
"windows-mpclaim"). Bad input is one `WindowsInputError` naming the file and line: another tool's
output, a line of neither listing, a listing cut short (fewer paths than its header counts, a
TPG line without its path), a policy or state mpclaim does not print (with the nearest), a disk
listed twice differently, `Element not found.` (a disk number mpclaim does not know)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from sanlab.hostimport.text import nearest, plain_lines, refuse_foreign
from sanlab.hostimport.windows.records import (
    MpclaimListing,
    MpioDisk,
    MpioPath,
    MpioSummary,
    Source,
    WindowsInputError,
)
from sanlab.input_files import read_text

MPCLAIM = "the output of `mpclaim -s -d` and/or `mpclaim -s -d N` (Windows MPIO)"
OPTION = "`sanlab import windows --mpclaim`"

# The load-balance policy codes of `mpclaim -s -d` and the names `mpclaim -s -d N` prints.
POLICIES = {
    "FOO": "Fail Over Only",
    "RR": "Round Robin",
    "RRWS": "Round Robin with Subset",
    "LQD": "Least Queue Depth",
    "WP": "Weighted Paths",
    "LB": "Least Blocks",
}
VENDOR = "VS"
POLICY_CODES = {name.lower(): code for code, name in POLICIES.items()} | {"vendor specific": VENDOR}
PATH_STATES = ("Active/Optimized", "Active/Unoptimized", "Standby", "Unavailable")
MICROSOFT_DSM = "Microsoft DSM"

_SKIP = re.compile(r"^(PS )?[A-Za-z]:\\[^>]*>|^For more information about a particular disk|^-{10,}$|^MPIO Disk\s+System Disk\s+LB Policy\s+DSM Name$|^Path ID\s+State\s+SCSI Address\s+Weight$")
_SUMMARY = re.compile(r"^MPIO Disk(?P<mpio>\d+)\s+Disk (?P<disk>\d+)\s+(?P<policy>\S+)\s+(?P<dsm>\S.*)$")
_HEADER = re.compile(r"^MPIO Disk(?P<mpio>\d+): (?P<count>\d+) Paths?, (?P<policy>[^,]+?)(?:, (?P<access>[^,]+))?$")
_FIELD = re.compile(r"^(?P<key>Controlling DSM|SN|Supported Load Balance Policies)\s*:\s*(?P<value>.*)$")
_PATH = re.compile(r"^\*?\s*(?P<id>[0-9A-Fa-f]{16})\s+(?P<state>\S+)\s+(?P<port>\d+)\|(?P<bus>\d+)\|(?P<target>\d+)\|(?P<lun>\d+)\s+(?P<weight>\d+)$")
_TPG = re.compile(r"^\*?\s*TPG_State\s*:\s*(?P<state>\S+)\s*,\s*TPG_Id\s*:\s*(?P<id>\d+)\s*(?:,.*)?$")


def _state(value: str, where: Source, what: str) -> str:
    if value not in PATH_STATES:
        raise WindowsInputError(f"{where}: {what} `{value}` is not one mpclaim prints (known: {', '.join(PATH_STATES)}; nearest: {nearest(value, PATH_STATES)})")
    return value


def _policy_code(code: str, where: Source) -> str:
    if code not in POLICIES and code != VENDOR:
        known = [*POLICIES, VENDOR]
        raise WindowsInputError(f"{where}: LB Policy `{code}` is not one mpclaim prints (known: {' '.join(known)}; nearest: {nearest(code, known)})")
    return code


class _Reader:
    """One file's lines into the listing; `disk` is the `mpclaim -s -d N` block being read."""

    def __init__(self, file: str, listing: MpclaimListing) -> None:
        self.file = file
        self.listing = listing
        self.disk: MpioDisk | None = None

    def close_disk(self) -> None:
        disk, self.disk = self.disk, None
        if disk is None:
            return
        if len(disk.paths) != disk.path_count:
            raise WindowsInputError(f"{disk.source}: MPIO Disk{disk.mpio_disk} counts {disk.path_count} paths, {len(disk.paths)} listed: the listing is cut short; expected a line per path, as `0000000077050007 Active/Optimized   005|000|007|001   0`")
        seen = self.listing.disks.get(disk.mpio_disk)
        if seen is not None:
            raise WindowsInputError(f"{disk.source}: MPIO Disk{disk.mpio_disk} is listed twice (first at {seen.source}): expected each disk's `mpclaim -s -d N` once, of one host")
        self.listing.disks[disk.mpio_disk] = disk

    def summary(self, m: re.Match[str], where: Source) -> None:
        row = MpioSummary(int(m["mpio"]), int(m["disk"]), _policy_code(m["policy"], where), m["dsm"].strip(), where)
        seen = self.listing.summary.get(row.mpio_disk)
        if seen is not None and (seen.system_disk, seen.policy, seen.dsm) != (row.system_disk, row.policy, row.dsm):
            raise WindowsInputError(f"{where}: MPIO Disk{row.mpio_disk} is Disk {row.system_disk} ({row.policy}, {row.dsm}) here and Disk {seen.system_disk} ({seen.policy}, {seen.dsm}) at {seen.source}: expected the summaries of one host")
        self.listing.summary.setdefault(row.mpio_disk, row)

    def header(self, m: re.Match[str], where: Source) -> None:
        self.close_disk()
        name = m["policy"].strip()
        if name.lower() not in POLICY_CODES:
            raise WindowsInputError(f"{where}: policy `{name}` is not one mpclaim prints (known: {', '.join(POLICIES.values())}; nearest: {nearest(name, list(POLICIES.values()))})")
        self.disk = MpioDisk(int(m["mpio"]), int(m["count"]), name, m["access"], where)

    def line(self, text: str, where: Source) -> None:
        if (m := _SUMMARY.match(text)) and self.disk is None:
            self.summary(m, where)
        elif m := _HEADER.match(text):
            self.header(m, where)
        elif self.disk is not None and (m := _FIELD.match(text)):
            if m["key"] == "Controlling DSM":
                self.disk.dsm = m["value"].strip()
            elif m["key"] == "SN":
                self.disk.serial = m["value"].strip() or None
        elif self.disk is not None and (m := _PATH.match(text)):
            self.disk.paths.append(MpioPath(m["id"], _state(m["state"], where, "path state"), int(m["port"]), int(m["bus"]), int(m["target"]), int(m["lun"]), int(m["weight"]), where))
        elif self.disk is not None and (m := _TPG.match(text)):
            if not self.disk.paths:
                raise WindowsInputError(f"{where}: a TPG_State line before any path of MPIO Disk{self.disk.mpio_disk}: the listing is cut short or reordered; expected it under its path's line")
            last = self.disk.paths[-1]
            self.disk.paths[-1] = MpioPath(last.path_id, last.state, last.port, last.bus, last.target, last.lun, last.weight, last.source, _state(m["state"], where, "TPG_State"), int(m["id"]))
        elif _SUMMARY.match(text):
            self.close_disk()
            self.line(text, where)
        else:
            raise WindowsInputError(
                f"{where}: `{text[:80]}` is not a line of {MPCLAIM}: expected a summary row (`MPIO Disk0   Disk 2   RR   Microsoft DSM`), "
                "a disk's header (`MPIO Disk0: 04 Paths, Round Robin, Symmetric Access`) or one of its paths (`0000000077050007 Active/Optimized   005|000|007|001   0`)"
            )


def parse_mpclaim(text: str, file: str = "<text>", listing: MpclaimListing | None = None) -> MpclaimListing:
    """The summary rows and disks of one file's `mpclaim` outputs, added to `listing`."""
    listing = listing if listing is not None else MpclaimListing()
    lines = plain_lines(text)
    refuse_foreign(lines, file, MPCLAIM, OPTION, WindowsInputError)
    reader = _Reader(file, listing)
    for number, line in enumerate(lines, start=1):
        text_line = line.strip()
        where = Source(file, number)
        if not text_line or _SKIP.match(text_line):
            continue
        if text_line.startswith("Element not found"):
            raise WindowsInputError(f"{where}: mpclaim printed `{text_line}`: no MPIO disk has the number asked; `mpclaim -s -d N` takes the MPIO disk number the summary (`mpclaim -s -d`) lists")
        if text_line.startswith("No MPIO disks are present"):
            listing.notes.append(f"{where}: mpclaim says no MPIO disks are present")
            continue
        reader.line(text_line, where)
    reader.close_disk()
    return listing


def read_mpclaim(paths: Sequence[Path]) -> MpclaimListing:
    """The `mpclaim` outputs in `paths`, one listing; a file holding none is an error."""
    listing = MpclaimListing()
    for path in paths:
        before = (len(listing.summary), len(listing.disks), len(listing.notes))
        parse_mpclaim(read_text(path, MPCLAIM), str(path), listing)
        if (len(listing.summary), len(listing.disks), len(listing.notes)) == before:
            raise WindowsInputError(f"{path}:1: no MPIO disk in the file: expected {MPCLAIM}")
    return listing
