"""What saturates first and what it bounds: the resources' utilisations of one run
(`sanlab.analysis.utilisation`, `{kind, name, utilisation, how, demand, vms}`) named for the
answer, and the operational-law bounds from the service demands among them
(docs/headroom.md#the-bounds)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

from sanlab.analysis.utilisation import Topology, link_utilisations, number
from sanlab.resolved import resolved_scenario


def describe(item: Mapping[str, Any]) -> str:
    """`array `server` media`, `device queue `esx1/lun``."""
    kind, name = str(item["kind"]), str(item["name"])
    if kind.startswith("array ") or kind in ("drive", "write cache"):
        array, _, part = name.partition("/")
        what = kind.removeprefix("array ")
        return f"array `{array}` {what}" + (f" {part}" if part else "")
    if kind == "link" and item.get("path"):
        return f"link `{item['path']}` {item['direction']}"
    return f"{kind} `{name}`"


# --- the operational-law bounds ---------------------------------------------------------------


def _share(item: Mapping[str, Any], grown: Sequence[str], iops: Mapping[str, float]) -> float:
    """The grown VMs' share of the I/Os crossing the resource (by today's IOPS)."""
    total = sum(iops.get(vm, 0.0) for vm in item["vms"])
    mine = sum(iops.get(vm, 0.0) for vm in item["vms"] if vm in grown)
    return mine / total if total > 0 else 0.0


SATURATED_GAP = 0.05
"""The bound's resource counts as saturating when its utilisation at the limit is within this of
the highest there."""


def throughput_bound(
    today: Sequence[Mapping[str, Any]], at_limit: Sequence[Mapping[str, Any]],
    grown: Sequence[str], vm_iops: Mapping[str, float], iops: float,
) -> dict[str, Any]:  # fmt: skip
    """X ≤ 1/Dmax on the grown VMs, from today's demands (D = U / X, the utilisation law) of the
    resources their I/Os cross: a resource at utilisation U of which the grown VMs make a share s
    takes them to at most 1 + (1 − U) / (U·s) times today's load (the others keep theirs). Given
    only when that resource saturates, its utilisation at the limit (`at_limit`; today's table
    when there is none) within SATURATED_GAP of the highest there: otherwise what limits the load
    has no service demand (a queue's occupancy, a cache's fullness), the demands measured do not
    bound it, and the answer says which resource it is and why."""
    # A resource bounds the grown VMs' total only when every one of them crosses it: the others
    # grow past it (a QoS-capped VM beside VMs on other volumes).
    busy = {vm for vm in grown if vm_iops.get(vm, 0.0) > 0}
    crossed = [
        item for item in today
        if item["demand"] and item["utilisation"] > 0 and _share(item, grown, vm_iops) > 0
        and busy <= set(item["vms"])
    ]  # fmt: skip

    def factor(item: Mapping[str, Any]) -> float:
        u, s = item["utilisation"], _share(item, grown, vm_iops)
        return 1 + (1 - u) / (u * s)

    table = list(at_limit) or list(today)
    saturating = table[0] if table else None
    loose = min(crossed, key=factor) if crossed else None
    there = next((item for item in table if loose is not None and _same(item, loose)), None)
    if (
        saturating is not None
        and not saturating["demand"]
        and (there is None or there["utilisation"] < saturating["utilisation"] - SATURATED_GAP)
    ):
        what = (
            "a queue's occupancy (ACTV / DQLEN): the I/Os it completes are its slots over the time an I/O "
            "holds one (Little's law), which includes delays no busy time measures"
            if saturating["kind"] == "device queue"
            else "a cache's fullness, not a server's busy time"
        )
        also = (
            f"; the demands measured ({describe(loose)} busiest) would allow ×{factor(loose):.4g}, a bound on "
            "something else"
            if loose is not None
            else ""
        )
        return {
            "iops": None,
            "why_none": f"what saturates first, {describe(saturating)}, has no service demand: it is {what}{also}",
            "unknown": [describe(saturating)],
        }
    if not crossed or iops <= 0:
        return {
            "iops": None,
            "why_none": "no resource that every grown VM's I/Os cross reports a busy time today",
            "unknown": [
                describe(item) for item in today if not item["demand"] and set(item["vms"]) & set(grown)
            ],
        }

    busiest = min(crossed, key=factor)
    best = factor(busiest)
    return {
        "iops": iops * best,
        "factor": best,
        "resource": dict(busiest),
        "share": _share(busiest, grown, vm_iops),
    }


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """The same resource in two runs' tables; a disk group's `drive` is its busiest, whichever
    drive that is in each run."""
    if a["kind"] == b["kind"] == "drive":
        return a["name"].partition("/")[0] == b["name"].partition("/")[0]
    return (a["kind"], a["name"]) == (b["kind"], b["name"])


def response_bound(variant: Mapping[str, Any], judged: Sequence[str]) -> dict[str, Any] | None:
    """R ≥ D, the service demand of the judged VMs' I/Os at today's load, over the servers an I/O
        waits for: an array's media (flash: busy servers × their count / the array's IOPS, each I/O
        holding one server), its cores (every core's busy share / the array's IOPS: an I/O takes its
        owner core and its data core in turn) and its device's links (Σ over the device's paths of
        the path's share × its link's busy share / the path's IOPS; a read busies one direction, a
        write the other); a disk group's drives when the array wrote nothing to them (Σ drive busy
        shares / the array's IOPS: a read holds one drive). Each demand is an average over the I/Os crossing the server, so a server
        that VMs not judged also cross is left out (their I/Os may cost more or less), and so are
        drives that take writes (a write is acknowledged from the write-back cache before them; a RAID
        write's operations overlap): said in `left_out`. VMs that did no I/O do not count. The I/O-weighted mean of the judged VMs' latencies
        is at least D, so the worst VM's is too. `ms` None when every server is left out; None when
    the judged VMs cross no server at all."""
    top = Topology(variant)
    mine = set(judged)
    media = {a["name"]: a.get("media") or {} for a in resolved_scenario(variant).get("array", [])}
    links = link_utilisations(variant, top)
    left_out: list[str] = []
    per_array: list[dict[str, float]] = []
    for array in variant.get("arrays", []):
        crossing = {vm for vm in top.array_vms(array["name"]) if top.iops.get(vm, 0.0) > 0}
        x = float(array.get("iops") or 0.0)
        if not crossing & mine or x <= 0:
            continue
        if not crossing <= mine:
            left_out.append(f"array `{array['name']}`: VMs not judged cross it too")
            continue
        demand: dict[str, float] = {}
        kind = media.get(array["name"], {}).get("kind", "flash")
        busy = number(array.get("utilisation"))
        if kind == "flash" and busy is not None:
            servers = int(media.get(array["name"], {}).get("servers", 64))
            demand[f"array `{array['name']}` media"] = busy * servers / x
        elif array.get("disk_group"):
            group = array["disk_group"]
            if int(group.get("backend_writes") or 0) == 0:  # reads only: each holds one drive
                disks = [float(u) for u in group.get("disk_utilisation") or []]
                demand[f"array `{array['name']}` drives"] = sum(disks) / x
            else:
                left_out.append(
                    f"array `{array['name']}` drives: writes reach them after the write-back cache"
                )
        cores = [float(c["util"]) for c in array.get("cores") or [] if number(c.get("util")) is not None]
        if cores:
            demand[f"array `{array['name']}` cores"] = sum(cores) / x
        per_array.append(demand)
    parts: dict[str, float] = dict(max(per_array, key=lambda d: sum(d.values()))) if per_array else {}
    paths = list(variant.get("paths", []))
    path_iops: dict[str, float] = {}
    for path in paths:
        path_iops[path["name"]] = path_iops.get(path["name"], 0.0) + float(path.get("iops") or 0.0)
    for device in variant.get("devices", []):
        if not set(top.device_vms(device)) & mine:
            continue
        for direction in ("host to array", "array to host"):
            on = [
                (path, item) for path in paths if path["device"] == device["name"]
                for item in links
                if item["path"] == path["name"] and item["name"].endswith(f"({direction})")
                and path_iops.get(item["path"], 0.0) > 0
            ]  # fmt: skip
            shared = [
                item for _, item in on if not {vm for vm in item["vms"] if top.iops.get(vm, 0.0) > 0} <= mine
            ]
            if shared:
                left_out.append(
                    f"links {direction} of device `{device['host']}/{device['name']}`: VMs not judged cross them too"
                )
                continue
            demand = sum(
                float(p.get("share") or 0.0) * i["utilisation"] / path_iops[i["path"]] for p, i in on
            )
            if demand > 0:
                key = f"links {direction}"
                parts[key] = max(parts.get(key, 0.0), demand)
    if not parts:
        return {"ms": None, "left_out": sorted(set(left_out))} if left_out else None
    means = {v["name"]: float(v["lat_ms"]["mean"]) for v in variant.get("vms", []) if v["name"] in mine}
    worst = max(means, key=lambda name: means[name]) if means else None
    return {
        "ms": sum(parts.values()) * 1000,
        "parts_ms": {name: value * 1000 for name, value in parts.items()},
        "vm": worst,
        "today_mean_ms": means[worst] if worst else None,
        "left_out": sorted(set(left_out)),
    }


# --- the closed-loop bounds ---------------------------------------------------------------------

_TIME_UNITS_S = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_TIME = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([a-z]*)\s*$")


def _seconds(text: str, default_unit_s: float) -> float | None:
    """A fio time (`100`, `2ms`, `1000000000ns`) in seconds; None when unreadable."""
    match = _TIME.match(str(text).lower())
    if not match or (match.group(2) and match.group(2) not in _TIME_UNITS_S):
        return None
    return float(match.group(1)) * (_TIME_UNITS_S[match.group(2)] if match.group(2) else default_unit_s)


def _think(job: Mapping[str, Any]) -> tuple[float | None, str | None]:
    """A closed job's think time per I/O (s), or None and why it has no single one: fio
    `thinktime` (µs without a unit) after every `thinktime_blocks` (default 1) requests; an
    ioping probe's `interval` (ns as the engine reports it)."""
    options = job.get("options") or {}
    if "interval" in options:
        return _seconds(options["interval"], 1e-9), None
    think = _seconds(options.get("thinktime", "0"), 1e-6)
    if not think:
        return 0.0, None
    if "thinktime_iotime" in options or int(options.get("thinktime_blocks", "1")) > 1:
        return (
            think,
            f"job {job['name']} thinks after a batch (thinktime_blocks or thinktime_iotime), not after each I/O",
        )
    return think, None


_HOLDS = {"array media", "array core", "link", "replication link"}
"""Demands an I/O holds a server for (its response time includes them); a volume QoS and a VM
limit pace I/Os without holding one, a drive is in its array's media, a controller is its cores."""


def class_demands(variant: Mapping[str, Any], grown: Sequence[str]) -> dict[str, Any]:
    """The grown VMs' I/Os as one class, from the utilisations of the demand resources they cross
    (the utilisation law, D = U / X with X their IOPS: an I/O's visits weighted in): D, the busy
    server time per I/O of the servers an I/O holds (a flash array's media: busy share × servers;
    a disk group's drives only when they took no writes, acknowledged before them), and Dmax, the
    busiest single server's that every grown VM crosses (a flash array's media: one of its servers). `left_out` names what a
    VM not grown crosses too (another class: the bounds do not hold)."""
    from sanlab.analysis.utilisation import utilisations  # the table headroom's answer prints

    iops = {vm["name"]: float(vm.get("iops") or 0.0) for vm in variant.get("vms", [])}
    mine = set(grown)
    x = sum(iops.get(name, 0.0) for name in grown)
    busy = {name for name in grown if iops.get(name, 0.0) > 0}
    media = {a["name"]: a.get("media") or {} for a in resolved_scenario(variant).get("array", [])}
    groups = {a["name"]: a.get("disk_group") for a in variant.get("arrays", [])}
    held, dmax, busiest = 0.0, 0.0, ""
    left_out: list[str] = []
    skipped: set[str] = set()
    for item in utilisations(variant):
        crossing = {vm for vm in item["vms"] if iops.get(vm, 0.0) > 0}
        if not item["demand"] or not crossing & mine or item["kind"] == "array controller":
            continue
        if not crossing <= mine:
            left_out.append(f"{describe(item)}: VMs not grown cross it too")
            continue
        array = item["name"].partition("/")[0]
        group = groups.get(array) if item["kind"] in ("array media", "drive") else None
        if group and int(group.get("backend_writes") or 0) > 0:
            # its busy time is destaging too, which no I/O waits for: neither D nor Dmax
            skipped.add(f"array `{array}` drives: writes reach them after the write-back cache")
            continue
        u = float(item["utilisation"])
        # Dmax from what every grown VM crosses: one only some cross bounds those alone, and
        # the others grow past it (a QoS-capped VM beside VMs on other volumes)
        if u > dmax and busy <= crossing:
            dmax, busiest = u, describe(item)
        if item["kind"] not in _HOLDS:
            continue
        if group:  # a disk group's media: each read holds one drive
            held += sum(float(b) for b in group.get("disk_utilisation") or [])
        elif item["kind"] == "array media":
            held += u * int(media.get(item["name"], {}).get("servers", 64))
        else:
            held += u
    return {
        "demand_s": held / x if x > 0 else None,
        "bottleneck_demand_s": dmax / x if x > 0 else None,
        "bottleneck": busiest,
        "left_out": left_out,
        "skipped": sorted(skipped),
    }


def closed_loop_bounds(
    variant: Mapping[str, Any], grown: Sequence[str], judged: Sequence[str]
) -> dict[str, Any]:
    """The asymptotic bounds of a closed network (Denning and Buzen 1978) for the grown VMs'
    outstanding I/Os, from today's demands (`class_demands`): X(N) ≤ min(Σ_i 1 / (D + Z_i), 1 / Dmax)
    over the N customers i, and R(N) ≥ max(D, N·Dmax − Z) (Little's law over a cycle,
    N = X (R + Z), with X ≤ 1/Dmax; Z the largest think time). Valid for one class: every job of
    the grown VMs a closed loop, and no VM not grown crossing their servers. `customers`: today's
    outstanding I/Os by think time and whether the factor scales them (a probe is not);
    `why_none` when there is no bound."""
    jobs = [job for job in variant.get("jobs", []) if job["vm"] in grown]
    open_jobs = [job["name"] for job in jobs if job["pacing"]["kind"] != "closed"]
    if not jobs or open_jobs:
        return {"why_none": f"not a closed loop: job {', '.join(open_jobs)} is paced by arrivals"}
    found = class_demands(variant, grown)
    if found["left_out"]:
        return {"why_none": f"not one class of I/Os: {'; '.join(found['left_out'])}"}
    if not found["demand_s"] or not found["bottleneck_demand_s"]:
        skipped = f" (left out: {'; '.join(found['skipped'])})" if found["skipped"] else ""
        return {"why_none": f"no server that every grown VM's I/Os cross reports a busy time{skipped}"}
    population: dict[tuple[float, bool], int] = {}
    batch: list[str] = []
    by_vm: dict[str, int] = {}
    for job in jobs:
        think, why = _think(job)
        if think is None:
            return {"why_none": f"job {job['name']}: cannot read its think time"}
        if why:
            batch.append(why)
        scaled = "interval" not in (job.get("options") or {})  # a probe measures: it does not grow
        depth = int(job["pacing"]["depth"])
        population[(think, scaled)] = population.get((think, scaled), 0) + depth
        by_vm[job["vm"]] = by_vm.get(job["vm"], 0) + depth
    return {
        "demand_ms": found["demand_s"] * 1000,
        "bottleneck_demand_ms": found["bottleneck_demand_s"] * 1000,
        "bottleneck": found["bottleneck"],
        "population_today": sum(population.values()),
        "population_by_vm": by_vm,
        "customers": [
            {"count": count, "think_ms": think * 1000, "scaled": scaled}
            for (think, scaled), count in sorted(population.items())
        ],
        "response_bound": not batch,
        "why_no_response": "; ".join(batch),
        "judged_all": set(judged) == set(grown),
        "skipped": found["skipped"],
    }


def closed_at(bounds: Mapping[str, Any], factor: float, vms: Sequence[str] | None = None) -> dict[str, float]:
    """The closed-loop bounds at `factor`: the population N (today's scaled customers × factor,
    rounded, plus the probes; with `--grow vms`, each VM's today's by its original, `vms`), and
    X(N) ≤ `iops_max`, R(N) ≥ `response_ms_min`."""
    d, dmax = bounds["demand_ms"], bounds["bottleneck_demand_ms"]
    if vms is not None:
        share = {vm: count for vm, count in bounds["population_by_vm"].items()}
        total = sum(share.get(vm, 0) for vm in vms)
        scale = total / bounds["population_today"] if bounds["population_today"] else 0.0
        counts = [(c["count"] * scale, c["think_ms"]) for c in bounds["customers"]]
    else:
        counts = [
            (max(1.0, round(c["count"] * factor)) if c["scaled"] else c["count"], c["think_ms"])
            for c in bounds["customers"]
        ]
    n = sum(count for count, _ in counts)
    think_ms = max(think for _, think in counts)
    iops = min(sum(count / (d + think) for count, think in counts), 1 / dmax) * 1000
    return {"population": n, "iops_max": iops, "response_ms_min": max(d, n * dmax - think_ms)}


def closed_estimate(bounds: Mapping[str, Any], limit_ms: float) -> float | None:
    """The largest population whose response-time bound is within `limit_ms` (a mean's or a max's
    ceiling): no larger one can meet it. None when even D passes it."""
    d, dmax = bounds["demand_ms"], bounds["bottleneck_demand_ms"]
    think_ms = max(c["think_ms"] for c in bounds["customers"])
    if d > limit_ms:
        return None
    return math.floor((limit_ms + think_ms) / dmax)
