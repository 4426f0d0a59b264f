"""Benchmark (not a test): reading a ~500 MB esxtop batch capture with `read_capture`.

Writes a capture in esxtop's batch layout (every cell quoted, CRLF rows) whose header has
thousands of columns, most of them not storage (Vcpu, Group Cpu, Network Port, Interrupt Cookie,
Memory), then reads it with `sanlab.hostimport.esxtop.read_capture` in a fresh Python process and
reports that process's whole wall time (interpreter start to exit) and peak RSS
(`resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`). Target (issue 24): under 60 s and under 500 MB
on the 2-core machine.

    .venv/bin/python benches/esxtop_import_bench.py [--size-mb 500] [--vms 120] [--file /tmp/esxtop_500mb.csv] [--keep]

The values cycle through 32 distinct rows (the parser's cost does not depend on the values);
the read-back is checked against them: sample count, one device's Commands/sec at every row, and
the number of storage series.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

HOST = "esx-bench.example.com"
DEVICE_COUNTERS = [
    "Device Q Depth", "World Q Depth", "Active Commands", "Queued Commands", "% Used", "Load", "Commands/sec", "Reads/sec",
    "Writes/sec", "MBytes Read/sec", "MBytes Written/sec",
    *(f"Average {w} MilliSec/{x}" for x in ("Command", "Read", "Write") for w in ("Driver", "Kernel", "Guest", "Queue")),
    "Failed Commands/sec", "Failed Reads/sec", "Failed Writes/sec", "Failed Bytes Read/sec", "Failed Bytes Written/sec",
    "Failed Reserves/sec", "Aborts/sec", "Resets/sec",
]  # fmt: skip
PATH_COUNTERS = [
    "Commands/sec", "Conflicts/sec", *(f"Average {w} MilliSec/Command" for w in ("Driver", "Kernel", "Guest", "Queue")),
    "Failed Commands/sec", "Aborts/sec", "Resets/sec",
]  # fmt: skip
VDISK_COUNTERS = [
    "Commands/sec", "Reads/sec", "Writes/sec", "MBytes Read/sec", "MBytes Written/sec", "Average MilliSec/Read", "Average MilliSec/Write",
]  # fmt: skip
VCPU_COUNTERS = [
    "% Used", "% Run", "% System", "% Wait", "% VmWait", "% Ready", "% Idle", "% Overlap", "% CoStop", "% Max Limited",
    "% Swap Wait", "Switches/sec", "Migrates/sec",
]  # fmt: skip
GROUP_CPU = ["Members", "% Used", "% Run", "% System", "% Wait", "% Ready", "% Idle", "% Overlap", "% CoStop", "% Demand", "Power Usage Watts"]
NET_COUNTERS = [
    "Packets Transmitted/sec", "MBits Transmitted/sec", "Packets Received/sec", "MBits Received/sec",
    "% Outbound Packets Dropped", "% Received Packets Dropped",
]  # fmt: skip
DEVICES, PATHS_PER_DEVICE, VMS, VCPUS = 32, 4, 120, 2
PROBE = ("Physical Disk SCSI Device", "naa.60000000000000000000000000000007", "Commands/sec")


def columns(vms: int = VMS) -> list[str]:
    out = [f"\\\\{HOST}\\Memory\\{c}" for c in ("Memory Overcommit (1 Minute Avg)", "Machine MBytes", "Free MBytes", "Kernel State")]
    out += [f"\\\\{HOST}\\Physical Cpu({i})\\% Processor Time" for i in range(64)]
    for v in range(vms):
        gid = 100000 + v
        out += [f"\\\\{HOST}\\Group Cpu({gid}:vm-{v:03d})\\{c}" for c in GROUP_CPU]
        for cpu in range(VCPUS):
            out += [f"\\\\{HOST}\\Vcpu({gid}:vm-{v:03d}:{gid + 10 + cpu}:vmx-vcpu-{cpu}:vm-{v:03d})\\{c}" for c in VCPU_COUNTERS]
        out += [f"\\\\{HOST}\\Network Port(DvsPortset-0:{50331648 + v}:vm-{v:03d}.eth0)\\{c}" for c in NET_COUNTERS]
        out += [f"\\\\{HOST}\\Virtual Disk(vm-{v:03d}:scsi0:0)\\{c}" for c in VDISK_COUNTERS]
    out += [f"\\\\{HOST}\\Interrupt Cookie({i}:vector 0x{i + 32:x}:vmkernel)\\Interrupts/second" for i in range(256)]
    for a in range(4):
        out += [f"\\\\{HOST}\\Physical Disk(vmhba{a})\\Adapter Q Depth"]
        out += [f"\\\\{HOST}\\Physical Disk Adapter(vmhba{a})\\{c}" for c in DEVICE_COUNTERS]
    for d in range(DEVICES):
        dev = f"naa.{0x60000000000000000000000000000000 + d:032x}"
        out += [f"\\\\{HOST}\\Physical Disk SCSI Device({dev})\\{c}" for c in DEVICE_COUNTERS]
        for p in range(PATHS_PER_DEVICE):
            out += [f"\\\\{HOST}\\Physical Disk Path(vmhba{p}:C0:T{p}:L{d})\\{c}" for c in PATH_COUNTERS]
    return out


def write_capture(path: Path, size_mb: int, vms: int = VMS) -> tuple[int, int, dict[int, float]]:
    """Writes the capture; returns (columns, rows, the probe column's value per cycle row)."""
    names = columns(vms)
    probe = names.index(f"\\\\{HOST}\\{PROBE[0]}({PROBE[1]})\\{PROBE[2]}")
    rng = random.Random(24)
    bodies, probe_values = [], {}
    for k in range(32):
        vals = [f"{rng.uniform(0, 5000):.2f}" for _ in names]
        probe_values[k] = float(vals[probe])
        bodies.append('","'.join(vals))
    target = size_mb * 1024 * 1024
    rows = 0
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write('"(PDH-CSV 4.0) (UTC)(0)","' + '","'.join(names) + '"\r\n')
        written = f.tell()
        t0 = 1_700_000_000
        while written < target:
            stamp = time.strftime("%m/%d/%Y %H:%M:%S", time.gmtime(t0 + 5 * rows))
            line = f'"{stamp}","{bodies[rows % 32]}"\r\n'
            f.write(line)
            written += len(line)
            rows += 1
    return len(names), rows, probe_values


CHILD = """
import json, sys, time
t0 = time.perf_counter()
from sanlab.hostimport.esxtop import read_capture
c = read_capture(sys.argv[1])
probe = c.get({group!r}, {instance!r}, {counter!r})
print(json.dumps({{"read_s": time.perf_counter() - t0, "samples": c.samples,
                  "series": sum(len(v) for v in c.series.values()), "probe": probe.tolist(),
                  "unused": len(c.unused_counters)}}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=500)
    ap.add_argument("--file", type=Path, default=Path("/tmp/esxtop_bench_capture.csv"))
    ap.add_argument("--vms", type=int, default=VMS, help="VMs in the header (fewer: fewer columns, more rows)")
    ap.add_argument("--keep", action="store_true", help="keep the capture file afterwards")
    args = ap.parse_args()

    t = time.perf_counter()
    ncols, rows, probe_values = write_capture(args.file, args.size_mb, args.vms)
    size = args.file.stat().st_size
    print(f"wrote {args.file}: {size / 2**20:.0f} MiB, {ncols} columns, {rows} rows in {time.perf_counter() - t:.1f} s")

    code = CHILD.format(group=PROBE[0], instance=PROBE[1], counter=PROBE[2])
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", code, str(args.file)], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if p.returncode != 0:
        sys.exit(p.stderr)
    out = json.loads(p.stdout)
    assert out["samples"] == rows, (out["samples"], rows)
    assert out["probe"] == [probe_values[k % 32] for k in range(rows)], "probe column read back wrong"
    result = {
        "file_mib": round(size / 2**20),
        "columns": ncols,
        "rows": rows,
        "series_read": out["series"],
        "unused_counters": out["unused"],
        "process_wall_s": round(wall, 2),
        "read_capture_s": round(out["read_s"], 2),
        "peak_rss_mib": round(peak_mib),
        "mib_per_s": round(size / 2**20 / out["read_s"], 1),
    }
    print(json.dumps(result, indent=2))
    if not args.keep:
        args.file.unlink()


if __name__ == "__main__":
    main()
