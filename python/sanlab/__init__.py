"""sanlab: a discrete-event simulator of the storage I/O path (VM → host queues → multipath → fabric → array).

The engine is native (`sanlab._core`, reached through `sanlab.engine`); this package runs it and
returns pandas tables:

    >>> import sanlab
    >>> results = sanlab.run("scenarios/studies/metro_cluster_psp.toml", duration="5s")
    >>> results.vms[["variant", "name", "iops", "lat_ms_mean"]]
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from sanlab import engine
from sanlab.engine import ScenarioError

if TYPE_CHECKING:
    from sanlab.results import Results

__all__ = ["Results", "ScenarioError", "kinds", "run", "validate"]


def __getattr__(name: str) -> Any:
    # Results (and pandas with it) on first use: the `sanlab` command's launcher imports this
    # package before it restarts the interpreter, and pandas there cost every run 0.3 s.
    if name == "Results":
        from sanlab.results import Results

        return Results
    raise AttributeError(f"module 'sanlab' has no attribute {name!r}")

Overrides = Mapping[str, object] | Iterable[str] | None
"""Scenario overrides: `{"host[0].multipath.psp": "rr"}` or `["host[0].multipath.psp=rr"]`."""


def _format_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _override_list(overrides: Overrides) -> list[str]:
    """Turns overrides into the engine's `KEY=VALUE` strings."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        return [f"{key}={_format_value(value)}" for key, value in overrides.items()]
    if isinstance(overrides, str):
        raise TypeError("set= takes a mapping or a list of KEY=VALUE strings, not one string")
    items = list(overrides)
    for item in items:
        if "=" not in item:
            raise ScenarioError(f"--set {item!r}: expected KEY=VALUE")
    return items


def run(
    scenario: str | os.PathLike[str],
    variants: str | Iterable[str] | None = None,
    set: Overrides = None,  # mirrors the CLI's --set
    seed: int | None = None,
    duration: str | None = None,
) -> Results:
    """Runs a scenario file and returns its results.

    Args:
        scenario: path to the scenario TOML file.
        variants: variant name(s) to run; all variants when None.
        set: overrides of scenario values, as a mapping or `KEY=VALUE` strings.
        seed: base seed; the scenario's seed when None.
        duration: simulated time, e.g. "5s"; the scenario's duration when None.

    Raises:
        ScenarioError: the scenario or an override is invalid; the message says where.
    """
    if isinstance(variants, str):
        variants = [variants]
    names = None if variants is None else list(variants)
    document = engine.run(scenario, names, _override_list(set), seed, duration)
    from sanlab.results import Results

    return Results(document)


def validate(
    scenario: str | os.PathLike[str],
    set: Overrides = None,  # mirrors the CLI's --set
    cost: bool = True,
    variants: str | Iterable[str] | None = None,
) -> dict[str, Any]:
    """Checks a scenario file without running it.

    Returns `{"scenario": name, "variants": [names], "cost": {...}}`. `cost` estimates what
    running every variant costs (docs/cli.md): `ios`, `events`, `engine_s` (None when they
    cannot be measured), `peak_memory_bytes`, `machine` (`total_bytes`, `available_bytes`; None
    where the machine's memory cannot be read), `warning` (None, or why the run may not fit in
    memory) and `variants`, one estimate each. It comes from a pilot of each variant (at most
    1 s of wall time each, then extrapolated); `cost=False` leaves it out and only checks.
    `variants` limits both to the named variants (default: all, as `run` does).

    Raises:
        ScenarioError: the scenario or an override is invalid; the message says where.
    """
    if isinstance(variants, str):
        variants = [variants]
    names = None if variants is None else list(variants)
    checked: dict[str, Any] = dict(engine.validate(scenario, _override_list(set), names, cost=cost))
    return checked


def kinds() -> list[dict[str, Any]]:
    """Lists every component kind: extension point, kind, summary and parameters."""
    return [dict(kind) for kind in engine.kinds()]
