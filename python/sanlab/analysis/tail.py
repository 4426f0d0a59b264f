"""Tail IOPS: a VM's IOPS where the run has settled, from its time series."""

from __future__ import annotations

from sanlab.document import Variant


def tail_iops(variant: Variant) -> dict[str, float]:
    """Mean IOPS of each VM over the last quarter of the run, at most its last 60 s, by VM name.

    This is where a policy that changes its mind (the latency PSP) has settled. A VM with fewer
    than two samples in that window is left out. One pass over the series for every VM: a pass
    per VM took hours at 10,000 VMs.
    """
    series = variant["timeseries"]
    end_s = variant["sim_time_s"]
    window_s = min(60.0, end_s / 4)
    values: dict[str, list[float]] = {}
    for t_s, entity, metric, value in zip(
        series["t_s"], series["entity"], series["metric"], series["value"], strict=True
    ):
        if metric == "iops" and t_s > end_s - window_s and entity.startswith("vm/"):
            values.setdefault(entity[3:], []).append(value)
    return {vm: sum(v) / len(v) for vm, v in values.items() if len(v) >= 2}
