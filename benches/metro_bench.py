"""Speed and memory benchmark: the metro study in sanlab's engine against the same model in SimPy.

Reports simulated I/O completions per wall second for both engines on the same variants, their
ratio, the engine's events per wall second over those of a bare binary heap of 8 events (each
engine run followed by one of the heap), and the engine's peak memory for 1 simulated minute
against 1 simulated hour. The figures
are recorded in docs/performance.md.

Run:  make bench   (or .venv/bin/python benches/metro_bench.py [--quick])
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
from pathlib import Path

import sanlab

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "scenarios/studies/metro_cluster_psp.toml"
sys.path.insert(0, str(ROOT / "benches"))
import simpy_metro  # noqa: E402  (the SimPy twin lives beside this file)

VARIANTS = ("rr_iops1", "alua_rr")


# The bare heap: std's BinaryHeap holding 8 events, each pop pushing the next (the `hold` example).
BARE_HEAP_PENDING = 8


def bare_heap_events_per_s() -> float:
    """Events per wall second of the bare heap, one run of the `hold` example."""
    binary = ROOT / "target/release/examples/hold"
    out = subprocess.run([str(binary), str(BARE_HEAP_PENDING), "binary-heap"], check=True, capture_output=True, text=True).stdout
    return float(out.split(": ")[1].split(" M events/s")[0]) * 1e6


def engine_rate(variant: str, duration_s: int, repeats: int) -> tuple[int, float, float]:
    """(completed I/Os, median I/Os per wall second of the engine loop, median ratio of its events
    per wall second to the bare heap's) over `repeats` runs, each followed by a run of the bare
    heap, so that both see the machine alike."""
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "sanlab-des", "--example", "hold"], cwd=ROOT, check=True)
    rates, heap_ratios = [], []
    ios = 0
    for _ in range(repeats):
        result = sanlab.run(STUDY, variants=[variant], duration=f"{duration_s}s", seed=1)
        run = result.raw["variants"][0]
        ios = run["ios"]
        rates.append(ios / run["wall_s"])
        heap_ratios.append(run["events"] / run["wall_s"] / bare_heap_events_per_s())
    return ios, statistics.median(rates), statistics.median(heap_ratios)


def simpy_rate(variant: str, duration_s: int) -> tuple[int, float]:
    """(completed I/Os, I/Os per wall second) of the SimPy twin."""
    out = simpy_metro.run(variant, duration_s)
    return out["ios"], out["ios"] / out["wall_s"]


def engine_peak_rss_mib(duration_s: int) -> float:
    """Peak resident memory of the engine alone (the Rust `profile_run` example, no Python)
    running the study's alua_rr variant for `duration_s`, result document built."""
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--example", "profile_run"], cwd=ROOT, check=True
    )
    binary = ROOT / "target/release/examples/profile_run"
    code = (
        "import resource, subprocess, sys\n"
        "subprocess.run(sys.argv[1:], check=True, capture_output=True)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    argv = [sys.executable, "-c", code, str(binary), str(STUDY), "alua_rr", f"{duration_s}s"]
    return int(subprocess.run(argv, check=True, capture_output=True, text=True).stdout) / 1024


def python_peak_rss_mib(duration_s: int) -> float:
    """Peak resident memory of a Python process that imports sanlab and runs the same variant
    through the API, keeping the returned document (time series included)."""
    code = (
        "import resource, sanlab._core as core\n"
        f"doc = core.run({str(STUDY)!r}, variants=['alua_rr'], duration='{duration_s}s')\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    return int(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="shorter runs (a smoke test, not a measurement)")
    args = parser.parse_args()
    engine_s, simpy_s, repeats = (60, 5, 1) if args.quick else (600, 20, 3)

    rows = []
    for variant in VARIANTS:
        ios, rate, of_bare_heap = engine_rate(variant, engine_s, repeats)
        simpy_ios, simpy = simpy_rate(variant, simpy_s)
        rows.append(
            {
                "variant": variant,
                "engine_sim_s": engine_s,
                "engine_ios": ios,
                "engine_ios_per_wall_s": round(rate),
                "events_per_s_of_bare_heap": round(of_bare_heap, 3),
                "simpy_sim_s": simpy_s,
                "simpy_ios": simpy_ios,
                "simpy_ios_per_wall_s": round(simpy),
                "speedup": round(rate / simpy, 1),
            }
        )
    long_s = 600 if args.quick else 3600
    memory = {}
    for name, measure in (("engine", engine_peak_rss_mib), ("python_process", python_peak_rss_mib)):
        minute, long_run = measure(60), measure(long_s)
        memory[name] = {"60s_mib": round(minute, 1), f"{long_s}s_mib": round(long_run, 1), "ratio": round(long_run / minute, 3)}
    report = {
        "machine": f"{platform.machine()} {platform.processor() or ''}".strip(),
        "python": platform.python_version(),
        "rows": rows,
        "peak_memory": memory,
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
