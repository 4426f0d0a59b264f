"""esxtop batch captures (`esxtop -b`) read for import: the storage counters of one host as time
series, streamed row by row so a capture of hundreds of MB and thousands of columns never sits in
memory whole.

The layout is Windows perfmon's "PDH-CSV 4.0", as esxtop writes it and as `sanlab run
--esxtop-csv` writes it (`sanlab.export.esxtop`):

- the first header cell is `(PDH-CSV 4.0) (<time zone>)(<bias>)`, e.g. `(PDH-CSV 4.0) (UTC)(0)`
  or `(PDH-CSV 4.0) (Pacific Standard Time)(480)`. The bias is perfmon's, in minutes: UTC = local
  time + bias, so 480 is UTC-8. (esxtop_viewer.py reads it with the opposite sign; we follow
  perfmon, whose bias Windows defines so.) A header cell without the zone is read as UTC, with a
  note;
- every other header cell is a counter path `\\\\<host>\\<Group>(<instance>)\\<Counter>` or
  `\\\\<host>\\<Group>\\<Counter>`. The counter is what follows the last backslash; the group what
  precedes the first parenthesis; the instance everything between that parenthesis and the
  object's last one, so instances holding parentheses (`SQL02 (df09cdf2-...):scsi0:0`),
  commas or backslashes are kept whole (the csv module undoes the quoting);
- each row: a time `MM/DD/YYYY HH:MM:SS` (fractions of a second and a time without seconds, as a
  spreadsheet saves it, are accepted), then one value per column, quoted or not; an empty cell is
  a missing value (NaN). A value read is a finite number of at most `MAX_VALUE` in magnitude:
  `nan`, `inf` and `1e400` are errors at their cell, so that means and products of the values
  stay finite.

The file is read through `sanlab.input_files`: a regular file (a FIFO or `/dev/zero` is refused
before it is opened), gunzipped within its bounds, each line's length and cells counted before the
line is split.

Only the columns of the storage groups in `wanted` (by default `WANTED`) with a counter it names
are converted; all others are skipped unread beyond the csv module's split. What the capture has
and is not used is listed once (`Capture.unused_counters`, `Capture.note()`), never dropped
silently.

Bad input raises one `CaptureError` (or `InputFileError` for the file itself) naming the file,
the line (and column where there is one) and what was expected: another tool's CSV (no PDH header), a row with too few or too many cells, a
value that is not a number in a column read, a time that is not esxtop's, a capture without any
storage group (the message lists the groups it has), one naming more than one host.

A truncated last row, the usual end of a capture whose esxtop was interrupted or whose copy was
cut short, is dropped with a note naming its line rather than refused: every row before it is
whole. It is recognised by having fewer cells than the header or by the file not ending in a line
break (esxtop ends every row with one). A short row anywhere else is an error.

Why the csv module and not pyarrow.csv's streaming reader: both stream, the csv module reads
45-64 MiB/s on one core here (a 500 MiB capture in ~10 s, benches/esxtop_import_bench.py), gives
the line of every bad row and splits the header's quoted instance names; pyarrow's reader was
about 1.6 times faster on a trial 100 MB capture but peaked at 240 MB with 16 MB blocks, and
reports a conversion error by column only.
"""

from __future__ import annotations

import io
import math
import operator
import re
from array import array
from collections import Counter
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

from sanlab.errors import UserError
from sanlab.input_files import csv_rows, open_stream

# Counters of the disk groups that sanlab uses (esxtop's names; DAVG/KAVG/GAVG/QAVG are the
# Driver/Kernel/Guest/Queue latencies).
DISK_COUNTERS = frozenset(
    {
        "Commands/sec",
        "Reads/sec",
        "Writes/sec",
        "MBytes Read/sec",
        "MBytes Written/sec",
        *(f"Average {who} MilliSec/{what}" for who in ("Driver", "Kernel", "Guest", "Queue") for what in ("Command", "Read", "Write")),
        "Active Commands",
        "Queued Commands",
        "Device Q Depth",
        "Failed Commands/sec",
    }
)
# The Virtual Disk group names its guest-seen latency without "Guest".
VIRTUAL_DISK_COUNTERS = DISK_COUNTERS | {"Average MilliSec/Command", "Average MilliSec/Read", "Average MilliSec/Write"}

DEVICE = "Physical Disk SCSI Device"
PATH = "Physical Disk Path"
ADAPTER = "Physical Disk Adapter"
VIRTUAL_DISK = "Virtual Disk"
WORLD = "Physical Disk Per-Device-Per-World"
NFS = "Physical Disk NFS Volume"
# `Physical Disk(vmhbaN)\Adapter Q Depth`: the adapter's queue depth.
ADAPTER_QUEUE = "Physical Disk"

# Storage group -> the counters read from it.
WANTED: Mapping[str, Collection[str]] = {
    DEVICE: DISK_COUNTERS,
    PATH: DISK_COUNTERS,
    ADAPTER: DISK_COUNTERS,
    VIRTUAL_DISK: VIRTUAL_DISK_COUNTERS,
    WORLD: DISK_COUNTERS,
    NFS: DISK_COUNTERS,
    ADAPTER_QUEUE: frozenset({"Adapter Q Depth"}),
}

# Counter names other writers use for esxtop's: sanlab's export writes DQLEN as "Queue Depth".
ALIASES: Mapping[str, str] = {"Queue Depth": "Device Q Depth"}

_HEADER = re.compile(r"^\s*\(PDH-CSV (?P<version>[\d.]+)\)\s*(?:\((?P<zone>.*)\)\s*\((?P<bias>[+-]?\d+)\))?\s*$")
_COLUMN = re.compile(r"^\\\\(?P<host>[^\\]*)\\(?P<object>.+)\\(?P<counter>[^\\]+)$", re.S)
_OBJECT = re.compile(r"^(?P<group>[^()]+?)\((?P<instance>.*)\)$", re.S)
_TIME_FORMATS = ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y %H:%M:%S.%f", "%m/%d/%Y %H:%M")
_NOT_A_PATH = "(not a counter path)"
MAX_VALUE = 2.0**64
"""A value's largest magnitude: esxtop's counters are 64-bit, and a rate or latency computed from
them stays below 2^64. Sums over millions of samples and products of two values stay finite."""
# perfmon's bias in minutes, for the zones there are: UTC+14 (-840) to UTC-12 (720).
BIAS_MIN = range(-840, 721)
WHAT = "an esxtop batch capture (esxtop -b -a > capture.csv)"


@dataclass(frozen=True)
class PdhTool:
    """The tool that wrote a PDH-CSV capture, as the reader's messages name it: esxtop, or
    Windows' typeperf (`hostimport/windows/typeperf.py`), which writes the same layout."""

    # What the file was expected to be (a file that cannot be read at all).
    what: str
    # Its header, and what the file is not when its first cell is not one.
    header: str
    not_this: str
    # How to capture the counters read, when the file has none of them.
    capture_hint: str
    # Lines the tool prints after its rows (typeperf's status messages), skipped with a note.
    trailer: re.Pattern[str] | None = None


ESXTOP = PdhTool(WHAT, "esxtop's batch header", "an esxtop batch capture (esxtop -b)", "Capture with `esxtop -b -a` (all counters) or export the disk entities.")


class CaptureError(UserError, ValueError):
    """A capture that cannot be read: the message names the file, the line (and column) and what
    was expected."""

    def __init__(self, message: str, file: str = "", line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.file = file
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Column:
    """One header cell split into its parts; `number` is its 1-based column in the file."""

    number: int
    name: str
    host: str
    group: str
    instance: str
    counter: str


def split_column(number: int, name: str) -> Column:
    r"""`\\host\Group(instance)\Counter` into its parts; a cell of another form gets the group
    `(not a counter path)`."""
    m = _COLUMN.match(name.strip())
    if not m:
        return Column(number, name, "", _NOT_A_PATH, "", name)
    obj = m.group("object")
    o = _OBJECT.match(obj)
    group, instance = (o.group("group"), o.group("instance")) if o else (obj, "")
    return Column(number, name, m.group("host"), group.strip(), instance, m.group("counter"))


@dataclass
class Capture:
    """The storage counters of one esxtop batch capture.

    `series[(group, instance)][counter]` is a float64 array with one value per sample (NaN where
    the cell was empty); `t_s` the samples' times in seconds from the first; `start` the first
    sample's time, with the capture's zone. `columns[(group, instance, counter)]` is the header
    cell each series was read from (its column number, for provenance). `groups` counts every
    group's columns in the header, storage or not; `unused_counters` lists, once, each
    `Group\\Counter` present but not read; `notes` what the reader decided (a dropped last row,
    a renamed counter)."""

    path: Path
    host: str
    zone: str
    # perfmon's bias in minutes: UTC = local time + bias.
    bias_min: int
    start: datetime
    t_s: np.ndarray
    series: dict[tuple[str, str], dict[str, np.ndarray]]
    columns: dict[tuple[str, str, str], Column]
    groups: dict[str, int]
    unused_counters: list[str]
    notes: list[str] = field(default_factory=list)

    @property
    def samples(self) -> int:
        return len(self.t_s)

    @property
    def times_utc(self) -> np.ndarray:
        """The samples' times as numpy datetime64[us] in UTC."""
        first = np.datetime64(self.start.astimezone(timezone.utc).replace(tzinfo=None), "us")
        return first + np.round(self.t_s * 1e6).astype("timedelta64[us]")

    def entities(self, group: str | None = None) -> list[tuple[str, str]]:
        """The (group, instance) pairs read, in header order; only `group`'s if given."""
        return [e for e in self.series if group is None or e[0] == group]

    def instances(self, group: str) -> list[str]:
        return [i for g, i in self.series if g == group]

    def get(self, group: str, instance: str, counter: str) -> np.ndarray:
        """One series; a KeyError names what the capture has instead."""
        try:
            by_counter = self.series[(group, instance)]
        except KeyError:
            raise KeyError(f"{self.path}: no {group}({instance}) in the capture; it has {self.instances(group) or 'no ' + group}") from None
        try:
            return by_counter[ALIASES.get(counter, counter)]
        except KeyError:
            raise CaptureError(f"{self.path}: {group}({instance}) has no counter {counter!r}; it has {', '.join(sorted(by_counter))}: capture every counter (esxtop -b -a)", str(self.path)) from None

    def to_frame(self):  # -> pandas.DataFrame
        """A wide DataFrame: one row per sample (index: UTC time), columns (group, instance,
        counter)."""
        import pandas as pd

        data = {(g, i, c): v for (g, i), by in self.series.items() for c, v in by.items()}
        frame = pd.DataFrame(data, index=pd.DatetimeIndex(self.times_utc, name="time_utc"))
        frame.columns = pd.MultiIndex.from_tuples(list(data), names=["group", "instance", "counter"])
        return frame

    def note(self) -> str:
        """The one-time note for a run: the counters present and not used, and the reader's notes."""
        parts = [*self.notes]
        if self.unused_counters:
            parts.append(f"{self.path}: {len(self.unused_counters)} counters present and not used: " + ", ".join(self.unused_counters))
        return "\n".join(parts)


def _ends_with_line_break(path: Path) -> bool:
    if path.suffix == ".gz":
        return True  # a cut gzip stream fails in gzip itself
    with open(path, "rb") as f:
        utf16 = f.read(2) in (b"\xff\xfe", b"\xfe\xff")  # a UTF-16 file (input_files.text_encoding)
        f.seek(0, io.SEEK_END)
        if f.tell() == 0:
            return True
        f.seek(-min(f.tell(), 2 if utf16 else 1), io.SEEK_END)
        return f.read() in ((b"\n\x00", b"\r\x00", b"\x00\n", b"\x00\r") if utf16 else (b"\n", b"\r"))


def _header_zone(path: Path, first: str, tool: PdhTool = ESXTOP, line: int = 1) -> tuple[str, int, list[str]]:
    m = _HEADER.match(first)
    if not m:
        shown = first if len(first) <= 60 else first[:57] + "..."
        raise CaptureError(
            f"{path}: line {line}, column 1: expected {tool.header} cell '(PDH-CSV 4.0) (<time zone>)(<bias>)', "
            f"found {shown!r}: not {tool.not_this}",
            str(path),
            line,
            1,
        )
    if m.group("zone") is None:
        return "UTC", 0, [f"{path}: the header cell {first!r} names no time zone; times read as UTC"]
    bias = int(m.group("bias"))
    if bias not in BIAS_MIN:
        nearest = min(max(bias, BIAS_MIN.start), BIAS_MIN.stop - 1)
        raise CaptureError(
            f"{path}: line 1, column 1: time zone bias {m.group('bias')} minutes: expected perfmon's bias of a time zone, "
            f"{BIAS_MIN.start} (UTC+14) to {BIAS_MIN.stop - 1} (UTC-12) (nearest: {nearest})",
            str(path),
            1,
            1,
        )
    return m.group("zone").strip(), bias, []


def _select(
    path: Path, header: list[str], wanted: Mapping[str, Collection[str]]
) -> tuple[list[Column], dict[str, int], list[str], list[str]]:
    """The columns to read, every group's column count, the unused `Group\\Counter`s, notes."""
    picked: list[Column] = []
    groups: Counter[str] = Counter()
    unused: set[str] = set()
    seen: set[tuple[str, str, str]] = set()
    notes: list[str] = []
    renamed: set[str] = set()
    for number, name in enumerate(header[1:], start=2):
        col = split_column(number, name)
        groups[col.group] += 1
        counter = ALIASES.get(col.counter, col.counter)
        if col.group in wanted and counter in wanted[col.group]:
            if counter != col.counter:
                renamed.add(f"{col.counter!r} read as {counter!r}")
                col = Column(col.number, col.name, col.host, col.group, col.instance, counter)
            key = (col.group, col.instance, counter)
            if key in seen:
                notes.append(f"{path}: column {number} repeats {name!r}; the first one is read")
                continue
            seen.add(key)
            picked.append(col)
        else:
            unused.add(f"{col.group}\\{col.counter}")
    notes += [f"{path}: counter {r} (sanlab's export name)" for r in sorted(renamed)]
    return picked, dict(groups), sorted(unused), notes


def _no_storage(path: Path, groups: Mapping[str, int], wanted: Mapping[str, Collection[str]], tool: PdhTool = ESXTOP, line: int = 1) -> CaptureError:
    has = ", ".join(f"{g} ({n} columns)" for g, n in sorted(groups.items(), key=lambda kv: -kv[1])) or "no columns"
    stored = [g for g in wanted if g in groups]
    what = f"its storage groups ({', '.join(stored)}) have none of the counters read" if stored else "no storage group"
    return CaptureError(
        f"{path}: line {line}: {what}: expected columns of {', '.join(wanted)}; the capture has {has}. " + tool.capture_hint,
        str(path),
        line,
    )


def _parse_time(path: Path, line: int, cell: str, fmt: list[str]) -> datetime:
    s = cell.strip()
    try:
        return datetime.strptime(s, fmt[0])
    except ValueError:
        pass
    for f in _TIME_FORMATS:
        try:
            t = datetime.strptime(s, f)
        except ValueError:
            continue
        fmt[0] = f
        return t
    raise CaptureError(f"{path}: line {line}, column 1: expected a time MM/DD/YYYY HH:MM:SS, found {cell!r}", str(path), line, 1)


def _values(path: Path, line: int, cells: tuple[str, ...], cols: list[Column]) -> list[float]:
    """The slow path: empty cells to NaN, anything else not a finite number within MAX_VALUE an
    error."""
    out = []
    for cell, col in zip(cells, cols, strict=True):
        s = cell.strip()
        if not s:
            out.append(math.nan)
            continue
        try:
            value = float(s)
        except ValueError:
            value = math.nan
        if not abs(value) <= MAX_VALUE:  # NaN too: an empty cell, not `nan`, is a missing value
            shown = cell if len(cell) <= 40 else cell[:37] + "..."
            raise CaptureError(
                f"{path}: line {line}, column {col.number} ({col.name}): expected a number of at most 2^64 "
                f"(an empty cell for a missing value), found {shown!r}",
                str(path),
                line,
                col.number,
            )
        out.append(value)
    return out


def _width_error(path: Path, line: int, width: int, found: int) -> CaptureError:
    return CaptureError(f"{path}: line {line}: expected {width} cells (a time and one per header column), found {found}", str(path), line)


def _rows(path: Path, rows: Iterator[tuple[int, list[str]]], width: int, tool: PdhTool = ESXTOP, notes: list[str] | None = None) -> Iterator[tuple[int, list[str], bool]]:
    """(line, row, is_last) for every non-blank row; a row of the wrong width that is not the
    last is an error. The tool's own trailing lines (`PdhTool.trailer`) are skipped, said once."""
    pending: tuple[int, list[str]] | None = None
    for line, row in rows:
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if tool.trailer is not None and len(row) < 3 and tool.trailer.match(",".join(row).strip()):
            if notes is not None:
                notes.append(f"{path}: line {line}: {','.join(row).strip()!r}, the tool's own message, skipped")
            continue
        if pending is not None:
            if len(pending[1]) != width:
                raise _width_error(path, pending[0], width, len(pending[1]))
            yield pending[0], pending[1], False
        pending = (line, row)
    if pending is not None:
        yield pending[0], pending[1], True


def read_capture(path: str | Path, wanted: Mapping[str, Collection[str]] = WANTED, tool: PdhTool = ESXTOP) -> Capture:
    """Reads the storage counters of an esxtop batch capture (plain or .gz), streaming its rows.

    `wanted` maps each group to read to the counters read from it (default `WANTED`); `tool` who
    wrote the capture, as messages name it (a tool with a `trailer`, typeperf, also starts its
    output with an empty line, which is skipped)."""
    path = Path(path)
    with open_stream(path, tool.what) as f:
        reader = csv_rows(path, f)
        try:
            header_line, header = next(reader)
            while tool.trailer is not None and (not header or header == [""]):
                header_line, header = next(reader)
        except StopIteration:
            raise CaptureError(f"{path}: line 1: expected {tool.header}, found an empty file", str(path), 1) from None
        # A byte order mark before the header is a spreadsheet's; an empty first line no header.
        zone, bias, notes = _header_zone(path, header[0].removeprefix("\ufeff") if header else "", tool, header_line)
        cols, groups, unused, select_notes = _select(path, header, wanted)
        notes += select_notes
        if not cols:
            raise _no_storage(path, groups, wanted, tool, header_line)
        hosts = sorted({c.host for c in cols})
        if len(hosts) > 1:
            names = ", ".join(hosts)
            raise CaptureError(f"{path}: line {header_line}: expected one host's capture, its storage columns name {len(hosts)}: {names}", str(path), header_line)
        width = len(header)
        index = [c.number - 1 for c in cols]
        pick = operator.itemgetter(*index) if len(index) > 1 else (lambda row: (row[index[0]],))
        values = array("d")
        times: list[datetime] = []
        fmt = [_TIME_FORMATS[0]]
        whole_file = _ends_with_line_break(path)
        for line, row, last in _rows(path, reader, width, tool, notes):
            if last and (len(row) < width or not whole_file):
                notes.append(f"{path}: line {line}: the last row is cut short ({len(row)} of {width} cells"
                             f"{'' if whole_file else ', no line break at the end'}); dropped, the {len(times)} rows before it read")
                break
            if len(row) != width:
                raise _width_error(path, line, width, len(row))
            times.append(_parse_time(path, line, row[0], fmt))
            cells = pick(row)
            try:
                vals = list(map(float, cells))
                # One sum in C instead of a test per cell; NaN, infinity or a large value fails it.
                if not sum(map(abs, vals)) <= MAX_VALUE:
                    vals = _values(path, line, cells, cols)
            except ValueError:
                vals = _values(path, line, cells, cols)
            values.extend(vals)
    if not times:
        raise CaptureError(f"{path}: line {header_line + 1}: expected at least one sample after the header, found none", str(path), header_line + 1)
    table = np.frombuffer(values, dtype=np.float64).reshape(len(times), len(cols))
    series: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    columns: dict[tuple[str, str, str], Column] = {}
    for k, col in enumerate(cols):
        series.setdefault((col.group, col.instance), {})[col.counter] = table[:, k]
        columns[(col.group, col.instance, col.counter)] = col
    first = times[0]
    t_s = np.array([(t - first).total_seconds() for t in times], dtype=np.float64)
    start = first.replace(tzinfo=timezone(-timedelta(minutes=bias), zone))
    return Capture(path, hosts[0], zone, bias, start, t_s, series, columns, groups, unused, notes)
