"""Runs a scenario's variants side by side on the machine's cores (the engine releases the GIL)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import sanlab


def run_variants(scenario: Path, names: Sequence[str] = (), sets: Sequence[str] = ()) -> dict[str, dict[str, Any]]:
    """Each named variant's result (every variant when none is named), by name, in the file's order."""
    names = list(names) or sanlab.validate(scenario, set=list(sets), cost=False)["variants"]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        docs = pool.map(lambda name: sanlab.run(scenario, variants=name, set=list(sets)).raw, names)
        return {doc["variants"][0]["name"]: doc["variants"][0] for doc in docs}
