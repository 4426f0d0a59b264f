"""The calibrated scenario `sanlab calibrate -o` writes: `base = "<original>"` and the fitted
values, each with a comment.

A fitted key inside a table (`run.x`) is written as that table with the one key: the engine
merges it with the base's. A key inside an array of tables (`array[0].media.read_latency`) needs
the whole array repeated, since a list replaces its base's (docs/scenario.md, "Building on
another file"): the array is copied from the original as it resolves through its own bases, with
the fitted value set.
"""

from __future__ import annotations

import copy
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sanlab.calibration.inputs import CalibrationError
from sanlab.toml_text import toml_comment, toml_key, toml_value

_SEGMENT = re.compile(r"^(?P<name>[^\[\]]+)(?P<indexes>(?:\[\d+\])*)$")

Path_ = tuple[str | int, ...]
MAX_BASES = 8
"""Bases followed from a file at most (its base, that one's base, …)."""


def resolved_root(path: Path, depth: int = 0) -> dict[str, Any]:
    """The scenario file's table with its `base` chain applied, as the engine applies it: tables
    merged key by key, anything else replaced, the bases' variants dropped."""
    root = tomllib.loads(path.read_text(encoding="utf-8"))
    base = root.pop("base", None)
    if not isinstance(base, str) or depth >= MAX_BASES:
        return root
    merged = resolved_root(path.parent / base, depth + 1)
    merged.pop("variant", None)
    _merge(merged, root)
    return merged


def _merge(under: dict[str, Any], over: Mapping[str, Any]) -> None:
    for key, value in over.items():
        if isinstance(under.get(key), dict) and isinstance(value, dict):
            _merge(under[key], value)
        else:
            under[key] = value


def key_path(key: str) -> Path_:
    """`array[0].media.read_latency` as ("array", 0, "media", "read_latency")."""
    parts: list[str | int] = []
    for segment in key.split("."):
        match = _SEGMENT.match(segment)
        if not match:
            raise CalibrationError(f"{key}: cannot read the key's part `{segment}`")
        parts.append(match["name"])
        parts.extend(int(index) for index in re.findall(r"\d+", match["indexes"]))
    return tuple(parts)


def _set(table: dict[str, Any], path: Path_, value: Any) -> None:
    node: Any = table
    for at, part in enumerate(path[:-1]):
        following = path[at + 1]
        if isinstance(part, int):
            node = node[part]
        else:
            if part not in node:
                node[part] = [] if isinstance(following, int) else {}
            node = node[part]
    node[path[-1]] = value


def overlay(original: Path, fitted: Mapping[str, Any]) -> dict[str, Any]:
    """The entries the calibrated file gives: per fitted key, its table with the key, or its
    whole array of tables as the original resolves it with the key set."""
    resolved = resolved_root(original)
    out: dict[str, Any] = {}
    for key, value in fitted.items():
        path = key_path(key)
        top = path[0]
        assert isinstance(top, str)
        if isinstance(resolved.get(top), list):
            if top not in out:
                out[top] = copy.deepcopy(resolved[top])
            try:
                _set(out, path, value)
            except (IndexError, KeyError, TypeError):
                raise CalibrationError(
                    f"{key}: not found in {original} as resolved through its bases"
                ) from None
        else:
            _set(out, path, value)
    return out


def _is_tables(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) for item in value)


def _write_table(
    lines: list[str],
    header: Sequence[str],
    path: Path_,
    table: Mapping[str, Any],
    comments: Mapping[Path_, str],
) -> None:
    """Scalars first, then sub-tables (`[a.b]`), then arrays of tables (`[[a.b]]`)."""
    for name, value in table.items():
        if isinstance(value, dict) or _is_tables(value):
            continue
        line = f"{toml_key(name)} = {toml_value(value)}"
        comment = comments.get((*path, name))
        lines.append(f"{line}  # {toml_comment(comment)}" if comment else line)
    for name, value in table.items():
        if isinstance(value, dict):
            lines.extend(["", f"[{'.'.join(toml_key(part) for part in (*header, name))}]"])
            _write_table(lines, (*header, name), (*path, name), value, comments)
    for name, value in table.items():
        if _is_tables(value):
            for index, item in enumerate(value):
                lines.extend(["", f"[[{'.'.join(toml_key(part) for part in (*header, name))}]]"])
                _write_table(lines, (*header, name), (*path, name, index), item, comments)


def _rebased(value: Any, source_dir: Path, out_dir: Path) -> Any:
    """`value` with every relative `file =` (job files, traces, vdbench files, empirical latency
    files: the engine reads them relative to the scenario it loads) made relative to `out_dir`,
    where the calibrated file is, instead of the original's folder."""
    if isinstance(value, list):
        return [_rebased(item, source_dir, out_dir) for item in value]
    if not isinstance(value, dict):
        return value
    return {
        key: os.path.relpath(source_dir / item, out_dir)
        if key == "file" and isinstance(item, str) and not os.path.isabs(item)
        else _rebased(item, source_dir, out_dir)
        for key, item in value.items()
    }


def calibrated_text(
    original: Path,
    out: Path,
    name: str,
    header: Sequence[str],
    fitted: Mapping[str, Any],
    comments: Mapping[str, str],
    variant: Mapping[str, Any] | None = None,
) -> str:
    """The calibrated scenario: `header` comment lines, `base`, the fitted entries with a comment
    on each fitted value, and the variant the fit ran (copied, since variants are not inherited)."""
    base = os.path.relpath(original.resolve(), out.resolve().parent)
    lines = [
        *(f"# {toml_comment(line)}" for line in header),
        "schema_version = 1",
        f"name = {toml_value(name)}",
        f"base = {toml_value(base)}",
    ]
    body: dict[str, Any] = dict(overlay(original, fitted))
    if variant is not None:
        body["variant"] = [dict(variant)]
    body = _rebased(body, original.resolve().parent, out.resolve().parent)
    by_path = {key_path(key): comment for key, comment in comments.items()}
    _write_table(lines, (), (), body, by_path)
    return "\n".join(lines) + "\n"
