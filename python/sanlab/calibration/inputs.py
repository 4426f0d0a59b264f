"""What `sanlab calibrate` reads: the free parameters (`--free KEY=LO..HI[:int][:log]`) and the
measured points (a CSV or Parquet file), each checked with one message naming the file, the row
and the column, and the nearest valid choice. The grammar is in docs/cli.md."""

from __future__ import annotations

import csv
import difflib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sanlab import engine
from sanlab.errors import UserError
from sanlab.input_files import read_text, regular_file

MAX_POINTS = 10_000
"""Measured points in one fit."""
FIELD_LIMIT = 128 << 10
"""A cell of measured points: at most 128 KiB, csv's default limit."""
POINTS_WHY = "every candidate of the fit runs every point; measure fewer settings, or fit a sample of them"


class CalibrationError(UserError):
    """Invalid calibration input (free parameters, measured points) or a run that failed."""


FIGURES = ("iops", "lat_ms")
"""Figures of the whole run: total VM IOPS and the IOPS-weighted mean VM latency (ms)."""
RESERVED = ("weight", "label")
"""Columns that are neither overrides nor figures."""
VM_FIGURE = re.compile(r"^vm:(?P<name>.+):(?P<figure>[^:]+)$")

_NUMBER = re.compile(
    r"^\s*(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(?P<unit>[A-Za-zµ/]*)\s*$"
)
DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}


@dataclass(frozen=True)
class FreeParam:
    """A scenario value to fit, between `lo` and `hi` in `unit` (empty: a plain number)."""

    key: str
    lo: float
    hi: float
    unit: str = ""
    integer: bool = False
    log: bool = False
    text: str = ""
    """The --free argument as given, for messages."""

    @property
    def short(self) -> str:
        """The key's last part (`read_latency`), for tables and progress lines."""
        return self.key.rpartition(".")[2]

    def value(self, u: float) -> float:
        """The value at `u` in [0, 1] of the search box (log-spaced with `log`), rounded to an
        integer with `integer`, kept within the bounds."""
        u = min(1.0, max(0.0, float(u)))
        if self.log:
            value = math.exp(math.log(self.lo) + u * (math.log(self.hi) - math.log(self.lo)))
        else:
            value = self.lo + u * (self.hi - self.lo)
        if self.integer:
            value = float(round(value))
        return min(self.hi, max(self.lo, value))

    def format(self, value: float) -> str:
        """The value as the scenario takes it: `183.2us`, `16`, `0.75`."""
        if self.integer:
            return f"{round(value)}{self.unit}"
        text = f"{value:.6g}"
        if "e" in text:  # the engine reads plain decimals with units: no exponent
            text = f"{value:.12f}".rstrip("0").rstrip(".")
        return f"{text}{self.unit}"

    def setting(self, value: float) -> str:
        """`KEY=VALUE` for the engine's overrides."""
        return f"{self.key}={self.format(value)}"


def _bound(text: str, argument: str) -> tuple[float, str]:
    match = _NUMBER.match(text)
    if not match:
        raise CalibrationError(
            f"--free {argument!r}: `{text.strip()}` is not a number; a free parameter takes numeric bounds "
            "LO..HI, with a unit where the value has one (50us..500us, 1..64:int, 0.1..0.9)"
        )
    value = float(match["number"])
    if not abs(value) <= 2.0**64:  # 1e400 is infinity: round() of an :int bound was an OverflowError
        raise CalibrationError(f"--free {argument!r}: `{text.strip()}` is not a finite number of at most 2^64")
    return value, match["unit"]


def parse_free(argument: str) -> FreeParam:
    """`KEY=LO..HI[:int][:log]`: bounds with an optional unit, both given the same way."""
    key, sep, rest = argument.partition("=")
    key = key.strip()
    if not sep or not key:
        raise CalibrationError(
            f"--free {argument!r}: expected KEY=LO..HI, such as array[0].media.read_latency=50us..500us"
        )
    bounds, *flags = rest.split(":")
    unknown = [flag for flag in flags if flag not in ("int", "log")]
    if unknown:
        nearest = difflib.get_close_matches(unknown[0], ["int", "log"], n=1, cutoff=0.3)
        hint = f"; did you mean `:{nearest[0]}`?" if nearest else ""
        raise CalibrationError(
            f"--free {argument!r}: unknown flag `:{unknown[0]}`; expected :int or :log{hint}"
        )
    lo_text, dots, hi_text = bounds.partition("..")
    if not dots:
        raise CalibrationError(f"--free {argument!r}: expected bounds LO..HI after `=`, such as 50us..500us")
    (lo, lo_unit), (hi, hi_unit) = _bound(lo_text, argument), _bound(hi_text, argument)
    if lo_unit != hi_unit:
        if lo_unit in DURATION_UNITS and hi_unit in DURATION_UNITS:
            hi = hi * DURATION_UNITS[hi_unit] / DURATION_UNITS[lo_unit]
        else:
            raise CalibrationError(
                f"--free {argument!r}: the bounds have different units (`{lo_unit}`, `{hi_unit}`); "
                "give both in one unit"
            )
    integer = "int" in flags
    if integer and (lo != round(lo) or hi != round(hi)):
        raise CalibrationError(
            f"--free {argument!r}: an :int parameter takes whole bounds, such as 1..64:int"
        )
    if lo == hi:
        raise CalibrationError(f"--free {argument!r}: the bounds are equal ({lo_text.strip()} and {hi_text.strip()}): give an interval LO..HI with LO below HI, or fix the value with --set")
    if lo > hi:
        swapped = f"{hi_text.strip()}..{lo_text.strip()}"
        raise CalibrationError(
            f"--free {argument!r}: the bounds are reversed or equal (LO must be below HI); "
            f"did you mean {key}={swapped}?"
        )
    log = "log" in flags
    if log and lo <= 0:
        raise CalibrationError(f"--free {argument!r}: a :log parameter needs LO above 0")
    return FreeParam(key, lo, hi, lo_unit, integer, log, argument)


@dataclass(frozen=True)
class Point:
    """One measured point: its overrides, its figures (name, measured value) and weight."""

    where: str
    """`points.csv line 3` or `points.parquet row 2`: where the point is written."""
    sets: tuple[str, ...]
    figures: tuple[tuple[str, float], ...]
    weight: float = 1.0
    label: str = ""

    @property
    def name(self) -> str:
        """The label column, else where the point is written."""
        return self.label or self.where


def _rows(path: Path) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The header and the rows, each with where it is written; cells as text ('' when empty)."""
    if path.suffix.lower() in (".parquet", ".pq"):
        import pyarrow.parquet as pq

        regular_file(path, "the measured points, CSV or Parquet")
        try:
            rows = pq.read_metadata(path).num_rows
            if rows > MAX_POINTS:
                raise CalibrationError(f"{path}: {rows:,} points, above the limit of {MAX_POINTS:,}: {POINTS_WHY}")
            table = pq.read_table(path)
        except (OSError, ValueError) as exc:
            raise CalibrationError(f"{path}: cannot read the Parquet file: {exc}") from None
        header = table.column_names
        columns = [table.column(name).to_pylist() for name in header]
        rows = []
        for index in range(table.num_rows):
            cells = [columns[c][index] for c in range(len(header))]
            rows.append(
                (f"{path.name} row {index + 1}", ["" if _missing(cell) else str(cell) for cell in cells])
            )
        return header, rows
    text = read_text(path, "the measured points, CSV or Parquet", encoding="utf-8-sig")
    reader = csv.reader(text.splitlines())
    # csv's field limit is the process's: set to this reader's for the read (an import in the same
    # process raises it to a capture's line), so that a file reads the same whatever ran before.
    limit = csv.field_size_limit(FIELD_LIMIT)
    try:
        lines = [(number, row) for number, row in enumerate(reader, start=1)]
    except csv.Error as exc:  # a field past FIELD_LIMIT, a stray quote at the end
        raise CalibrationError(f"{path}:{reader.line_num}: {exc}: expected CSV rows of measured points") from None
    finally:
        csv.field_size_limit(limit)
    lines = [
        (n, row)
        for n, row in lines
        if row and any(cell.strip() for cell in row) and not row[0].lstrip().startswith("#")
    ]
    if not lines:
        raise CalibrationError(
            f"{path}: no header and no points; "
            "expected a header line such as `vm[0].job[0].iodepth,iops,lat_ms`"
        )
    (_, header), *body = lines
    rows = []
    for number, row in body:
        if len(row) != len(header):
            raise CalibrationError(
                f"{path.name} line {number}: {len(row)} cells for the header's {len(header)} columns"
            )
        rows.append((f"{path.name} line {number}", [cell.strip() for cell in row]))
    return [name.strip() for name in header], rows


def _missing(cell: object) -> bool:
    return cell is None or (isinstance(cell, float) and math.isnan(cell))


def _check_columns(path: Path, header: Sequence[str]) -> None:
    seen: set[str] = set()
    for column in header:
        if column in seen:
            raise CalibrationError(f"{path.name}: column `{column}` is given twice")
        seen.add(column)
        if not column:
            raise CalibrationError(f"{path.name}: a column has no name")
        if "=" in column:
            raise CalibrationError(
                f"{path.name}: column `{column}` holds `=`; a column is named by the key alone "
                f"(`{column.partition('=')[0]}`), the values go in the rows"
            )
        vm = VM_FIGURE.match(column)
        if vm and vm["figure"] not in FIGURES:
            nearest = difflib.get_close_matches(vm["figure"], FIGURES, n=1, cutoff=0.3)
            hint = f"; did you mean `vm:{vm['name']}:{nearest[0]}`?" if nearest else ""
            raise CalibrationError(
                f"{path.name}: column `{column}`: a VM's figure is vm:NAME:iops or vm:NAME:lat_ms{hint}"
            )
        if vm or column in FIGURES or column in RESERVED or "." in column:
            continue
        nearest = difflib.get_close_matches(column.lower(), [*FIGURES, *RESERVED], n=1, cutoff=0.3)
        hint = f"; did you mean `{nearest[0]}`?" if nearest else ""
        raise CalibrationError(
            f"{path.name}: column `{column}` is neither a figure "
            "(iops, lat_ms, vm:NAME:iops, vm:NAME:lat_ms), "
            f"weight, label nor a scenario key (section[index].key, as for --set){hint}"
        )


def _number(where: str, column: str, cell: str, what: str, zero: bool = False) -> float:
    """The cell as a finite number above 0 (0 allowed with `zero`)."""
    try:
        value = float(cell)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero):
        raise CalibrationError(f"{where}, column `{column}`: `{cell}` is not {what}")
    return value


def read_points(path: str | Path) -> list[Point]:
    """The measured points of a CSV or Parquet file (docs/cli.md has the columns)."""
    path = Path(path)
    header, rows = _rows(path)
    if len(rows) > MAX_POINTS:
        raise CalibrationError(f"{path}: {len(rows):,} points, above the limit of {MAX_POINTS:,}: {POINTS_WHY}")
    _check_columns(path, header)
    if not any(column in FIGURES or VM_FIGURE.match(column) for column in header):
        raise CalibrationError(
            f"{path.name}: no figure column; give iops, lat_ms, vm:NAME:iops or vm:NAME:lat_ms"
        )
    if not rows:
        raise CalibrationError(f"{path.name}: a header and no points")
    points = []
    for where, cells in rows:
        sets: list[str] = []
        figures: list[tuple[str, float]] = []
        weight, label = 1.0, ""
        for column, cell in zip(header, cells, strict=True):
            if not cell:
                continue
            if column == "label":
                label = cell
            elif column == "weight":
                weight = _number(where, column, cell, "a weight (a number, 0 or more)", zero=True)
            elif column in FIGURES or VM_FIGURE.match(column):
                figures.append((column, _number(where, column, cell, "a measured figure (a number above 0)")))
            else:
                sets.append(f"{column}={cell}")
        if not figures:
            raise CalibrationError(
                f"{where}: no measured figure; fill iops, lat_ms or a vm:NAME: column, or delete the row"
            )
        points.append(Point(where, tuple(sets), tuple(figures), weight, label))
    if not any(point.weight > 0 for point in points):
        raise CalibrationError(f"{path.name}: every weight is 0; nothing to fit")
    return points


def check(
    scenario: str,
    free: Sequence[FreeParam],
    points: Sequence[Point],
    sets: Sequence[str],
    variants: list[str] | None,
) -> None:
    """Asks the engine about every override: the fixed ones, each free parameter at both bounds,
    each point's columns. The first that fails gives one message naming where it was written."""

    def fails(extra: Sequence[str]) -> str:
        try:
            engine.validate(scenario, [*sets, *extra], variants)
        except engine.ScenarioError as exc:
            return str(exc)
        return ""

    message = fails([])
    if message:
        raise CalibrationError(message)
    keys = [param.key for param in free]
    if len(set(keys)) != len(keys):
        raise CalibrationError(f"--free: a key is given twice ({', '.join(keys)})")
    for param in free:
        for value in (param.lo, param.hi):
            message = fails([param.setting(value)])
            if message:
                raise CalibrationError(f"--free {param.text!r}: {message}")
        # Between the bounds the search tries fractions: a key the engine takes whole needs :int.
        if not param.integer and fails([param.setting((param.lo + param.hi) / 2 + 0.25)]).find("expected an integer") >= 0:
            raise CalibrationError(f"--free {param.text!r}: {param.key} takes a whole number and the search tries fractions between the bounds: add :int ({param.text}:int)")
    lows = [param.setting(param.lo) for param in free]
    for point in points:
        for setting in point.sets:
            key = setting.partition("=")[0]
            if key in keys:
                raise CalibrationError(
                    f"{point.where}, column `{key}`: the column sets a free parameter; drop one of them"
                )
            message = fails([*lows, setting])
            if message:
                raise CalibrationError(f"{point.where}, column `{key}`: {message}")
