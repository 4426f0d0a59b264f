"""What each device carried in an esxtop capture, as a workload sanlab can run, and how fast its
array answered, as the array's service time.

Per device (`Physical Disk SCSI Device(<naa>)`), over every sample of the capture:

- rate: the mean of `Commands/sec`; read share: `Reads/sec` over reads and writes;
- I/O size: MB/s over commands/s (`MBytes Read/sec` + `MBytes Written/sec`, esxtop's MB taken as
  2^20 bytes, the reading `sanlab run --esxtop-csv` writes), rounded to whole 512-byte sectors;
- outstanding I/Os: the mean of `Active Commands` + `Queued Commands` (ACTV + QUED);
- the loop: **closed** at that depth when the outstanding count is a whole number that holds
  (within `WHOLE` of an integer of at least 1, and its coefficient of variation across samples
  below `STEADY_CV`: a benchmark or a batch job keeping a depth), else **open** at the mean rate,
  Poisson arrivals (an application's requests, whose outstanding count follows the latency: a
  fraction, or one that moves). Our rule: a capture shows queues, not who issued the requests;
  the choice and its figures are written beside the job. The job uses fio's libaio engine, so the
  depth is the one asked (fio's default engine keeps one request outstanding).

The array's service time: the devices' DAVG (`Average Driver MilliSec/Read` and `/Write`, from
dispatch to completion; `/Command` where a capture has no per-direction figure), each sample
weighted by its reads (writes), so idle samples count for nothing, and over the devices on one
array weighted by their reads (writes), as its read (write) latency, with enough servers that
the capture's load does not queue inside it. DAVG also holds the wire's round trip and any
queueing in the array at the capture's load, so the estimate is the array as seen at that load
(Little's law ties it: ACTV = IOPS x DAVG): at a heavier load the simulated array will not slow
down as a real one would. Our choice, said in the scenario's comments.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sanlab.hostimport.esxtop import DEVICE, Capture, CaptureError

# A closed loop: ACTV + QUED within this of a whole number, with a coefficient of variation across
# samples below STEADY_CV.
WHOLE = 0.05
STEADY_CV = 0.1
SECTOR_BYTES = 512
MIB = 1 << 20


@dataclass(frozen=True)
class DeviceLoad:
    """One device's load in a capture, and the text that says where it came from."""

    device: str
    iops: float
    read_share: float
    size_bytes: int
    outstanding: float
    davg_ms: float
    # Per direction (NaN without reads, or writes, or a per-direction counter).
    davg_read_ms: float
    davg_write_ms: float
    reads_per_s: float
    writes_per_s: float
    closed: bool
    source: str

    def fio_cmdline(self) -> str:
        """The fio command line that issues this load."""
        depth = max(1, round(self.outstanding))
        mix = round(100 * self.read_share)
        rw = "randread" if mix == 100 else "randwrite" if mix == 0 else f"randrw --rwmixread={mix}"
        if self.closed:
            return f"--name=load --ioengine=libaio --rw={rw} --bs={self.size_bytes} --iodepth={depth}"
        # Open: arrivals at the measured rate; the depth only caps what may be outstanding.
        return f"--name=load --ioengine=libaio --rw={rw} --bs={self.size_bytes} --iodepth={max(depth * 4, 64)} --rate_iops={round(self.iops)} --rate_process=poisson"

    def why(self) -> str:
        loop = f"closed loop at {self.outstanding:.1f} outstanding (ACTV+QUED a steady whole number)" if self.closed else f"open loop at {self.iops:.0f} IOPS (ACTV+QUED {self.outstanding:.2f}: arrivals, not a held depth)"
        return f"{self.source}: {self.iops:.0f} IOPS, {100 * self.read_share:.0f} % reads, {self.size_bytes} B per command, {loop}; DAVG {self.davg_ms:.3f} ms"


# The device counters the import reads; a capture without them (esxtop -b without -a may leave
# some out) is refused, naming them.
REQUIRED = ("Commands/sec", "Reads/sec", "Writes/sec", "MBytes Read/sec", "MBytes Written/sec", "Active Commands", "Queued Commands", "Average Driver MilliSec/Command")


def mean(values: np.ndarray) -> float:
    """The mean over the samples that have a value (NaN without any)."""
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else math.nan


def weighted_mean(latency_ms: np.ndarray, commands: np.ndarray) -> float:
    """A latency over the capture: each sample's mean weighted by its commands, so idle samples
    (esxtop writes 0 ms for them) count for nothing (NaN without any command)."""
    ok = np.isfinite(latency_ms) & np.isfinite(commands) & (commands > 0)
    total = float(commands[ok].sum())
    return float((latency_ms[ok] * commands[ok]).sum()) / total if total > 0 else math.nan


def device_series(capture: Capture, device: str) -> dict[str, np.ndarray]:
    """A device's series, every counter the import needs among them; a `CaptureError` names the
    missing ones."""
    series = capture.series[(DEVICE, device)]
    missing = [c for c in REQUIRED if c not in series]
    if missing:
        raise CaptureError(f"{capture.path}: {DEVICE}({device}) has no {', '.join(missing)}: capture every counter (esxtop -b -a)")
    return series


def device_loads(capture: Capture) -> dict[str, DeviceLoad]:
    """Each device's load, by device name (esxtop's instance: the naa id)."""
    out = {}
    for device in capture.instances(DEVICE):
        series = device_series(capture, device)
        get = series.__getitem__
        iops = mean(get("Commands/sec"))
        if not iops > 0:
            continue
        reads, writes = mean(get("Reads/sec")), mean(get("Writes/sec"))
        mbps = mean(get("MBytes Read/sec")) + mean(get("MBytes Written/sec"))
        size = max(SECTOR_BYTES, round(mbps * MIB / iops / SECTOR_BYTES) * SECTOR_BYTES)
        outstanding_series = get("Active Commands") + get("Queued Commands")
        outstanding = mean(outstanding_series)
        spread = float(np.nanstd(outstanding_series)) / outstanding if outstanding > 0 else math.inf
        closed = outstanding >= 1 - WHOLE and abs(outstanding - round(outstanding)) <= WHOLE and spread < STEADY_CV
        column = capture.columns[(DEVICE, device, "Commands/sec")]
        source = f"{capture.path.name} column {column.number} ({DEVICE}({device})), {capture.samples} samples"
        davg = weighted_mean(get("Average Driver MilliSec/Command"), get("Commands/sec"))
        by_direction = [weighted_mean(series[c], get(n)) if c in series else davg for c, n in (("Average Driver MilliSec/Read", "Reads/sec"), ("Average Driver MilliSec/Write", "Writes/sec"))]
        share = reads / (reads + writes) if reads + writes > 0 else 1.0
        out[device] = DeviceLoad(device, iops, share, size, outstanding, davg, by_direction[0], by_direction[1], reads, writes, closed, source)
    return out


def service_ms(loads: list[DeviceLoad]) -> tuple[float, float]:
    """The array's read and write service times: its devices' DAVG per direction, weighted by
    their reads (writes); a direction without any takes the other's."""
    def weighted(pairs: list[tuple[float, float]]) -> float:
        pairs = [(ms, n) for ms, n in pairs if n > 0 and math.isfinite(ms)]
        total = sum(n for _, n in pairs)
        return sum(ms * n for ms, n in pairs) / total if total else math.nan
    read = weighted([(m.davg_read_ms, m.reads_per_s) for m in loads])
    write = weighted([(m.davg_write_ms, m.writes_per_s) for m in loads])
    return (read if math.isfinite(read) else write, write if math.isfinite(write) else read)
