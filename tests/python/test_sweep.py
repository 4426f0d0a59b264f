"""Sweeps: the grid, the statistics, and real Dask clusters (a LocalCluster, and a scheduler and a worker
started as separate processes on loopback), checked against plain `sanlab run`."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from conftest import with_hosts
from sanlab.intervals import t_quantile_975
from sanlab.runs import entity_table, run_task
from sanlab.sweep import (
    Axis,
    SweepError,
    SweepSpec,
    split_values,
    summarise,
)

ROOT = Path(__file__).resolve().parents[2]
METRO_STUDY = ROOT / "scenarios" / "studies" / "metro_cluster_psp.toml"
SANLAB = [sys.executable, "-m", "sanlab.cli"]
DASK = str(Path(sys.executable).parent / "dask")
TIMEOUT_S = 180
DEPTH = "host[0].adapter.lun_queue_depth"
IODEPTH = "vm[0].job[0].iodepth"
SMALL = ["--variant", "rr_iops1", "--duration", "2s", "--set", "run.warmup=1s"]


def _sanlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*SANLAB, *args], capture_output=True, text=True, timeout=TIMEOUT_S, check=False)


def test_values_split_at_top_level_commas() -> None:
    assert split_values("1,2, 3") == ["1", "2", "3"]
    assert split_values('["a","b"],["c"]') == ['["a","b"]', '["c"]']
    assert split_values('{ kind = "rr", iops = 1 },"x,y"') == ['{ kind = "rr", iops = 1 }', '"x,y"']


@pytest.mark.parametrize(("text", "message"), [("novalue", "expected KEY=V1"), ("k=1,,2", "empty value"),
                                               ("k=1,1", "repeated"), ("=1", "expected KEY=V1")])  # fmt: skip
def test_bad_vary_is_refused(text: str, message: str) -> None:
    with pytest.raises(SweepError, match=message):
        Axis.parse(text)


def test_t_quantile() -> None:
    assert t_quantile_975(1) == 12.706
    assert t_quantile_975(30) == 2.042
    assert t_quantile_975(31) == pytest.approx(2.0395, abs=2e-4)
    assert t_quantile_975(120) == pytest.approx(1.9799, abs=2e-4)


def test_grid_is_every_combination_with_every_seed() -> None:
    spec = SweepSpec.create(
        METRO_STUDY, [f"{DEPTH}=16,64", f"{IODEPTH}=1,8,32"], seeds=2, base_seed=10, sets=["run.warmup=0s"]
    )
    tasks = spec.tasks()
    assert len(tasks) == 2 * 3 * 2
    assert spec.seeds == (10, 11)
    assert tasks[0].sets == ("run.warmup=0s", f"{DEPTH}=16", f"{IODEPTH}=1")
    assert (tasks[-1].point, tasks[-1].seed) == (5, 11)
    assert tasks[-1].sets[-2:] == (f"{DEPTH}=64", f"{IODEPTH}=32")
    assert SweepSpec.from_json(json.loads(json.dumps(spec.to_json()))) == spec
    assert SweepSpec.create(METRO_STUDY, [f"{DEPTH}=16"]).seeds == (1,)  # the scenario's [run] seed


def test_seeds_times_points_are_capped_with_the_most_seeds_that_fit() -> None:
    with pytest.raises(
        SweepError,
        match=r"--seeds 100000000 with 3 grid point\(s\) makes 300,000,000 runs: .*give --seeds 33333 or fe",
    ):
        SweepSpec.create(METRO_STUDY, [f"{DEPTH}=4,8,16"], seeds=100_000_000)
    values = ",".join(map(str, range(400)))
    with pytest.raises(SweepError, match="vary fewer values"):
        SweepSpec.create(METRO_STUDY, [f"a={values}", f"b={values}"])
    assert len(SweepSpec.create(METRO_STUDY, [f"{DEPTH}=4,8"], seeds=50_000).seeds) == 50_000


def test_summary_means_and_confidence_intervals(doc: dict[str, Any]) -> None:
    spec = SweepSpec.create(METRO_STUDY, [f"{DEPTH}=16"], seeds=3)
    tables = []
    for seed, iops in zip((1, 2, 3), (1000.0, 2000.0, 3000.0), strict=True):
        doc["variants"][0]["vms"][0]["iops"] = iops
        tables.append(entity_table({"variants": doc["variants"][:1]}, 0, seed))
    results = pa.concat_tables(tables).add_column(1, DEPTH, pa.array([16] * sum(t.num_rows for t in tables)))
    summary = summarise(results, spec).to_pylist()
    row = next(r for r in summary if r["entity"] == "vm/vm1" and r["metric"] == "iops")
    half = 4.303 * 1000.0 / math.sqrt(3)
    assert (row["n"], row["mean"], row["std"]) == (3, 2000.0, 1000.0)
    assert row["ci95_low"] == pytest.approx(2000.0 - half)
    assert row["ci95_high"] == pytest.approx(2000.0 + half)
    assert [r["entity"] for r in summary][:1] == ["run"]


def test_entity_table_has_a_row_per_host_when_the_document_has_hosts(doc: dict[str, Any]) -> None:
    assert "host" not in entity_table(doc, 0, 1).column("entity_kind").to_pylist()
    table = entity_table(with_hosts(doc, controlled=("latency",)), 0, 1)
    hosts = [row for row in table.to_pylist() if row["entity_kind"] == "host"]
    assert [(row["variant"], row["entity"]) for row in hosts] == [
        ("rr", "host/esx1"), ("rr", "host/esx2"), ("latency", "host/esx1"), ("latency", "host/esx2"),
    ]  # fmt: skip
    assert [row["window_mean"] for row in hosts] == [None, None, 15.5, 31.0]


def _value(table: pa.Table, entity: str, metric: str, **where: Any) -> float:
    rows = [
        row
        for row in table.to_pylist()
        if row["entity"] == entity and all(row[k] == v for k, v in where.items())
    ]
    assert len(rows) == 1, rows
    return float(rows[0][metric])


def _run_json(*args: str) -> dict[str, Any]:
    result = _sanlab("run", str(METRO_STUDY), *SMALL, "--json", *args)
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def _check_against_plain_runs(out: Path) -> None:
    """Every run of the sweep holds the numbers `sanlab run` prints for the same --set and --seed."""
    results = pq.read_table(out / "results.parquet")
    spec = SweepSpec.from_json(json.loads((out / "sweep.json").read_text()))
    for task in spec.tasks():
        sets = [arg for item in task.sets[1:] for arg in ("--set", item)]
        variant = _run_json(*sets, "--seed", str(task.seed))["variants"][0]
        for path in variant["paths"]:
            for metric in ("iops", "share"):
                assert (
                    _value(results, f"path/{path['name']}", metric, point=task.point, seed=task.seed)
                    == path[metric]
                )
        vm = variant["vms"][0]
        assert (
            _value(results, "vm/vm1", "lat_ms_p99", point=task.point, seed=task.seed) == vm["lat_ms"]["p99"]
        )
        local = run_task(task)  # the same run in this process, without Dask
        assert local.table is not None
        same = results.filter(
            pc.and_(pc.equal(results["point"], task.point), pc.equal(results["seed"], task.seed))
        )
        wall = ["wall_s"]
        assert same.drop_columns([DEPTH, *wall]).to_pylist() == local.table.drop_columns(wall).to_pylist()


@pytest.mark.e2e
def test_local_cluster_sweep_matches_plain_runs_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    args = ["sweep", str(METRO_STUDY), *SMALL, "--vary", f"{DEPTH}=4,64", "--seeds", "2", "--workers", "2"]
    result = _sanlab(*args, "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "sweep: 4 runs: 4 finished now, 0 failed" in result.stdout
    assert "mean ± 95 % CI over 2 seed(s)" in result.stdout

    results = pq.read_table(out / "results.parquet")
    assert results.column_names[:7] == ["point", DEPTH, "seed", "variant", "entity_kind", "entity", "wall_s"]
    assert results.schema.field(DEPTH).type == pa.int64()
    # One row per point × seed × entity: the run, 1 host, 1 VM, 20 paths, 1 device, 1 volume, 2 arrays.
    assert results.num_rows == 2 * 2 * (1 + 1 + 1 + 20 + 1 + 1 + 2)
    summary = pq.read_table(out / "summary.parquet").to_pylist()
    iops = [row for row in summary if row["entity"] == "vm/vm1" and row["metric"] == "iops"]
    assert [(row[DEPTH], row["n"]) for row in iops] == [(4, 2), (64, 2)]
    assert iops[0]["mean"] < iops[1]["mean"], "a queue depth of 4 throttles 32 outstanding I/Os"
    assert json.loads((out / "failures.json").read_text()) == []
    _check_against_plain_runs(out)

    parts = sorted(path.name for path in (out / "parts").iterdir())
    again = _sanlab(*args, "--out", str(out), "--quiet")
    assert again.returncode == 0, again.stderr
    assert "sweep: 4 runs: 0 finished now, 4 already done, 0 failed" in again.stdout
    assert sorted(path.name for path in (out / "parts").iterdir()) == parts
    assert pq.read_table(out / "results.parquet").equals(results)

    changed = _sanlab(*args[:-2], "--workers", "1", "--seeds", "3", "--out", str(out))
    assert changed.returncode == 2
    assert "holds a different sweep (seeds differ)" in changed.stderr


@pytest.mark.e2e
def test_failed_point_is_reported_and_the_others_kept(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    args = [
        "sweep",
        str(METRO_STUDY),
        *SMALL,
        "--vary",
        f"{IODEPTH}=8,-1,16",
        "--workers",
        "2",
        "--out",
        str(out),
    ]
    result = _sanlab(*args)
    assert result.returncode == 1, result.stderr
    assert "sweep: 3 runs: 2 finished now, 1 failed" in result.stdout
    assert f"error: point 1 seed 1 (--set run.warmup=1s --set {IODEPTH}=-1)" in result.stderr
    assert "iodepth: -1 is out of range" in result.stderr
    assert "Traceback" not in result.stderr
    failures = json.loads((out / "failures.json").read_text())
    assert [(f["point"], f["seed"]) for f in failures] == [(1, 1)]
    assert set(pq.read_table(out / "results.parquet").column("point").to_pylist()) == {0, 2}

    rerun = _sanlab(*args, "--quiet")  # done points are skipped, the failed one is tried again
    assert rerun.returncode == 1
    assert "sweep: 3 runs: 0 finished now, 2 already done, 1 failed" in rerun.stdout


@pytest.mark.e2e
def test_every_run_failing_is_invalid_input(tmp_path: Path) -> None:
    result = _sanlab("sweep", str(METRO_STUDY), *SMALL, "--vary", "vm[0].job[0].no_such_key=1,2",
                     "--workers", "1", "--out", str(tmp_path / "s"))  # fmt: skip
    assert result.returncode == 2
    assert "error: every run failed:" in result.stderr
    assert "no_such_key" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--vary", "x"], "expected KEY=V1"),
        (["--vary", "a=1", "--vary", "a=2"], "a key is given twice"),
        (["--vary", f"{DEPTH}=4", "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"], "not allowed with argument --scheduler"),
        (["--vary", f"{DEPTH}=4", "--variant", "nope"], "no variant named `nope`"),
        (["--vary", f"{DEPTH}=4", "--seeds", "0"], "--seeds"),
        # 100,000,000 seeds were listed in memory (a MemoryError traceback); runs are capped.
        (
            ["--vary", f"{DEPTH}=4,8", "--seeds", "100000000"],
            "makes 200,000,000 runs: expected at most 100,000 runs",
        ),
    ],
)
def test_bad_sweep_arguments_exit_2(args: list[str], message: str, tmp_path: Path) -> None:
    result = _sanlab("sweep", str(METRO_STUDY), "--out", str(tmp_path / "s"), *args)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_scenario_and_busy_folder_exit_2(tmp_path: Path) -> None:
    result = _sanlab("sweep", str(tmp_path / "missing.toml"), "--vary", "a=1")
    assert result.returncode == 2
    assert "missing.toml" in result.stderr
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("x")
    result = _sanlab("sweep", str(METRO_STUDY), "--vary", f"{DEPTH}=4", "--out", str(tmp_path / "busy"))
    assert result.returncode == 2
    assert "is not empty and holds no sweep" in result.stderr


@pytest.fixture
def dask_cluster(tmp_path: Path) -> Iterator[str]:
    """A Dask scheduler and one worker, each its own process on 127.0.0.1; yields the scheduler's address."""
    scheduler_file = tmp_path / "scheduler.json"
    logs = [(tmp_path / name).open("w") for name in ("scheduler.log", "worker.log")]
    processes = [
        subprocess.Popen(
            [
                DASK,
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                # Its HTTP server on a free port: clusters of other test files may run beside it.
                "--dashboard-address",
                ":0",
                "--scheduler-file",
                str(scheduler_file),
            ],
            stdout=logs[0],
            stderr=subprocess.STDOUT,
        )
    ]
    try:
        deadline = time.monotonic() + 60
        while not scheduler_file.is_file() or not scheduler_file.read_text().strip():
            assert time.monotonic() < deadline, "the Dask scheduler did not start"
            time.sleep(0.2)
        address = json.loads(scheduler_file.read_text())["address"]
        processes.append(
            subprocess.Popen(
                [
                    DASK,
                    "worker",
                    address,
                    "--host",
                    "127.0.0.1",
                    "--nworkers",
                    "1",
                    "--nthreads",
                    "1",
                    "--no-dashboard",
                    "--local-directory",
                    str(tmp_path / "worker"),
                ],
                stdout=logs[1],
                stderr=subprocess.STDOUT,
            )
        )
        yield address
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)
        for log in logs:
            log.close()


@pytest.mark.e2e
def test_sweep_on_a_separate_scheduler_and_worker(dask_cluster: str, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    result = _sanlab("sweep", str(METRO_STUDY), *SMALL, "--vary", f"{DEPTH}=4,64", "--seeds", "2",
                     "--scheduler", dask_cluster, "--out", str(out))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "sweep: 4 runs: 4 finished now, 0 failed" in result.stdout
    _check_against_plain_runs(out)


def test_local_workers_ignore_ctrl_c_and_this_process_does_not() -> None:
    """A Ctrl-C reaches only the command (which keeps what finished and closes the cluster): the
    workers printed a traceback each."""
    import signal

    from sanlab.runs import dask_client

    with dask_client(None, 1) as client:
        dispositions = client.run(lambda: signal.getsignal(signal.SIGINT))
    assert list(dispositions.values()) == [signal.SIG_IGN]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
