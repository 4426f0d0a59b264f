"""Each variant's time series in esxtop batch mode's CSV layout (`sanlab run --esxtop-csv`), so
tools made for esxtop captures (perfmon, esxplot, spreadsheets) open it: a perfmon-style header
`"(PDH-CSV 4.0) (UTC)(0)","\\\\esx1\\Physical Disk SCSI Device(lun)\\Commands/sec",...`, then one
quoted row per sample, its time the run's start plus the simulated time.

The counters are those sanlab simulates, named as esxtop names them:

- per device: Commands/sec; Average Guest MilliSec/Command (GAVG: from entering the device
  queue to completion, KAVG + DAVG); Queue Depth (DQLEN); Active Commands (ACTV); Queued
  Commands (QUED);
- per path: Commands/sec; Average Driver MilliSec/Command (DAVG: on the wire and in the array).

Reads and writes are not sampled apart, so esxtop's per-direction counters are left out.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ESXTOP_FILE = "esxtop.csv"
# (sanlab entity prefix, esxtop object, sanlab metric, esxtop counter)
COUNTERS = (
    ("device", "Physical Disk SCSI Device", "iops", "Commands/sec"),
    ("device", "Physical Disk SCSI Device", "lat_ms_mean", "Average Guest MilliSec/Command"),
    ("device", "Physical Disk SCSI Device", "dqlen", "Queue Depth"),
    ("device", "Physical Disk SCSI Device", "actv", "Active Commands"),
    ("device", "Physical Disk SCSI Device", "qued", "Queued Commands"),
    ("path", "Physical Disk Path", "iops", "Commands/sec"),
    ("path", "Physical Disk Path", "lat_ms_mean", "Average Driver MilliSec/Command"),
)


def esxtop_csv(variant: Mapping[str, Any], started: datetime) -> str:
    """The CSV text of one variant."""
    hosts = {("device", d["name"]): d["host"] for d in variant["devices"]}
    hosts.update({("path", p["name"]): p["host"] for p in variant["paths"]})
    series = variant["timeseries"]
    values: dict[tuple[str, str], dict[float, float]] = {}
    for t, entity, metric, value in zip(series["t_s"], series["entity"], series["metric"], series["value"], strict=True):
        values.setdefault((entity, metric), {})[t] = value
    columns = []
    for kind, obj, metric, counter in COUNTERS:
        for (k, name), host in hosts.items():
            if k == kind and (f"{kind}/{name}", metric) in values:
                columns.append((f"\\\\{host}\\{obj}({name})\\{counter}", values[(f"{kind}/{name}", metric)]))
    times = sorted({t for _, col in columns for t in col})
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    writer.writerow(["(PDH-CSV 4.0) (UTC)(0)", *[name for name, _ in columns]])
    for t in times:
        stamp = (started + timedelta(seconds=t)).strftime("%m/%d/%Y %H:%M:%S")
        writer.writerow([stamp, *[f"{col[t]:.2f}" if t in col else "" for _, col in columns]])
    return out.getvalue()


def write_esxtop_csvs(doc: Mapping[str, Any], out_dir: Path, variant_dir: Callable[[str], str], started: datetime) -> list[Path]:
    """Writes `<variant>/esxtop.csv` for every variant; returns the files written."""
    written = []
    for variant in doc["variants"]:
        path = out_dir / variant_dir(variant["name"]) / ESXTOP_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(esxtop_csv(variant, started), encoding="utf-8", newline="")
        written.append(path)
    return written
