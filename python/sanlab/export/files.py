"""Files of a run or sweep folder that someone else may have written: JSON read with its nesting
and its numbers bounded, and files written without following a symbolic link.

A run folder handed over (a colleague's, a downloaded one) is untrusted input. Its JSON documents
are parsed here, so that a damaged or hostile one (a 401-digit integer, 100,000 nested arrays) is
one message naming the file, the place and what is wrong, not an OverflowError or a
RecursionError from deep inside the report. And what sanlab writes into an existing folder
(`sanlab report`'s report.html, a resumed sweep's results) goes to a new temporary file in the
folder that then replaces the name (`os.replace` renames over the link itself, never through it),
after refusing a name that is a link: `report.html -> ~/.bashrc` planted in a folder would
otherwise have been overwritten with the report.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any

from sanlab.errors import UserError

MAX_JSON_DEPTH = 64
"""Arrays and objects nested in one another, at most. sanlab's documents nest 7 deep (results.json:
variants, a path's latency percentiles); past about 1,000 Python's parser raises RecursionError,
and code that walks a document recursively (`results.flatten`) would fail earlier."""

MAX_INT_DIGITS = 20
"""Digits of an integer, at most: every count sanlab writes fits 64 bits (2**64 has 20 digits)."""

MAX_FLOAT_CHARS = 64
"""Characters of a number with a fraction or exponent, at most: Python writes 24 at most."""

_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


class JsonBoundError(ValueError):
    """A JSON document past a bound; the message says where and which bound."""


def _place(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    return f"line {line} column {index - (text.rfind(chr(10), 0, index) + 1) + 1}"


def _too_deep_at(text: str) -> int:
    """Where the nesting first passes MAX_JSON_DEPTH (only called when it does)."""
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return match.start()
        elif token in "]}":
            depth -= 1
    return 0


def _depth(document: Any) -> int:
    """How deep arrays and objects nest in a parsed document, level by level (no recursion),
    counted up to one past MAX_JSON_DEPTH."""
    depth = 0
    level = [document] if isinstance(document, (dict, list)) else []
    while level and depth <= MAX_JSON_DEPTH:
        depth += 1
        inner: list[Any] = []
        for node in level:
            values = node.values() if type(node) is dict else node
            inner += [value for value in values if type(value) is dict or type(value) is list]
        level = inner
    return depth


def _too_deep(text: str) -> JsonBoundError:
    return JsonBoundError(
        f"{_place(text, _too_deep_at(text))}: arrays and objects nested more than {MAX_JSON_DEPTH} deep"
    )


def _number_error(text: str, literal: str, what: str) -> JsonBoundError:
    shown = literal if len(literal) <= 24 else f"{literal[:12]}…({len(literal)} characters)"
    index = text.find(literal)
    place = f"{_place(text, index)}: " if index >= 0 else ""
    return JsonBoundError(f"{place}number {shown} is out of range: {what}")


def loads_bounded(text: str) -> Any:
    """`json.loads(text)`, refusing what no sanlab document holds: nesting deeper than
    MAX_JSON_DEPTH, an integer of more than MAX_INT_DIGITS digits or beyond ±2**64, a number that
    is longer than MAX_FLOAT_CHARS or too large for a float (`1e400`). Raises JsonBoundError (a
    ValueError) naming the line and column, or json.JSONDecodeError."""

    def parse_int(literal: str) -> int:
        if len(literal.lstrip("-")) > MAX_INT_DIGITS:
            raise _number_error(text, literal, f"expected at most {MAX_INT_DIGITS} digits (a 64-bit count)")
        value = int(literal)
        if abs(value) >= 2**64:
            raise _number_error(text, literal, f"expected a 64-bit count, at most {2**64 - 1}")
        return value

    def parse_float(literal: str) -> float:
        if len(literal) > MAX_FLOAT_CHARS:
            raise _number_error(text, literal, f"expected at most {MAX_FLOAT_CHARS} characters")
        value = float(literal)
        if value in (float("inf"), float("-inf")):
            raise _number_error(
                text, literal, "too large for a floating-point number (at most about 1.8e308)"
            )
        return value

    try:
        document = json.loads(text, parse_int=parse_int, parse_float=parse_float)
    except RecursionError:  # past about 1,000 levels
        raise _too_deep(text) from None
    if _depth(document) > MAX_JSON_DEPTH:
        raise _too_deep(text)
    return document


class LinkInFolderError(UserError):
    """A file or folder sanlab would write in an existing folder is a symbolic link (or not a
    regular file); the message names it."""


def refuse_links(paths: Iterable[Path], *, folders: Iterable[Path] = ()) -> None:
    """Raises LinkInFolderError for the first of `paths` that is a symbolic link or exists as
    something else than a regular file, or of `folders` that is a link or not a folder."""
    for path in paths:
        if path.is_symlink():
            raise LinkInFolderError(
                f"{path} is a symbolic link; sanlab does not write through links in a folder it is handed: "
                "remove the link, or copy the folder's files"
            )
        if path.exists() and not path.is_file():
            raise LinkInFolderError(f"{path} exists and is not a regular file; expected a file sanlab writes")
    for folder in folders:
        if folder.is_symlink():
            raise LinkInFolderError(
                f"{folder} is a symbolic link; sanlab does not write through links in a folder it is handed: "
                "remove the link, or copy the folder's files"
            )
        if folder.exists() and not folder.is_dir():
            raise LinkInFolderError(f"{folder} exists and is not a folder; expected a folder sanlab writes")


def current_umask() -> int:
    """The process's umask (read by setting it and back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def remove_empty(folders: Iterable[Path]) -> None:
    """Removes each of `folders` that is still empty: a command that made its output folder and
    failed before writing into it leaves nothing behind."""
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()


def replace_file(path: Path, write: Callable[[IO[bytes]], None], check: Callable[[Path], object] | None = None) -> None:
    """Writes `path` by `write(file)` into a new temporary file beside it, then renames that over
    `path`: the name is replaced, never followed, and a reader never sees half a file. Refuses a
    `path` that is a link (LinkInFolderError). `check(temporary)`, when given, reads the file back
    before the rename (sanlab's own reader of what it wrote): what it raises leaves `path` as it was."""
    refuse_links([path])
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(handle, 0o666 & ~current_umask())  # as open() would create it, not mkstemp's 0600
        with os.fdopen(handle, "wb") as file:
            write(file)
        if check is not None:
            check(Path(temporary))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def replace_text(path: Path, text: str, check: Callable[[Path], object] | None = None) -> None:
    """`path.write_text(text, encoding="utf-8")` by `replace_file` (with its `check`)."""
    replace_file(path, lambda file: file.write(text.encode("utf-8")), check)


class OutputIsInputError(UserError):
    """An output named as one of the command's inputs."""


def refuse_inputs(out: Path, inputs: Iterable[Path], option: str = "-o") -> None:
    """Refuses an output that is one of the command's inputs: the same file by device and inode
    (`./a.toml`, `a.toml` and a hard link are one file), or a folder input holding it."""
    try:
        target = os.stat(out)
    except OSError:
        return  # a new file cannot be an input
    for given in inputs:
        try:
            source = os.stat(given)
        except OSError:
            continue
        if (source.st_dev, source.st_ino) == (target.st_dev, target.st_ino):
            raise OutputIsInputError(f"{option} {out}: it is an input ({given}); an output never replaces an input: choose another name")
