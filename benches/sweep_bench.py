"""Sweep overhead: a sweep of N points on a Dask LocalCluster of W workers against the runs alone.

The study is the metro cluster's `alua_rr` variant with its duration set so that one run takes about
`--run-s` seconds of wall time; the points vary the LUN queue depth over values above the 32
outstanding I/Os, so every point costs the same. The reference is the sum of the same runs made one
after another in this process (`sanlab.runs.run_task`, no Dask), divided by the number of workers:
the best a perfect scheduler could do. The sweep's wall time includes starting the LocalCluster and
writing the folder.

That ratio also holds what the machine itself does to parallel runs (two engines sharing caches,
memory bandwidth, or CPUs busy with other work), which is no overhead of the sweep. So the
benchmark also runs the same runs on a plain `concurrent.futures.ProcessPoolExecutor` of W
processes (what any parallel runner gets from this machine), and reports the sweep against the
engine time the runs took inside the sweep (the `wall_s` of each run's `run` row, summed and
divided by the workers): what is left is Dask, result transfer and writing, plus the parsing and
JSON of each run.

    .venv/bin/python benches/sweep_bench.py                      # 200 points of ~1 s on 2 workers
    .venv/bin/python benches/sweep_bench.py --run-s 0.02 --json  # the per-point cost on tiny runs
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

from sanlab.runs import run_task
from sanlab.sweep import RESULTS_FILE, SweepSpec, run_sweep

ROOT = Path(__file__).resolve().parents[1]
METRO_STUDY = ROOT / "scenarios" / "studies" / "metro_cluster_psp.toml"
VARIANT = "alua_rr"
PROBE_S = 20
"""Simulated seconds of the calibration run."""


def calibrate(run_s: float) -> str:
    """The simulated duration for which one run takes about `run_s` wall seconds."""
    spec = SweepSpec.create(METRO_STUDY, ["host[0].adapter.lun_queue_depth=64"], variants=[VARIANT],
                            sets=["run.warmup=0s"], duration=f"{PROBE_S}s")  # fmt: skip
    task = spec.tasks()[0]
    run_task(task)  # warm the caches
    started = time.perf_counter()
    run_task(task)
    per_sim_s = (time.perf_counter() - started) / PROBE_S
    return f"{max(1, round(run_s / per_sim_s))}s"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--points", type=int, default=200, help="points in the sweep (default: 200)")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster workers (default: 2)")
    parser.add_argument("--run-s", type=float, default=1.0, help="wall seconds of one run (default: 1)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()

    duration = calibrate(args.run_s)
    depths = ",".join(str(64 + index) for index in range(args.points))
    spec = SweepSpec.create(METRO_STUDY, [f"host[0].adapter.lun_queue_depth={depths}"], variants=[VARIANT],
                            sets=["run.warmup=0s"], duration=duration)  # fmt: skip
    tasks = spec.tasks()

    run_walls_s = []
    for task in tasks:
        started = time.perf_counter()
        outcome = run_task(task)
        run_walls_s.append(time.perf_counter() - started)
        if outcome.error is not None:
            sys.exit(f"point {task.point} failed: {outcome.error}")
    ideal_s = sum(run_walls_s) / args.workers

    with concurrent.futures.ProcessPoolExecutor(args.workers) as pool:
        list(pool.map(run_task, tasks[: args.workers]))  # start the processes, import sanlab
        started = time.perf_counter()
        list(pool.map(run_task, tasks))
        pool_s = time.perf_counter() - started

    with tempfile.TemporaryDirectory(prefix="sanlab-sweep-bench-") as folder:
        started = time.perf_counter()
        result = run_sweep(spec, Path(folder) / "sweep", workers=args.workers)
        sweep_s = time.perf_counter() - started
        results = pq.read_table(Path(folder) / "sweep" / RESULTS_FILE)
    in_sweep_s = pc.sum(results.filter(pc.equal(results["entity"], "run"))["wall_s"]).as_py()
    if result.failures:
        sys.exit(f"{len(result.failures)} runs failed: {result.failures[0].error}")

    figures = {
        "points": args.points,
        "workers": args.workers,
        "cpus": os.cpu_count(),
        "duration": duration,
        "run_wall_s_median": statistics.median(run_walls_s),
        "runs_sum_s": sum(run_walls_s),
        "ideal_s": ideal_s,
        "process_pool_s": pool_s,
        "process_pool_ratio": pool_s / ideal_s,
        "sweep_s": sweep_s,
        "ratio": sweep_s / ideal_s,
        "ratio_to_process_pool": sweep_s / pool_s,
        "engine_in_sweep_s": in_sweep_s,
        "ratio_to_engine_in_sweep": sweep_s / (in_sweep_s / args.workers),
        "overhead_per_point_ms": 1000 * (sweep_s - in_sweep_s / args.workers) / args.points,
        "loadavg_1min_after": os.getloadavg()[0],
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{args.points} points of {VARIANT}, {duration} simulated each")
    print(f"{args.workers} workers on {os.cpu_count()} CPUs")
    print(f"one run: median {figures['run_wall_s_median']:.3f} s; all in a row {sum(run_walls_s):.1f} s")
    print(f"ideal on {args.workers} workers (sum / {args.workers}): {ideal_s:.1f} s")
    print(
        f"plain process pool of {args.workers}: {pool_s:.1f} s = {figures['process_pool_ratio']:.3f} x ideal"
    )
    print(f"sweep (LocalCluster start, runs, folder): {sweep_s:.1f} s = {figures['ratio']:.3f} x ideal")
    print(f"sweep / process pool: {figures['ratio_to_process_pool']:.3f}")
    engine_ratio = figures["ratio_to_engine_in_sweep"]
    print(
        f"engine time inside the sweep {in_sweep_s:.1f} s: sweep = {engine_ratio:.3f} x that / {args.workers}"
    )
    print(f"overhead per point: {figures['overhead_per_point_ms']:.1f} ms")
    print(f"load average after: {figures['loadavg_1min_after']:.2f}")


if __name__ == "__main__":
    main()
