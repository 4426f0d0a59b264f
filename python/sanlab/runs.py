"""The many-runs machinery that `sweep`, `calibrate` and `advise` stand on: a run as a task a
Dask worker can take (`RunTask` -> `run_task` -> `RunOutcome`, the run's figures as one Arrow
table of entities), and the Dask client the runs go to (intervals across seeds: `sanlab.intervals`).

A run is `engine.run(scenario, variants, sets, seed, duration)`, exactly what `sanlab run --set ...
--seed ...` runs, so a row here holds the numbers that command prints.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import signal
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from sanlab import engine
from sanlab.document import ENTITY_KINDS, Document, entities
from sanlab.errors import UserError
from sanlab.results import flatten

CONNECT_TIMEOUT_S = 10
RUN_METRICS = ("wall_s", "events", "ios", "sim_time_s", "measured_s")
"""Per-variant figures stored as the metrics of the `run` entity."""
KEY_COLUMNS = ("point", "seed", "variant", "entity_kind", "entity")


class ClusterError(UserError):
    """The Dask scheduler named cannot be reached."""


@dataclass(frozen=True)
class RunTask:
    """One run of a sweep, sent to a Dask worker."""

    point: int
    seed: int
    scenario: str
    sets: tuple[str, ...]
    variants: tuple[str, ...]
    duration: str | None
    version: str


@dataclass(frozen=True)
class RunOutcome:
    """What a worker sends back: the run's rows, or the error that stopped it."""

    point: int
    seed: int
    table: pa.Table | None
    error: str | None


def fault_iops_min(variant: Mapping[str, Any]) -> dict[str, float]:
    """`fault_iops_min` of a run with faults: the lowest total VM IOPS in a sample interval that
    overlaps a fault (from a fault's start to its end, or the run's end); nothing without faults."""
    faults = variant.get("faults") or []
    if not faults:
        return {}
    windows: list[tuple[float, float]] = []
    for edge in faults:
        if edge["phase"] == "start":
            windows.append((edge["t_s"], variant["sim_time_s"]))
        elif edge["phase"] == "end" and windows:
            windows[-1] = (windows[-1][0], edge["t_s"])
    series = variant.get("timeseries") or {}
    totals: dict[float, float] = {}
    for t_s, entity, metric, value in zip(
        series.get("t_s", []), series.get("entity", []), series.get("metric", []), series.get("value", []),
        strict=True,
    ):
        if metric == "iops" and entity.startswith("vm/"):
            totals[t_s] = totals.get(t_s, 0.0) + value
    interval_s = min((b - a for a, b in itertools.pairwise(sorted(totals))), default=0.0)
    hit = [
        total
        for t_s, total in totals.items()
        if any(start < t_s and t_s - interval_s < end for start, end in windows)
    ]
    return {"fault_iops_min": min(hit)} if hit else {}


def entity_table(doc: Document, point: int, seed: int) -> pa.Table:
    """One row per variant and entity (`run`, VMs, hosts, paths, devices, arrays), numeric fields as
    columns."""
    rows: list[dict[str, Any]] = []
    for variant in doc["variants"]:
        base = {"point": point, "seed": seed, "variant": variant["name"]}
        run_metrics = {m: variant[m] for m in RUN_METRICS}
        rows.append({**base, "entity_kind": "run", "entity": "run", **run_metrics, **fault_iops_min(variant)})
        for key, kind in ENTITY_KINDS:
            for item in entities(variant, key):
                metrics = {
                    name: float(value)
                    for name, value in flatten(item).items()
                    if isinstance(value, (int, float)) and not isinstance(value, bool)
                }
                rows.append({**base, "entity_kind": kind, "entity": f"{kind}/{item['name']}", **metrics})
    metrics_seen = dict.fromkeys(name for row in rows for name in row if name not in KEY_COLUMNS)
    schema = pa.schema(
        [
            ("point", pa.int64()),
            ("seed", pa.int64()),
            ("variant", pa.string()),
            ("entity_kind", pa.string()),
            ("entity", pa.string()),
            *((name, pa.float64()) for name in metrics_seen),
        ]
    )
    return pa.Table.from_pylist(rows, schema=schema)


def run_task(task: RunTask) -> RunOutcome:
    """Runs one point × seed (on a Dask worker); a scenario error comes back as the outcome's error."""
    if engine.VERSION != task.version:
        message = f"worker has sanlab {engine.VERSION}, the sweep needs {task.version}"
        return RunOutcome(task.point, task.seed, None, message)
    try:
        doc = engine.run(task.scenario, task.variants, task.sets, task.seed, task.duration)
    except engine.ScenarioError as exc:
        return RunOutcome(task.point, task.seed, None, str(exc))
    return RunOutcome(task.point, task.seed, entity_table(doc, task.point, task.seed), None)


@contextlib.contextmanager
def _workers_ignore_ctrl_c() -> Iterator[None]:
    """Ctrl-C ignored while the local cluster starts its worker processes: they inherit it (Python
    leaves SIGINT alone when its parent ignored it), so a Ctrl-C reaches only this process, which
    keeps what finished and closes the cluster, instead of every worker printing a traceback."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may change a signal's handler; its workers then hear Ctrl-C
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def dask_client(scheduler: str | None, workers: int | None) -> Iterator[Any]:
    """A Dask client: to the scheduler at `scheduler`, else to a new LocalCluster of `workers`
    processes; closed on leaving, with the cluster it started."""
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ClusterError(f"cannot reach the Dask scheduler at {scheduler!r}: {exc}") from None
    else:
        with _workers_ignore_ctrl_c():
            cluster = LocalCluster(
                n_workers=workers or os.cpu_count() or 1,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                # No dashboard, but the scheduler still serves HTTP: on a free port, so that clusters
                # started side by side (two sweeps at once) do not contend for Dask's 8787.
                scheduler_kwargs={"dashboard_address": ":0"},
                silence_logs=logging.ERROR,
            )
        client = Client(cluster)
    try:
        yield client
    finally:
        cluster_started = client.cluster
        client.close()
        if cluster_started is not None:
            cluster_started.close()
