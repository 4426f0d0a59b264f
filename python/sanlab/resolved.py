"""A variant's resolved scenario as a table, parsed once however many readers ask: at 10,000 VMs
the TOML is megabytes and the fio documents and the report's health figure both need it."""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping
from typing import Any


@functools.lru_cache(maxsize=4)
def _parse(text: str) -> dict[str, Any]:
    return tomllib.loads(text)


def resolved_scenario(variant: Mapping[str, Any]) -> Mapping[str, Any]:
    """The variant's `resolved_toml` parsed (empty when the document carries none). Shared between
    callers: read it, do not change it."""
    text = variant.get("resolved_toml")
    return _parse(text) if text else {}
