"""Reader for `typeperf "\\PhysicalDisk(*)\\*"` captures (PDH-CSV 4.0, as typeperf writes with
`-f CSV`, the default): each physical disk's figures per sample, read into the rows the Linux
import reads `iostat -x` into (`hostimport/records.DiskRow`), so that one builder
(`hostimport/load.py`) makes each volume's load and its array's speed from either.

The layout is esxtop's (the PDH-CSV reader of `hostimport/esxtop.py` reads both): a header of
counter paths `\\\\HOST\\PhysicalDisk(2 E:)\\Disk Reads/sec`, then a row per sample, every value
quoted; typeperf starts its output with an empty line, leaves a rate's first sample blank (`" "`),
and ends with `Exiting, please wait...` and `The command completed successfully.` when its
output is redirected: all skipped, the status lines said. `_Total` is the sum of the others and
is not read. Per disk and sample (Microsoft, PhysicalDisk counters; docs/references.md):

- rate: `Disk Reads/sec`, `Disk Writes/sec`; request size: `Avg. Disk Bytes/Read`, `/Write`;
- time per request: `Avg. Disk sec/Read`, `/Write`, in seconds (read as ms): from the disk
  driver's queue to completion, the array's answer and any wait below the disk at that load, as
  iostat's `r_await` is;
- requests in the disk: `Avg. Disk Queue Length`.

A sample of a disk with a counter blank is left out (said); a counter missing from the header is
one error naming it (capture every counter of the disks), and so is a value below zero.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from sanlab.hostimport.esxtop import Capture, PdhTool, read_capture
from sanlab.hostimport.records import CaptureNames, DiskCapture, DiskRow
from sanlab.hostimport.windows.records import Source, WindowsInputError

GROUP = "PhysicalDisk"
TOTAL = "_Total"
COUNTERS = ("Disk Reads/sec", "Disk Writes/sec", "Avg. Disk Bytes/Read", "Avg. Disk Bytes/Write", "Avg. Disk sec/Read", "Avg. Disk sec/Write", "Avg. Disk Queue Length")
CAPTURE = 'typeperf "\\PhysicalDisk(*)\\*" -si 5 -sc 120 -o disks.csv'
TYPEPERF = PdhTool(
    f"a typeperf capture of the disks ({CAPTURE})",
    "typeperf's CSV header",
    "a typeperf capture (PDH-CSV 4.0)",
    f"Capture every counter of the disks: {CAPTURE} (on a Windows in English: the counters' names are localised).",
    re.compile(r"^(Exiting, please wait\.\.\.|The command completed successfully\.)$"),
)
NAMES = CaptureNames("Avg. Disk Queue Length", "Avg. Disk sec/Read", "Avg. Disk sec/Write", "sample")


def disk_number(instance: str) -> int | None:
    """The system disk number of a PhysicalDisk instance (`2 E:` → 2), None for `_Total` or an
    instance without one."""
    first = instance.split(" ", 1)[0]
    return int(first) if first.isdigit() else None


def _rows(capture: Capture, instance: str, blanks: dict[str, int]) -> list[DiskRow | None]:
    series = capture.series[(GROUP, instance)]
    missing = [c for c in COUNTERS if c not in series]
    if missing:
        raise WindowsInputError(f"{capture.path}: line 1: {GROUP}({instance}) has no {', '.join(missing)}: capture every counter of the disks ({CAPTURE}; on a Windows in English: the counters' names are localised)")
    values = np.column_stack([series[c] for c in COUNTERS])
    negative = np.argwhere(values < 0)
    if negative.size:
        k, c = negative[0]
        raise WindowsInputError(f"{capture.path}: sample {k + 1} ({capture.times_utc[k]} UTC): {GROUP}({instance})\\{COUNTERS[c]} is {values[k, c]:g}: expected a rate, size, time or queue of at least 0")
    out: list[DiskRow | None] = []
    blank = 0
    for k, (reads, writes, rsize, wsize, rsec, wsec, queue) in enumerate(values.tolist()):
        if any(math.isnan(v) for v in (reads, writes, rsize, wsize, rsec, wsec, queue)):
            blank += 1
            out.append(None)
            continue
        out.append(DiskRow(instance, reads, writes, rsize if reads > 0 else math.nan, wsize if writes > 0 else math.nan, rsec * 1000.0, wsec * 1000.0, queue, Source(str(capture.path), k + 2)))
    if blank:
        blanks[instance] = blank
    return out


def read_typeperf(path: Path) -> DiskCapture:
    """The disks' figures of a typeperf capture, a report per sample, and the capture's host."""
    capture = read_capture(path, {GROUP: frozenset(COUNTERS)}, TYPEPERF)
    notes = list(capture.notes)
    instances = [i for i in capture.instances(GROUP) if i != TOTAL]
    skipped = [i for i in instances if disk_number(i) is None]
    if skipped:
        notes.append(f"{path}: {GROUP} instances without a disk number, not read: {', '.join(skipped)}")
    blanks: dict[str, int] = {}
    rows = {i: _rows(capture, i, blanks) for i in instances if disk_number(i) is not None}
    if blanks:
        said = ", ".join(f"{i} {n}" for i, n in blanks.items())
        notes.append(f"{path}: samples with a blank counter left out (typeperf leaves a rate's first sample blank), of {capture.samples}: {said}")
    if not rows:
        raise WindowsInputError(f"{path}: line 1: no disk but {TOTAL} in the capture: expected {GROUP}(N ...) columns, one set per disk ({CAPTURE})")
    every = [[r for r in (rows[i][k] for i in rows) if r is not None] for k in range(capture.samples)]
    kept = [k for k, r in enumerate(every) if r]
    reports = [every[k] for k in kept]
    if not reports:
        raise WindowsInputError(f"{path}: no sample with every counter of a disk: a capture of one sample has only blank rates; capture several ({CAPTURE})")
    times = [float(capture.t_s[k] - capture.t_s[kept[0]]) for k in kept]
    return DiskCapture(str(path), capture.host, "typeperf PDH-CSV", NAMES, reports, notes, times)
