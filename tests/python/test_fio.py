"""fio JSON written for each simulated job follows `fio --output-format=json`."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from sanlab.fio import fio_document

STARTED = datetime(2026, 11, 21, 20, 9, 5, 250000, tzinfo=UTC)
DIRECTION_KEYS = {
    "io_bytes", "io_kbytes", "bw_bytes", "bw", "iops", "runtime", "total_ios",
    "short_ios", "drop_ios", "slat_ns", "clat_ns", "lat_ns",
}  # fmt: skip


def _write_job(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["variants"][0]["jobs"][0]


def test_top_level_fields(doc: dict[str, Any]) -> None:
    fio = fio_document(_write_job(doc), "0.1.0", STARTED)
    assert list(fio) == ["fio version", "timestamp", "timestamp_ms", "time", "global options", "jobs"]
    assert fio["fio version"] == "sanlab-0.1.0"
    assert fio["timestamp"] == int(STARTED.timestamp())
    assert fio["timestamp_ms"] == int(STARTED.timestamp() * 1000)
    assert fio["time"] == "Sat Nov 21 20:09:05 2026"
    assert fio["global options"] == {}
    assert len(fio["jobs"]) == 1


def test_job_fields(doc: dict[str, Any]) -> None:
    job = fio_document(_write_job(doc), "0.1.0", STARTED)["jobs"][0]
    assert job["jobname"] == "writer"
    assert job["groupid"] == 0
    assert job["error"] == 0
    assert job["job options"] == {"rw": "randwrite", "bs": "32k", "iodepth": "32"}
    assert job["job_runtime"] == 1500
    for direction in ("read", "write", "trim"):
        assert set(job[direction]) == DIRECTION_KEYS


def test_direction_values(doc: dict[str, Any]) -> None:
    write = fio_document(_write_job(doc), "0.1.0", STARTED)["jobs"][0]["write"]
    io_bytes = 12000 * 32768
    assert write["io_bytes"] == io_bytes
    assert write["io_kbytes"] == io_bytes // 1024
    assert write["bw_bytes"] == io_bytes * 1000 // 1500
    assert write["bw"] == write["bw_bytes"] // 1024
    assert write["iops"] == 8000.0
    assert write["runtime"] == 1500
    assert write["total_ios"] == 12000
    assert (write["short_ios"], write["drop_ios"]) == (0, 0)


def test_latency_objects(doc: dict[str, Any]) -> None:
    write = fio_document(_write_job(doc), "0.1.0", STARTED)["jobs"][0]["write"]
    assert write["slat_ns"] == {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
    assert write["clat_ns"] == write["lat_ns"]
    lat = write["clat_ns"]
    assert lat["N"] == 12000
    assert lat["mean"] == 2.4e6
    assert all(isinstance(lat[key], int) for key in ("min", "max", "N"))
    percentiles = lat["percentile"]
    assert all(re.fullmatch(r"\d+\.\d{6}", key) for key in percentiles)
    assert all(isinstance(value, int) for value in percentiles.values())
    assert list(percentiles)[:3] == ["1.000000", "5.000000", "10.000000"]
    assert list(percentiles)[-1] == "99.990000"


def test_empty_directions_have_no_percentiles(doc: dict[str, Any]) -> None:
    job = fio_document(_write_job(doc), "0.1.0", STARTED)["jobs"][0]
    for direction in ("read", "trim"):
        stats = job[direction]
        assert stats["total_ios"] == 0
        assert stats["iops"] == 0.0
        assert "percentile" not in stats["clat_ns"]
        assert stats["lat_ns"]["N"] == 0


def test_reads_like_fio_json(doc: dict[str, Any]) -> None:
    """A reader of fio's JSON finds per-direction clat percentiles and bandwidth where fio puts them."""
    text = json.dumps(fio_document(_write_job(doc), "0.1.0", STARTED))
    parsed = json.loads(text)
    job = parsed["jobs"][0]
    p99_ms = job["write"]["clat_ns"]["percentile"]["99.000000"] / 1e6
    assert p99_ms > job["write"]["clat_ns"]["mean"] / 1e6
    assert job["write"]["bw"] * 1024 <= job["write"]["bw_bytes"]
