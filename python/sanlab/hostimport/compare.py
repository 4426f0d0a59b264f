"""Measured against simulated: a host's capture beside a run of the scenario imported from it
(`sanlab compare RUN_DIR --esxtop CAPTURE`, `--iostat CAPTURE`, `--typeperf CAPTURE`), one
comparison document and report section whatever the tool (`TOOLS`).

An esxtop capture:

Per device (the capture's `Physical Disk SCSI Device` instances, matched to the run's devices by
name): IOPS (`Commands/sec`), DAVG, KAVG, GAVG (`Average Driver / Kernel / Guest
MilliSec/Command`), ACTV and QUED (`Active Commands`, `Queued Commands`); the capture's figure is
its mean over every sample (a latency's weighted by each sample's commands, so idle samples count
for nothing), the run's the figure its results report (over its measured time). A capture none of
whose devices is in the run is refused.
Per link (an adapter to a target port, `vmhbaA:Cc:Tt`): its share of all commands, from the
capture's `Physical Disk Path` instances (a path's runtime name `vmhbaA:Cc:Tt:Ll`, or the name
`sanlab run --esxtop-csv` writes) and the run's paths. Shares are taken over every device
together: a capture's path instances do not say which device a LUN number is.

An iostat or typeperf capture (`records.DiskCapture`, `compare_disks`): per device of the run,
its disks in the capture as the import takes them (`load.py`: a map's dm device or alias, else its
paths' disks summed; an NVMe subsystem's heads; a Windows MPIO disk's PhysicalDisk), the mean over
the reports of IOPS (reads + writes per second), read %, request KiB (bytes over requests),
queue (`aqu-sz`, `Avg. Disk Queue Length`) and the latency per request (`await`, `Avg. Disk
sec/Transfer`, weighted by requests; and per direction), beside the run's IOPS, the read share and
request size of its time series, ACTV + QUED, and the device's mean latency (GAVG: the device's
queue and the path, as await holds the block layer's and the wire). Per link, with the
`multipath -ll` listing the scenario was imported from: each path disk's (`sdX`) share of all the
path disks' requests, beside the run's path shares; typeperf has no per-path counters.

Both sides are checked before they are used: the run's figures (`results.json`: each compared
device's and path's, a number of at most 2^64 or null) and the comparison file `sanlab report`
reads again (`read_comparison`), each damage one `RunFolderError` naming the file. No number
written is NaN or infinite: a figure that is not finite is null.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from sanlab.document import Document, Variant
from sanlab.export.runfolder import TIMESERIES_FILE, RunFolderError, loads_damaged
from sanlab.hostimport.esxtop import DEVICE, MAX_VALUE, PATH, Capture, CaptureError
from sanlab.hostimport.load import VolumeSeries, volume_devices, volume_series
from sanlab.hostimport.records import DiskCapture, HostInputError
from sanlab.hostimport.topology import Volume
from sanlab.hostimport.workload import device_series, mean, weighted_mean
from sanlab.input_files import read_bytes

# (label, esxtop counter, the run's device key)
DEVICE_FIGURES = [
    ("IOPS", "Commands/sec", "iops"),
    ("DAVG ms", "Average Driver MilliSec/Command", "davg_ms"),
    ("KAVG ms", "Average Kernel MilliSec/Command", "kavg_ms"),
    ("GAVG ms", "Average Guest MilliSec/Command", "gavg_ms"),
    ("ACTV", "Active Commands", "actv_mean"),
    ("QUED", "Queued Commands", "qued_mean"),
]
DISK_FIGURES = ("IOPS", "read %", "request KiB", "queue", "latency ms", "read ms", "write ms")
"""The figures of a disk capture (iostat, typeperf), in `compare_disks`'s order."""


@dataclass(frozen=True)
class Tool:
    """A capture's tool as the comparison names it: its option, the key of its measured latency
    series and that series' label, the report section's anchor and heading."""

    name: str
    latency_key: str
    latency_label: str
    anchor: str
    heading: str

    @property
    def file(self) -> str:
        """The comparison's file in the run folder."""
        return f"{self.name}-compare.json"


TOOLS = {
    "esxtop": Tool("esxtop", "davg_ms", "DAVG ms", "measured", "Measured against simulated"),
    "iostat": Tool("iostat", "await_ms", "latency ms", "measured-iostat", "Measured against simulated (iostat)"),
    "typeperf": Tool("typeperf", "await_ms", "latency ms", "measured-typeperf", "Measured against simulated (typeperf)"),
}
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
    tool: str = "esxtop"
    # Each compared device's measured series (t_s, iops, the tool's latency); None: esxtop's, read
    # from the capture by `document`.
    measured: dict[str, dict[str, list[float | None]]] | None = None

    def document(self, capture: Capture | DiskCapture, variant: str) -> dict:
        """What `compare --esxtop|--iostat|--typeperf` writes (and the report reads back): the
        tool, the figures, the notes and the measured series of every compared device."""
        devices = list(dict.fromkeys(f.entity for f in self.devices))
        measured = self.measured if self.measured is not None else measured_series(capture, devices)  # type: ignore[arg-type]
        return {"tool": self.tool, "capture": str(capture.path), "variant": variant, "devices": [asdict(f) for f in self.devices], "links": [asdict(f) for f in self.links], "notes": self.notes, "measured": measured}


def _relative(measured: float | None, simulated: float | None) -> float | None:
    """None where either is missing, the measured figure is zero, or the ratio passes a float
    (a measured figure of 1e-320)."""
    if measured is None or simulated is None or measured == 0:
        return None
    error = simulated / measured - 1
    return error if math.isfinite(error) else None


def _number(value: object) -> bool:
    """A JSON number (not a boolean) within MAX_VALUE: what a figure may be, beside null."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) <= MAX_VALUE


def check_run(results: Path, index: int, variant: Variant) -> None:
    """The run's figures the comparison reads (`results` is the file they were read from, `index`
    the variant's place in it): a RunFolderError names the first that is not there."""
    def damaged(where: str, what: str) -> RunFolderError:
        return RunFolderError(f"{results}: variants[{index}].{where}: expected {what}; the file is damaged")

    # A device's figure may be null (the engine writes NaN so); a path's rate never is.
    for key, figures, null in (("devices", [k for _, _, k in DEVICE_FIGURES], True), ("paths", ["iops"], False)):
        for number, entity in enumerate(variant[key]):  # type: ignore[literal-required]
            if not isinstance(entity, dict) or not isinstance(entity.get("name"), str):
                raise damaged(f"{key}[{number}]", "an object with a name")
            for figure in figures:
                value = entity.get(figure)
                if figure not in entity or not (_number(value) or (null and value is None)):
                    raise damaged(f"{key}[{number}].{figure}", "a number of at most 2^64" + (", or null" if null else ""))


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


def compare(capture: Capture, variant: Variant, results: Path, index: int) -> Comparison:
    """The capture's figures beside the run's (variant `index` of the run's `results` file)."""
    check_run(results, index, variant)
    notes: list[str] = [*capture.notes]
    simulated = {d["name"]: d for d in variant["devices"]}
    measured = capture.instances(DEVICE)
    missing = sorted(set(measured) - set(simulated))
    if missing:
        notes.append(f"in the capture, not in the run: {', '.join(missing)}")
    unmeasured = sorted(set(simulated) - set(measured))
    if unmeasured:
        notes.append(f"in the run, not in the capture: {', '.join(unmeasured)}")
    matched = [m for m in measured if m in simulated]
    if not matched:
        raise CaptureError(f"{capture.path}: none of the capture's devices ({', '.join(measured) or 'no Physical Disk SCSI Device group'}) is in the run ({', '.join(simulated)}): is it the host the run was imported from?")
    devices = []
    for name in matched:
        series = device_series(capture, name)
        for label, counter, key in DEVICE_FIGURES:
            got = series.get(counter)
            # Latencies weighted by each sample's commands (idle samples count for nothing).
            value = weighted_mean(got, series["Commands/sec"]) if got is not None and "MilliSec" in counter else mean(got) if got is not None else None
            value = None if value is not None and math.isnan(value) else value
            sim = simulated[name].get(key)
            sim = None if sim is None else float(sim)  # type: ignore[arg-type]
            devices.append(Figure(name, label, value, sim, _relative(value, sim)))
    names = set(simulated) | set(measured)
    measured_links: dict[str, float] = {}
    for path in capture.instances(PATH):
        rate = mean(capture.get(PATH, path, "Commands/sec"))
        if not math.isnan(rate):
            link = _link(path, names)
            measured_links[link] = measured_links.get(link, 0.0) + rate
    simulated_links: dict[str, float] = {}
    for p in variant["paths"]:
        link = _link(p["name"], names)
        simulated_links[link] = simulated_links.get(link, 0.0) + p["iops"]
    links = _shares(measured_links, simulated_links)
    if not capture.instances(PATH):
        notes.append("the capture has no Physical Disk Path group: no path shares to compare")
    return Comparison(devices, links, notes)


def disk_volumes(variant: Variant, capture: DiskCapture, tool: str, volumes: list[Volume] | None) -> dict[str, Volume]:
    """Each run device's volume as the import made it, whose devices in the capture are its: the
    listing's (`volumes`, from the `multipath -ll` the scenario was imported from), else by name:
    a device named as the capture's (iostat -N prints a map's alias), an NVMe subsystem's heads
    (`nvme-subsysN`: `nvmeNnM`), a Windows MPIO disk's PhysicalDisk (`diskN`: `N E:`)."""
    by_volume = {v.name: v for v in volumes or []}
    present = list(dict.fromkeys(row.device for report in capture.reports for row in report))
    numbered = {d.split(" ", 1)[0]: d for d in present if d.split(" ", 1)[0].isdigit()}
    out: dict[str, Volume] = {}
    for device in variant["devices"]:
        name, volume = str(device["name"]), str(device["volume"])
        if volume in by_volume:
            out[name] = by_volume[volume]
            continue
        vol = Volume(volume, "", {}, "", None)  # type: ignore[arg-type]
        m = re.fullmatch(r"nvme-subsys(\d+)", volume)
        if m:
            vol.disk_pattern = rf"nvme{m.group(1)}n\d+"
        m = re.fullmatch(r"disk(\d+)", volume)
        if tool == "typeperf" and m and m.group(1) in numbered:
            vol.disks = [numbered[m.group(1)]]
        out[name] = vol
    return out


def _sim_means(variant: Variant, entity: str) -> dict[str, float]:
    """The run's read share, request size and latency per direction of a device, from its time
    series (each sample's latency weighted by its I/Os)."""
    got = {m: _simulated_series(variant, entity, m)[1] for m in ("iops", "mbps", "read_iops", "write_iops", "read_lat_ms_mean", "write_lat_ms_mean")}
    reads, writes, iops = (mean(got[k]) if len(got[k]) else math.nan for k in ("read_iops", "write_iops", "iops"))
    out = {"read %": 100 * reads / (reads + writes) if reads + writes > 0 else math.nan}
    out["request KiB"] = mean(got["mbps"]) * 1e6 / iops / 1024 if len(got["mbps"]) and iops > 0 else math.nan
    for key, direction in (("read ms", "read"), ("write ms", "write")):
        ms, n = got[f"{direction}_lat_ms_mean"], got[f"{direction}_iops"]
        out[key] = weighted_mean(ms, n) if len(ms) == len(n) and len(ms) else math.nan
    return out


def _disk_figures(name: str, device: dict, s: VolumeSeries, variant: Variant) -> list[Figure]:
    reads, writes = float(s.reads.mean()), float(s.writes.mean())
    iops = reads + writes
    both = weighted_mean(np.concatenate([s.r_await, s.w_await]), np.concatenate([s.reads, s.writes]))
    measured = {
        "IOPS": iops,
        "read %": 100 * reads / iops if iops > 0 else math.nan,
        "request KiB": (float(s.rbytes.mean()) + float(s.wbytes.mean())) / iops / 1024 if iops > 0 else math.nan,
        "queue": float(s.queue.mean()),
        "latency ms": both,
        "read ms": weighted_mean(s.r_await, s.reads),
        "write ms": weighted_mean(s.w_await, s.writes),
    }
    lat = device.get("lat_ms")
    simulated = {"IOPS": device["iops"], "queue": device["actv_mean"] + device["qued_mean"], "latency ms": lat.get("mean") if isinstance(lat, dict) else None, **_sim_means(variant, f"device/{name}")}
    out = []
    for label in DISK_FIGURES:
        m, sim = measured[label], simulated[label]
        m = None if m is None or not math.isfinite(m) else float(m)
        sim = None if sim is None or not math.isfinite(float(sim)) else float(sim)
        out.append(Figure(name, label, m, sim, _relative(m, sim)))
    return out


def _disk_series(s: VolumeSeries, capture: DiskCapture) -> dict[str, list[float | None]]:
    """A device's measured IOPS and latency per report, for the report to draw again."""
    def clean(values: np.ndarray) -> list[float | None]:
        return [float(v) if np.isfinite(v) else None for v in values]

    total = s.reads + s.writes
    with np.errstate(invalid="ignore", divide="ignore"):
        latency = np.where(total > 0, (np.nan_to_num(s.r_await) * s.reads + np.nan_to_num(s.w_await) * s.writes) / total, np.nan)
    t_s = np.array(capture.times_s if capture.times_s is not None else range(len(capture.reports)), dtype=np.float64)
    return {"t_s": clean(t_s), "iops": clean(total), "await_ms": clean(latency)}


def compare_disks(capture: DiskCapture, variant: Variant, results: Path, index: int, tool: str, volumes: dict[str, Volume], link_of: dict[str, str]) -> Comparison:
    """An iostat or typeperf capture's figures beside the run's (variant `index` of `results`):
    `volumes` each run device's volume (`disk_volumes`), `link_of` each path disk's link (`sdb`:
    `2:0:0`), empty without the listing."""
    check_run(results, index, variant)
    for number, device in enumerate(variant["devices"]):
        lat = device.get("lat_ms")
        if not (isinstance(lat, dict) and (lat.get("mean") is None or _number(lat.get("mean")))):
            raise RunFolderError(f"{results}: variants[{index}].devices[{number}].lat_ms.mean: expected a number of at most 2^64, or null; the file is damaged")
    notes: list[str] = [*capture.notes]
    present = list(dict.fromkeys(row.device for report in capture.reports for row in report))
    matched = {name: volume_devices(vol, capture) for name, vol in volumes.items()}
    matched = {name: found for name, found in matched.items() if found}
    if not matched:
        hint = " (dm-N: give --multipath, the listing the scenario was imported from, or capture with iostat -N)" if any(d.startswith("dm-") for d in present) else ""
        raise HostInputError(f"{capture.path}: none of the capture's devices ({', '.join(present[:8]) or 'none'}) is a device of the run ({', '.join(volumes)}){hint}: is it the host the run was imported from{f' ({capture.host})' if capture.host else ''}?")
    unmeasured = sorted(set(volumes) - set(matched))
    if unmeasured:
        notes.append(f"in the run, not in the capture: {', '.join(unmeasured)}")
    used = {d for found in matched.values() for d in found} | set(link_of)
    others = [d for d in present if d not in used]
    if others:
        notes.append(f"in the capture, not in the run: {', '.join(others[:8])}{' …' if len(others) > 8 else ''}")
    by_name = {str(d["name"]): d for d in variant["devices"]}
    devices: list[Figure] = []
    measured: dict[str, dict[str, list[float | None]]] = {}
    for name, found in matched.items():
        s = volume_series(found, capture)
        devices += _disk_figures(name, by_name[name], s, variant)
        measured[name] = _disk_series(s, capture)
    links: list[Figure] = []
    measured_links: dict[str, float] = {}
    for disk, link in link_of.items():
        rates = [r.reads_per_s + r.writes_per_s for report in capture.reports for r in report if r.device == disk]
        if rates:
            measured_links[link] = measured_links.get(link, 0.0) + sum(rates) / len(capture.reports)
    if measured_links:
        names = set(volumes) | {str(d["volume"]) for d in variant["devices"]}
        # Over the listing's SCSI links alone on both sides: an NVMe controller has no disk of its
        # own in iostat (the namespace's head is the subsystem's).
        listed = set(link_of.values())
        simulated_links: dict[str, float] = {}
        for p in variant["paths"]:
            link = _link(p["name"], names)
            if link in listed:
                simulated_links[link] = simulated_links.get(link, 0.0) + p["iops"]
        links = _shares(measured_links, simulated_links)
        others = sorted({_link(p["name"], names) for p in variant["paths"]} - listed)
        if others:
            notes.append(f"shares over the listing's SCSI paths (sdX); the run's other paths, no disk of their own in the capture, not compared: {', '.join(others[:8])}")
    elif tool == "typeperf":
        notes.append("typeperf's PhysicalDisk counters are per disk, not per path: no path shares to compare")
    elif link_of:
        notes.append("none of the listing's path disks (sdX) is in the capture: no path shares to compare")
    else:
        notes.append("no path shares: give --multipath (the listing the scenario was imported from) to read each path disk's (sdX) share")
    return Comparison(devices, links, notes, tool, measured)


def _shares(measured_links: dict[str, float], simulated_links: dict[str, float]) -> list[Figure]:
    """Each link's share of all commands in points, measured and simulated."""
    links = []
    m_total, s_total = sum(measured_links.values()), sum(simulated_links.values())
    for link in dict.fromkeys([*measured_links, *simulated_links]):
        m = 100 * measured_links[link] / m_total if link in measured_links and m_total > 0 else None
        s = 100 * simulated_links[link] / s_total if link in simulated_links and s_total > 0 else None
        links.append(Figure(link, "share %", m, s, None if m is None or s is None else (s - m) / 100))
    return links


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


def _simulated_series(variant: Variant, entity: str, metric: str) -> tuple[np.ndarray, np.ndarray]:
    ts = variant["timeseries"]
    rows = [(t, v) for t, e, m, v in zip(ts["t_s"], ts["entity"], ts["metric"], ts["value"], strict=True) if e == entity and m == metric]
    return np.array([t for t, _ in rows]), np.array([v for _, v in rows])


def _driver_ms(variant: Variant, entity: str, series_file: Path) -> tuple[np.ndarray, np.ndarray]:
    """The run's DAVG per sample: its reads' and writes' driver latency, weighted by their I/Os."""
    t, read_ms = _simulated_series(variant, entity, "read_driver_ms_mean")
    _, write_ms = _simulated_series(variant, entity, "write_driver_ms_mean")
    _, reads = _simulated_series(variant, entity, "read_iops")
    _, writes = _simulated_series(variant, entity, "write_iops")
    if not len(t) == len(write_ms) == len(reads) == len(writes):
        raise RunFolderError(f"{series_file}: {entity} has series of different lengths (read and write latency, reads, writes); the file is damaged")
    total = reads + writes
    with np.errstate(invalid="ignore", divide="ignore"):
        return t, np.where(total > 0, (np.nan_to_num(read_ms) * reads + np.nan_to_num(write_ms) * writes) / total, np.nan)


COMPARE_FILE = TOOLS["esxtop"].file
MAX_COMPARE_BYTES = 256 << 20
"""The comparison file's largest size: three series per device, a sample each; a day's capture
every 2 s of 100 devices is about 120 MB."""
FIGURE_FIELDS = [f.name for f in fields(Figure)]


def measured_series(capture: Capture, devices: list[str]) -> dict[str, dict[str, list[float | None]]]:
    """Each compared device's measured IOPS and DAVG per sample, for the report to draw again."""
    def clean(values: np.ndarray) -> list[float | None]:
        return [float(v) if np.isfinite(v) else None for v in values]

    out = {}
    for device in devices:
        series = capture.series[(DEVICE, device)]
        out[device] = {"t_s": clean(capture.t_s), "iops": clean(series["Commands/sec"]), "davg_ms": clean(series["Average Driver MilliSec/Command"])}
    return out


def report_section(document: dict, variant: Variant, run_dir: Path) -> tuple[str, str, str]:
    """The run's report section "Measured against simulated" from a comparison document (the JSON
    `compare --esxtop|--iostat|--typeperf` writes, as `read_comparison` returns it): per device,
    the capture's IOPS and latency (esxtop's DAVG; iostat's and typeperf's time per request) over
    time beside the run's (from the run folder `run_dir`: its DAVG, or its device latency), then
    the comparison's tables. (anchor, heading, HTML), for `render_report`."""
    import html

    import plotly.graph_objects as go
    import plotly.io as pio
    from plotly.subplots import make_subplots

    tool = TOOLS[document.get("tool", "esxtop")]
    measured = document["measured"]
    devices = list(measured)
    fig = make_subplots(rows=max(1, len(devices)), cols=2, subplot_titles=[t for d in devices for t in (f"{d}: IOPS", f"{d}: {tool.latency_label}")], vertical_spacing=0.12 / max(1, len(devices)) + 0.05)
    for row, device in enumerate(devices, start=1):
        entity = f"device/{device}"
        latency = _driver_ms(variant, entity, run_dir / TIMESERIES_FILE) if tool.name == "esxtop" else _simulated_series(variant, entity, "lat_ms_mean")
        simulated = [_simulated_series(variant, entity, "iops"), latency]
        for col, (key, (t_sim, sim)) in enumerate(zip(("iops", tool.latency_key), simulated, strict=True), start=1):
            fig.add_trace(go.Scatter(x=measured[device]["t_s"], y=measured[device][key], name=f"measured ({tool.name})", line={"color": "#444"}, legendgroup="m", showlegend=row == 1 and col == 1), row=row, col=col)
            fig.add_trace(go.Scatter(x=t_sim, y=sim, name="simulated", line={"color": "#1f77b4"}, legendgroup="s", showlegend=row == 1 and col == 1), row=row, col=col)
    fig.update_layout(height=300 * max(1, len(devices)), margin={"t": 40})
    fig.update_xaxes(title_text="s from the first sample")

    def table(rows: list[dict]) -> str:
        cells = "".join(
            "<tr>" + "".join(f"<td>{html.escape(str(x))}</td>" for x in (f["entity"], f["figure"], value_text(f["measured"]), value_text(f["simulated"]), error_text(Figure(**f)))) + "</tr>"
            for f in rows
        )
        return f'<table class="data"><thead><tr><th>entity</th><th>figure</th><th>measured</th><th>simulated</th><th>error</th></tr></thead><tbody>{cells}</tbody></table>'

    notes = "".join(f"<p>note: {html.escape(n)}</p>" for n in document["notes"])
    key = f"{tool.name}-compare"
    plot = pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id=f"plot-{key}")
    latency = "DAVG" if tool.name == "esxtop" else "latency (measured: the time per request below the file system; simulated: the device's)"
    links = f"<h3>Links: share of all commands</h3>{table(document['links'])}" if document["links"] else ""
    body = (
        f"<p>The host's {tool.name} capture <code>{html.escape(document['capture'])}</code> beside variant {html.escape(variant['name'])} of this run "
        f"(<code>sanlab compare RUN_DIR --{tool.name} CAPTURE</code>).</p>{notes}"
        f'<figure class="plot" id="{key}" data-figure="{key}">{plot}<figcaption>Each device\'s IOPS and {latency} over time, measured and simulated, '
        f"each from its own first sample.</figcaption></figure><h3>Devices</h3>{table(document['devices'])}{links}"
    )
    return tool.anchor, tool.heading, f'<section id="section-{tool.anchor}"><h2>{tool.heading}</h2>{body}</section>'


def _damaged(path: Path, where: str, what: str) -> RunFolderError:
    return RunFolderError(f"{path}: {where}: expected {what}; the file is damaged")


def _figure_or_null(value: object) -> bool:
    return value is None or _number(value)


def _check_comparison(path: Path, document: object) -> dict[str, Any]:
    """The comparison document's outline, as `report_section` reads it."""
    if not isinstance(document, dict):
        raise RunFolderError(f"{path}: expected a JSON object; the file is damaged")
    for key in ("capture", "variant"):
        if not isinstance(document.get(key), str):
            raise _damaged(path, key, "a string")
    tool = document.get("tool", "esxtop")
    if tool not in TOOLS:
        raise _damaged(path, "tool", f"one of {', '.join(TOOLS)}")
    keys = ["t_s", "iops", TOOLS[tool].latency_key]
    said = f"{keys[0]}, {keys[1]} and {keys[2]}"
    notes = document.get("notes")
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise _damaged(path, "notes", "a list of strings")
    for key in ("devices", "links"):
        rows = document.get(key)
        if not isinstance(rows, list):
            raise _damaged(path, key, "a list")
        for number, row in enumerate(rows):
            if not isinstance(row, dict) or sorted(row) != sorted(FIGURE_FIELDS):
                raise _damaged(path, f"{key}[{number}]", f"an object of {', '.join(FIGURE_FIELDS)}")
            if not (isinstance(row["entity"], str) and isinstance(row["figure"], str)):
                raise _damaged(path, f"{key}[{number}]", "entity and figure strings")
            if not all(_figure_or_null(row[k]) for k in ("measured", "simulated", "error")):
                raise _damaged(path, f"{key}[{number}]", "measured, simulated and error numbers of at most 2^64, or null")
    measured = document.get("measured")
    if not isinstance(measured, dict):
        raise _damaged(path, "measured", "an object of devices")
    for device, series in measured.items():
        if not isinstance(series, dict) or sorted(series) != sorted(keys):
            raise _damaged(path, f"measured.{device}", f"an object of {said}")
        if not all(isinstance(v, list) and all(map(_figure_or_null, v)) for v in series.values()):
            raise _damaged(path, f"measured.{device}", "lists of numbers of at most 2^64, or null")
        if len({len(v) for v in series.values()}) != 1:
            raise _damaged(path, f"measured.{device}", f"{said} of one length")
    return document


def read_comparison(path: Path) -> dict[str, Any]:
    """A comparison file as `compare --esxtop|--iostat|--typeperf` writes it (and reads back before it is kept): a
    RunFolderError names the file and what is wrong with it."""
    data = read_bytes(path, "the comparison `sanlab compare --esxtop|--iostat|--typeperf` writes", MAX_COMPARE_BYTES)
    return _check_comparison(path, loads_damaged(path, data))


def measured_sections(run_dir: Path, document: Document) -> list[tuple[str, str, str]]:
    """The report sections of the comparisons `compare --esxtop|--iostat|--typeperf` left in the
    run folder (`<tool>-compare.json`), if any, in `TOOLS`' order."""
    sections = []
    for tool in TOOLS.values():
        path = run_dir / tool.file
        if not (path.exists() or path.is_symlink()):
            continue
        comparison = read_comparison(path)
        if comparison.get("tool", "esxtop") != tool.name:
            raise RunFolderError(f"{path}: a comparison of a {comparison.get('tool', 'esxtop')} capture in {tool.name}'s file; the file is damaged: remove it, or compare again (sanlab compare RUN_DIR --{tool.name} CAPTURE)")
        names = [v["name"] for v in document["variants"]]
        if comparison["variant"] not in names:
            raise RunFolderError(
                f"{path}: variant {comparison['variant']!r} is not in the run (it has {', '.join(names)}); the file is damaged: "
                f"remove it, or compare again (sanlab compare RUN_DIR --{tool.name} CAPTURE)"
            )
        sections.append(report_section(comparison, document["variants"][names.index(comparison["variant"])], run_dir))
    return sections
