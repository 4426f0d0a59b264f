"""fio-compatible JSON for simulated jobs, as `fio --output-format=json+` writes it.

Every figure comes from what the engine simulated: counts, bytes, runtime, the latency
histogram regrouped into fio's buckets (json+ `bins`, from which the `latency_ns/us/ms`
shares are counted). A simulator has no submission stage, so `slat_ns` is empty and `clat_ns`
equals `lat_ns` (fio prints percentiles under `clat_ns` by default, so readers look for them
there). `disk_util` sums the VM's device's per-direction series. Figures sanlab does not simulate
(the device's busy time, submission and completion batches) are left out rather than invented;
fio's CPU figures are written as 0, because fio-plot needs the keys, and `sanlab notes` says so.

`bw_*` and `iops_*` come from the engine's samples of each job, taken as fio takes them (one per
direction per `bwavgtime` / `iopsavgtime` window of 500 ms by default, whole KiB/s and I/Os per
second, none for the window the job ends in; per I/O when the job writes a per-I/O log); `bw_agg`
is the mean's share of its reporting group's bandwidth.
`iodepth_level` counts each measured submission by the job's requests in flight after it, syncs
included; `sync` counts the syncs, which end in the guest and take no simulated time. One
document holds the jobs of one workload entry (one fio invocation), in fio's reporting groups.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from sanlab.document import DeviceReport, FioFindings, JobReport, SteadyFound, Variant, sorted_percentiles
from sanlab.resolved import resolved_scenario

_EMPTY_LAT_NS: Mapping[str, Any] = {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
# fio's latency shares (stat.c `io_u_mark_lat_*`): the key is the range's upper end, exclusive.
_LAT_EDGES = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000)
_NOT_SIMULATED = (
    "usr_cpu, sys_cpu, ctx, majf and minf are written as 0: sanlab simulates no CPU, page faults or context switches, "
    "and fio's readers (fio-plot) need the keys; iodepth_submit and iodepth_complete are not simulated and are left out"
)
_SYNCS_IN_GUEST = (
    "sync: the job's fsync, fdatasync and sync_file_range calls end in the guest, whose virtual disk is write-through, "
    "so their latency is 0 ns of simulated time (the system call's own time is not simulated)"
)
# Placeholders for fio's CPU figures, in fio's order (stat.c `show_thread_status_json`).
_NO_CPU: Mapping[str, Any] = {"usr_cpu": 0.0, "sys_cpu": 0.0, "ctx": 0, "majf": 0, "minf": 0}
# fio's `iodepth_level` keys (stat.c): depths 1, 2-3, 4-7, ..., 32-63, 64 and more.
_DEPTH_LEVELS = ("1", "2", "4", "8", "16", "32", ">=64")
_EMPTY_DIRECTION: Mapping[str, Any] = {
    "total_ios": 0,
    "io_bytes": 0,
    "runtime_ms": 0,
    "iops": 0.0,
    "bw_bytes": 0,
    "lat_ns": _EMPTY_LAT_NS,
}
_NO_SAMPLES: Mapping[str, Any] = {"min": 0, "max": 0, "mean": 0.0, "dev": 0.0, "samples": 0}


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
    if samples and "bins" in stats:
        lat["bins"] = {str(ns): int(count) for ns, count in sorted(stats["bins"].items(), key=lambda item: int(item[0]))}
    return lat


def _latency_shares(jobs_bins: list[Mapping[str, int]], total: int) -> dict[str, dict[str, float]]:
    """fio's `latency_ns`, `latency_us` and `latency_ms`: percent of the job's I/Os per range."""
    shares = {
        "latency_ns": dict.fromkeys(map(str, _LAT_EDGES), 0.0),
        "latency_us": dict.fromkeys(map(str, _LAT_EDGES), 0.0),
        "latency_ms": {**dict.fromkeys(map(str, _LAT_EDGES + (2000,)), 0.0), ">=2000": 0.0},
    }
    if total == 0:
        return shares
    for bins in jobs_bins:
        for key, count in bins.items():
            ns = int(key)
            unit, value = ("latency_ns", ns) if ns < 1000 else ("latency_us", ns // 1000) if ns < 1_000_000 else ("latency_ms", ns // 1_000_000)
            edges = _LAT_EDGES + (2000,) if unit == "latency_ms" else _LAT_EDGES
            bucket = next((str(edge) for edge in edges if value < edge), ">=2000")
            shares[unit][bucket] += 100.0 * count / total
    return shares


def _samples(stats: Mapping[str, Any], group_bytes: int, group_runtime_ms: int) -> dict[str, Any]:
    """fio's `bw_min` ... `iops_samples` from the engine's samples (stat.c `add_ddir_status_json`).

    `bw_agg` is the mean bandwidth's percentage of the reporting group's aggregate (the group's
    bytes over its longest runtime, truncated to whole bytes per second), at most 100, with fio's
    integer mean; 0 without samples. Absent from results written before sanlab kept samples.
    """
    if "bw_samples" not in stats:
        return {}
    bw, iops = stats["bw_samples"], stats["iops_samples"]
    out: dict[str, Any] = {}
    if bw["samples"]:
        agg = group_bytes * 1000 // group_runtime_ms if group_runtime_ms else 0
        share = min(100.0, int(bw["mean"]) * 100.0 / (agg / 1024.0)) if agg > 1024 else 100.0
        out |= {"bw_min": int(bw["min"]), "bw_max": int(bw["max"]), "bw_agg": share, "bw_mean": float(bw["mean"]), "bw_dev": float(bw["dev"])}
    else:
        out |= {"bw_min": 0, "bw_max": 0, "bw_agg": 0.0, "bw_mean": 0.0, "bw_dev": 0.0}
    out["bw_samples"] = int(bw["samples"])
    if iops["samples"]:
        out |= {"iops_min": int(iops["min"]), "iops_max": int(iops["max"]), "iops_mean": float(iops["mean"]), "iops_stddev": float(iops["dev"])}
    else:
        out |= {"iops_min": 0, "iops_max": 0, "iops_mean": 0.0, "iops_stddev": 0.0}
    out["iops_samples"] = int(iops["samples"])
    return out


def _iodepth_level(levels: list[int] | None, syncs: int) -> dict[str, dict[str, float]]:
    """fio's `iodepth_level`: submissions per depth bucket as a percent of the job's reads and
    writes, a bucket with any submission showing at least 0.1 (stat.c `stat_calc_dist`). fio
    counts syncs in the buckets but not in the total, so a syncing job's levels add up past 100."""
    if levels is None:
        return {}
    total = sum(levels) - syncs
    shares = {}
    for key, count in zip(_DEPTH_LEVELS, levels, strict=True):
        share = 100.0 * count / total if total else 0.0
        shares[key] = 0.1 if count and share < 0.1 else share
    return {"iodepth_level": shares}


def _direction(stats: Mapping[str, Any], group: tuple[int, int] | None = None) -> dict[str, Any]:
    """fio's per-direction object (`read`, `write`, `trim`) from the engine's statistics;
    `group` is the reporting group's bytes and longest runtime (ms), the job's own by default."""
    io_bytes = int(stats["io_bytes"])
    bw_bytes = int(stats["bw_bytes"])
    runtime_ms = round(stats["runtime_ms"])
    group_bytes, group_runtime_ms = group or (io_bytes, runtime_ms)
    lat = _lat_ns(stats["lat_ns"])
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
        # The engine does not split submission from completion: clat is lat (one object for
        # both: at 10,000 jobs building it twice was a tenth of writing the run folder).
        "slat_ns": _lat_ns(_EMPTY_LAT_NS),
        "clat_ns": lat,
        "lat_ns": lat,
        **_samples(stats, group_bytes, group_runtime_ms),
    }


def _steadystate(ss: SteadyFound) -> dict[str, Any]:
    """fio's `steadystate` object (stat.c): the criterion, whether it held, the window's samples."""
    pct = "%" if ss["percent"] else ""
    iops, bw = ss["iops"], ss["bw_bytes_per_s"]
    return {
        "ss": ss["ss"],
        "duration": int(ss["duration_s"]),
        "attained": int(ss["attained"]),
        "criterion": f"{ss['criterion']:.6f}{pct}",
        "max_deviation": float(ss["max_deviation"]),
        "slope": float(ss["slope"]),
        "data": {
            "bw_mean": sum(bw) // len(bw),
            "iops_mean": sum(iops) // len(iops),
            # A latency criterion (fio 3.41) adds the intervals' mean latencies.
            **({"lat_mean": sum(ss["lat_ns"]) // len(ss["lat_ns"]), "lat_ns": list(ss["lat_ns"])} if "lat_ns" in ss else {}),
            "iops": list(iops),
            "bw": list(bw),
        },
    }


def _findings(found: FioFindings | None) -> dict[str, Any]:
    """What a job found (fio's `latency_*` fields, `steadystate`), where fio's JSON has it."""
    out: dict[str, Any] = {}
    if not found:
        return out
    if "latency_target" in found:
        lt = found["latency_target"]
        out |= {
            "latency_depth": int(lt["depth"]),
            "latency_target": int(lt["target_ns"]),
            "latency_percentile": float(lt["percentile"]),
            "latency_window": int(lt["window_us"]),
        }
    if "steadystate" in found:
        out["steadystate"] = _steadystate(found["steadystate"])
    return out


def _sync(syncs: Mapping[str, int] | None, percentiles: Mapping[str, float]) -> dict[str, Any]:
    """fio's `sync` object. Every sync ended in the guest at once (the virtual disk is
    write-through), so each took 0 ns of simulated time. As fio 3.33 writes it, `total_ios`
    counts the fsyncs and `lat_ns` every sync (fdatasync and sync_file_range too)."""
    if not syncs:
        return {"total_ios": 0, "lat_ns": _lat_ns(_EMPTY_LAT_NS)}
    count = sum(syncs.values())
    lat = {**_EMPTY_LAT_NS, "N": count, "percentile": dict.fromkeys(percentiles, 0), "bins": {"0": count}}
    return {"total_ios": int(syncs["fsync"]), "lat_ns": _lat_ns(lat)}


def _group(job: Mapping[str, Any]) -> int:
    """The job's fio reporting group (0 for a job not read from a job file or command line)."""
    return int(job.get("fio_place", {}).get("group", 0))


def _enabled(options: Mapping[str, Any], name: str) -> bool:
    """A fio flag or boolean option given and not switched off (`group_reporting`, `=1`, `=0`)."""
    return name in options and str(options[name]).strip() not in ("0", "false", "no", "off")


def _summed_lat(lats: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Latency statistics of jobs reported together (stat.c `__sum_stat`: counts add, means
    weigh by count, squared deviations add with the means' spread), and the percentiles fio
    computes from the summed buckets (`calc_clat_percentiles`: the first bucket whose running
    count reaches the share)."""
    live = [lat for lat in lats if lat["N"]]
    if not live:
        return dict(lats[0])
    n = sum(int(lat["N"]) for lat in live)
    mean = sum(lat["mean"] * lat["N"] for lat in live) / n
    spread = sum(lat["stddev"] ** 2 * (lat["N"] - 1) + lat["N"] * (lat["mean"] - mean) ** 2 for lat in live)
    bins: dict[int, int] = {}
    for lat in live:
        for key, count in lat.get("bins", {}).items():
            bins[int(key)] = bins.get(int(key), 0) + int(count)
    summed: dict[str, Any] = {
        "min": min(lat["min"] for lat in live),
        "max": max(lat["max"] for lat in live),
        "mean": mean,
        "stddev": (spread / (n - 1)) ** 0.5 if n > 1 else 0.0,
        "N": n,
    }
    if bins and "percentile" in live[0] and all("bins" in lat for lat in live):
        ordered = sorted(bins.items())
        percentiles = {}
        for key in live[0]["percentile"]:
            running = 0
            for ns, count in ordered:
                running += count
                if running >= float(key) / 100.0 * n:
                    percentiles[key] = ns
                    break
        summed |= {"percentile": percentiles, "bins": {str(ns): count for ns, count in ordered}}
    return summed


def _summed_samples(samples: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Bandwidth or IOPS samples of jobs reported together: fio adds them up, minimum, maximum,
    mean and squared deviations alike (stat.c `sum_stat` with `pure_sum`)."""
    live = [s for s in samples if s["samples"]]
    if not live:
        return dict(_NO_SAMPLES)
    count = sum(int(s["samples"]) for s in live)
    m2 = sum(s["dev"] ** 2 * (s["samples"] - 1) for s in live)
    return {
        "min": sum(s["min"] for s in live),
        "max": sum(s["max"] for s in live),
        "mean": sum(s["mean"] for s in live),
        "dev": (m2 / (count - 1)) ** 0.5 if count > 1 else 0.0,
        "samples": count,
    }


def _summed_direction(stats: list[Mapping[str, Any]]) -> dict[str, Any]:
    """One direction of jobs reported together (stat.c `sum_thread_stats`): I/Os and bytes add,
    the runtime is the longest, the rates follow from them."""
    total = sum(int(d["total_ios"]) for d in stats)
    io_bytes = sum(int(d["io_bytes"]) for d in stats)
    # fio keeps runtimes in whole ms and divides bytes by them in integers.
    runtime_ms = max(round(d["runtime_ms"]) for d in stats)
    summed: dict[str, Any] = {
        "total_ios": total,
        "io_bytes": io_bytes,
        "runtime_ms": runtime_ms,
        "iops": total * 1000.0 / runtime_ms if runtime_ms else 0.0,
        "bw_bytes": io_bytes * 1000 // runtime_ms if runtime_ms else 0,
        "lat_ns": _summed_lat([d["lat_ns"] for d in stats]),
    }
    if all("bw_samples" in d for d in stats):
        summed["bw_samples"] = _summed_samples([d["bw_samples"] for d in stats])
        summed["iops_samples"] = _summed_samples([d["iops_samples"] for d in stats])
    return summed


def _summed_job(jobs: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Jobs of one reporting group with `group_reporting`, as one, as fio's `show_run_stats`
    writes them: named as the first, with the last one's job options, latency_target and
    steadystate findings, the first error found, and the members' runtimes added up."""
    first, last = jobs[0], jobs[-1]
    summed = {**first, **{d: _summed_direction([job[d] for job in jobs]) for d in ("read", "write")}}
    summed["job_runtime_ms"] = sum(_job_runtime_ms(job) for job in jobs)
    if "fio_place" in first:
        summed["fio_place"] = {**first["fio_place"], "job_options": last["fio_place"]["job_options"]}
    if all("iodepth_level" in job for job in jobs):
        summed["iodepth_level"] = [sum(levels) for levels in zip(*(job["iodepth_level"] for job in jobs), strict=True)]
    syncs = [job["syncs"] for job in jobs if job.get("syncs")]
    if syncs:
        summed["syncs"] = {kind: sum(s[kind] for s in syncs) for kind in syncs[0]}
    found = {key: value for key, value in (last.get("fio") or {}).items() if key != "error"}
    error = next((job["fio"]["error"] for job in jobs if job.get("fio") and "error" in job["fio"]), None)
    summed["fio"] = {**found, **({"error": error} if error else {})} or None
    return summed


def _job_runtime_ms(job: Mapping[str, Any]) -> int:
    """fio's `job_runtime`: the job's run time in ms (its longer direction's measured time)."""
    return int(job.get("job_runtime_ms", max(round(job["read"]["runtime_ms"]), round(job["write"]["runtime_ms"]))))


def _reported(jobs: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The job objects fio writes for one invocation's jobs: one per job, and one per reporting
    group whose jobs set `group_reporting`."""
    runs: list[list[Mapping[str, Any]]] = []
    for job in jobs:
        # fio's `__show_run_stats`: a job with group_reporting joins the previous job's object
        # when both are in one reporting group.
        if runs and _enabled(job["options"], "group_reporting") and _group(job) == _group(runs[-1][-1]):
            runs[-1].append(job)
        else:
            runs.append([job])
    return [run[0] if len(run) == 1 else _summed_job(run) for run in runs]


def fio_job(job: Mapping[str, Any], job_start_ms: int, group: Mapping[str, tuple[int, int]], elapsed_s: int) -> dict[str, Any]:
    """One entry of fio's `jobs` list for a simulated job (or a group reported as one); `group`
    holds its reporting group's bytes and longest runtime per direction, for `bw_agg`, and
    `elapsed_s` is its invocation's time, the same for every job as fio writes it."""
    read = _direction(job["read"], group["read"])
    write = _direction(job["write"], group["write"])
    total = read["total_ios"] + write["total_ios"]
    bins = [job[d]["lat_ns"].get("bins", {}) for d in ("read", "write")]
    found = job.get("fio")
    syncs = job.get("syncs")
    place = job.get("fio_place")
    return {
        "jobname": place["name"] if place else job["name"],
        "groupid": _group(job),
        "job_start": job_start_ms,
        # fio's errno for a job it ended (EIO for a missed rate_min, ETIMEDOUT for latency_target).
        "error": found["error"]["errno"] if found and "error" in found else 0,
        "elapsed": elapsed_s,
        # fio leaves the key out for a job without options of its own.
        **({"job options": options} if (options := {str(key): str(value) for key, value in (place["job_options"] if place else job["options"].items())}) else {}),
        "read": read,
        "write": write,
        # fio writes trim's samples too, all zero; results from before samples were kept have none.
        "trim": _direction({**_EMPTY_DIRECTION, **({"bw_samples": _NO_SAMPLES, "iops_samples": _NO_SAMPLES} if "bw_samples" in job["read"] else {})}),
        "sync": _sync(syncs, job["write"]["lat_ns"].get("percentile") or job["read"]["lat_ns"].get("percentile") or {}),
        "job_runtime": _job_runtime_ms(job),
        **_NO_CPU,
        **_iodepth_level(job.get("iodepth_level"), sum(syncs.values()) if syncs else 0),
        **_latency_shares(bins, total),
        **_findings(found),
    }


# fio's log kinds per option (iolog.c), and the series each is written from.
_LOG_KINDS = (
    ("write_bw_log", "bw"),
    ("write_iops_log", "iops"),
    ("write_lat_log", "clat"),
    ("write_lat_log", "lat"),
)


def _log_value(kind: str, iops: float, mbps: float, lat_ms: float) -> int:
    """A log entry's value in fio's unit: KiB/s for bw, I/Os per second for iops, ns for latency."""
    if kind == "bw":
        return round(mbps * 1e6 / 1024)
    if kind == "iops":
        return round(iops)
    return round(lat_ms * 1e6)


def fio_logs(
    job: JobReport, job_number: int, variant: Variant
) -> tuple[dict[str, str], list[str]]:
    """fio's log files the job asked for (`write_bw_log`, `write_iops_log`, `write_lat_log`), by name.

    fio logs per job and direction; sanlab keeps time series per VM and sample interval, so a job
    gets logs only when it is its VM's only job and uses one direction. Entries are windowed (as
    fio's with `log_avg_msec`): `time_ms, value, direction, 0, 0` as fio 3.33 writes them, one per
    window of `log_avg_msec` (whole samples) or of the sample interval. Also returns notes on
    what was not written and why.
    """
    options = job["options"]
    asked = [(option, kind) for option, kind in _LOG_KINDS if option in options]
    if not asked:
        return {}, []
    name = job["name"]
    if sum(1 for other in variant["jobs"] if other["vm"] == job["vm"]) > 1:
        why = f"VM {job['vm']} runs other jobs too, and sanlab keeps time series per VM"
        return {}, [f"{name}: fio logs not written: {why}"]
    directions = [d for d, key in enumerate(("read", "write")) if job[key]["total_ios"]]
    if len(directions) != 1:
        what = "mixes reads and writes" if directions else "did no I/O"
        why = f"the job {what}, and sanlab's time series do not split directions"
        return {}, [f"{name}: fio logs not written: {why}"]
    series: dict[str, list[tuple[float, float]]] = {}
    ts = variant["timeseries"]
    for t_s, entity, metric, value in zip(ts["t_s"], ts["entity"], ts["metric"], ts["value"], strict=True):
        if entity == f"vm/{job['vm']}":
            series.setdefault(metric, []).append((t_s, value))
    times_ms = [round(t_s * 1000) for t_s, _ in series.get("iops", [])]
    if not times_ms:
        return {}, [f"{name}: fio logs not written: the run kept no time series"]
    sample_ms = times_ms[0] if len(times_ms) == 1 else times_ms[1] - times_ms[0]
    notes = ["fio logs: windowed entries from the VM's time series; no `slat` (not simulated), `clat` = `lat`"]
    avg_ms = int(options.get("log_avg_msec", "0") or 0)
    per = avg_ms // sample_ms if avg_ms and avg_ms % sample_ms == 0 else 1
    if avg_ms and per == 1 and avg_ms != sample_ms:
        notes.append(
            f"{name}: log_avg_msec={avg_ms} is not a whole number of sample intervals ({sample_ms} ms): "
            f"logged every {sample_ms} ms"
        )
    iops, mbps, lat = ([v for _, v in series[m]] for m in ("iops", "mbps", "lat_ms_mean"))
    files: dict[str, str] = {}
    for option, kind in asked:
        lines = []
        for end in range(per, len(times_ms) + 1, per):
            window = slice(end - per, end)
            ios = sum(iops[window])
            # The window's latency is the mean over its I/Os; a window without I/O has none.
            if kind in ("clat", "lat") and ios == 0:
                continue
            lat_ms = sum(i * x for i, x in zip(iops[window], lat[window], strict=True)) / ios if ios else 0.0
            value = _log_value(kind, ios / per, sum(mbps[window]) / per, lat_ms)
            lines.append(f"{times_ms[end - 1]}, {value}, {directions[0]}, 0, 0\n")
        prefix = options[option] or name
        per_job = options.get("per_job_logs", "1") != "0"
        file = f"{prefix}_{kind}.{job_number}.log" if per_job else f"{prefix}_{kind}.log"
        files[file] = "".join(lines)
    return files, notes


_NO_UTIL = "disk_util: no `util` (the device's busy time is not simulated) and no merges (sanlab does not merge requests)"


DISK_METRICS = frozenset(f"{d}_{m}" for d in ("read", "write") for m in ("iops", "mbps", "lat_ms_mean"))
"""A device's series that fio's disk_util is summed from."""


class VariantDevices:
    """The host device under each VM of one variant and each device's per-direction series, found
    once for all of the variant's fio documents (a run folder writes one per job)."""

    def __init__(self, variant: Variant) -> None:
        self._variant = variant
        self._scenario = resolved_scenario(variant)
        self._vms = {vm["name"]: vm for vm in self._scenario.get("vm", [])}
        self._devices = {(d["host"], d["volume"]): d for d in variant["devices"]}
        self._series: dict[str, dict[str, list[tuple[float, float]]]] | None = None

    def device(self, vm_name: str) -> DeviceReport | None:
        """The host device carrying the VM's virtual disk (None when the scenario does not name the
        VM): a VMFS volume is its own device's volume, a vVol reaches the device of its array's
        protocol endpoint, labelled `PE <pe>`. The results name a device's host and volume, not its
        VMs."""
        vm = self._vms.get(vm_name)
        if vm is None:
            return None
        volume = next(v for v in self._scenario["volume"] if v["name"] == vm["volume"])
        label = volume["name"]
        if volume.get("type", "vmfs") == "vvol":
            array = next(a for a in self._scenario["array"] if a["name"] == volume["arrays"][0])
            label = f"PE {array.get('pe', array['name'] + '-pe')}"
        device = self._devices.get((vm["host"], label))
        if device is None:
            raise ValueError(f"VM {vm_name}: the results have no device of host {vm['host']} for volume {label}")
        return device

    def series(self, device: DeviceReport) -> dict[str, list[tuple[float, float]]]:
        """The device's per-direction series that `disk_util` reads (DISK_METRICS) by metric, as
        (t_s, value); every device's, read in one pass when first asked for."""
        if self._series is None:
            self._series = {}
            ts = self._variant["timeseries"]
            t_s, entity, metric, value = ts["t_s"], ts["entity"], ts["metric"], ts["value"]
            if not len(t_s) == len(entity) == len(metric) == len(value):
                name = self._variant["name"]
                raise ValueError(f"variant {name!r}: its time series' columns differ in length")
            # The device rows found in C (an entity's code from one hashing pass): a Python test
            # of every row's entity was most of the fio documents' time (paths have most rows).
            codes, entities = pd.factorize(np.asarray(entity, dtype=object))
            metric_codes, metrics = pd.factorize(np.asarray(metric, dtype=object))
            devices = [code for code, name in enumerate(entities) if name.startswith("device/")]
            wanted = [code for code, name in enumerate(metrics) if name in DISK_METRICS]
            rows = np.isin(codes, devices) & np.isin(metric_codes, wanted)
            for row in np.flatnonzero(rows).tolist():
                by_metric = self._series.setdefault(entity[row], {})
                by_metric.setdefault(metric[row], []).append((t_s[row], value[row]))
        return self._series.get(f"device/{device['name']}", {})


def disk_util(job: JobReport, devices: VariantDevices) -> tuple[list[dict[str, Any]], list[str]]:
    """fio's `disk_util` (stat.c `json_array_add_disk_util`) for the device under the job's VM,
    and notes on what it leaves out.

    fio reads /proc/diskstats over its whole run; sanlab sums the device's per-direction series
    over the run (warm-up included, as fio counts its ramp_time): I/Os, 512-byte sectors, and
    ticks, the ms its requests spent from entering the device queue to completion (the kernel's
    per-direction time). `in_queue` is the kernel's weighted time in flight, which is the sum of
    the requests' times, so the ticks added up.
    """
    device = devices.device(job["vm"])
    if device is None:
        return [], [f"disk_util: not written: the results carry no resolved scenario with VM {job['vm']} to find its device"]
    samples = devices.series(device)
    if "read_iops" not in samples:
        return [], [f"disk_util: not written: the run kept no per-direction series for device/{device['name']}"]
    entry: dict[str, Any] = {"name": device["name"]}
    ticks = 0
    for direction in ("read", "write"):
        ios = sectors = ms = 0.0
        last_s = 0.0
        # The series are per-second rates and per-I/O means over each sample interval.
        for (t_s, iops), (_, mbps), (_, lat_ms) in zip(
            *(samples[f"{direction}_{m}"] for m in ("iops", "mbps", "lat_ms_mean")), strict=True
        ):
            window_s, last_s = t_s - last_s, t_s
            ios += iops * window_s
            sectors += mbps * 1e6 * window_s / 512
            ms += iops * window_s * lat_ms
        entry[f"{direction}_ios"] = round(ios)
        entry[f"{direction}_sectors"] = round(sectors)
        entry[f"{direction}_ticks"] = round(ms)
        ticks += round(ms)
    entry |= {"read_merges": 0, "write_merges": 0, "in_queue": ticks}
    ordered = ("name", "read_ios", "write_ios", "read_sectors", "write_sectors", "read_merges", "write_merges", "read_ticks", "write_ticks", "in_queue")
    return [{key: entry[key] for key in ordered}], [_NO_UTIL]


def fio_document(
    jobs: Sequence[JobReport], sanlab_version: str, started: datetime, devices: VariantDevices | None = None
) -> dict[str, Any]:
    """A whole `fio --output-format=json` document for the jobs of one workload entry (one fio
    invocation: a job file or command line), in their order: its global options, one job object
    per job, one per reporting group with `group_reporting`.

    `started` must be timezone-aware; `time` is written in UTC in ctime form, as fio writes it.
    With its variant's `devices`, the document has fio's `disk_util` for the VM's device.
    """
    timestamp_ms = int(started.timestamp() * 1000)
    job = jobs[0]
    disks, notes = disk_util(job, devices) if devices is not None else ([], [])
    reported = _reported(jobs)
    # fio's `elapsed`: whole seconds since it started, rounded up, when it reports (the last job's
    # end); results from before jobs kept their end take the longest runtime.
    elapsed_s = -(-int(max(float(j.get("end_ms", _job_runtime_ms(j))) for j in jobs)) // 1000)
    groups: dict[int, dict[str, tuple[int, int]]] = {}
    for r in reported:
        totals = groups.setdefault(_group(r), {"read": (0, 0), "write": (0, 0)})
        for d in ("read", "write"):
            io_bytes, runtime_ms = totals[d]
            totals[d] = (io_bytes + int(r[d]["io_bytes"]), max(runtime_ms, round(r[d]["runtime_ms"])))
    return {
        "fio version": f"sanlab-{sanlab_version}",
        "timestamp": timestamp_ms // 1000,
        "timestamp_ms": timestamp_ms,
        "time": time.asctime(started.utctimetuple()),
        "global options": {str(name): str(value) for name, value in job.get("fio_place", {}).get("global_options", [])},
        "jobs": [fio_job(r, timestamp_ms, groups[_group(r)], elapsed_s) for r in reported],
        # fio writes `disk_util` after the jobs.
        **({"disk_util": disks} if disks else {}),
        "sanlab notes": [_NOT_SIMULATED, *([_SYNCS_IN_GUEST] if any(any(j.get("syncs", {}).values()) for j in jobs) else []), *notes],
    }
