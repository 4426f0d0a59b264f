"""Variants on every core: the wall time of `sanlab run` on the failover and poor-health studies
with `--jobs 1` and `--jobs 2` (or more), the speed-up, and what bounds it.

Each run is the command itself (the run folder written), so the wall time is what a user waits
for. Its progress lines (stderr is a pipe) say when the engine was done ("all done in ... s"): the
run's engine phase, which the jobs share, apart from what stays on one core (reading the
scenario, writing the run folder and its report). Each variant's own engine time is `wall_s` in
results.json: no run of several jobs ends before its longest variant, nor before the engine time
over the jobs. The figures are recorded in docs/performance.md ("Variants on every core"). Wall
times depend on the machine's load: run it on a quiet machine and repeat.

Run:  make bench
      (or .venv/bin/python benches/variants_bench.py [--study FILE] [--duration D] [--repeats N] [--jobs 1 2])
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STUDIES = ("scenarios/studies/failover.toml", "scenarios/studies/poor_health.toml")
ENGINE_DONE = re.compile(r"all done in ([\d,.]+) s")


@dataclass
class Timing:
    wall_s: float
    """The whole command."""
    engine_phase_s: float
    """From its start until the engine was done with every variant."""
    variants_s: list[float]
    """Each variant's engine time."""
    cpu_s: float
    """CPU time of the whole command, user and system: over `wall_s`, the cores it kept busy."""

    def __str__(self) -> str:
        engine_s, longest_s = sum(self.variants_s), max(self.variants_s)
        return (
            f"{self.wall_s:.1f} s wall, {self.cpu_s:.1f} s CPU ({self.cpu_s / self.wall_s:.2f} cores),"
            f" engine phase {self.engine_phase_s:.1f} s, after it {self.wall_s - self.engine_phase_s:.2f} s;"
            f" variants' engine {engine_s:.1f} s, the longest {longest_s:.1f} s"
        )


def timed_run(study: str, jobs: int, duration: str | None, out: Path) -> Timing:
    """One `sanlab run` of `study` with `--jobs jobs`."""
    # The `sanlab` command as a user runs it, its launcher included (it restarts the interpreter
    # with malloc's huge pages for `run`).
    command = [str(Path(sys.executable).parent / "sanlab"), "run", str(ROOT / study), "--jobs", str(jobs)]
    if duration:
        command += ["--duration", duration]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([*command, "--out", str(out)], capture_output=True, text=True)
    wall_s = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    found = ENGINE_DONE.search(done.stderr)
    if done.returncode != 0 or not found:
        sys.exit(f"{' '.join(command)} exited {done.returncode}: {done.stderr[-2000:]}")
    results = json.loads((out / "results.json").read_text())
    variants_s = [variant["wall_s"] for variant in results["variants"]]
    return Timing(wall_s, float(found.group(1).replace(",", "")), variants_s, cpu_s)


def loads() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--study", action="append", help="a scenario to time, repeatable (default: both studies)"
    )
    parser.add_argument("--duration", help="simulated time of every variant (default: the studies')")
    parser.add_argument("--repeats", type=int, default=2, help="runs per study and jobs; the best is kept")
    parser.add_argument(
        "--jobs", type=int, nargs="+", default=[1, 2], help="the --jobs to time (default: 1 2)"
    )
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}; load average (1, 5, 15 min): {loads()}")
    with tempfile.TemporaryDirectory() as scratch:
        for study in args.study or STUDIES:
            best: dict[int, Timing] = {}
            runs: dict[int, list[Timing]] = {jobs: [] for jobs in args.jobs}
            # The jobs in turn, repeat after repeat: a change of the machine's load hits them alike.
            for repeat in range(args.repeats):
                for jobs in args.jobs:
                    timing = timed_run(
                        study, jobs, args.duration, Path(scratch) / f"{Path(study).stem}-{jobs}-{repeat}"
                    )
                    print(f"{Path(study).stem} --jobs {jobs}: {timing} (load {loads()})", flush=True)
                    runs[jobs].append(timing)
                    if jobs not in best or timing.wall_s < best[jobs].wall_s:
                        best[jobs] = timing
            one = best[args.jobs[0]]
            rest_s = one.wall_s - one.engine_phase_s
            for jobs in args.jobs[1:]:
                bound_s = max(max(one.variants_s), sum(one.variants_s) / jobs)
                print(
                    f"  --jobs {jobs} against --jobs {args.jobs[0]} (best runs): wall"
                    f" {one.wall_s / best[jobs].wall_s:.2f}x, engine phase"
                    f" {one.engine_phase_s / best[jobs].engine_phase_s:.2f}x; at most"
                    f" {one.engine_phase_s / bound_s:.2f}x and {one.wall_s / (rest_s + bound_s):.2f}x"
                    f" (the longest variant or the engine over the jobs; {rest_s:.1f} s outside the engine)"
                )
                # Each repeat's pair, run one after the other: how much the ratio moves with the load.
                pairs = zip(runs[args.jobs[0]], runs[jobs], strict=True)
                ratios = ", ".join(f"{one.wall_s / other.wall_s:.2f}x" for one, other in pairs)
                print(f"  --jobs {jobs}, repeat by repeat: wall {ratios}")


if __name__ == "__main__":
    main()
