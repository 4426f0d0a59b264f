"""Reading the files users hand sanlab (listings, captures, job files, measured points): a regular
file of bounded size, decompressed within bounds, its lines and cells bounded, and one error that
names the file, as the engine's readers do (`sanlab-workload`'s input.rs and trace reader).

A FIFO would block for ever and `/dev/zero` never ends: both are refused before opening. A gzip
stream is bounded by the bytes it expands to and by its ratio to the bytes read of the file (text
compresses 5 to 20 times; a gzip bomb thousands)."""

from __future__ import annotations

import csv
import gzip
import io
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from sanlab.errors import UserError

MAX_TEXT_BYTES = 16 << 20
"""A file read whole (a listing, a job file, measured points): 16 MiB, the engine's limit."""
MAX_TEXT_LINES = 1 << 20
"""Lines in a file read whole: 1 Mi, 16 bytes a line on average at 16 MiB (a listing's lines are
tens of bytes; `iostat -x`'s a hundred). 16 MiB of blank or comment lines, each skipped by its
parser, took 6 to 30 s to read."""
MAX_STREAM_BYTES = 64 << 30
"""A capture read row by row, decompressed: 64 GiB, the engine's limit for a trace."""
MAX_LINE_BYTES = 16 << 20
"""A capture's longest line: 16 MiB (esxtop's header of a large host is a few MiB)."""
MAX_CELLS = 1 << 20
"""Cells in one row of a capture: esxtop writes one per counter, tens of thousands on a large host."""
MAX_BLANK_LINES = 1000
"""Blank lines in a row in a CSV file: a tool writes one between blocks, or one at the end; 16 MiB
of them (a gzip bomb of 16 KiB) took 24 s to read line by line before the ratio stopped it."""
GZIP_RATIO_FROM_BYTES = 16 << 20
MAX_GZIP_RATIO = 200


class InputFileError(UserError):
    """A file that cannot be read as asked: not a regular file, too large, a gzip bomb."""


def regular_file(path: Path, what: str) -> int:
    """The size of `path`, a regular file; InputFileError naming `what` was expected otherwise.
    Checked before opening, which waits for ever on a FIFO."""
    try:
        mode = os.stat(path)
    except FileNotFoundError:
        raise InputFileError(f"{path}: no such file: expected {what}") from None
    except OSError as exc:
        raise InputFileError(f"{path}: cannot be read ({exc.strerror}): expected {what}") from None
    if not stat.S_ISREG(mode.st_mode):
        raise InputFileError(f"{path}: not a regular file (a device, a FIFO or a folder): expected {what}")
    return mode.st_size


def read_bytes(path: Path, what: str, max_bytes: int = MAX_TEXT_BYTES) -> bytes:
    """A file read whole, at most `max_bytes`."""
    size = regular_file(path, what)
    if size > max_bytes:
        raise InputFileError(f"{path}: {size:,} bytes, above the limit of {max_bytes:,} bytes for {what}")
    try:
        with open(path, "rb") as file:
            data = file.read(max_bytes + 1)
    except OSError as exc:  # a file this user may not read
        raise InputFileError(f"{path}: cannot be read ({exc.strerror}): expected {what}") from None
    if len(data) > max_bytes:  # it grew since it was measured
        raise InputFileError(f"{path}: more than {max_bytes:,} bytes, the limit for {what}")
    return data


_BREAKS = ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def line_breaks(text: str) -> int:
    """The line breaks in `text` as `str.splitlines` counts them (CR LF is one), each counted in C."""
    return sum(text.count(sep) for sep in _BREAKS) - text.count("\r\n")


def text_encoding(head: bytes) -> str:
    """UTF-16 for a file starting with its byte order mark (what Windows PowerShell's `>` writes:
    an mpclaim or typeperf output redirected there), else UTF-8."""
    return "utf-16" if head[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8"


def read_text(path: Path, what: str, *, encoding: str | None = None, errors: str = "strict") -> str:
    """A text file read whole (see `read_bytes`) of at most MAX_TEXT_LINES lines; bytes that are
    not `encoding` (by default UTF-8, or UTF-16 after its byte order mark: `text_encoding`) are
    one error."""
    data = read_bytes(path, what)
    encoding = encoding or text_encoding(data[:2])
    try:
        text = data.decode(encoding, errors)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputFileError(f"{path}:{line}: not {encoding} text (byte {exc.start + 1}): expected {what}") from None
    lines = line_breaks(text) if len(text) > MAX_TEXT_LINES else 0  # a line takes a character at least
    if lines > MAX_TEXT_LINES:
        raise InputFileError(f"{path}: {lines:,} lines, above the limit of {MAX_TEXT_LINES:,} lines for {what}")
    return text


class _Bounded(io.RawIOBase):
    """A decompressed stream that refuses to pass `max_bytes`, or to expand more than
    MAX_GZIP_RATIO times the file's bytes read once past GZIP_RATIO_FROM_BYTES."""

    def __init__(self, path: Path, raw: IO[bytes], counted: IO[bytes], max_bytes: int) -> None:
        self._path, self._raw, self._counted, self._max = path, raw, counted, max_bytes
        self._bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        n = self._raw.readinto(buffer)  # type: ignore[attr-defined]
        self._bytes += n or 0
        if self._bytes > self._max:
            raise InputFileError(f"{self._path}: decompressed, it passes {self._max:,} bytes, the limit: is it a gzip bomb?")
        compressed = max(self._counted.tell(), 1)
        if self._bytes > GZIP_RATIO_FROM_BYTES and self._bytes / compressed > MAX_GZIP_RATIO:
            raise InputFileError(
                f"{self._path}: decompressed, it passes {GZIP_RATIO_FROM_BYTES:,} bytes at {self._bytes // compressed} "
                f"times the {compressed:,} bytes read of the file, above the limit of {MAX_GZIP_RATIO} (text compresses "
                "5 to 20 times): is it a gzip bomb? If it is a real file, give it decompressed (gunzip)"
            )
        return n or 0

    def close(self) -> None:
        self._raw.close()
        self._counted.close()
        super().close()


def open_stream(path: Path, what: str, max_bytes: int = MAX_STREAM_BYTES) -> io.TextIOWrapper:
    """A text file to read line by line (UTF-8, undecodable bytes replaced), gunzipped when its
    name ends in `.gz`, bounded as the module says."""
    size = regular_file(path, what)
    if size > max_bytes:
        raise InputFileError(f"{path}: {size:,} bytes, above the limit of {max_bytes:,} bytes for {what}")
    try:
        file = open(path, "rb")  # noqa: SIM115 (closed with the stream)
    except OSError as exc:
        raise InputFileError(f"{path}: cannot be read ({exc.strerror}): expected {what}") from None
    raw: IO[bytes] = gzip.GzipFile(fileobj=file) if path.suffix == ".gz" else file
    stream = io.BufferedReader(_Bounded(path, raw, file, max_bytes))
    return io.TextIOWrapper(stream, encoding=text_encoding(stream.peek(2)[:2]), errors="replace", newline="")


def csv_rows(path: Path, stream: IO[str], max_cells: int = MAX_CELLS) -> Iterator[tuple[int, list[str]]]:
    """The rows of a CSV stream with their line numbers, each line at most MAX_LINE_BYTES and each
    row at most `max_cells` cells, checked before a row is split; at most MAX_BLANK_LINES blank
    lines (spaces only) in a row."""
    line_number = 0

    def lines() -> Iterator[str]:
        nonlocal line_number
        blank = 0
        # readline with a limit: a line is measured before it is held whole in memory.
        while line := stream.readline(MAX_LINE_BYTES + 1):
            line_number += 1
            if len(line) > MAX_LINE_BYTES:
                raise InputFileError(f"{path}:{line_number}: a line of more than {MAX_LINE_BYTES:,} characters: expected CSV rows")
            if line.isspace():
                blank += 1
                if blank > MAX_BLANK_LINES:
                    raise InputFileError(
                        f"{path}:{line_number}: more than {MAX_BLANK_LINES:,} blank lines in a row (from line "
                        f"{line_number - blank + 1}): expected CSV rows; is it a gzip bomb?"
                    )
            else:
                blank = 0
            if line.count(",") >= max_cells:
                raise InputFileError(f"{path}:{line_number}: more than {max_cells:,} cells in a row: expected CSV rows")
            yield line

    if csv.field_size_limit() < MAX_LINE_BYTES:  # a process-wide setting: only ever raised
        csv.field_size_limit(MAX_LINE_BYTES)
    try:
        for row in csv.reader(lines()):
            yield line_number, row
    except csv.Error as exc:
        raise InputFileError(f"{path}:{line_number}: {exc}: expected CSV rows") from None
