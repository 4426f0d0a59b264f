"""Terminal tables that fit: every table titled alike, and `fit`, which narrows or splits one
that is too wide for the console without cutting a cell."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table


def titled_table(title: str) -> Table:
    """A table as every sanlab table looks: title on the left, a rule under the header, no frame."""
    return Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", show_edge=False)


_UNBOUNDED = 1_000_000
"""A width no table reaches: measured at it, a table reports the widths its cells need."""


@dataclass(frozen=True)
class _Widths:
    """Per column of a table the width of its text: the least (its longest value, or longest word
    in a column that wraps), with its values whole but its header wrapped, and on one line each;
    and what padding and rules add."""

    least: list[int]
    header_wrapped: list[int]
    natural: list[int]
    extra: int


def _widths(table: Table, console: Console) -> _Widths:
    options = console.options.update_width(_UNBOUNDED)
    least, header_wrapped, natural = [], [], []
    for column in table.columns:
        header = Measurement.get(console, options, column.header)
        body = [Measurement.get(console, options, cell) for cell in column.cells]
        natural.append(max([header.maximum, *(size.maximum for size in body)]))
        # rich's own minimum lets every column wrap; one that may not needs its longest value.
        words = max([header.minimum, *(size.minimum for size in body)])
        least.append(natural[-1] if column.no_wrap else words)
        header_wrapped.append(max([least[-1], *(size.maximum for size in body)]))
    extra = Measurement.get(console, options, table).maximum - sum(natural)
    return _Widths(least, header_wrapped, natural, extra)


def min_width(table: Table, console: Console) -> int:
    """The narrowest `table` renders without cutting a cell: every column at its longest value,
    except those that wrap, at their longest word."""
    widths = _widths(table, console)
    return sum(widths.least) + widths.extra


def _columns(table: Table, indices: Sequence[int]) -> Table:
    part = copy.copy(table)
    # `_index` is where rich looks up a column's padding: its position in the new table.
    part.columns = [dataclasses.replace(table.columns[i], _index=n) for n, i in enumerate(indices)]
    return part


def _narrowed(table: Table, console: Console) -> Table:
    """`table` with its wrapping columns narrowed until it fits the console: headers wrap first, then
    values, the widest column first. (rich narrows all alike and, once they are equally wide, cuts
    every column.)"""
    sizes = _widths(table, console)
    widths = list(sizes.natural)
    excess = sum(widths) + sizes.extra - console.width
    for floor in (sizes.header_wrapped, sizes.least):
        while excess > 0:
            narrower = [i for i, width in enumerate(widths) if width > floor[i]]
            if not narrower:
                break
            widths[max(narrower, key=lambda i: widths[i])] -= 1
            excess -= 1
    narrowed = copy.copy(table)
    narrowed.columns = [
        column if column.no_wrap else dataclasses.replace(column, max_width=width)
        for column, width in zip(table.columns, widths, strict=True)
    ]
    return narrowed


def fit(table: Table, console: Console) -> list[Table]:
    """`table` as one or several tables that fit the console without cutting a cell with "…".

    Columns that wrap are narrowed first; when that is not enough, the table is split: each part
    repeats the leading left-aligned columns (the names a row is about: variant, device, path)
    with as many of the others as fit, and the caption goes under the last. A table that starts
    with a number column or has only names is not split.
    """
    names = next((i for i, column in enumerate(table.columns) if column.justify == "right"), 0)
    parts = [table]
    if names and min_width(table, console) > console.width:
        columns: list[list[int]] = []
        for index in range(names, len(table.columns)):
            wider = [*columns[-1], index] if columns else []
            if wider and min_width(_columns(table, wider), console) <= console.width:
                columns[-1] = wider
            else:
                columns.append([*range(names), index])
        parts = [_columns(table, indices) for indices in columns]
        for part in parts[:-1]:
            part.caption = None
    return [_narrowed(part, console) for part in parts]
