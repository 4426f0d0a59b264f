"""Runs of `sanlab headroom`'s points: a point (a load factor) at some seeds, in this process on
the engine's threads or on Dask workers through `sanlab.runs` (RunTask -> run_task), and each
run's figures read from its entity table (`runs.entity_table`), the same way on both paths.

Seeds are common random numbers: every point runs seeds base, base + 1, ... as `sanlab run --seed`
would, so a point's seed s and another's share their arrivals and draws."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa

from sanlab import engine
from sanlab.runs import RunTask, entity_table, run_task

LATENCY_COLUMNS = ("mean", "p50", "p95", "p99", "p999", "max")

RunFigures = dict[str, dict[str, float]]
"""One run: selected VM name -> {"iops", "mean", "p50", "p95", "p99", "p999", "max"}."""


class PointRunError(Exception):
    """A run of a point failed (the scenario refused its overrides, a worker died)."""


@dataclass(frozen=True)
class Job:
    """A point's runs to do: `seeds` from `first` on, with `sets` (the factor's overrides)."""

    point: int
    sets: tuple[str, ...]
    first: int
    count: int


class Runner(Protocol):
    parallel: int

    def run(self, jobs: Sequence[Job]) -> dict[tuple[int, int], RunFigures]: ...


def figures_of(table: pa.Table, vms: Sequence[str]) -> RunFigures:
    """The selected VMs' figures of one run's entity table."""
    found: RunFigures = {}
    for row in table.to_pylist():
        if row["entity_kind"] != "vm":
            continue
        name = row["entity"].removeprefix("vm/")
        if name not in vms:
            continue
        figures = {"iops": float(row.get("iops") or 0.0)}
        for column in LATENCY_COLUMNS:
            value = row.get(f"lat_ms_{column}")
            figures[column] = float("nan") if value is None else float(value)
        found[name] = figures
    return found


@dataclass
class LocalRunner:
    """Points in this process: one engine call per point (its seeds as replications: replication r
    runs seed + r), the points of a round side by side on threads (the engine releases the GIL)."""

    scenario: str
    variant: str
    base_sets: tuple[str, ...]
    duration: str | None
    vms: tuple[str, ...]
    cores: int

    @property
    def parallel(self) -> int:
        return self.cores

    def _one(self, job: Job, jobs_each: int) -> dict[tuple[int, int], RunFigures]:
        sets = [*self.base_sets, *job.sets]
        try:
            doc = engine.run(
                self.scenario, [self.variant], sets, job.first, self.duration,
                jobs=jobs_each, replications=job.count,
            )  # fmt: skip
        except engine.ScenarioError as exc:
            raise PointRunError(f"{exc} (with --set {' --set '.join(job.sets)})") from None
        found: dict[tuple[int, int], RunFigures] = {}
        for variant in doc["variants"]:
            table = entity_table({**doc, "variants": [variant]}, job.point, variant["seed"])  # type: ignore[typeddict-item]
            found[(job.point, int(variant["seed"]))] = figures_of(table, self.vms)
        return found

    def run(self, jobs: Sequence[Job]) -> dict[tuple[int, int], RunFigures]:
        if not jobs:
            return {}
        jobs_each = max(1, self.cores // len(jobs))
        found: dict[tuple[int, int], RunFigures] = {}
        with ThreadPoolExecutor(max_workers=min(len(jobs), self.cores)) as pool:
            for part in pool.map(lambda job: self._one(job, jobs_each), jobs):
                found.update(part)
        return found


@dataclass
class DaskRunner:
    """Points on Dask: one `RunTask` per point and seed, as sweep and advise send them."""

    scenario: str
    variant: str
    base_sets: tuple[str, ...]
    duration: str | None
    vms: tuple[str, ...]
    client: Any

    @property
    def parallel(self) -> int:
        return max(1, sum(self.client.nthreads().values()))

    def run(self, jobs: Sequence[Job]) -> dict[tuple[int, int], RunFigures]:
        tasks = [
            RunTask(
                job.point,
                seed,
                self.scenario,
                (*self.base_sets, *job.sets),
                (self.variant,),
                self.duration,
                engine.VERSION,
            )
            for job in jobs
            for seed in range(job.first, job.first + job.count)
        ]
        futures = self.client.map(run_task, tasks, pure=False)
        found: dict[tuple[int, int], RunFigures] = {}
        sets_of: Mapping[int, tuple[str, ...]] = {job.point: job.sets for job in jobs}
        for outcome in self.client.gather(futures):
            if outcome.error is not None or outcome.table is None:
                sets = " --set ".join(sets_of[outcome.point])
                raise PointRunError(f"seed {outcome.seed} (--set {sets}): {outcome.error}")
            found[(outcome.point, outcome.seed)] = figures_of(outcome.table, self.vms)
        return found
