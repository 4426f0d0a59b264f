"""Sweeps: a scenario run over a grid of values × seeds on Dask, into one Parquet dataset.

```
<out>/sweep.json         the sweep's definition (a rerun with the same arguments resumes it)
      parts/part-*.parquet runs as they finished, written every few seconds (what resume reads)
      results.parquet      one row per point × seed × variant × entity, metrics as columns
      summary.parquet      per point, variant, entity and metric: runs, mean, std, 95 % CI across seeds
      failures.json        runs that failed, with their error
```

A run is `runs.run_task` (the engine's `run`, exactly what `sanlab run --set ... --seed ...` runs), so
a sweep row holds the numbers that command prints. Runs go to a Dask
LocalCluster by default, or to an existing cluster given its scheduler address; results come back
to this process, which alone writes the folder (workers need the scenario, not the folder).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import time
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from rich import box
from rich.table import Table

from sanlab import engine
from sanlab.errors import UserError
from sanlab.export.files import JsonBoundError, loads_bounded, refuse_links, replace_file, replace_text
from sanlab.formatting import format_count, format_ms, shown_name
from sanlab.intervals import Interval
from sanlab.runs import RunOutcome, RunTask, dask_client, run_task
from sanlab.views.legend import legend

SWEEP_FILE = "sweep.json"
PARTS_DIR = "parts"
RESULTS_FILE = "results.parquet"
SUMMARY_FILE = "summary.parquet"
FAILURES_FILE = "failures.json"
FLUSH_S = 2.0
"""Finished runs are written to a part file at least this often, so an interrupted sweep keeps them."""
TABLE_ROWS = 40
"""The terminal summary shows at most this many rows; summary.parquet has them all."""
MAX_RUNS = 100_000
"""Runs (grid points times seeds) in one sweep. Each is a simulation of its own, held as a task and a seed
in sweep.json, and costs 30-55 ms of Dask overhead besides its engine time (docs/performance_sweeps.md):
100,000 runs are an hour of overhead alone and, at 1 s a run, 14 hours on 2 workers. More seeds than
that would be listed in memory before anything runs (100,000,000 seeds ended in a MemoryError)."""


class SweepError(UserError):
    """An invalid sweep: arguments, scenario, output folder or scheduler; the message says which."""


def split_values(text: str) -> list[str]:
    """Splits `V1,V2,...` at the commas outside brackets, braces and quotes (TOML arrays stay whole)."""
    values: list[str] = []
    depth = 0
    quote = ""
    current = ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == "," and depth == 0:
            values.append(current.strip())
            current = ""
            continue
        current += char
    values.append(current.strip())
    return values


@dataclass(frozen=True)
class Axis:
    """One varied scenario value: its key (as for --set) and the values it takes."""

    key: str
    values: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> Axis:
        """`KEY=V1,V2,...` as given to --vary."""
        key, sep, rest = text.partition("=")
        key = key.strip()
        if not sep or not key:
            raise SweepError(f"--vary {text!r}: expected KEY=V1,V2,...")
        values = split_values(rest)
        if any(not value for value in values):
            raise SweepError(f"--vary {text!r}: empty value; expected KEY=V1,V2,...")
        if len(set(values)) != len(values):
            raise SweepError(f"--vary {text!r}: a value is repeated")
        return cls(key, tuple(values))


def _column_values(values: Sequence[str]) -> list[Any]:
    """An axis' values typed for its Parquet column: integers, else numbers, else booleans, else text."""
    for convert in (int, float):
        try:
            return [convert(value) for value in values]
        except ValueError:
            continue
    if all(value in ("true", "false") for value in values):
        return [value == "true" for value in values]
    return list(values)


@dataclass(frozen=True)
class SweepSpec:
    """What a sweep runs: the scenario, the grid of axes, seeds, fixed overrides, variants and duration."""

    scenario: str
    scenario_sha256: str
    axes: tuple[Axis, ...]
    seeds: tuple[int, ...]
    sets: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    duration: str | None = None
    version: str = field(default=engine.VERSION)

    @classmethod
    def create(
        cls,
        scenario: Path,
        vary: Sequence[str],
        *,
        seeds: int = 1,
        base_seed: int | None = None,
        sets: Sequence[str] = (),
        variants: Sequence[str] = (),
        duration: str | None = None,
    ) -> SweepSpec:
        """Checks the arguments and the scenario (with `sets`, without the varied values).

        Seeds are `base_seed`, `base_seed + 1`, ...; `base_seed` defaults to the scenario's `[run] seed`.
        """
        if seeds < 1:
            raise SweepError(f"--seeds {seeds}: expected at least 1")
        axes = tuple(Axis.parse(text) for text in vary)
        if not axes:
            raise SweepError("nothing to sweep: give at least one --vary KEY=V1,V2,...")
        keys = [axis.key for axis in axes]
        if len(set(keys)) != len(keys):
            raise SweepError(f"--vary: a key is given twice ({', '.join(keys)})")
        points = math.prod(len(axis.values) for axis in axes)
        if points * seeds > MAX_RUNS:
            most = MAX_RUNS // points
            advice = f"give --seeds {most} or fewer" if most else "vary fewer values"
            runs, most_runs = format_count(points * seeds), format_count(MAX_RUNS)
            raise SweepError(
                f"--seeds {seeds} with {format_count(points)} grid point(s) makes {runs} runs: "
                f"expected at most {most_runs} runs in one sweep (each is a simulation of its own); {advice}"
            )
        engine.validate(scenario, sets, variants)
        path = scenario.resolve()
        text = path.read_bytes()
        if base_seed is None:
            base_seed = int(tomllib.loads(text.decode("utf-8")).get("run", {}).get("seed", 1))
        if base_seed + seeds - 1 >= 2**63:
            raise SweepError(f"--seed {base_seed} with --seeds {seeds}: seeds must stay below 2**63")
        return cls(
            scenario=str(path),
            scenario_sha256=hashlib.sha256(text).hexdigest(),
            axes=axes,
            seeds=tuple(range(base_seed, base_seed + seeds)),
            sets=tuple(sets),
            variants=tuple(variants),
            duration=duration,
        )

    def points(self) -> list[tuple[str, ...]]:
        """Every combination of the axes' values, the first axis varying slowest."""
        return list(itertools.product(*(axis.values for axis in self.axes)))

    def tasks(self) -> list[RunTask]:
        """Every run: each point with each seed."""
        return [
            RunTask(
                point=index,
                seed=seed,
                scenario=self.scenario,
                sets=(
                    *self.sets,
                    *(f"{axis.key}={value}" for axis, value in zip(self.axes, values, strict=True)),
                ),
                variants=self.variants,
                duration=self.duration,
                version=self.version,
            )
            for index, values in enumerate(self.points())
            for seed in self.seeds
        ]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SweepSpec:
        return cls(
            scenario=data["scenario"],
            scenario_sha256=data["scenario_sha256"],
            axes=tuple(Axis(axis["key"], tuple(axis["values"])) for axis in data["axes"]),
            seeds=tuple(data["seeds"]),
            sets=tuple(data["sets"]),
            variants=tuple(data["variants"]),
            duration=data["duration"],
            version=data["version"],
        )


@dataclass
class Failure:
    """A run that failed and its error."""

    point: int
    seed: int
    sets: list[str]
    error: str


@dataclass
class SweepResult:
    """What a sweep did: runs in the grid, already done before, run now, and the failures."""

    out_dir: Path
    runs: int
    skipped: int
    ran: int
    failures: list[Failure]


OUTPUT_FILES = (SWEEP_FILE, RESULTS_FILE, SUMMARY_FILE, FAILURES_FILE)
"""The files a sweep writes in its folder (and the part files under PARTS_DIR)."""


def _refuse_links(out_dir: Path) -> None:
    """A folder handed over to resume is untrusted: none of the files the sweep reads or writes
    may be a symbolic link (a results.parquet -> ~/.bashrc would be overwritten)."""
    parts = out_dir / PARTS_DIR
    refuse_links([out_dir / name for name in OUTPUT_FILES], folders=[parts])
    if parts.is_dir():
        refuse_links(sorted(parts.iterdir()))


def _read_sweep_file(sweep_file: Path) -> dict[str, Any]:
    try:
        existing = loads_bounded(sweep_file.read_text(encoding="utf-8"))
    except (JsonBoundError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SweepError(f"{sweep_file}: not a sweep definition ({exc}); the file is damaged") from None
    if not isinstance(existing, dict):
        raise SweepError(f"{sweep_file}: expected a JSON object; the file is damaged")
    return existing


def _prepare(out_dir: Path, spec: SweepSpec) -> None:
    """Creates the folder for `spec`, or checks that an existing one holds the same sweep (resume)."""
    sweep_file = out_dir / SWEEP_FILE
    _refuse_links(out_dir)
    if sweep_file.is_file():
        existing = _read_sweep_file(sweep_file)
        mine = json.loads(json.dumps(spec.to_json()))
        differs = [key for key in mine if key != "scenario" and existing.get(key) != mine[key]]
        if differs:
            raise SweepError(
                f"{out_dir} holds a different sweep ({', '.join(differs)} differ); "
                "give the same arguments to resume it, or another --out"
            )
        return
    if out_dir.exists() and any(out_dir.iterdir()):
        raise SweepError(
            f"output folder {str(out_dir)!r} is not empty and holds no sweep; choose another --out"
        )
    (out_dir / PARTS_DIR).mkdir(parents=True, exist_ok=True)
    replace_text(sweep_file, json.dumps(spec.to_json(), indent=2) + "\n")


def _parts(out_dir: Path) -> list[Path]:
    return sorted((out_dir / PARTS_DIR).glob("part-*.parquet"))


def done_runs(out_dir: Path) -> set[tuple[int, int]]:
    """(point, seed) of the runs already in the folder's part files."""
    done: set[tuple[int, int]] = set()
    for part in _parts(out_dir):
        try:
            table = pq.read_table(part, columns=["point", "seed"])
        except (pa.ArrowException, OSError, KeyError, ValueError) as exc:
            raise SweepError(
                f"{part}: not a part file of a sweep with columns point and seed ({exc}); "
                "the file is damaged: "
                "remove it, and a rerun runs its runs again"
            ) from None
        done.update(zip(table.column("point").to_pylist(), table.column("seed").to_pylist(), strict=True))
    return done


class _PartWriter:
    """Buffers finished runs and writes them as a new part file (atomically) at least every FLUSH_S."""

    def __init__(self, out_dir: Path) -> None:
        self._dir = out_dir / PARTS_DIR
        self._dir.mkdir(exist_ok=True)
        self._buffer: list[pa.Table] = []
        self._next = len(_parts(out_dir))
        self._flushed = time.perf_counter()

    def add(self, table: pa.Table) -> None:
        self._buffer.append(table)
        if time.perf_counter() - self._flushed >= FLUSH_S:
            self.flush()

    def flush(self) -> None:
        self._flushed = time.perf_counter()
        if not self._buffer:
            return
        table = pa.concat_tables(self._buffer, promote_options="default")
        while (path := self._dir / f"part-{self._next:05d}.parquet").exists():
            self._next += 1
        replace_file(path, lambda file: pq.write_table(table, file, compression="zstd"))
        self._buffer = []
        self._next += 1


def run_sweep(
    spec: SweepSpec,
    out_dir: Path,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    on_start: Callable[[int], None] = lambda runs: None,
    on_progress: Callable[[int, int], None] = lambda finished, failed: None,
    client: Any = None,
) -> SweepResult:
    """Runs the runs of `spec` not yet in `out_dir`, then writes results, summary and failures.

    `client`: a Dask client to reuse (a caller running many small sweeps, as `sanlab advise`
    does, starts its cluster once); it stays open. Without it the sweep starts and closes its own.

    `on_start(runs)` is called with the number of runs to do, `on_progress(finished, failed)` as
    they come back. On KeyboardInterrupt the runs
    that finished are saved (a rerun resumes) and the interrupt goes on.
    """
    _prepare(out_dir, spec)
    done = done_runs(out_dir)
    tasks = [task for task in spec.tasks() if (task.point, task.seed) not in done]
    on_start(len(tasks))
    failures: list[Failure] = []
    writer = _PartWriter(out_dir)
    if tasks:
        from distributed import as_completed

        with contextlib.nullcontext(client) if client is not None else dask_client(scheduler, workers) as client:
            futures = client.map(run_task, tasks, pure=False)
            by_key = {future.key: task for future, task in zip(futures, tasks, strict=True)}
            try:
                for future in as_completed(futures):
                    task = by_key[future.key]
                    try:
                        outcome: RunOutcome = future.result()
                    except Exception as exc:  # a worker died or could not run the task: recorded, others go on
                        outcome = RunOutcome(task.point, task.seed, None, f"{type(exc).__name__}: {exc}")
                    if outcome.table is not None:
                        writer.add(outcome.table)
                    else:
                        failures.append(
                            Failure(task.point, task.seed, list(task.sets), outcome.error or "no result")
                        )
                    on_progress(1, int(outcome.table is None))
            finally:
                writer.flush()
                client.cancel(futures)
    # Into a folder that existed (a resume): new files renamed over the names, never through a link.
    failed = json.dumps([asdict(failure) for failure in failures], indent=2) + "\n"
    replace_text(out_dir / FAILURES_FILE, failed)
    if _parts(out_dir):
        results = compile_results(out_dir, spec)
        summary = summarise(results, spec)
        replace_file(out_dir / RESULTS_FILE, lambda file: pq.write_table(results, file, compression="zstd"))
        replace_file(out_dir / SUMMARY_FILE, lambda file: pq.write_table(summary, file, compression="zstd"))
    return SweepResult(out_dir, len(spec.tasks()), len(done), len(tasks), failures)


def _axis_columns(spec: SweepSpec) -> list[str]:
    return [axis.key for axis in spec.axes]


def compile_results(out_dir: Path, spec: SweepSpec) -> pa.Table:
    """All part files as one table, with a column per axis, ordered by point and seed."""
    table = pa.concat_tables([pq.read_table(part) for part in _parts(out_dir)], promote_options="default")
    points = spec.points()
    index = table.column("point").to_pylist()
    columns = []
    for position, axis in enumerate(spec.axes):
        typed = dict(zip(axis.values, _column_values(axis.values), strict=True))
        columns.append(pa.array([typed[points[point][position]] for point in index]))
    keys = ["point", *_axis_columns(spec), "seed", "variant", "entity_kind", "entity"]
    for position, name in enumerate(_axis_columns(spec)):
        table = table.add_column(1 + position, name, columns[position])
    metrics = [name for name in table.column_names if name not in keys]
    # Arrow's sort is stable: rows of one run keep the engine's order.
    return table.select([*keys, *metrics]).sort_by([("point", "ascending"), ("seed", "ascending")])


def summarise(results: pa.Table, spec: SweepSpec) -> pa.Table:
    """Per point, variant, entity and metric: runs (n), mean, standard deviation and 95 % CI across seeds.

    The CI is mean ± t(0.975, n-1) · std / sqrt(n); it is empty (NaN) with one seed.
    """
    keys = ["point", *_axis_columns(spec), "variant", "entity_kind", "entity"]
    frame = results.to_pandas()
    metrics = [name for name in frame.columns if name not in (*keys, "seed")]
    frame["row"] = range(len(frame))
    long = frame.melt(id_vars=[*keys, "row"], value_vars=metrics, var_name="metric", value_name="value")
    long = long.dropna(subset=["value"])
    summary = (
        long.groupby([*keys, "metric"], sort=False)
        .agg(n=("value", "count"), values=("value", list), std=("value", "std"), row=("row", "min"))
        .reset_index()
    )
    # Entities in the engine's order (their first row), metrics in column order.
    summary["metric_index"] = summary["metric"].map({name: index for index, name in enumerate(metrics)})
    summary = summary.sort_values(["row", "metric_index"]).drop(columns=["row", "metric_index"])
    intervals = [Interval.of(values) for values in summary.pop("values")]
    summary.insert(summary.columns.get_loc("std"), "mean", [interval.mean for interval in intervals])
    # One seed: no interval (NaN), as the table shows it.
    half = [interval.half if interval.n > 1 else math.nan for interval in intervals]
    summary["ci95_low"] = summary["mean"] - half
    summary["ci95_high"] = summary["mean"] + half
    summary["n"] = summary["n"].astype("int64")
    return pa.Table.from_pandas(summary, preserve_index=False)


def load(out_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A finished sweep's results and summary as DataFrames."""
    return pd.read_parquet(out_dir / RESULTS_FILE), pd.read_parquet(out_dir / SUMMARY_FILE)


def failure_messages(failures: Iterable[Failure]) -> list[str]:
    """The distinct errors of failed runs, in order of first appearance."""
    return list(dict.fromkeys(failure.error for failure in failures))


def _with_ci(mean: float, low: float, formatter: Callable[[float], str]) -> str:
    if math.isnan(low):
        return formatter(mean)
    return f"{formatter(mean)} ± {formatter(mean - low)}"


def short_keys(keys: Sequence[str]) -> list[str]:
    """Headers for axis keys: their last parts (`lun_queue_depth`), or the whole keys if those repeat."""
    last = [key.rpartition(".")[2] for key in keys]
    return last if len(set(last)) == len(last) else list(keys)


def summary_rich_table(out_dir: Path) -> Table:
    """VM IOPS and latency per point and variant (mean ± 95 % CI half-width over seeds), for the terminal."""
    spec = SweepSpec.from_json(json.loads((out_dir / SWEEP_FILE).read_text(encoding="utf-8")))
    summary = pd.read_parquet(out_dir / SUMMARY_FILE)
    vms = summary[summary["entity_kind"] == "vm"]
    wide = vms.pivot_table(
        index=["point", "variant", "entity"],
        columns="metric",
        values=["mean", "ci95_low", "n"],
        sort=False,
        dropna=False,
    ).dropna(how="all")  # dropna=False makes every point x variant x VM; variants may differ in VMs
    points = spec.points()
    keys = list(wide.index)
    show_variant = len({variant for _, variant, _ in keys}) > 1
    show_vm = len({entity for _, _, entity in keys}) > 1
    table = Table(
        title=f"sweep: VM IOPS and latency, mean ± 95 % CI over {len(spec.seeds)} seed(s)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
        show_edge=False,
    )
    for header in (
        *map(shown_name, short_keys(_axis_columns(spec))),
        *(["variant"] if show_variant else []),
        *(["VM"] if show_vm else []),
    ):
        table.add_column(header, no_wrap=True)
    for header in ("runs", "IOPS", "mean ms", "p99 ms"):
        table.add_column(header, justify="right", no_wrap=True)
    for (point, variant, entity), row in itertools.islice(wide.iterrows(), TABLE_ROWS):
        table.add_row(  # names from the scenario and values from --vary, escaped for the terminal
            *map(shown_name, points[int(point)]),
            *([shown_name(str(variant))] if show_variant else []),
            *([shown_name(str(entity).removeprefix("vm/"))] if show_vm else []),
            str(int(row[("n", "iops")])),
            _with_ci(row[("mean", "iops")], row[("ci95_low", "iops")], format_count),
            _with_ci(row[("mean", "lat_ms_mean")], row[("ci95_low", "lat_ms_mean")], format_ms),
            _with_ci(row[("mean", "lat_ms_p99")], row[("ci95_low", "lat_ms_p99")], format_ms),
        )
    if len(wide) > TABLE_ROWS:
        where = shown_name(str(out_dir / SUMMARY_FILE))
        table.caption = legend([f"first {TABLE_ROWS} of {len(wide)} rows", f"all in {where}"])
        table.caption_justify = "left"
    return table
