"""fio-compatible JSON for simulated jobs, with the field names of `fio --output-format=json`.

A simulator has no submission stage, so `slat_ns` is empty and `clat_ns` equals `lat_ns`
(fio prints percentiles under `clat_ns` by default, so readers look for them there).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

_EMPTY_LAT_NS: Mapping[str, Any] = {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
_EMPTY_DIRECTION: Mapping[str, Any] = {
    "total_ios": 0,
    "io_bytes": 0,
    "runtime_ms": 0,
    "iops": 0.0,
    "bw_bytes": 0,
    "lat_ns": _EMPTY_LAT_NS,
}


def sorted_percentiles(percentiles: Mapping[str, float]) -> list[tuple[str, float]]:
    """fio's `percentile` entries in numeric order ("5.000000" before "10.000000"), as fio lists them."""
    return sorted(percentiles.items(), key=lambda item: float(item[0]))


def _lat_ns(stats: Mapping[str, Any]) -> dict[str, Any]:
    """fio's latency object: min, max, mean, stddev, N and, when there are samples, percentile."""
    samples = int(stats["N"])
    lat: dict[str, Any] = {
        "min": round(stats["min"]),
        "max": round(stats["max"]),
        "mean": float(stats["mean"]),
        "stddev": float(stats["stddev"]),
        "N": samples,
    }
    if samples and "percentile" in stats:
        lat["percentile"] = {key: round(value) for key, value in sorted_percentiles(stats["percentile"])}
    return lat


def _direction(stats: Mapping[str, Any]) -> dict[str, Any]:
    """fio's per-direction object (`read`, `write`, `trim`) from the engine's statistics."""
    io_bytes = int(stats["io_bytes"])
    bw_bytes = int(stats["bw_bytes"])
    return {
        "io_bytes": io_bytes,
        "io_kbytes": io_bytes >> 10,
        "bw_bytes": bw_bytes,
        "bw": bw_bytes // 1024,
        "iops": float(stats["iops"]),
        "runtime": round(stats["runtime_ms"]),
        "total_ios": int(stats["total_ios"]),
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": _lat_ns(_EMPTY_LAT_NS),
        "clat_ns": _lat_ns(stats["lat_ns"]),
        "lat_ns": _lat_ns(stats["lat_ns"]),
    }


def fio_job(job: Mapping[str, Any], job_start_ms: int) -> dict[str, Any]:
    """One entry of fio's `jobs` list for a simulated job."""
    read = _direction(job["read"])
    write = _direction(job["write"])
    return {
        "jobname": job["name"],
        "groupid": 0,
        "job_start": job_start_ms,
        "error": 0,
        "job options": {str(key): str(value) for key, value in job["options"].items()},
        "read": read,
        "write": write,
        "trim": _direction(_EMPTY_DIRECTION),
        "sync": {"total_ios": 0, "lat_ns": _lat_ns(_EMPTY_LAT_NS)},
        "job_runtime": max(read["runtime"], write["runtime"]),
    }


def fio_document(job: Mapping[str, Any], sanlab_version: str, started: datetime) -> dict[str, Any]:
    """A whole `fio --output-format=json` document holding one simulated job.

    `started` must be timezone-aware; `time` is written in UTC in ctime form, as fio writes it.
    """
    timestamp_ms = int(started.timestamp() * 1000)
    return {
        "fio version": f"sanlab-{sanlab_version}",
        "timestamp": timestamp_ms // 1000,
        "timestamp_ms": timestamp_ms,
        "time": time.asctime(started.utctimetuple()),
        "global options": {},
        "jobs": [fio_job(job, timestamp_ms)],
    }
