"""Measured against simulated: a host's esxtop capture beside a run of the scenario imported from
it (`sanlab compare RUN_DIR --esxtop CAPTURE`).

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

    def document(self, capture: Capture, variant: str) -> dict:
        """What `compare --esxtop` writes (and the report reads back): the figures, the notes and
        the measured series of every compared device."""
        devices = list(dict.fromkeys(f.entity for f in self.devices))
        return {"capture": str(capture.path), "variant": variant, "devices": [asdict(f) for f in self.devices], "links": [asdict(f) for f in self.links], "notes": self.notes, "measured": measured_series(capture, devices)}


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


COMPARE_FILE = "esxtop-compare.json"
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
    `compare --esxtop` writes, as `read_comparison` returns it): per device, the capture's IOPS and
    DAVG over time beside the run's (from the run folder `run_dir`), then the comparison's tables.
    (anchor, heading, HTML), for `render_report`."""
    import html

    import plotly.graph_objects as go
    import plotly.io as pio
    from plotly.subplots import make_subplots

    measured = document["measured"]
    devices = list(measured)
    fig = make_subplots(rows=max(1, len(devices)), cols=2, subplot_titles=[t for d in devices for t in (f"{d}: IOPS", f"{d}: DAVG ms")], vertical_spacing=0.12 / max(1, len(devices)) + 0.05)
    for row, device in enumerate(devices, start=1):
        entity = f"device/{device}"
        simulated = [_simulated_series(variant, entity, "iops"), _driver_ms(variant, entity, run_dir / TIMESERIES_FILE)]
        for col, (key, (t_sim, sim)) in enumerate(zip(("iops", "davg_ms"), simulated, strict=True), start=1):
            fig.add_trace(go.Scatter(x=measured[device]["t_s"], y=measured[device][key], name="measured (esxtop)", line={"color": "#444"}, legendgroup="m", showlegend=row == 1 and col == 1), row=row, col=col)
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
    plot = pio.to_html(fig, full_html=False, include_plotlyjs=False, div_id="plot-esxtop-compare")
    body = (
        f"<p>The host's esxtop capture <code>{html.escape(document['capture'])}</code> beside variant {html.escape(variant['name'])} of this run "
        f"(<code>sanlab compare RUN_DIR --esxtop CAPTURE</code>).</p>{notes}"
        f'<figure class="plot" id="esxtop-compare" data-figure="esxtop-compare">{plot}<figcaption>Each device\'s IOPS and DAVG over time, measured and simulated, '
        f"each from its own first sample.</figcaption></figure><h3>Devices</h3>{table(document['devices'])}<h3>Links: share of all commands</h3>{table(document['links'])}"
    )
    return "measured", "Measured against simulated", f'<section id="section-measured"><h2>Measured against simulated</h2>{body}</section>'


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
        if not isinstance(series, dict) or sorted(series) != ["davg_ms", "iops", "t_s"]:
            raise _damaged(path, f"measured.{device}", "an object of t_s, iops and davg_ms")
        if not all(isinstance(v, list) and all(map(_figure_or_null, v)) for v in series.values()):
            raise _damaged(path, f"measured.{device}", "lists of numbers of at most 2^64, or null")
        if len({len(v) for v in series.values()}) != 1:
            raise _damaged(path, f"measured.{device}", "t_s, iops and davg_ms of one length")
    return document


def read_comparison(path: Path) -> dict[str, Any]:
    """A comparison file as `compare --esxtop` writes it (and reads back before it is kept): a
    RunFolderError names the file and what is wrong with it."""
    data = read_bytes(path, "the comparison `sanlab compare --esxtop` writes", MAX_COMPARE_BYTES)
    return _check_comparison(path, loads_damaged(path, data))


def measured_sections(run_dir: Path, document: Document) -> list[tuple[str, str, str]]:
    """The report section of a comparison `compare --esxtop` left in the run folder, if any."""
    path = run_dir / COMPARE_FILE
    if not (path.exists() or path.is_symlink()):
        return []
    comparison = read_comparison(path)
    names = [v["name"] for v in document["variants"]]
    if comparison["variant"] not in names:
        raise RunFolderError(
            f"{path}: variant {comparison['variant']!r} is not in the run (it has {', '.join(names)}); the file is damaged: "
            "remove it, or compare again (sanlab compare RUN_DIR --esxtop CAPTURE)"
        )
    return [report_section(comparison, document["variants"][names.index(comparison["variant"])], run_dir)]
