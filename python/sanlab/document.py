"""The engine's JSON document as Python types: what `sanlab.engine.run` returns.

Each TypedDict mirrors a struct serialised by serde, with the Rust struct's name and serde's
field names and types:

- `Document` is `RunResult` and `Variant` is `VariantResult` (crates/sanlab-scenario/src/lib.rs),
  with the variant's `RunReport` flattened into it;
- `VmReport`, `HostReport`, `PathReport`, `DeviceReport`, `VolumeReport`, `ArrayReport`,
  `CoreReport`, `JobReport`, `DirectionReport`, `PspEventReport`, `FaultReport` and the rest of
  `RunReport`'s parts: crates/sanlab-model/src/report.rs;
- `InjectorReport`, `InjectorPoint`: crates/sanlab-scenario/src/pilots/injector.rs;
- `LatencyMs`, `LatencyNs`, `Conservation`, `TimeSeries` (serialised in long format):
  crates/sanlab-metrics/src/lib.rs; `RateReport`: crates/sanlab-model/src/report.rs;
- `FioFindings` and its parts, `FioPlace`: crates/sanlab-workload/src/findings.rs and plan.rs;
  `DiskGroupStats`: the disk-group array.

A key is `NotRequired` when the engine leaves it out (serde's `skip_serializing_if`) or when
`--json` and a run folder's results.json leave it out (`timeseries`, `resolved_toml`,
`resolved`: see `results.json_summary`). An `Option` is `X | None` (JSON null); so is a float the
engine may write as null (serde_json writes a NaN or an infinity as null).

Run folders written by older versions lack keys added since (`hosts`, `faults`, a conservation
row's `failed`, an array's `cores`, `seed_matters`, the fio samples): the readers that must
still load them (the report, `sanlab report`) read those with `.get` and a default.

This module is the floor of the package: it imports nothing from sanlab, and every reader of
the document imports its types from here.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any, NotRequired, TypedDict


class LatencyMs(TypedDict):
    """Latency summary in milliseconds, as the tables show it."""

    mean: float
    p50: float
    p95: float
    p99: float
    p999: float
    max: float


# `N` is fio's spelling: the functional form keeps it.
LatencyNs = TypedDict(
    "LatencyNs",
    {
        "min": int,
        "max": int,
        "mean": float,
        "stddev": float,
        "N": int,
        # fio's percentiles ("99.900000") in ns.
        "percentile": dict[str, int],
        # fio's json+ `bins`: I/Os per fio latency bucket, keyed by the bucket's value in ns.
        "bins": dict[str, int],
    },
)
"""A latency distribution in nanoseconds, shaped like fio's `clat_ns` object."""


class RateReport(TypedDict):
    """fio's bandwidth (KiB/s) or IOPS samples over the job's averaging windows."""

    min: int
    max: int
    mean: float
    dev: float
    samples: int


class DirectionReport(TypedDict):
    """One direction (read, write) of a job, shaped like fio's per-direction JSON."""

    total_ios: int
    io_bytes: int
    runtime_ms: float
    iops: float
    bw_bytes: float
    lat_ns: LatencyNs
    bw_samples: NotRequired[RateReport]
    iops_samples: NotRequired[RateReport]


class JobError(TypedDict):
    """Why a fio job ended with an error: fio's `error` number and message."""

    errno: int
    message: str


class LatencyFound(TypedDict):
    """fio `latency_target`: the depth the search ended at, with its settings."""

    depth: int
    target_ns: int
    window_us: int
    percentile: float


class SteadyFound(TypedDict):
    """fio `steadystate`: the criterion, whether it held, and the window's samples."""

    ss: str
    duration_s: int
    attained: bool
    criterion: float
    percent: bool
    max_deviation: float
    slope: float
    bw_bytes_per_s: list[int]
    iops: list[int]
    lat_ns: NotRequired[list[int]]


class FioFindings(TypedDict, total=False):
    """What a fio job found while it ran, or why it ended early."""

    error: JobError
    latency_target: LatencyFound
    steadystate: SteadyFound


class FioPlace(TypedDict):
    """A job's place in its fio job file or command line: section name, reporting group, and the
    options given with a value as (name, value) pairs."""

    name: str
    group: int
    global_options: list[list[str]]
    job_options: list[list[str]]


class SyncCounts(TypedDict):
    """A job's syncs by kind."""

    fsync: int
    fdatasync: int
    sync_file_range: int


class JobPacing(TypedDict):
    """How the engine paced a job, as it ran it (a fio job on a synchronous engine: depth 1)."""

    # "closed", "open", "timed" or "shared".
    kind: str
    depth: int
    # An open loop's: its arrival rate and whether arrivals are Poisson.
    rate_iops: NotRequired[float]
    poisson: NotRequired[bool]


class JobReport(TypedDict):
    """A simulated job (a fio job, a vdbench SD, a trace replay ...)."""

    name: str
    vm: str
    options: dict[str, str]
    ignored: list[str]
    read: DirectionReport
    write: DirectionReport
    fio: NotRequired[FioFindings]
    # Measured submissions per fio `iodepth_level` bucket (1, 2, 4, 8, 16, 32, >=64).
    iodepth_level: list[int]
    syncs: NotRequired[SyncCounts]
    # The `[[vm.job]]` entry it comes from: one fio invocation, one fio document.
    entry: str
    end_ms: float
    fio_place: NotRequired[FioPlace]
    pacing: JobPacing


class FailedByReason(TypedDict):
    """Failed I/Os by why."""

    no_path: int
    apd_timeout: int
    pdl: int


class StagesMs(TypedDict):
    """A VM's mean latency by stage: its own queues, the device queue (KAVG), past it (DAVG), which
    is the time outside the array (`fabric`) and in it (`array`: its front end, cores, then a cache
    or the media)."""

    vm_queues: float
    kavg: float
    davg: float
    fabric: float
    array: float
    array_front_end: float
    array_cores: float
    # Run folders written before it have their cache time in `array_media`.
    array_cache: NotRequired[float]
    array_media: float


class QueueReport(TypedDict):
    """A queue of `depth` slots: time-averaged slots in use (ACTV) and waiting (QUED) over the
    measured time."""

    depth: int
    actv_mean: float
    qued_mean: float


class LinkDirectionReport(TypedDict):
    busy: float
    mbps: float


class LinkReport(TypedDict):
    """A host-to-array link (named as its path) or a replication link (`kind`), each direction's
    transmitter busy share and data rate over the measured time."""

    name: str
    kind: str
    outbound: LinkDirectionReport
    inbound: LinkDirectionReport


class VmReport(TypedDict):
    name: str
    host: str
    issued: int
    completed: int
    in_flight: int
    iops: float
    mbps: float
    read_iops: float
    write_iops: float
    lat_ms: LatencyMs
    failed: int
    failed_by_reason: FailedByReason
    retried: int
    # Older run folders lack these.
    disk_queue: NotRequired[QueueReport]
    adapter_queue: NotRequired[QueueReport]
    stages_ms: NotRequired[StagesMs]
    # With replications: the 95 % intervals of its figures (`sanlab.replications`).
    ci95: NotRequired[dict[str, Any]]


class FlowControlReport(TypedDict):
    """A host's flow control (PARDA, SIOC) at the end of the run."""

    kind: str
    latency_threshold_ms: float
    beta: float
    latency_estimate_ms: float


class WindowReport(TypedDict):
    """A host's window (its controlled devices' queue depth) over the measured samples."""

    final: float
    mean: float
    min: float
    max: float


class HostReport(TypedDict):
    name: str
    vms: int
    iops: float
    mbps: float
    lat_ms: LatencyMs
    device_lat_ms: float
    flow_control: FlowControlReport | None
    window: WindowReport | None
    # Older run folders lack it.
    adapter_queue: NotRequired[QueueReport]
    ci95: NotRequired[dict[str, Any]]


class PathReport(TypedDict):
    name: str
    host: str
    array: str
    device: str
    alua: str
    state: str
    ios: int
    iops: float
    share: float
    mbps: float
    lat_ms: LatencyMs
    failed_over: int
    retried: int
    adapter: str
    controller: str
    port: str
    ci95: NotRequired[dict[str, Any]]


class DeviceReport(TypedDict):
    """A host device with esxtop's figures."""

    name: str
    host: str
    volume: str
    queue_depth: int
    ios: int
    iops: float
    lat_ms: LatencyMs
    dqlen_mean: float
    actv_mean: float
    qued_mean: float
    kavg_ms: float
    davg_ms: float
    gavg_ms: float
    qfull: int
    depth_end: int
    retried: int
    failed: int
    failed_by_reason: FailedByReason
    ci95: NotRequired[dict[str, Any]]


class QosReport(TypedDict):
    min: float
    max: float
    burst: float
    released_iops: float
    held_ms_mean: float
    held_now: int
    credit_s: float


class VolumeReport(TypedDict):
    name: str
    qos: QosReport | None


class CoreReport(TypedDict):
    """An array core or controller: its share of the requests, utilisation and IOPS."""

    name: str
    share: float
    # None for a controller of an array without modelled cores.
    util: float | None
    iops: float


class DiskGroupStats(TypedDict):
    disks: int
    raid: str
    backend_reads: int
    backend_writes: int
    full_stripe_writes: int
    rmw_writes: int
    write_cache_read_hits: int
    dirty_bytes_now: int
    # Older run folders lack it.
    dirty_bytes_mean: NotRequired[float]
    write_cache_bytes: int
    writes_waited: int
    disk_utilisation: list[float]


class ArrayReport(TypedDict):
    name: str
    cores: list[CoreReport]
    controllers: list[CoreReport]
    cache_hit_ratio: float | None
    qfull_sent: int
    iops: float
    mbps: float
    host_ios: int
    replicated_ios: int
    utilisation: float
    lat_ms: LatencyMs
    disk_group: DiskGroupStats | None


class PspEventReport(TypedDict):
    """A path selection event: a policy's decision, or a path marked dead or alive."""

    t_s: float
    device: str
    event: str
    paths: list[str]


class FaultReport(TypedDict):
    """One edge of the fault timeline: a fault starting (`phase` start), ending (end), or a step
    between (the mediator's decision)."""

    t_s: float
    kind: str
    phase: str
    target: str
    paths: list[str]
    detail: str
    max_io_latency_ms: float | None


class Conservation(TypedDict):
    """No I/O lost in a component: issued = completed + failed + in flight."""

    component: str
    issued: int
    completed: int
    failed: int
    in_flight: int


class TimeSeries(TypedDict):
    """Sampled time series in long format: four columns of one length."""

    t_s: list[float]
    entity: list[str]
    metric: list[str]
    value: list[float]


class InjectorPoint(TypedDict):
    outstanding: int
    iops: float
    latency_ms: float


class InjectorReport(TypedDict):
    """What SIOC's injector measured for one volume before the run, and the threshold it set."""

    volume: str
    host: str
    io_size_bytes: int
    span_bytes: int
    points: list[InjectorPoint]
    peak_iops: float
    percent_of_peak: float
    threshold_ms: float


class Variant(TypedDict):
    """One variant's run: its settings and everything it reports."""

    name: str
    description: str
    seed: int
    # Which replication (0: the run as written); `sanlab.replications` adds the two after it.
    replication: NotRequired[int]
    replications: NotRequired[int]
    replicas: NotRequired[list[dict[str, Any]]]
    # With `--replications 1`: how its entities' batch-means intervals were made.
    ci95_method: NotRequired[str]
    wall_s: float
    resolved_toml: NotRequired[str]
    # The resolved scenario as data (see `resolved.resolved_scenario`).
    resolved: NotRequired[dict[str, Any]]
    injector: NotRequired[list[InjectorReport]]
    sim_time_s: float
    measured_s: float
    events: int
    ios: int
    seed_matters: bool
    hosts: list[HostReport]
    vms: list[VmReport]
    jobs: list[JobReport]
    paths: list[PathReport]
    devices: list[DeviceReport]
    volumes: list[VolumeReport]
    arrays: list[ArrayReport]
    psp_events: list[PspEventReport]
    # Older run folders lack it.
    links: NotRequired[list[LinkReport]]
    faults: list[FaultReport]
    conservation: list[Conservation]
    timeseries: NotRequired[TimeSeries]


class Document(TypedDict):
    """A run: the scenario, the engine's version and every variant that ran."""

    scenario: str
    file: str
    scenario_sha256: str
    version: str
    cancelled: bool
    variants: list[Variant]
    # Written by sanlab, not the engine (results.json, --json): see `sanlab.notes`.
    notes: NotRequired[list[str]]
    # Written by `sanlab run --precision`: the target and whether the replications reached it.
    precision: NotRequired[dict[str, Any]]
    # Written by `sanlab run --warmup auto`: the warm-up found and where.
    warmup: NotRequired[dict[str, Any]]


ENTITY_KINDS: tuple[tuple[str, str], ...] = (
    ("vms", "vm"),
    ("hosts", "host"),
    ("paths", "path"),
    ("devices", "device"),
    ("volumes", "volume"),
    ("arrays", "array"),
)
"""(list key in a variant, entity kind) for the entities summarised in `summary_table`."""


def entities(variant: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    """The variant's list of `key` entities (e.g. "vms"); empty when the document has none.

    Documents older than a list lack it (`hosts` came with host flow control), and run folders
    written then must still load, summarise and render.
    """
    items: list[dict[str, Any]] = variant.get(key, [])
    return items


def hosts(variant: Variant) -> list[HostReport]:
    """The variant's hosts; empty for a document written before hosts were reported."""
    return variant.get("hosts", [])


def sorted_percentiles(percentiles: Mapping[str, float]) -> list[tuple[str, float]]:
    """fio's `percentile` entries in numeric order ("5.000000" before "10.000000"), as fio lists them."""
    return sorted(percentiles.items(), key=lambda item: float(item[0]))


def warmup_s(variant: Variant) -> float:
    """The variant's warm-up: the simulated time before its figures count."""
    return variant["sim_time_s"] - variant["measured_s"]


def series_by_entity(variant: Variant, metrics: Collection[str], after_s: float = -math.inf) -> dict[tuple[str, str], list[tuple[float, float]]]:
    """Each (entity, metric) series of the variant among `metrics`, as (t_s, value) in time order,
    keeping the samples whose interval ends after `after_s`; empty without time series."""
    series = variant.get("timeseries") or {"t_s": [], "entity": [], "metric": [], "value": []}
    found: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for t_s, entity, metric, value in zip(series["t_s"], series["entity"], series["metric"], series["value"], strict=True):
        if metric in metrics and t_s > after_s:
            found.setdefault((entity, metric), []).append((t_s, value))
    for points in found.values():
        points.sort()
    return found


def first_fault_s(variant: Variant) -> float | None:
    """When the variant's first fault starts, or None without faults."""
    starts = [edge["t_s"] for edge in variant.get("faults", []) if edge.get("phase") == "start"]
    return min(starts) if starts else None
