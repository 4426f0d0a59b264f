"""A variant's resolved scenario as a table, parsed at most once however many readers ask: at
10,000 VMs the TOML is megabytes and the fio documents and the report's health figure both need
it. A fresh run's document carries it already parsed."""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Mapping
from typing import Any

from sanlab.document import Variant


@functools.lru_cache(maxsize=4)
def _parse(text: str) -> dict[str, Any]:
    return tomllib.loads(text)


def resolved_scenario(variant: Variant) -> Mapping[str, Any]:
    """The variant's resolved scenario: as the engine handed it over (`resolved`), else its
    `resolved_toml` parsed (a run folder read back), else empty. Shared between callers: read it,
    do not change it."""
    if "resolved" in variant:
        return variant["resolved"]
    text = variant.get("resolved_toml")
    return _parse(text) if text else {}
