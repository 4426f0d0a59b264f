"""Each variant's time series in esxtop batch mode's CSV layout (`sanlab run --esxtop-csv`), so
tools made for esxtop captures (perfmon, esxplot, spreadsheets) open it: a perfmon-style header
`"(PDH-CSV 4.0) (UTC)(0)","\\\\esx1\\Physical Disk SCSI Device(lun)\\Commands/sec",...`, then one
quoted row per sample, its time the run's start plus the simulated time.

The counters are those sanlab simulates, named as esxtop names them (checked against public
batch captures and the per-LUN counter list of esxtop's documentation):

- per device: Commands/sec, Reads/sec, Writes/sec; MBytes Read/sec and MBytes Written/sec
  (1024**2 bytes, our reading of esxtop's MB); Average Guest MilliSec/Command, /Read, /Write
  (GAVG: from entering the device queue to completion); Average Driver MilliSec/Command, /Read,
  /Write (DAVG: dispatch to completion, on the wire and in the array); Average Kernel
  MilliSec/Command, /Read, /Write (KAVG = GAVG - DAVG, the wait in the device queue); Queue Depth
  (DQLEN); Active Commands (ACTV); Queued Commands (QUED);
- per path: Commands/sec; Average Driver MilliSec/Command.

Left out: Average Queue MilliSec/* (sanlab does not tell QAVG apart from the rest of KAVG), the
paths' per-direction counters (a path's series add both directions up), and the failure, abort
and reset rates (not sampled).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from pathlib import Path

from sanlab.document import Document, Variant

ESXTOP_FILE = "esxtop.csv"
MIB = 1024 * 1024

Sample = Mapping[str, float]


def _metric(name: str) -> Callable[[Sample], float | None]:
    return lambda s: s.get(name)


def _mib(name: str) -> Callable[[Sample], float | None]:
    return lambda s: s[name] * 1e6 / MIB if name in s else None


def _both(metric: str) -> Callable[[Sample], float | None]:
    """A per-direction latency over both directions, weighted by each one's I/Os."""

    def value(s: Sample) -> float | None:
        if f"read_{metric}" not in s:
            return None
        ios = s["read_iops"] + s["write_iops"]
        return (s["read_iops"] * s[f"read_{metric}"] + s["write_iops"] * s[f"write_{metric}"]) / ios if ios else 0.0

    return value


def _kernel(guest: Callable[[Sample], float | None], driver: Callable[[Sample], float | None]) -> Callable[[Sample], float | None]:
    """KAVG: guest minus driver latency; both are means over the same I/Os, so only the samples'
    float rounding could make it negative."""

    def value(s: Sample) -> float | None:
        g, d = guest(s), driver(s)
        return None if g is None or d is None else max(g - d, 0.0)

    return value


DEVICE = ("device", "Physical Disk SCSI Device")
PATH = ("path", "Physical Disk Path")
# (sanlab entity prefix, esxtop object, esxtop counter, value from the entity's sample)
COUNTERS: tuple[tuple[str, str, str, Callable[[Sample], float | None]], ...] = (
    (*DEVICE, "Commands/sec", _metric("iops")),
    (*DEVICE, "Reads/sec", _metric("read_iops")),
    (*DEVICE, "Writes/sec", _metric("write_iops")),
    (*DEVICE, "MBytes Read/sec", _mib("read_mbps")),
    (*DEVICE, "MBytes Written/sec", _mib("write_mbps")),
    (*DEVICE, "Average Driver MilliSec/Command", _both("driver_ms_mean")),
    (*DEVICE, "Average Kernel MilliSec/Command", _kernel(_metric("lat_ms_mean"), _both("driver_ms_mean"))),
    (*DEVICE, "Average Guest MilliSec/Command", _metric("lat_ms_mean")),
    (*DEVICE, "Average Driver MilliSec/Read", _metric("read_driver_ms_mean")),
    (*DEVICE, "Average Kernel MilliSec/Read", _kernel(_metric("read_lat_ms_mean"), _metric("read_driver_ms_mean"))),
    (*DEVICE, "Average Guest MilliSec/Read", _metric("read_lat_ms_mean")),
    (*DEVICE, "Average Driver MilliSec/Write", _metric("write_driver_ms_mean")),
    (*DEVICE, "Average Kernel MilliSec/Write", _kernel(_metric("write_lat_ms_mean"), _metric("write_driver_ms_mean"))),
    (*DEVICE, "Average Guest MilliSec/Write", _metric("write_lat_ms_mean")),
    (*DEVICE, "Queue Depth", _metric("dqlen")),
    (*DEVICE, "Active Commands", _metric("actv")),
    (*DEVICE, "Queued Commands", _metric("qued")),
    (*PATH, "Commands/sec", _metric("iops")),
    (*PATH, "Average Driver MilliSec/Command", _metric("lat_ms_mean")),
)


def esxtop_csv(variant: Variant, started: datetime) -> str:
    """The CSV text of one variant."""
    hosts = {("device", d["name"]): d["host"] for d in variant["devices"]}
    hosts.update({("path", p["name"]): p["host"] for p in variant["paths"]})
    series = variant["timeseries"]
    # entity -> time -> metric -> value
    samples: dict[str, dict[float, dict[str, float]]] = {}
    for t, entity, metric, value in zip(series["t_s"], series["entity"], series["metric"], series["value"], strict=True):
        samples.setdefault(entity, {}).setdefault(t, {})[metric] = value
    columns = []
    for kind, obj, counter, value in COUNTERS:
        for (k, name), host in hosts.items():
            by_time = samples.get(f"{kind}/{name}", {})
            col = {t: v for t, s in by_time.items() if (v := value(s)) is not None}
            if k == kind and col:
                columns.append((f"\\\\{host}\\{obj}({name})\\{counter}", col))
    times = sorted({t for _, col in columns for t in col})
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    writer.writerow(["(PDH-CSV 4.0) (UTC)(0)", *[name for name, _ in columns]])
    for t in times:
        stamp = (started + timedelta(seconds=t)).strftime("%m/%d/%Y %H:%M:%S")
        writer.writerow([stamp, *[f"{col[t]:.2f}" if t in col else "" for _, col in columns]])
    return out.getvalue()


def write_esxtop_csvs(doc: Document, out_dir: Path, variant_dir: Callable[[str], str], started: datetime) -> list[Path]:
    """Writes `<variant>/esxtop.csv` for every variant; returns the files written."""
    written = []
    for variant in doc["variants"]:
        path = out_dir / variant_dir(variant["name"]) / ESXTOP_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(esxtop_csv(variant, started), encoding="utf-8", newline="")
        written.append(path)
    return written
