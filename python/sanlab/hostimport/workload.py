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

What the capture's figures cannot give is said, never written: a device whose counters have no
value (empty cells), average below zero, or give no read share, less than a sector per command or
a request size, depth or rate past the engine's bounds for a job gets the reason (`device_loads`),
and runs the default workload; a DAVG that is missing or below
the engine's 1 µs floor for a service time is left out of its array's, with a note (`service_ms`).
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
# The engine's bounds on the fio options a load is written with (its read-back names them): a
# figure past them is said, not written (a capture's 1e18 MB/s gave --bs=6447604371278022049792).
MAX_BS = 4 << 30
MAX_IODEPTH = 65536
RATE_IOPS = (3.171e-8, 1e9)
MAX_SERVICE_MS = 365 * 86400 * 1000.0
"""The longest duration the engine takes (365 days): a longer DAVG or await is no service time."""
MAX_SERVERS = 1_000_000
"""An array's most servers in the engine."""
MIN_SERVICE_MS = 0.001
"""The engine's floor for an array's service time, 1 µs (docs/robustness.md, "Numbers"). esxtop
writes latencies with two decimals, so a DAVG of 0.00 ms is a rounded figure, not a service time."""


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
    # The latency the guest saw (GAVG, weighted by commands): what `import … --calibrate` fits the
    # run's VM latency to; NaN where the capture has none.
    gavg_ms: float = math.nan

    def fio_cmdline(self) -> str:
        """The fio command line that issues this load."""
        depth = max(1, round(self.outstanding))
        mix = round(100 * self.read_share)
        rw = "randread" if mix == 100 else "randwrite" if mix == 0 else f"randrw --rwmixread={mix}"
        if self.closed:
            return f"--name=load --ioengine=libaio --rw={rw} --bs={self.size_bytes} --iodepth={depth}"
        # Open: arrivals at the measured rate; the depth only caps what may be outstanding.
        # The rate as measured: rounded to a whole number, 0.3 IOPS would be 0, which is no limit.
        # A mix takes a rate per direction (fio's `rate_iops=R,W`): one value would cap reads and
        # writes each at the total, twice the load at half reads.
        rate = f"{self.iops:.6g}"
        if 0 < mix < 100:
            reads = self.iops * mix / 100
            rate = f"{max(reads, RATE_IOPS[0]):.6g},{max(self.iops - reads, RATE_IOPS[0]):.6g}"
        return f"--name=load --ioengine=libaio --rw={rw} --bs={self.size_bytes} --iodepth={min(max(depth * 4, 64), MAX_IODEPTH)} --rate_iops={rate} --rate_process=poisson"

    def why(self) -> str:
        loop = f"closed loop at {self.outstanding:.1f} outstanding (ACTV+QUED a steady whole number)" if self.closed else f"open loop at {self.iops:.0f} IOPS (ACTV+QUED {self.outstanding:.2f}: arrivals, not a held depth)"
        davg = f"DAVG {self.davg_ms:.3f} ms" if math.isfinite(self.davg_ms) else "no DAVG measured"
        return f"{self.source}: {self.iops:.0f} IOPS, {100 * self.read_share:.0f} % reads, {self.size_bytes} B per command, {loop}; {davg}"


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


# The counters a load is made of: a rate, a size and a queue; none is ever negative.
_LOAD_COUNTERS = ("Reads/sec", "Writes/sec", "MBytes Read/sec", "MBytes Written/sec", "Active Commands", "Queued Commands")


def beyond_a_job(size_bytes: int, outstanding: float, iops: float, closed: bool, per: str, queue: str) -> str | None:
    """Why a load cannot be written as a job, or None: a request size, a closed loop's depth or
    an open loop's rate past the engine's bounds (MAX_BS, MAX_IODEPTH, RATE_IOPS). `per`: what
    the capture counts (`command`, `request`); `queue`: the counters the depth is read from."""
    if size_bytes > MAX_BS:
        return f"{size_bytes:,} bytes per {per} at {iops:g} {per}s/s, above the {MAX_BS:,} a request can be"
    if closed and outstanding > MAX_IODEPTH:
        return f"{outstanding:g} {per}s outstanding ({queue}), above the {MAX_IODEPTH} a job can hold"
    if not closed and not RATE_IOPS[0] <= iops <= RATE_IOPS[1]:
        return f"{iops:g} {per}s/s, outside the rates a job can issue ({RATE_IOPS[0]:g} to {RATE_IOPS[1]:g})"
    return None


def _load(capture: Capture, device: str) -> DeviceLoad | str | None:
    """The device's load; None when it issued no command; else why its figures give none."""
    series = device_series(capture, device)
    get = series.__getitem__
    iops = mean(get("Commands/sec"))
    if iops == 0:
        return None
    means = {"Commands/sec": iops, **{c: mean(get(c)) for c in _LOAD_COUNTERS}}
    empty = [c for c, v in means.items() if math.isnan(v)]
    if empty:
        return f"no value in any sample of {', '.join(empty)}"
    negative = [f"{c} {v:g}" for c, v in means.items() if v < 0]
    if negative:
        return f"a mean below zero ({', '.join(negative)}), which no count or rate has"
    reads, writes = means["Reads/sec"], means["Writes/sec"]
    if reads + writes == 0:
        return f"{iops:g} commands/s and no reads or writes (other SCSI commands only): no read share"
    sectors = round((means["MBytes Read/sec"] + means["MBytes Written/sec"]) * MIB / iops / SECTOR_BYTES)
    if sectors == 0:
        return f"less than half a sector per command from MBytes Read/sec and Written/sec at {iops:g} commands/s: no I/O size"
    outstanding_series = get("Active Commands") + get("Queued Commands")
    outstanding = mean(outstanding_series)
    spread = float(np.nanstd(outstanding_series)) / outstanding if outstanding > 0 else math.inf
    closed = outstanding >= 1 - WHOLE and abs(outstanding - round(outstanding)) <= WHOLE and spread < STEADY_CV
    beyond = beyond_a_job(sectors * SECTOR_BYTES, outstanding, iops, closed, "command", "Active Commands + Queued Commands")
    if beyond:
        return beyond
    column = capture.columns[(DEVICE, device, "Commands/sec")]
    source = f"{capture.path.name} column {column.number} ({DEVICE}({device})), {capture.samples} samples"
    davg = weighted_mean(get("Average Driver MilliSec/Command"), get("Commands/sec"))
    by_direction = [weighted_mean(series[c], get(n)) if c in series else davg for c, n in (("Average Driver MilliSec/Read", "Reads/sec"), ("Average Driver MilliSec/Write", "Writes/sec"))]
    gavg = weighted_mean(series["Average Guest MilliSec/Command"], get("Commands/sec")) if "Average Guest MilliSec/Command" in series else math.nan
    return DeviceLoad(device, iops, reads / (reads + writes), sectors * SECTOR_BYTES, outstanding, davg, by_direction[0], by_direction[1], reads, writes, closed, source, gavg)


def device_loads(capture: Capture) -> tuple[dict[str, DeviceLoad], dict[str, str]]:
    """Each device's load, by device name (esxtop's instance: the naa id), and for each device
    whose figures give none, why (a device that issued no command is in neither)."""
    loads: dict[str, DeviceLoad] = {}
    reasons: dict[str, str] = {}
    for device in capture.instances(DEVICE):
        load = _load(capture, device)
        if isinstance(load, DeviceLoad):
            loads[device] = load
        elif load is not None:
            reasons[device] = load
    return loads, reasons


def no_service_time(ms: float) -> str | None:
    """Why a measured latency (ms) is no array's service time, or None: missing, below the 1 µs
    an array takes at least (MIN_SERVICE_MS), or past the engine's longest duration."""
    if math.isnan(ms):
        return "no value"
    if not ms >= MIN_SERVICE_MS:
        return f"{ms:.4f} ms, below the {MIN_SERVICE_MS * 1000:g} µs an array takes at least"
    if not ms <= MAX_SERVICE_MS:
        return f"{ms:g} ms, above the 365 days the engine takes"
    return None


def servers_for(outstanding: float) -> int:
    """Servers enough that the capture's load (its outstanding commands, summed) does not queue
    in the array: four per command, 64 at least, MAX_SERVERS at most."""
    return min(MAX_SERVERS, max(64, 4 * math.ceil(outstanding)))


def service_ms(loads: list[DeviceLoad]) -> tuple[float, float, list[str]]:
    """The array's read and write service times: its devices' DAVG per direction, weighted by
    their reads (writes); a direction without any takes the other's; NaN when neither has one.
    A device's DAVG that is missing or below MIN_SERVICE_MS for a direction it carried is left
    out, and said (the notes)."""
    notes: list[str] = []

    def weighted(direction: str, pairs: list[tuple[str, float, float]]) -> float:
        for device, ms, n in pairs:
            found = no_service_time(ms) if n > 0 else None
            if found:
                notes.append(f"{device}: the DAVG of its {direction} ({found}) is no service time: left out of its array's")
        kept = [(ms, n) for _, ms, n in pairs if n > 0 and no_service_time(ms) is None]
        total = sum(n for _, n in kept)
        return sum(ms * n for ms, n in kept) / total if total else math.nan

    read = weighted("reads", [(m.device, m.davg_read_ms, m.reads_per_s) for m in loads])
    write = weighted("writes", [(m.device, m.davg_write_ms, m.writes_per_s) for m in loads])
    return (read if math.isfinite(read) else write, write if math.isfinite(write) else read, notes)
