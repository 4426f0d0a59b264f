"""Reader for `iostat -x` (sysstat) captures of every header generation, into `DiskRow`s in
sanlab's units (sysstat's `iostat.c` and its CHANGES):

1. up to 11.5.6: `Device:  rrqm/s wrqm/s r/s w/s rkB/s wkB/s avgrq-sz avgqu-sz await r_await
   w_await svctm %util` (`rsec/s` without `-k`, `rMB/s` with `-m`; `r_await`/`w_await` from 9.1.x;
   `avgrq-sz` in 512-byte sectors);
2. 11.5.7 to 12.1.1: `Device r/s w/s rkB/s wkB/s rrqm/s wrqm/s %rrqm %wrqm r_await w_await aqu-sz
   rareq-sz wareq-sz svctm %util` (sizes in kB, no colon after `Device`);
3. 12.1.2 on: per direction `r/s rkB/s rrqm/s %rrqm r_await rareq-sz`, then `w…` and discards
   `d…`, `svctm` gone; 12.3.1 adds flushes (`f/s f_await`, kernels 5.5+), then `aqu-sz %util`.

Columns are found by name, so every mix of `-k`/`-m`, `-d`, `-t` and `-N` reads alike. A request's
size per direction is its throughput over its rate (kB = 1024 bytes, as iostat divides sectors by
2); the time per request is `r_await`/`w_await` (`await` for both where the generation has no
other); the requests in the device `aqu-sz` (`avgqu-sz`). Decimal commas of some locales (`7,79`)
are read as points. The banner (`Linux 5.4.0 (host) …`), `avg-cpu` blocks and `-t` timestamps are
skipped. The first report covers the time since boot unless `iostat -y` was used: it is left out
whenever there are several, and said (`DiskCapture.notes`).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from sanlab.hostimport.linux.records import LinuxInputError, Source
from sanlab.hostimport.records import CaptureNames, DiskCapture, DiskRow
from sanlab.hostimport.text import plain_lines, refuse_foreign
from sanlab.input_files import read_text

IOSTAT = "an `iostat -x` capture (sysstat)"
_BANNER = re.compile(r"^Linux \S+ \((?P<host>[^)]*)\)")
_CLOCK = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2}):(\d{2})(?: ?([AP]M))?")
_TIME = re.compile(r"^(\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}[ T])?\d{1,2}:\d{2}:\d{2}( ?[AP]M)?([+-]\d{4}|Z)?$")
# Throughput columns and their bytes per unit.
_RATE_UNITS = {"kB/s": 1024.0, "MB/s": 1024.0 * 1024.0, "sec/s": 512.0}
IOSTAT_NAMES = CaptureNames("aqu-sz", "r_await", "w_await", "report")
"""iostat's names for the figures `load.py` writes in comments and notes."""
_GENERATIONS = ("sysstat up to 11.5.6 (avgrq-sz in sectors)", "sysstat 11.5.7 to 12.1.1 (rareq-sz in kB, svctm)", "sysstat 12.1.2 and later (discards, no svctm)")


def _columns(line: str, where: Source) -> tuple[list[str], str]:
    """The header's column names (`Device` first) and its generation."""
    names = line.split()
    names[0] = names[0].rstrip(":")
    if names[0] != "Device":
        raise LinuxInputError(f"{where}: `{line.strip()[:80]}`: the device name is not the first column: capture without --pretty")
    if "tps" in names and "r/s" not in names:
        raise LinuxInputError(f"{where}: a header without r/s and w/s (`Device tps …`): this is `iostat` without -x; capture with `iostat -x` (extended statistics)")
    if "areq-sz" in names or "rqm/s" in names:
        raise LinuxInputError(f"{where}: the short extended header (`iostat -x -s`): capture with `iostat -x` without -s, for the reads and writes apart")
    missing = [c for c in ("r/s", "w/s") if c not in names]
    rate = next((u for u in _RATE_UNITS if f"r{u}" in names and f"w{u}" in names), None)
    queue = "aqu-sz" if "aqu-sz" in names else "avgqu-sz" if "avgqu-sz" in names else None
    if missing or rate is None or queue is None or not ({"r_await", "w_await"} <= set(names) or "await" in names):
        raise LinuxInputError(f"{where}: the header lacks {', '.join(missing + ([] if rate else ['rkB/s/wkB/s']) + ([] if queue else ['aqu-sz']) + ([] if 'await' in names or 'r_await' in names else ['r_await/w_await'])) }: expected `iostat -x`'s columns")
    generation = _GENERATIONS[0] if "avgqu-sz" in names else _GENERATIONS[2] if "d/s" in names or "svctm" not in names else _GENERATIONS[1]
    return names, generation


def _seconds(line: str) -> float | None:
    """The time of day of an `iostat -t` line in seconds (its date left out), None without one."""
    m = _CLOCK.search(line)
    if m is None:
        return None
    hours = int(m.group(1)) % 12 + (12 if m.group(4) == "PM" else 0) if m.group(4) else int(m.group(1))
    return float(hours * 3600 + int(m.group(2)) * 60 + int(m.group(3)))


def _elapsed(times: list[float | None]) -> list[float] | None:
    """Seconds from the first report, a day added at each wrap past midnight; None unless every
    report has its time."""
    if not times or any(t is None for t in times):
        return None
    out, day, last = [], 0.0, None
    for t in times:
        assert t is not None
        if last is not None and t + day < last:
            day += 86400.0
        last = t + day
        out.append(last)
    return [t - out[0] for t in out]


def _number(cell: str, comma: bool, where: Source, column: str, device: str) -> float:
    text = cell.replace(",", ".") if comma else cell
    try:
        value = float(text)
    except ValueError:
        raise LinuxInputError(f"{where}: {device} {column} is `{cell}`: expected a number as iostat prints it (capture without --human)") from None
    if not math.isfinite(value) or value < 0:
        raise LinuxInputError(f"{where}: {device} {column} is `{cell}`: expected a number of at least 0")
    return value


def _row(cells: list[str], names: list[str], comma: bool, where: Source) -> DiskRow:
    if len(cells) != len(names):
        raise LinuxInputError(f"{where}: {len(cells)} cells for the header's {len(names)} columns: the line is cut short or from another header")
    device = cells[0]
    v = {name: _number(cell, comma, where, name, device) for name, cell in zip(names[1:], cells[1:], strict=True)}
    # The columns `_columns` found in pairs: a rate unit with both directions, the awaits apart
    # only when both are there (a header of r_await and await, without w_await, was a KeyError).
    unit = next(u for u in _RATE_UNITS if f"r{u}" in v and f"w{u}" in v)
    reads, writes = v["r/s"], v["w/s"]
    rbytes, wbytes = v[f"r{unit}"] * _RATE_UNITS[unit], v[f"w{unit}"] * _RATE_UNITS[unit]
    r_await, w_await = (v["r_await"], v["w_await"]) if "r_await" in v and "w_await" in v else (v["await"], v["await"])
    return DiskRow(
        device, reads, writes, rbytes / reads if reads > 0 else math.nan, wbytes / writes if writes > 0 else math.nan,
        r_await, w_await, v["aqu-sz"] if "aqu-sz" in v else v["avgqu-sz"], where,
    )


def parse_iostat(text: str, file: str = "<text>") -> DiskCapture:
    """The capture's reports (the first left out when there are several) and its notes."""
    lines = plain_lines(text)
    refuse_foreign(lines, file, IOSTAT, "--iostat", LinuxInputError)
    if next((line.strip() for line in lines if line.strip()), "").startswith("{"):
        raise LinuxInputError(f"{file}:1: iostat's JSON (-o JSON): give the text output of `iostat -x`")
    capture = DiskCapture(file, None, "", IOSTAT_NAMES)
    names: list[str] | None = None
    header_at: Source | None = None
    comma: bool | None = None
    cpu_values = False
    reports: list[list[DiskRow]] = []
    # The -t time of each report (None where it has none), and the last time line seen.
    times: list[float | None] = []
    clock: float | None = None
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        where = Source(file, number)
        if not stripped:
            names, cpu_values = None, False
            continue
        banner = _BANNER.match(stripped)
        if banner:
            capture.host = banner.group("host")
            continue
        if stripped.startswith("avg-cpu:"):
            cpu_values = True
            continue
        if _TIME.match(stripped):
            cpu_values, clock = False, _seconds(stripped)
            continue
        if cpu_values:
            cpu_values = False
            continue
        if stripped.startswith("Device") or stripped.split()[-1] == "Device":
            found, generation = _columns(stripped, where)
            if capture.generation and generation != capture.generation:
                raise LinuxInputError(f"{where}: a header of {generation} after ones of {capture.generation} ({header_at}): two captures in one file?")
            capture.generation, names, header_at = generation, found, where
            reports.append([])
            times.append(clock)
            clock = None
            continue
        if names is None:
            raise LinuxInputError(f"{where}: `{stripped[:80]}` is not a line of {IOSTAT}: expected the `Linux …` banner, `avg-cpu:`, a `Device …` header or a device's row after one")
        cells = stripped.split()
        if comma is None:
            comma = any(re.fullmatch(r"\d+,\d+", c) for c in cells[1:])
            if comma:
                capture.notes.append(f"{file}: numbers with decimal commas (as some locales print them), read as points")
        reports[-1].append(_row(cells, names, comma, where))
    times = [t for r, t in zip(reports, times, strict=True) if r]
    reports = [r for r in reports if r]
    if not reports:
        raise LinuxInputError(f"{file}:1: no device report (a `Device …` header and its rows): expected {IOSTAT}")
    if len(reports) > 1:
        capture.notes.append(f"{file}: the first of {len(reports)} reports left out: it covers the time since boot unless iostat ran with -y (with -y, one interval is lost)")
        reports, times = reports[1:], times[1:]
    else:
        capture.notes.append(f"{file}: a single report, used as it is: without -y it is the average since boot, not a measured interval")
    capture.reports = reports
    capture.times_s = _elapsed(times)
    return capture


def read_iostat(path: Path) -> DiskCapture:
    """The `iostat -x` capture in `path`."""
    return parse_iostat(read_text(path, IOSTAT), str(path))
