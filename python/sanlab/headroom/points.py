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
from sanlab.views.rows import STAGES

LATENCY_COLUMNS = ("mean", "p50", "p95", "p99", "p999", "max")

RunFigures = dict[str, dict[str, float]]
"""One run: VM name -> {"iops", "mean", "p50", "p95", "p99", "p999", "max"} and, when the engine
reports them, each stage of STAGES as `stage_<name>` (ms); every VM of the run."""


class PointRunError(Exception):
    """A run of a point failed (the scenario refused its overrides, a worker died)."""


@dataclass(frozen=True)
class Setup:
    """A point's scenario as it runs: `sanlab run SCENARIO --variant VARIANT --set BASE_SETS...
    --set SETS...`, and the VMs whose load grew and whose figures the SLOs judge (with
    `--grow vms`, the copies among them)."""

    scenario: str
    variant: str
    sets: tuple[str, ...]  # the growth's own overrides, shown with the point
    base_sets: tuple[str, ...]  # --set given for every run, applied first
    grown: tuple[str, ...]
    judged: tuple[str, ...]
    vms: int | None = None  # --grow vms: how many VMs grow (today's and their copies)
    origins: tuple[str, ...] | None = None  # --grow vms: each grown VM's original, as `grown`

    def all_sets(self) -> list[str]:
        return [*self.base_sets, *self.sets]


@dataclass(frozen=True)
class Job:
    """A point's runs to do: `count` seeds from `first` on, of the point's `setup`."""

    point: int
    setup: Setup
    first: int
    count: int


class Runner(Protocol):
    parallel: int

    def run(self, jobs: Sequence[Job]) -> dict[tuple[int, int], RunFigures]: ...


def figures_of(table: pa.Table) -> RunFigures:
    """Every VM's figures of one run's entity table."""
    found: RunFigures = {}
    for row in table.to_pylist():
        if row["entity_kind"] != "vm":
            continue
        name = row["entity"].removeprefix("vm/")
        figures = {"iops": float(row.get("iops") or 0.0)}
        for column in LATENCY_COLUMNS:
            value = row.get(f"lat_ms_{column}")
            figures[column] = float("nan") if value is None else float(value)
        for stage in STAGES:
            value = row.get(f"stages_ms_{stage}")
            if value is not None:
                figures[f"stage_{stage}"] = float(value)
        found[name] = figures
    return found


@dataclass
class LocalRunner:
    """Points in this process: one engine call per point (its seeds as replications: replication r
    runs seed + r), the points of a round side by side on threads (the engine releases the GIL)."""

    duration: str | None
    cores: int

    @property
    def parallel(self) -> int:
        return self.cores

    def _one(self, job: Job, jobs_each: int) -> dict[tuple[int, int], RunFigures]:
        setup = job.setup
        try:
            doc = engine.run(
                setup.scenario, [setup.variant], setup.all_sets(), job.first, self.duration,
                jobs=jobs_each, replications=job.count,
            )  # fmt: skip
        except engine.ScenarioError as exc:
            raise PointRunError(f"{exc} ({_shown(setup)})") from None
        found: dict[tuple[int, int], RunFigures] = {}
        for variant in doc["variants"]:
            table = entity_table({**doc, "variants": [variant]}, job.point, variant["seed"])  # type: ignore[typeddict-item]
            found[(job.point, int(variant["seed"]))] = figures_of(table)
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

    duration: str | None
    client: Any

    @property
    def parallel(self) -> int:
        return max(1, sum(self.client.nthreads().values()))

    def run(self, jobs: Sequence[Job]) -> dict[tuple[int, int], RunFigures]:
        tasks = [
            RunTask(
                job.point,
                seed,
                job.setup.scenario,
                tuple(job.setup.all_sets()),
                (job.setup.variant,),
                self.duration,
                engine.VERSION,
            )
            for job in jobs
            for seed in range(job.first, job.first + job.count)
        ]
        futures = self.client.map(run_task, tasks, pure=False)
        found: dict[tuple[int, int], RunFigures] = {}
        setup_of: Mapping[int, Setup] = {job.point: job.setup for job in jobs}
        for outcome in self.client.gather(futures):
            if outcome.error is not None or outcome.table is None:
                raise PointRunError(
                    f"seed {outcome.seed} ({_shown(setup_of[outcome.point])}): {outcome.error}"
                )
            found[(outcome.point, outcome.seed)] = figures_of(outcome.table)
        return found


def _shown(setup: Setup) -> str:
    """Which point failed: its scenario file (--grow vms) or its overrides."""
    sets = " ".join(f"--set {line}" for line in setup.sets)
    return f"{setup.scenario} {sets}".strip() if setup.vms is not None else f"with {sets or 'no --set'}"
