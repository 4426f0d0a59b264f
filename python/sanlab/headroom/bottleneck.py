"""What saturates first: every utilisation the engine's document reports, on one 0-1 scale, so
that the highest at the limit names the bottleneck (docs/headroom.md says what is covered).

- an array's media: `arrays[].utilisation` (the busy share of its media's servers);
- an array's cores and controllers: `cores[].util`, `controllers[].util` (when modelled);
- a disk group's drives: the busiest of `disk_group.disk_utilisation`;
- a host's device queue: `actv_mean / dqlen_mean` (esxtop's ACTV over DQLEN: the share of the
  LUN queue's slots in use).

Not covered yet (the engine does not report them as a utilisation): fabric links and ports, host
adapters, the write cache's destage, QoS and flow-control limits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def utilisations(variant: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every resource's utilisation in one run, highest first: `{kind, name, utilisation}`."""
    found: list[dict[str, Any]] = []
    for array in variant.get("arrays", []):
        name = array["name"]
        if isinstance(array.get("utilisation"), (int, float)):
            found.append({"kind": "array media", "name": name, "utilisation": float(array["utilisation"])})
        for group, kind in (("cores", "array core"), ("controllers", "array controller")):
            for item in array.get(group) or []:
                if isinstance(item.get("util"), (int, float)):
                    found.append(
                        {"kind": kind, "name": f"{name}/{item['name']}", "utilisation": float(item["util"])}
                    )
        disks = (array.get("disk_group") or {}).get("disk_utilisation") or []
        if disks:
            busiest = max(range(len(disks)), key=lambda i: disks[i])
            found.append(
                {"kind": "drive", "name": f"{name}/disk{busiest}", "utilisation": float(disks[busiest])}
            )
    for device in variant.get("devices", []):
        depth = device.get("dqlen_mean")
        if (
            isinstance(depth, (int, float))
            and depth > 0
            and isinstance(device.get("actv_mean"), (int, float))
        ):
            name = f"{device['host']}/{device['name']}"
            found.append(
                {"kind": "device queue", "name": name, "utilisation": float(device["actv_mean"]) / depth}
            )
    found.sort(key=lambda item: -item["utilisation"])
    return found


def describe(item: Mapping[str, Any]) -> str:
    """`array `server` media`, `device queue `esx1/lun``."""
    kind, name = str(item["kind"]), str(item["name"])
    if kind.startswith("array "):
        array, _, part = name.partition("/")
        return f"array `{array}` {kind.removeprefix('array ')}" + (f" {part}" if part else "")
    return f"{kind} `{name}`"


DEMAND_KINDS = ("array media", "array core", "array controller", "drive")
"""Utilisations that are a service demand times the throughput (the utilisation law U = X·D): a
queue's occupancy (device queue) is not one."""


def throughput_bound(today: list[dict[str, Any]], iops: float, all_iops: float) -> dict[str, Any] | None:
    """The operational-law bound from today's run on the grown VMs' IOPS: X ≤ 1/Dmax, with each
    resource's demand D = U / X_all (the utilisation law) at today's throughput of every VM,
    X_all. VMs that do not grow keep their share X_others·D, so the grown VMs reach at most
    X + (1 − U) / D, taking their I/Os to cost what the others' do (None without a busy resource)."""
    demands = [item for item in today if item["kind"] in DEMAND_KINDS and item["utilisation"] > 0]
    if not demands or iops <= 0:
        return None
    busiest = max(demands, key=lambda item: item["utilisation"])
    limit = iops + (1 - busiest["utilisation"]) * all_iops / busiest["utilisation"]
    return {"iops": limit, "factor": limit / iops, "resource": busiest}
