"""What makes a benchmark measure something else than its author meant: one function per rule,
each given the jobs as the engine read them and, when a scenario was given, the run's document.

A rule returns findings; a finding with a `change` (an option set or removed) is simulated again
with that change by the runner, so its effect is shown as figures, not asserted.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from sanlab.lint.source import Benchmark

Doc = dict[str, Any]

SKEWED = ("zipf", "pareto", "normal", "gauss", "zoned", "zoned_abs")


@dataclass
class Finding:
    rule: str
    option: str
    line: int | None
    what: str  # what the option does
    effect: str  # its effect on the figures
    fix: str  # what to write instead
    change: tuple[str, str | None] | None = None  # (option, value or None to remove): simulated
    metrics: Callable[[Doc], dict[str, float]] | None = None  # extra figures for the comparison
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass
class Context:
    benchmark: Benchmark
    jobs: list[Doc]  # the benchmark's jobs in the document (fio clones one each)
    variant: Doc | None  # the run's variant document; None without a scenario

    def option(self, name: str) -> str | None:
        """The first job's value of a fio option, as the engine read it."""
        return next((job["options"][name] for job in self.jobs if name in job["options"]), None)

    def written(self, name: str) -> str | None:
        """A fio option as the first job was given it, those without effect in sanlab too (its
        globals, then its own options: the last one written wins, as in fio)."""
        for job in self.jobs:
            place = job.get("fio_place")
            if place:
                values = [value for key, value in (*place["global_options"], *place["job_options"]) if key == name]
                return values[-1] if values else None
        return None

    def vdbench_values(self, key: str) -> list[str]:
        """The values the linted run's lines give `key` (read from the text; the engine has read
        the file, and does not report a workload's keys)."""
        pattern = re.compile(rf"\b{key}\s*=\s*(\([^)]*\)|[^,\s]*)", re.IGNORECASE)
        return [m.group(1) for _, body in self.benchmark.run_lines() for m in pattern.finditer(body)]


def _is_fio(ctx: Context) -> bool:
    return ctx.benchmark.kind in ("fio", "fio_file")


def _engine(job: Doc) -> str:
    return job["options"].get("ioengine", "psync")  # psync: a job file's and a command line's default


def _depth(job: Doc) -> int | None:
    """The requests the job keeps outstanding, as the engine runs it (its pacing): fio's
    synchronous engines keep one whatever iodepth says (HOWTO "iodepth"). None when fio searches
    the depth (latency_target): the pacing then gives where the search starts, 1, and the depth
    found is in the job's notes."""
    return None if "latency_target" in job["options"] else int(job["pacing"]["depth"])


def _outstanding(ctx: Context) -> int | None:
    """The requests the jobs keep outstanding in all; None when fio searches a job's depth."""
    depths = [_depth(job) for job in ctx.jobs]
    return None if None in depths else sum(d for d in depths if d is not None)


def _busiest_core(variant: Doc) -> dict[str, float]:
    shares = [core["share"] for array in variant["arrays"] for core in array.get("cores") or []]
    return {"busiest core's share of I/Os": max(shares)} if shares else {}


def _cache_hits(variant: Doc) -> dict[str, float]:
    ratios = [array["cache_hit_ratio"] for array in variant["arrays"] if array.get("cache_hit_ratio") is not None]
    return {"array cache hit ratio": max(ratios)} if ratios else {}


def sync_engine_depth(ctx: Context) -> Iterator[Finding]:
    if not _is_fio(ctx):
        return
    for job in ctx.jobs:
        depth = int(job["options"].get("iodepth", "1"))
        engine = _engine(job)
        if _depth(job) == 1 and depth > 1:
            yield Finding(
                "sync-engine-depth", "iodepth", ctx.benchmark.line_of("iodepth"),
                f"iodepth={depth} with ioengine={engine}: a synchronous engine waits for each request before the next",
                f"each job keeps 1 request outstanding, not {depth}: the benchmark measures queue depth 1",
                "use an asynchronous engine (ioengine=libaio or io_uring with direct=1), or say queue depth 1 in the report",
                change=("ioengine", "libaio"),
            )
            return


def skewed_offsets(ctx: Context) -> Iterator[Finding]:
    if not _is_fio(ctx):
        return
    dist = ctx.option("random_distribution") or "random"
    if dist.split(":")[0] in SKEWED:
        yield Finding(
            "skewed-offsets", "random_distribution", ctx.benchmark.line_of("random_distribution"),
            f"random_distribution={dist}: most requests fall on a small part of the device",
            "a small hot set is served from the array's cache (and from one core where an array splits work by address): the figures are cache figures, not the device's",
            "random_distribution=random to measure the whole device; keep the skew only when it is the application's",
            change=("random_distribution", "random"), metrics=_cache_hits,
        )


def no_random_map(ctx: Context) -> Iterator[Finding]:
    if not _is_fio(ctx):
        return
    rw = ctx.option("rw") or "read"
    if ctx.option("norandommap") is not None and rw.startswith("rand"):
        yield Finding(
            "norandommap", "norandommap", ctx.benchmark.line_of("norandommap"),
            "norandommap: offsets are drawn with repetition; in one pass over n blocks about n/e of them are never touched and others are hit twice or more",
            "repeated blocks can be served from the array's cache; a pass does not cover the device",
            "remove norandommap (fio then touches every block once per pass), or use a device much larger than the array's cache",
            change=("norandommap", None), metrics=_cache_hits,
        )


def random_map_tail(ctx: Context) -> Iterator[Finding]:
    if not _is_fio(ctx):
        return
    rw = ctx.option("rw") or "read"
    generator = ctx.option("random_generator") or "tausworthe"
    if rw.startswith("rand") and ctx.option("norandommap") is None and ctx.option("time_based") is None and generator != "lfsr":
        yield Finding(
            "random-map-tail", "rw", ctx.benchmark.line_of("rw"),
            f"rw={rw} with fio's random map: a drawn block already used moves to the next free one (lib/axmap.c), and the job ends when the map is full",
            "as the pass fills the map, more draws land on used blocks and take the free one after them: the used runs' ends advance block by block, so the last part of the pass reads next to what it read shortly before, which an array's read-ahead or a cache of large blocks rewards with hits a scrambled order does not get (on a cache that holds the whole region, every order hits alike)",
            "random_generator=lfsr (each block once, in a scrambled order, with no search), or time_based with a region larger than the run covers",
            change=("random_generator", "lfsr"), metrics=_cache_hits,
        )


def batched_depth(ctx: Context) -> Iterator[Finding]:
    if not _is_fio(ctx):
        return
    depth = int(ctx.option("iodepth") or "1")
    low = ctx.written("iodepth_low")
    reap = ctx.written("iodepth_batch_complete_min") or ctx.written("iodepth_batch_complete")
    if low is not None and low.isdigit() and 0 < int(low) < depth:
        option, why = "iodepth_low", f"iodepth_low={low}: after filling {depth}, fio lets the queue drain to {low} before it fills it again"
    elif reap is not None and reap.isdigit() and int(reap) > 1 and depth > 1:
        option, why = "iodepth_batch_complete_min", f"iodepth_batch_complete_min={reap}: fio waits for {reap} completions before it submits again"
    else:
        return
    yield Finding(
        "batched-depth", option, ctx.benchmark.line_of(option),
        why,
        f"the depth the array sees swings below iodepth={depth}: its average is lower than the job says, and so is the throughput at that 'depth'. (sanlab keeps iodepth outstanding and accepts these options without effect, so this is not simulated.)",
        f"leave {option} unset to keep the queue full, or report the average depth fio prints (IO depths)",
    )


def buffered(ctx: Context) -> Iterator[Finding]:
    if not _is_fio(ctx):
        return
    direct = ctx.written("direct") or "0"
    buffered_opt = ctx.written("buffered")
    if direct in ("0", "false") and buffered_opt not in ("0", "false"):
        yield Finding(
            "buffered-io", "direct", ctx.benchmark.line_of("direct"),
            "direct=0 (fio's default): requests go through the guest's page cache",
            "reads can be served from the guest's memory and writes acknowledged before they reach the disk: the figures can be the page cache's. (sanlab models the disk path only, so it cannot show this effect by simulation.)",
            "direct=1",
        )


def reads_only(ctx: Context) -> Iterator[Finding]:
    if not _is_fio(ctx) or not ctx.jobs:
        return
    if all(job["options"].get("rw", "read") in ("read", "randread") for job in ctx.jobs):
        yield Finding(
            "reads-unwritten", "rw", ctx.benchmark.line_of("rw"),
            "every job only reads: nothing in the benchmark writes the region first",
            "on a thin-provisioned volume (or a new one), blocks never written are answered from the array's metadata (zeros) without touching the media: read figures run high. (sanlab does not model unallocated blocks, so this is not simulated.)",
            "write the region first: a sequential write job over the same region with stonewall before the reads, or precondition the volume",
        )


def reducible_buffers(ctx: Context) -> Iterator[Finding]:
    if not _is_fio(ctx):
        return
    if (ctx.option("rw") or "read") in ("read", "randread", "trim", "randtrim"):
        return
    for option, why in (
        ("zero_buffers", "writes zeros, which an array that reduces data stores as nothing"),
        ("buffer_compress_percentage", "makes the data compressible to that percentage"),
        ("dedupe_percentage", "repeats that percentage of the blocks"),
    ):
        value = ctx.option(option)
        if value is not None and value not in ("0", "false"):
            yield Finding(
                "reducible-buffers", option, ctx.benchmark.line_of(option), f"{option}={value} {why}",
                "an array that compresses or dedupes writes less than the benchmark sends: write figures run high. (sanlab's arrays do not reduce data, so this is not simulated.)",
                f"remove {option} unless the application's data reduces the same way; add refill_buffers",
            )


def ends_before_the_run(ctx: Context) -> Iterator[Finding]:
    if ctx.variant is None or not _is_fio(ctx) or ctx.option("time_based") is not None:
        return
    run_ms = ctx.variant["sim_time_s"] * 1000.0
    ended = _ended_early(ctx)
    if ended:
        first = min(ended, key=lambda j: j["end_ms"])
        yield Finding(
            "ends-early", "time_based", None,
            "time_based is not set: a job stops once it has done its size (or io_size, number_ios, loops)",
            f"job {first['name']} ended at {first['end_ms'] / 1000:.2f} s of the {run_ms / 1000:.2f} s simulated: its figures cover only that time, and a faster array just finishes sooner",
            "time_based=1 with runtime=, so every job runs for the same time",
            change=("time_based", "1"), metrics=_active_s,
        )


def group_hides_a_slow_job(ctx: Context) -> Iterator[Finding]:
    if ctx.variant is None or not _is_fio(ctx) or ctx.option("group_reporting") is None or len(ctx.jobs) < 2:
        return
    p99 = {}
    for job in ctx.jobs:
        for direction in ("read", "write"):
            if job[direction]["total_ios"]:
                p99[(job["name"], direction)] = job[direction]["lat_ns"]["percentile"]["99.000000"] / 1e6
    if len(p99) < 2:
        return
    (slow, direction), worst = max(p99.items(), key=lambda kv: kv[1])
    others = sorted(v for k, v in p99.items() if k != (slow, direction))
    median = others[len(others) // 2]
    if worst > 2 * median:
        yield Finding(
            "group-hides-slow-job", "group_reporting", ctx.benchmark.line_of("group_reporting"),
            "group_reporting: fio prints one summary for all the jobs of a group",
            f"job {slow}'s {direction} p99 is {worst:.2f} ms against {median:.2f} ms for the others: the group's summary hides it",
            "remove group_reporting (or give the slow job new_group) to see each job",
        )


def _ended_early(ctx: Context) -> list[Doc]:
    assert ctx.variant is not None
    run_ms = ctx.variant["sim_time_s"] * 1000.0
    return [job for job in ctx.jobs if job["end_ms"] is not None and job["end_ms"] < 0.9 * run_ms]


def _active_s(variant: Doc) -> dict[str, float]:
    ends = [job["end_ms"] for job in variant["jobs"] if job["entry"] == "lint" and job["end_ms"] is not None]
    return {"benchmark's running time (s)": max(ends) / 1000.0} if ends else {}


def depth_beyond_the_device(ctx: Context) -> Iterator[Finding]:
    # The device's averages are over the run: a job that ended early is the finding below.
    if ctx.variant is None or not ctx.jobs or not _is_fio(ctx) or _ended_early(ctx):
        return
    outstanding = _outstanding(ctx)
    if outstanding is None:
        return
    vm_doc = next(v for v in ctx.variant["vms"] if v["name"] == ctx.jobs[0]["vm"])
    devices = [d for d in ctx.variant["devices"] if d["host"] == vm_doc["host"] and d["ios"]]
    if not devices:
        return
    device = max(devices, key=lambda d: d["ios"])
    reached = device["actv_mean"] + device["qued_mean"]
    line = ctx.benchmark.line_of("iodepth") or ctx.benchmark.line_of("numjobs")
    per_job = max(1, int(reached) // len(ctx.jobs))
    if outstanding > 1.1 * reached:
        yield Finding(
            "depth-beyond-device", "iodepth", line,
            f"the jobs keep {outstanding} requests outstanding; on average {reached:.0f} reach the host's device {device['volume']}",
            f"the rest wait in the guest (its virtual disk's queue): the array sees {reached:.0f}, and the latency fio reports grows with the guest's queue ({vm_doc['lat_ms']['mean']:.3f} ms mean against {device['davg_ms']:.3f} ms at the device)",
            f"iodepth={per_job} per job ({reached:.0f} in all), or raise the virtual disk's queue depth (the VM's adapter) if the application really keeps {outstanding}",
            change=("iodepth", str(per_job)),
        )
    elif outstanding > device["queue_depth"] and device["qued_mean"] > 0.5:
        yield Finding(
            "depth-beyond-device", "iodepth", line,
            f"the jobs keep {outstanding} requests outstanding; the host's device queue for {device['volume']} takes {device['queue_depth']}",
            f"the rest wait in the host (on average {device['qued_mean']:.1f} queued, KAVG {device['kavg_ms']:.3f} ms): the array never sees more than {device['queue_depth']}, and latency grows with the host's queue, not the array's",
            f"keep the outstanding total at or under {device['queue_depth']} (iodepth × numjobs), or raise the device's queue depth and DSNRO on the host",
            change=("iodepth", str(max(1, device["queue_depth"] // len(ctx.jobs)))),
        )


def one_outstanding(ctx: Context) -> Iterator[Finding]:
    if not _is_fio(ctx) or not ctx.jobs:
        return
    if _outstanding(ctx) == 1:
        yield Finding(
            "one-outstanding", "iodepth", ctx.benchmark.line_of("iodepth") or ctx.benchmark.line_of("numjobs"),
            "one request outstanding in all: each starts when the previous ends",
            "IOPS is 1 / latency (Little's law): this measures latency, not what the array can do",
            "keep it for latency; for throughput raise iodepth (with an asynchronous engine) or numjobs",
        )


def _vm_iops_series(variant: Doc, vm: str) -> list[tuple[float, float]]:
    ts = variant["timeseries"]
    return [(t, v) for t, e, m, v in zip(ts["t_s"], ts["entity"], ts["metric"], ts["value"], strict=True) if e == f"vm/{vm}" and m == "iops"]


def _measured_from_s(job: Doc) -> float:
    """When fio starts counting a job (its startdelay and ramp_time past), from the engine's
    figures: the job's end less the time its figures cover."""
    return (job["end_ms"] - max(job[d]["runtime_ms"] for d in ("read", "write"))) / 1000.0


def _fio_reported(variant: Doc) -> dict[str, float]:
    jobs = [job for job in variant["jobs"] if job["entry"] == "lint"]
    return {"IOPS fio reports (after ramp_time)": sum(job[d]["iops"] for job in jobs for d in ("read", "write"))}


def ramp_shorter_than_warm_up(ctx: Context) -> Iterator[Finding]:
    if ctx.variant is None or not _is_fio(ctx) or not ctx.jobs or _ended_early(ctx):
        return
    series = _vm_iops_series(ctx.variant, ctx.jobs[0]["vm"])
    if len(series) < 6:
        return
    steady = sum(v for _, v in series[len(series) // 2 :]) / (len(series) - len(series) // 2)
    # The warm-up ends with the last sample more than 5 % from the steady rate of the run's second half.
    outside = [t for t, v in series[: len(series) // 2] if abs(v - steady) > 0.05 * steady]
    if not outside:
        return
    warm_up_s = max(outside)
    ramp_s = min(_measured_from_s(job) for job in ctx.jobs)
    if ramp_s < warm_up_s:
        first = series[0][1]
        yield Finding(
            "ramp-shorter-than-warm-up", "ramp_time", ctx.benchmark.line_of("ramp_time"),
            f"ramp_time={ctx.option('ramp_time') or '0 (unset)'}: fio counts from {ramp_s:g} s",
            f"the array warms up for about {warm_up_s:g} s (the first sample runs at {first:,.0f} IOPS against {steady:,.0f} later: caches filling, queues settling); those seconds count in the figures",
            f"ramp_time={max(1, round(warm_up_s + 0.5))} (or longer: a real array's cache can take minutes)",
            change=("ramp_time", str(max(1, round(warm_up_s + 0.5)))), metrics=_fio_reported,
        )


def hit_area(ctx: Context) -> Iterator[Finding]:
    if ctx.benchmark.kind != "vdbench":
        return
    for key in ("rhpct", "whpct"):
        values = [v for v in ctx.vdbench_values(key) if v not in ("0", "")]
        if values:
            areas = ctx.vdbench_values("hitarea")
            area = areas[0] if areas else "1m (vdbench's default)"
            yield Finding(
                "hit-area", key, ctx.benchmark.line_of(key),
                f"{key}={values[0]}: that share of {'reads' if key == 'rhpct' else 'writes'} goes to the SD's hit area, hitarea={area} at its start",
                "all those requests land in one small address range: an array that gives each address segment to one core or controller serves them on one, which then limits the whole test; a cache serves them without the media",
                "rhpct=0/whpct=0 to measure the device; for a cache test, a hitarea much larger than the array's segment × cores (e.g. hitarea=8m on 1 MiB segments over 8 cores)",
                change=(key, None), metrics=_busiest_core,
            )
    bands = ctx.vdbench_values("hotband")
    if bands:
        yield Finding(
            "hotband", "hotband", ctx.benchmark.line_of("hotband"),
            f"hotband={bands[0]}: requests concentrate in a band of the SD (vdbench's HotBand, whose offsets put about a third of reads in the band's first MiB)",
            "a hot band is served by the cache and by the cores that own its segments, not the whole array",
            "remove hotband to measure the device, or size the band to the application's",
            change=("hotband", None), metrics=_busiest_core,
        )


def job_notes(ctx: Context, findings: list[Finding]) -> Iterator[str]:
    """What the engine's report of a benchmark's job says that changes what the simulated figures
    mean, beyond what `sanlab run` notes (`sanlab.notes`: no I/O in the measured time): a job
    that ended before the run and why (unless `ends-early` says it), a depth fio searched."""
    assert ctx.variant is not None
    run_s = ctx.variant["sim_time_s"]
    ended_early = {job["name"] for job in _ended_early(ctx)} if all(f.rule != "ends-early" for f in findings) else set()
    for job in ctx.jobs:
        name, fio = job["name"], job.get("fio") or {}
        if name in ended_early:
            why = []
            if "error" in fio:
                why.append(f"fio's error {fio['error']['errno']}: {fio['error']['message']}")
            elif "latency_target" in fio:
                why.append("its latency_target search ended, which ends a job without latency_run")
            if fio.get("steadystate", {}).get("attained"):
                why.append(f"its steadystate={fio['steadystate']['ss']} held, which ends a job")
            why += [f"{key}={job['options'][key]}" for key in ("runtime", "maxdata", "elapsed") if key in job["options"]]
            yield f"job {name} ended at {job['end_ms'] / 1000:.3g} s of the {run_s:.3g} s simulated ({'; '.join(why) or 'its work done'}): its figures cover that time"
        if "latency_target" in fio:
            found = fio["latency_target"]
            yield (
                f"job {name}: latency_target={found['target_ns'] / 1e6:g} ms makes fio search its depth; it ended at depth {found['depth']}, "
                f"and its figures are over the depths tried, not iodepth={job['options'].get('iodepth', '1')}"
            )


RULES: tuple[Callable[[Context], Iterator[Finding]], ...] = (
    sync_engine_depth,
    one_outstanding,
    depth_beyond_the_device,
    skewed_offsets,
    no_random_map,
    random_map_tail,
    batched_depth,
    buffered,
    reads_only,
    reducible_buffers,
    ends_before_the_run,
    ramp_shorter_than_warm_up,
    group_hides_a_slow_job,
    hit_area,
)
