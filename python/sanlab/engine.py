"""The one door to the compiled engine (`sanlab._core`): every run, check and registry lookup
of the package goes through here, parsed once into the types of `document.py`.

The engine's own errors become Python ones: a scenario or override it refuses raises
`ScenarioError` (a `UserError`: exit 2), a panic in Rust raises `InternalError` (exit 3).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any, NotRequired, TypedDict

from sanlab import _core
from sanlab.document import Document
from sanlab.errors import UserError

__all__ = [
    "VERSION",
    "Checked",
    "InternalError",
    "KindDoc",
    "Progress",
    "ScenarioError",
    "cores",
    "file_name",
    "kinds",
    "run",
    "run_times",
    "validate",
]

VERSION: str = _core.__version__
"""The engine's version (the crate's): a sweep's workers must run the same."""

Progress = _core.Progress
"""Watches a run from another thread (`variants()`), and stops it (`cancel()`)."""

InternalError = _core.InternalError
"""A bug in sanlab (a Rust panic); the message gives its place."""


class ScenarioError(UserError):
    """A scenario or an override the engine refuses; the message says where and why."""


class Checked(TypedDict):
    """What `validate` returns: the scenario's name, the variants that would run, and with
    `cost=True` the estimate of running them (docs/cli.md)."""

    scenario: str
    variants: list[str]
    cost: NotRequired[dict[str, Any]]


class ParamDoc(TypedDict):
    name: str
    type: str
    default: str
    doc: str


class KindDoc(TypedDict):
    """One kind of the engine's registry, as `sanlab kinds` lists it."""

    extension_point: str
    kind: str
    summary: str
    params: list[ParamDoc]
    platform: NotRequired[str]


PathLike = str | os.PathLike[str]


def _chosen(variants: Sequence[str] | None) -> list[str] | None:
    """The engine's variant list: None (every variant) for none given."""
    return list(variants) if variants else None


def run(
    scenario: PathLike,
    variants: Sequence[str] | None = None,
    sets: Sequence[str] = (),
    seed: int | None = None,
    duration: str | None = None,
    *,
    progress: Any = None,
    jobs: int = 1,
    replications: int = 1,
    first_replication: int = 0,
) -> Document:
    """Runs the scenario's `variants` (every one when None or empty), with the `KEY=VALUE`
    overrides `sets`, up to `jobs` at once (the document is the same for any `jobs`); `seed` and
    `duration` replace the scenario's when given. `progress`: a `Progress` to watch and stop it.

    With `replications`, each variant runs that many times, replication r (from
    `first_replication` on) with its seed + r, listed replication by replication with their
    `replication`; `sanlab.replications.combine` makes them one document."""
    try:
        text = _core.run(
            os.fspath(scenario), _chosen(variants), list(sets), seed, duration, progress, jobs,
            replications, first_replication,
        )  # fmt: skip
    except _core.ScenarioError as exc:
        raise ScenarioError(str(exc)) from None
    document: Document = json.loads(text)
    return document


def validate(
    scenario: PathLike, sets: Sequence[str] = (), variants: Sequence[str] | None = None, *, cost: bool = False
) -> Checked:
    """Checks the scenario with `sets` (every variant, or those named) without running it; with
    `cost`, also estimates what running it costs from a short pilot of each variant."""
    try:
        text = _core.validate(os.fspath(scenario), list(sets), _chosen(variants), cost)
    except _core.ScenarioError as exc:
        raise ScenarioError(str(exc)) from None
    checked: Checked = json.loads(text)
    return checked


class RunTimes(TypedDict):
    """A variant's simulated times with the overrides (`run_times`)."""

    variant: str
    duration_s: float
    warmup_s: float
    sample_interval_s: float


def run_times(scenario: PathLike, sets: Sequence[str] = (), variants: Sequence[str] | None = None) -> list[RunTimes]:
    """Each selected variant's duration, warm-up and sample interval with `sets`, in seconds."""
    try:
        text = _core.run_times(os.fspath(scenario), list(sets), _chosen(variants))
    except _core.ScenarioError as exc:
        raise ScenarioError(str(exc)) from None
    times: list[RunTimes] = json.loads(text)
    return times


def kinds() -> list[KindDoc]:
    """Every kind of every extension point, with its parameters."""
    registered: list[KindDoc] = json.loads(_core.kinds())
    return registered


def file_name(name: str) -> str:
    """The file name a variant, job or scenario name becomes in a run folder (the engine's rule);
    ScenarioError when it gives none or is too long."""
    try:
        return _core.file_name(name)
    except _core.ScenarioError as exc:
        raise ScenarioError(str(exc)) from None


def cores() -> int:
    """The cores this process may run on: `sanlab run`'s default `--jobs`."""
    return _core.cores()
