"""Scale benchmark: memory and speed as the topology grows from 40 to 10,000 VMs.

Generates the ladder of docs/performance.md (4 arrays, each host with 4 paths to each array under RR,
every VM 70/30 8 KiB random at 500 IOPS Poisson), runs each rung in the engine alone (the Rust
`profile_run` example, no Python) and prints one table: VMs, paths, events, I/Os, the engine's
wall time and I/Os per wall second, the process's CPU time (setup and report included; on a
shared machine it moves less with the load than wall time does), peak resident memory, and
memory per VM. The figures are recorded in
docs/performance.md. Each rung runs with malloc's huge pages, as the `sanlab` command runs
(sanlab/_launch.py); `--no-huge-pages` runs without.

With `--clusters K --threads T`, each rung's hosts fall into K clusters that share nothing
(4 arrays each), run as independent parts on up to T threads (docs/performance.md, independent
parts on every core).

Run:  .venv/bin/python benches/scale_bench.py [--duration 10s] [--rungs 40,400] [--clusters 2 --threads 2]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from sanlab._launch import with_huge_pages

ROOT = Path(__file__).resolve().parent.parent
ARRAYS = 4
PATHS_PER_ARRAY = 4
# (hosts, VMs per host): 40, 400, 3,200 and 10,000 VMs (the last: 256 hosts, 39 or 40 each).
LADDER = {40: (4, 10), 400: (16, 25), 3200: (64, 50), 10000: (256, None)}


def scenario(vms: int, duration: str, clusters: int = 1) -> str:
    """The TOML of a rung: `vms` VMs spread evenly over its hosts, each on one of the 4 volumes.
    With `clusters`, the hosts fall into that many clusters that share nothing, each with 4
    arrays of its own (an estate: the engine runs each cluster on a core of its own)."""
    hosts, _ = LADDER[vms]
    lines = [
        "schema_version = 1",
        f'name = "scale_{vms}"',
        f'[run]\nduration = "{duration}"\nsample_interval = "1s"',
    ]
    arrays = [f"a{a}" if clusters == 1 else f"c{c}a{a}" for c in range(clusters) for a in range(ARRAYS)]
    for a in arrays:
        # Enough media servers that the arrays are not the bottleneck at 5 M IOPS.
        lines.append(f'[[array]]\nname = "{a}"\nmedia = {{ kind = "flash", read_latency = "150us", write_latency = "20us", servers = 1024 }}')
        lines.append(f'[[volume]]\nname = "v{a[1:]}"\narrays = ["{a}"]')
    for h in range(hosts):
        lines.append(f'[[host]]\nname = "h{h}"\nmultipath = {{ psp = {{ kind = "rr", iops = 1 }} }}')
        c = h * clusters // hosts
        for a in arrays[c * ARRAYS : (c + 1) * ARRAYS]:
            lines.append(f'[[path]]\nname = "h{h}-{a}"\nhost = "h{h}"\narray = "{a}"\ncount = {PATHS_PER_ARRAY}\nlink = {{ latency = "50us", bandwidth = "16Gb/s" }}')
    for v in range(vms):
        h = v * hosts // vms
        c = h * clusters // hosts
        lines.append(f'[[vm]]\nname = "vm{v}"\nhost = "h{h}"\nvolume = "v{arrays[c * ARRAYS + v % ARRAYS][1:]}"')
        lines.append('[[vm.job]]\nrw = "randrw"\nrwmixread = 70\nbs = "8KiB"\nrate_iops = 500\nrate_process = "poisson"\niodepth = 32')
    return "\n".join(lines) + "\n"


def run_rung(binary: Path, vms: int, duration: str, workdir: Path, huge_pages: bool, clusters: int = 1, threads: int = 1) -> dict[str, float]:
    path = workdir / f"scale_{vms}.toml"
    path.write_text(scenario(vms, duration, clusters))
    code = (
        "import resource, subprocess, sys\n"
        "out = subprocess.run(sys.argv[1:], check=True, capture_output=True, text=True).stdout\n"
        "print(out.strip())\n"
        "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(usage.ru_maxrss, usage.ru_utime + usage.ru_stime)\n"
    )
    argv = [sys.executable, "-c", code, str(binary), str(path), "base", duration, str(threads)]
    env = dict(os.environ)
    tunables = with_huge_pages(env.get("GLIBC_TUNABLES")) if huge_pages else None
    if tunables is not None:
        env["GLIBC_TUNABLES"] = tunables
    out = subprocess.run(argv, check=True, capture_output=True, text=True, env=env).stdout.splitlines()
    m = re.match(r".*: (\d+) I/Os, (\d+) events in ([\d.]+) s", out[0])
    if not m:
        raise SystemExit(f"unexpected profile_run output: {out[0]}")
    ios, events, wall_s = int(m[1]), int(m[2]), float(m[3])
    rss_kib, cpu_s = out[1].split()
    rss_bytes = int(rss_kib) * 1024
    hosts, _ = LADDER[vms]
    return {"vms": vms, "paths": hosts * ARRAYS * PATHS_PER_ARRAY, "events": events, "ios": ios, "wall_s": wall_s, "rate": ios / wall_s, "cpu_s": float(cpu_s), "rss": rss_bytes}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", default="10s", help="simulated time per rung (default 10s)")
    parser.add_argument("--rungs", default="40,400,3200,10000", help="VM counts to run, from 40,400,3200,10000")
    parser.add_argument("--no-huge-pages", action="store_true", help="run the engine without malloc's huge pages")
    parser.add_argument("--clusters", type=int, default=1, help="hosts in that many clusters sharing nothing, 4 arrays each (default 1)")
    parser.add_argument("--threads", type=int, default=1, help="threads for the clusters, each part on one (default 1)")
    args = parser.parse_args()
    if args.clusters < 1 or args.threads < 1:
        parser.error(f"--clusters and --threads: expected at least 1, got {min(args.clusters, args.threads)}")
    rungs = [int(r) for r in args.rungs.split(",")]
    unknown = [r for r in rungs if r not in LADDER]
    if unknown:
        parser.error(f"unknown rung {unknown[0]}: expected some of {', '.join(map(str, LADDER))}")
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "sanlab-scenario", "--example", "profile_run"], cwd=ROOT, check=True)
    binary = ROOT / "target/release/examples/profile_run"
    print(f"{'VMs':>6} {'paths':>6} {'events':>12} {'I/Os':>11} {'wall s':>7} {'I/Os per s':>11} {'CPU s':>7} {'peak RSS':>9} {'per VM':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for vms in rungs:
            r = run_rung(binary, vms, args.duration, Path(tmp), not args.no_huge_pages, args.clusters, args.threads)
            print(
                f"{r['vms']:>6,} {r['paths']:>6,} {r['events']:>12,} {r['ios']:>11,} {r['wall_s']:>7.1f} "
                f"{r['rate'] / 1e6:>9.2f} M {r['cpu_s']:>7.1f} {r['rss'] / 2**20:>6.0f} MiB {r['rss'] / r['vms'] / 1024:>5.0f} KiB",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
