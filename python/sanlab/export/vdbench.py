"""vdbench's own summary layout beside sanlab's: per variant, `vdbench/summary.html` with
vdbench's interval lines for each VM that runs a vdbench job, so vdbench users read the
columns they know.

Each interval line covers the run's `interval=` (vdbench's reporting interval) and adds up the
VM's samples in it (`vm/<name>`: IOPS, MB/s, mean latency); the scenario refuses an interval
that is not a whole number of samples (run.sample_interval).
The simulation samples neither the read/write split nor the maximum and deviation of latency per
interval, so those columns show `-` on interval lines; the `avg_` line has every column, from
the run's totals of the vdbench jobs (their measured window, vdbench's avg_2-N). Queue depth is
Little's law, i/o rate x response time, as vdbench's own is an average of outstanding requests.
MB/sec is vdbench's, 1024**2 bytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from sanlab.document import DirectionReport, Document, JobReport, Variant

SUMMARY_FILE = "vdbench/summary.html"
MIB = 1024 * 1024
# The options that mark a job as one SD of a vdbench run.
VDBENCH_OPTIONS = ("rd", "sd", "threads", "iorate", "elapsed", "interval")

HEADER = (
    "    time   interval        i/o   MB/sec   bytes   read     resp     read    write     resp     resp  queue\n"
    "                          rate  1024**2     i/o    pct     time     resp     resp      max   stddev  depth"
)


def _clock(t_s: float) -> str:
    """Simulated time as vdbench prints its clock, from 00:00:00.000."""
    ms = round(t_s * 1000)
    return f"{ms // 3_600_000:02d}:{ms // 60_000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def _line(clock: str, label: str, rate: float, mbps_mib: float, cells: Sequence[str], resp_ms: float) -> str:
    bytes_io = mbps_mib * MIB / rate if rate > 0 else 0.0
    read_pct, read_resp, write_resp, resp_max, resp_std = cells
    return (
        f"{clock:>12} {label:>9} {rate:10.2f} {mbps_mib:8.2f} {bytes_io:7.0f} {read_pct:>6} {resp_ms:8.3f} "
        f"{read_resp:>8} {write_resp:>8} {resp_max:>8} {resp_std:>8} {rate * resp_ms / 1000:6.1f}"
    )


def _vm_series(series: Mapping[str, Sequence[Any]], vm: str) -> dict[float, dict[str, float]]:
    """The VM's samples: time -> {iops, mbps, lat_ms_mean}."""
    entity = f"vm/{vm}"
    out: dict[float, dict[str, float]] = {}
    for t, e, m, v in zip(series["t_s"], series["entity"], series["metric"], series["value"], strict=True):
        if e == entity:
            out.setdefault(t, {})[m] = v
    return out


def _intervals(samples: Mapping[float, Mapping[str, float]], interval_s: float, elapsed_s: float) -> list[tuple[float, float, float, float]]:
    """vdbench's intervals from the samples, each (end time, i/o rate, MB/s, mean response ms):
    the samples ending in ((k-1) x interval, k x interval] add up, weighted by their length
    (rates) and by their I/Os (response). Only whole intervals within elapsed are reported; the
    scenario checked that the interval is a whole number of samples."""
    out = []
    sums: list[float] = [0.0, 0.0, 0.0, 0.0]  # seconds, I/Os, MB, response ms x I/Os
    last_t = 0.0
    for t in sorted(samples):
        if t > elapsed_s + 1e-9:
            break
        s, width = samples[t], t - last_t
        last_t = t
        ios = s.get("iops", 0.0) * width
        for i, v in enumerate((width, ios, s.get("mbps", 0.0) * width, s.get("lat_ms_mean", 0.0) * ios)):
            sums[i] += v
        if sums[0] >= interval_s - 1e-9:
            seconds, ios, mb, resp = sums
            out.append((t, ios / seconds, mb / seconds, resp / ios if ios > 0 else 0.0))
            sums = [0.0, 0.0, 0.0, 0.0]
    return out


def _avg_cells(jobs: Sequence[JobReport]) -> tuple[float, float, tuple[str, str, str, str, str], float, float]:
    """Totals of the vdbench jobs over their measured window: rate, MiB/s, the five columns the
    intervals lack, mean response (ms) and the window (s)."""
    directions = [job[d] for job in jobs for d in ("read", "write")]
    ios = sum(d["total_ios"] for d in directions)
    window_s = max((d["runtime_ms"] for d in directions), default=0.0) / 1000
    if ios == 0 or window_s <= 0:
        return 0.0, 0.0, ("-",) * 5, 0.0, window_s  # type: ignore[return-value]
    reads = sum(job["read"]["total_ios"] for job in jobs)
    nbytes = sum(d["io_bytes"] for d in directions)

    def mean_ms(ds: Sequence[DirectionReport]) -> float:
        n = sum(d["total_ios"] for d in ds)
        return sum(d["lat_ns"]["mean"] * d["total_ios"] for d in ds) / n / 1e6 if n else 0.0

    mean = mean_ms(directions)
    # Pooled deviation of all requests from the per-direction means and deviations.
    second = sum(d["total_ios"] * (d["lat_ns"]["stddev"] ** 2 + d["lat_ns"]["mean"] ** 2) for d in directions) / ios
    std_ms = math.sqrt(max(second - (mean * 1e6) ** 2, 0.0)) / 1e6
    max_ms = max(d["lat_ns"]["max"] for d in directions if d["total_ios"]) / 1e6
    cells = (
        f"{100 * reads / ios:.2f}",
        f"{mean_ms([j['read'] for j in jobs]):.3f}",
        f"{mean_ms([j['write'] for j in jobs]):.3f}",
        f"{max_ms:.2f}",
        f"{std_ms:.3f}",
    )
    return ios / window_s, nbytes / window_s / MIB, cells, mean, window_s


def vdbench_summary(variant: Variant) -> str | None:
    """The summary.html text of one variant, or None when it runs no vdbench job."""
    by_vm: dict[str, list[JobReport]] = {}
    for job in variant["jobs"]:
        if all(k in job["options"] for k in VDBENCH_OPTIONS):
            by_vm.setdefault(job["vm"], []).append(job)
    if not by_vm:
        return None
    parts = [
        f"<html><head><title>vdbench summary: {escape(variant['name'])}</title></head><body><pre>",
        escape(f"sanlab variant {variant['name']}: {variant['description']}"),
        "Interval lines: the VM's sampled figures; read pct, read/write resp, resp max and stddev are not",
        "sampled per interval (-); the avg line has them from the run's totals. Queue depth: rate x resp.",
    ]
    for vm, jobs in by_vm.items():
        options = jobs[0]["options"]
        run = options.get("run", options["rd"])
        interval_s = float(options["interval"])
        intervals = _intervals(_vm_series(variant["timeseries"], vm), interval_s, float(options["elapsed"]))
        parts += [
            "",
            escape(f"Starting RD={run}; I/O rate: {options['iorate']}; elapsed={options['elapsed']}; interval={options['interval']}; VM {vm}; SDs {', '.join(j['options']['sd'] for j in jobs)}"),
            "",
            HEADER,
        ]
        for i, (t, rate, mbps, resp) in enumerate(intervals, start=1):
            parts.append(_line(_clock(t), str(i), rate, mbps * 1e6 / MIB, ("-",) * 5, resp))
        rate, mib, cells, mean, window_s = _avg_cells(jobs)
        if intervals:
            first = max(len(intervals) - round(window_s / interval_s) + 1, 1)
            parts.append(_line(_clock(intervals[-1][0]), f"avg_{first}-{len(intervals)}", rate, mib, cells, mean))
    parts.append("</pre></body></html>")
    return "\n".join(parts) + "\n"


def write_vdbench_summaries(doc: Document, out_dir: Path, variant_dir: Callable[[str], str]) -> list[Path]:
    """Writes `<variant>/vdbench/summary.html` for each variant with vdbench jobs; returns the
    files written. `variant_dir(name)` is the variant's folder name."""
    written = []
    for variant in doc["variants"]:
        text = vdbench_summary(variant)
        if text is None:
            continue
        path = out_dir / variant_dir(variant["name"]) / SUMMARY_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written
