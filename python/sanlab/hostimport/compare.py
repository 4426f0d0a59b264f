"""Measured against simulated: a host's esxtop capture beside a run of the scenario imported from
it (`sanlab compare RUN_DIR --esxtop CAPTURE`).

Per device (the capture's `Physical Disk SCSI Device` instances, matched to the run's devices by
name): IOPS (`Commands/sec`), DAVG, KAVG, GAVG (`Average Driver / Kernel / Guest
MilliSec/Command`), ACTV and QUED (`Active Commands`, `Queued Commands`); the capture's figure is
its mean over every sample, the run's the figure its results report (over its measured time).
Per link (an adapter to a target port, `vmhbaA:Cc:Tt`): its share of all commands, from the
capture's `Physical Disk Path` instances (a path's runtime name `vmhbaA:Cc:Tt:Ll`, or the name
`sanlab run --esxtop-csv` writes) and the run's paths. Shares are taken over every device
together: a capture's path instances do not say which device a LUN number is.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass

import numpy as np

from sanlab.document import Variant
from sanlab.hostimport.esxtop import DEVICE, PATH, Capture

# (label, esxtop counter, the run's device key)
DEVICE_FIGURES = [
    ("IOPS", "Commands/sec", "iops"),
    ("DAVG ms", "Average Driver MilliSec/Command", "davg_ms"),
    ("KAVG ms", "Average Kernel MilliSec/Command", "kavg_ms"),
    ("GAVG ms", "Average Guest MilliSec/Command", "gavg_ms"),
    ("ACTV", "Active Commands", "actv_mean"),
    ("QUED", "Queued Commands", "qued_mean"),
]
_LUN = re.compile(r"^(vmhba[^:]*:C\d+:T\d+):L\d+$")


@dataclass(frozen=True)
class Figure:
    """One figure of one entity, measured and simulated; `error` is relative (None where the
    measured figure is zero or missing), `points` for shares."""

    entity: str
    figure: str
    measured: float | None
    simulated: float | None
    error: float | None


@dataclass
class Comparison:
    devices: list[Figure]
    links: list[Figure]
    notes: list[str]

    def to_json(self) -> str:
        return json.dumps({"devices": [asdict(f) for f in self.devices], "links": [asdict(f) for f in self.links], "notes": self.notes}, indent=1)


def _mean(values: np.ndarray) -> float | None:
    finite = values[np.isfinite(values)]
    return float(finite.mean()) if finite.size else None


def _relative(measured: float | None, simulated: float | None) -> float | None:
    if measured is None or simulated is None or measured == 0:
        return None
    return simulated / measured - 1


def _link(name: str, devices: set[str]) -> str:
    """The link a path name runs over: `vmhba1:C0:T0:L3` or `vmhba1:C0:T0:<device>` ->
    `vmhba1:C0:T0`; any other name is its own link."""
    m = _LUN.match(name)
    if m:
        return m.group(1)
    for device in devices:
        if name.endswith(f":{device}"):
            return name[: -len(device) - 1]
    return name


def compare(capture: Capture, variant: Variant) -> Comparison:
    """The capture's figures beside the run's."""
    notes: list[str] = []
    simulated = {d["name"]: d for d in variant["devices"]}
    measured = capture.instances(DEVICE)
    missing = sorted(set(measured) - set(simulated))
    if missing:
        notes.append(f"in the capture, not in the run: {', '.join(missing)}")
    unmeasured = sorted(set(simulated) - set(measured))
    if unmeasured:
        notes.append(f"in the run, not in the capture: {', '.join(unmeasured)}")
    devices = []
    for name in [m for m in measured if m in simulated]:
        for label, counter, key in DEVICE_FIGURES:
            got = capture.series[(DEVICE, name)].get(counter)
            value = _mean(got) if got is not None else None
            sim = float(simulated[name][key])  # type: ignore[literal-required]
            devices.append(Figure(name, label, value, sim, _relative(value, sim)))
    names = set(simulated) | set(measured)
    measured_links: dict[str, float] = {}
    for path in capture.instances(PATH):
        rate = _mean(capture.get(PATH, path, "Commands/sec"))
        if rate is not None:
            link = _link(path, names)
            measured_links[link] = measured_links.get(link, 0.0) + rate
    simulated_links: dict[str, float] = {}
    for p in variant["paths"]:
        link = _link(p["name"], names)
        simulated_links[link] = simulated_links.get(link, 0.0) + p["iops"]
    links = []
    m_total, s_total = sum(measured_links.values()), sum(simulated_links.values())
    for link in dict.fromkeys([*measured_links, *simulated_links]):
        m = 100 * measured_links[link] / m_total if link in measured_links and m_total > 0 else None
        s = 100 * simulated_links[link] / s_total if link in simulated_links and s_total > 0 else None
        links.append(Figure(link, "share %", m, s, None if m is None or s is None else (s - m) / 100))
    if not capture.instances(PATH):
        notes.append("the capture has no Physical Disk Path group: no path shares to compare")
    return Comparison(devices, links, notes)


def error_text(f: Figure) -> str:
    if f.error is None:
        return "-"
    if f.figure == "share %":
        return f"{100 * f.error:+.1f} pt"
    return f"{100 * f.error:+.1f} %"


def value_text(value: float | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:,.3f}" if abs(value) < 100 else f"{value:,.0f}"
