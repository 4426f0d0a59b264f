"""Shared fixtures: a small result document in the engine's format and a CLI runner."""

from __future__ import annotations

import copy
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ONE_VM = Path(__file__).resolve().parents[1] / "data" / "scenarios" / "one_vm.toml"
"""The shared base scenario: one host, one flash array, one path, one VM with an ideal adapter.
A test's scenario builds on it with `base = "{ONE_VM.as_posix()}"` and gives what it changes."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--record-fio",
        action="store_true",
        help="run Debian's fio and record its output again under tests/data/fio/recorded/ (test_fio.py)",
    )


def _run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sanlab.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture
def cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Runs `python -m sanlab.cli ARGS` (optionally with `cwd=`) and captures its output."""
    return _run_cli


def _lat_ms(mean: float) -> dict[str, float]:
    return {
        "mean": mean,
        "p50": mean * 0.9,
        "p95": mean * 1.5,
        "p99": mean * 2,
        "p999": mean * 3,
        "max": mean * 4,
    }


def _lat_ns(samples: int, mean_ns: float) -> dict[str, Any]:
    percentiles = (1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99)
    return {
        "min": int(mean_ns / 2),
        "max": int(mean_ns * 4),
        "mean": mean_ns,
        "stddev": mean_ns / 3,
        "N": samples,
        # Keys in text order, as the engine's sorted map writes them ("10.000000" before "5.000000").
        "percentile": {f"{p:f}": int(mean_ns * (0.5 + p / 50)) for p in sorted(percentiles, key=str)},
    }


def _direction(ios: int, bs_bytes: int, runtime_ms: int, mean_ns: float) -> dict[str, Any]:
    io_bytes = ios * bs_bytes
    return {
        "total_ios": ios,
        "io_bytes": io_bytes,
        "runtime_ms": runtime_ms,
        "iops": ios * 1000 / runtime_ms if runtime_ms else 0.0,
        "bw_bytes": io_bytes * 1000 // runtime_ms if runtime_ms else 0,
        "lat_ns": _lat_ns(ios, mean_ns) if ios else {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0},
    }


def _variant(name: str, seed: int, share_local: float) -> dict[str, Any]:
    iops = 8000.0 if name == "rr" else 13000.0
    return {
        "name": name,
        "description": f"{name} path selection",
        "seed": seed,
        "sim_time_s": 2.0,
        "measured_s": 1.5,
        "wall_s": 0.05,
        "events": 123456,
        "ios": 12000,
        "resolved_toml": f"schema_version = 1\n[run]\nseed = {seed}\n",
        "vms": [
            {
                "name": "vm1",
                "host": "esx1",
                "issued": 12032,
                "completed": 12000,
                "in_flight": 32,
                "iops": iops,
                "mbps": iops * 32 / 1000,
                "read_iops": 0.0,
                "write_iops": iops,
                "lat_ms": _lat_ms(2.4),
            }
        ],
        "jobs": [
            {
                "name": "writer",
                "vm": "vm1",
                "options": {"rw": "randwrite", "bs": "32k", "iodepth": "32"},
                "read": _direction(0, 32768, 0, 0.0),
                "write": _direction(12000, 32768, 1500, 2.4e6),
            }
        ],
        "paths": [
            {
                "name": "loc-0",
                "host": "esx1",
                "array": "array-a",
                "device": "naa.1",
                "alua": "AO",
                "state": "active",
                "ios": int(12000 * share_local),
                "iops": iops * share_local,
                "share": share_local,
                "mbps": iops * share_local * 32 / 1000,
                "lat_ms": _lat_ms(2.2),
            },
            {
                "name": "rem-0",
                "host": "esx1",
                "array": "array-b",
                "device": "naa.1",
                "alua": "ANO",
                "state": "active",
                "ios": 12000 - int(12000 * share_local),
                "iops": iops * (1 - share_local),
                "share": 1 - share_local,
                "mbps": iops * (1 - share_local) * 32 / 1000,
                "lat_ms": _lat_ms(6.0),
            },
        ],
        "devices": [
            {
                "name": "naa.1",
                "host": "esx1",
                "volume": "vol1",
                "queue_depth": 128,
                "ios": 12000,
                "iops": iops,
                "lat_ms": _lat_ms(2.4),
                "dqlen_mean": 32.0,
                "actv_mean": 31.5,
                "qued_mean": 0.2,
                "kavg_ms": 0.01,
                "davg_ms": 2.39,
                "gavg_ms": 2.4,
                "qfull": 0,
                "depth_end": 32,
            }
        ],
        "volumes": [{"name": "vol1", "qos": None}],
        "arrays": [
            {
                "name": "array-a",
                "iops": iops,
                "mbps": iops * 32 / 1000,
                "host_ios": 6000,
                "replicated_ios": 6000,
                "utilisation": 0.2,
                "lat_ms": _lat_ms(2.0),
                "cores": [
                    {"name": "ctrl1.core1", "share": 0.75, "util": 1.0, "iops": iops * 0.75},
                    {"name": "ctrl1.core2", "share": 0.25, "util": 0.3, "iops": iops * 0.25},
                ],
                "controllers": [{"name": "ctrl1", "share": 1.0, "util": 0.65, "iops": iops}],
                "cache_hit_ratio": None,
                "qfull_sent": 0,
            },
        ],
        "psp_events": [{"t_s": 0.5, "device": "naa.1", "event": "drop", "paths": ["rem-0"]}]
        if name == "latency"
        else [],
        "conservation": [{"component": "vm/vm1", "issued": 12032, "completed": 12000, "in_flight": 32}],
        "timeseries": {
            "t_s": [0.5, 0.5, 1.0, 1.0],
            "entity": ["vm/vm1", "path/loc-0", "vm/vm1", "path/loc-0"],
            "metric": ["iops", "iops", "iops", "iops"],
            "value": [iops, iops * share_local, iops, iops * share_local],
        },
    }


SAMPLE_DOC: dict[str, Any] = {
    "scenario": "tiny_metro",
    "file": "scenarios/tiny_metro.toml",
    "scenario_sha256": "0" * 64,
    "version": "0.1.0",
    "variants": [_variant("rr", 7, 0.5), _variant("latency", 8, 1.0)],
}


@pytest.fixture
def doc() -> dict[str, Any]:
    """A fresh copy of a two-variant result document (`rr`, `latency`)."""
    return copy.deepcopy(SAMPLE_DOC)


def with_cores(doc: dict[str, Any], hot_core: int = 3) -> dict[str, Any]:
    """The document with `core/array-a/<n>` utilisation rows: core `hot_core` busy, the others light."""
    for variant in doc["variants"]:
        series = variant["timeseries"]
        for t_s in (0.5, 1.0):
            for core in range(8):
                series["t_s"].append(t_s)
                series["entity"].append(f"core/array-a/{core}")
                series["metric"].append("util")
                series["value"].append(0.9 if core == hot_core else 0.2)
    return doc


PARDA_THRESHOLD_MS = 30.0


def with_hosts(doc: dict[str, Any], controlled: tuple[str, ...] = ("rr", "latency")) -> dict[str, Any]:
    """The document with two hosts per variant, `esx1` (β 1) and `esx2` (β 2), and their series.

    The hosts of the variants named in `controlled` run PARDA (threshold PARDA_THRESHOLD_MS) and have
    `window` and `latency_estimate_ms` series; the others have no flow control.
    """
    for variant in doc["variants"]:
        parda = variant["name"] in controlled
        variant["hosts"] = []
        series = variant["timeseries"]
        for index, name in enumerate(("esx1", "esx2")):
            beta = float(index + 1)
            iops = 1000.0 * beta
            window = {"final": 16.0 * beta, "mean": 15.5 * beta, "min": 4.0, "max": 64.0}
            variant["hosts"].append(
                {
                    "name": name,
                    "vms": 1 + index,
                    "iops": iops,
                    "mbps": iops * 32 / 1000,
                    "lat_ms": _lat_ms(31.0),
                    "device_lat_ms": 30.5,
                    "flow_control": {
                        "kind": "parda",
                        "latency_threshold_ms": PARDA_THRESHOLD_MS,
                        "beta": beta,
                        "latency_estimate_ms": 31.2,
                    }
                    if parda
                    else None,
                    "window": window if parda else None,
                }
            )
            metrics = {"iops": iops, "mbps": iops * 32 / 1000, "lat_ms_mean": 31.0}
            if parda:
                metrics |= {"window": 16.0 * beta, "latency_estimate_ms": 31.2}
            for t_s in (0.5, 1.0):
                for metric, value in metrics.items():
                    series["t_s"].append(t_s)
                    series["entity"].append(f"host/{name}")
                    series["metric"].append(metric)
                    series["value"].append(value)
    return doc


def with_injector(doc: dict[str, Any], variant_name: str = "latency") -> dict[str, Any]:
    """The document with an SIOC injector measurement in `variant_name`: a curve peaking at 2,000
    IOPS and a 90 % threshold of 12.5 ms, halfway between the 16 and 32 outstanding levels."""
    points = [(1, 300.0, 3.0), (16, 1600.0, 10.0), (32, 2000.0, 15.0), (64, 2000.0, 15.0)]
    for variant in doc["variants"]:
        if variant["name"] == variant_name:
            variant["injector"] = [
                {
                    "volume": "ds",
                    "host": "esx1",
                    "io_size_bytes": 8192,
                    "span_bytes": 1 << 30,
                    "points": [{"outstanding": o, "iops": i, "latency_ms": l} for o, i, l in points],
                    "peak_iops": 2000.0,
                    "percent_of_peak": 90.0,
                    "threshold_ms": 12.5,
                }
            ]
    return doc
