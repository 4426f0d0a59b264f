"""report.html of replications: whiskers on the overview from each VM's `ci95`, a band of the
replications' range behind each time line, `figure ± half-width` in the tables, the notes on
intervals wider than ±10 %; and a run of one replication drawn exactly as before."""

from __future__ import annotations

import base64
import copy
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import with_hosts
from sanlab.export.runfolder import read_run_folder, write_run_folder
from sanlab.formatting import format_count, format_ms, format_tenths
from sanlab.notes import figure_notes
from sanlab.replications import WIDE_SHARE, combine, wide_notes
from sanlab.report import ReportRun, render_report
from sanlab.report.figures import overview_figure, series_frame, variant_colors, vm_iops_figure
from sanlab.views.rows import with_interval

MANIFEST = {"argv": ["sanlab", "run", "tiny.toml", "--replications", "3"], "wall_s": 0.5}
STARTED = datetime(2026, 11, 28, 21, 0, 0, tzinfo=UTC)
SCALES = (0.97, 1.0, 1.04)
"""Each replication's figures and time series as a multiple of the sample's: IOPS within ±10 %."""


def _replicated(doc: dict[str, Any], scales: tuple[float, ...] = SCALES) -> dict[str, Any]:
    """The sample document as `sanlab run --replications N` makes it: each variant run N times
    (replication r, seed + r) with its VM IOPS, latencies and time series scaled, then combined."""
    runs = []
    for variant in doc["variants"]:
        for replication, scale in enumerate(scales):
            run = copy.deepcopy(variant)
            run["replication"], run["seed"] = replication, variant["seed"] + replication
            for vm in run["vms"]:
                vm["iops"] *= scale
                vm["mbps"] *= scale
                vm["lat_ms"] = {figure: value / scale for figure, value in vm["lat_ms"].items()}
            run["timeseries"]["value"] = [value * scale for value in run["timeseries"]["value"]]
            runs.append(run)
    combined: dict[str, Any] = combine({**doc, "variants": runs})  # type: ignore[arg-type]
    return combined


def _page(doc: dict[str, Any]) -> str:
    return render_report([ReportRun("run", doc, MANIFEST)])


def _plot_data(page: str, key: str) -> list[dict[str, Any]]:
    """The traces the page hands plotly for the figure `key`."""
    start = page.index(f'"plot-{key}",') + len(f'"plot-{key}",')
    decoder = json.JSONDecoder()
    data, _ = decoder.raw_decode(page, start + len(page[start:]) - len(page[start:].lstrip()))
    return list(data)


def _values(data: Any) -> np.ndarray:
    """A trace's numbers as the page holds them: a list, or plotly's typed array (`bdata`)."""
    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=data["dtype"])
    return np.asarray(data, dtype=float)


def test_a_single_run_has_no_whiskers_bands_or_plus_minus(doc: dict[str, Any]) -> None:
    page = _page(doc)
    for key in ("overview", "vm-iops"):
        for trace in _plot_data(page, key):
            assert "array" not in trace.get("error_x", {}), trace
            assert "array" not in trace.get("error_y", {}), trace
            assert trace.get("fill") != "toself", trace
    assert "±" not in page
    assert "Whiskers: the" not in page and "Shaded: the" not in page
    assert "replicas" not in doc["variants"][0]


def test_overview_whiskers_are_each_vms_ci95(doc: dict[str, Any]) -> None:
    replicated = _replicated(doc)
    page = _page(replicated)
    data = _plot_data(page, "overview")
    whiskers = [trace for trace in data if "array" in trace.get("error_x", {})]
    # IOPS bars, then the mean and p99 marks: one trace each, a whisker per variant's VM.
    assert [trace["xaxis"] if "xaxis" in trace else "x" for trace in whiskers] == ["x", "x2", "x2"]
    vms = {variant["name"]: variant["vms"][0] for variant in replicated["variants"]}
    for trace, figure in zip(whiskers, ("iops", "mean", "p99"), strict=True):
        assert trace["y"] == list(vms)
        error = trace["error_x"]
        assert error["type"] == "data" and error["symmetric"] is False
        ends = zip(trace["y"], trace["x"], error["array"], error["arrayminus"], strict=True)
        for name, value, up, down in ends:
            vm = vms[name]
            bounds = vm["ci95"][figure] if figure == "iops" else vm["ci95"]["lat_ms"][figure]
            centre = vm[figure] if figure == "iops" else vm["lat_ms"][figure]
            assert value == pytest.approx(centre)
            assert [value - down, value + up] == pytest.approx(bounds, rel=1e-12)
    assert sum(trace.get("showlegend", True) for trace in whiskers) == 1
    assert "Whiskers: the 95 % interval of IOPS, mean and p99 over the 3 replications" in page


def test_a_percentile_without_interval_has_no_whisker(doc: dict[str, Any]) -> None:
    replicated = _replicated(doc)
    replicated["variants"][1]["vms"][0]["ci95"]["lat_ms"]["p99"] = None
    figure = overview_figure(replicated, variant_colors(replicated))
    assert figure is not None
    p99 = [trace for trace in figure.plot.data if trace.error_x.array is not None][2]
    assert list(p99.y) == ["rr"]


def test_time_lines_have_the_replications_range_behind_the_first_ones_line(doc: dict[str, Any]) -> None:
    replicated = _replicated(doc)
    figure = vm_iops_figure(replicated, series_frame(replicated), variant_colors(replicated))
    assert figure is not None
    traces = list(figure.plot.data)
    bands = [index for index, trace in enumerate(traces[:-1]) if trace.fill == "toself"]
    assert len(bands) == 2
    for index in bands:
        band, line = traces[index], traces[index + 1]
        assert line.fill is None and line.name in ("rr", "latency")
        iops = 8000.0 if line.name == "rr" else 13000.0
        # The line is the first replication's; the band spans the lowest to the highest.
        assert list(line.y) == pytest.approx([iops * SCALES[0]] * 2)
        assert list(band.x) == [0.5, 1.0, 1.0, 0.5]
        assert list(band.y) == pytest.approx([iops * max(SCALES)] * 2 + [iops * min(SCALES)] * 2)
        assert band.fillcolor.startswith("rgba(") and band.line.width == 0
        assert "the highest (upper edge) or lowest (lower edge) of 3 replications" in band.hovertemplate
    # One legend entry for every band, in grey, last: clicking it hides or shows them all.
    assert [traces[index].showlegend for index in bands] == [False, False]
    legend = traces[-1]
    assert legend.name == "min–max of 3 replications" and legend.showlegend and legend.fill == "toself"
    assert {trace.legendgroup for trace in (legend, *(traces[index] for index in bands))} == {"replica-range"}
    assert "Shaded: the lowest to the highest value of the 3 replications at each sample" in figure.caption


def test_tables_show_plus_minus_as_the_terminal(doc: dict[str, Any]) -> None:
    replicated = _replicated(doc)
    page = _page(replicated)
    table = re.search(r'<table class="data" id="comparison">.*?</table>', page, re.S)
    assert table is not None
    for variant in replicated["variants"]:
        vm = variant["vms"][0]
        cells = [
            with_interval(vm, "iops", format_count),
            with_interval(vm, "mbps", format_tenths),
            *(with_interval(vm, figure, format_ms) for figure in ("mean", "p50", "p99", "p999")),
        ]
        assert all(" ±" in cell for cell in cells)
        for cell in cells:
            assert f">{cell}</td>" in table[0]
    assert "±: half-width of the 95 % interval over the replications (Student&#x27;s t)" in page


def test_wide_intervals_are_noted_with_their_entity_and_figure(doc: dict[str, Any]) -> None:
    assert wide_notes(_replicated(doc)) == []
    wide = _replicated(doc, (0.7, 1.0, 1.3))
    notes = wide_notes(wide)
    assert len(notes) == 2
    for note, variant in zip(notes, ("rr", "latency"), strict=True):
        assert note.startswith(f"variant {variant}: 95 % intervals wider than ±10 % of their figure: ")
        # Seven wide figures (latencies ±78 %, IOPS and MB/s ±75 %): six named, the last counted.
        assert "vm vm1 mean latency ±78 %" in note and "vm vm1 p99.9 ±78 %" in note
        assert "vm vm1 IOPS ±75 %" in note or "vm vm1 MB/s ±75 %" in note
        assert note.endswith(" and 1 more; more replications narrow them (--replications, --precision)")
        # The widest first: every named share above the threshold, in falling order.
        shares = [float(share) for share in re.findall(r"±(\d+) %", note.split(": ", 2)[2])]
        assert shares == sorted(shares, reverse=True) and min(shares) > 100 * WIDE_SHARE
    assert set(notes) <= set(figure_notes(wide))
    page = _page(wide)
    listed = re.search(r'<div class="warn" id="notes">.*?</div>', page, re.S)
    assert listed is not None and "variant rr: 95 % intervals wider than ±10 %" in listed[0]


def test_a_wide_note_names_six_figures_then_counts() -> None:
    vms = [
        {"name": f"vm{n}", "iops": 100.0, "ci95": {"iops": [100.0 - 20 - n, 120.0 + n]}, "lat_ms": {}}
        for n in range(8)
    ]
    notes = wide_notes({"variants": [{"name": "v", "vms": vms}]})  # type: ignore[typeddict-item]
    assert len(notes) == 1
    assert "vm vm7 IOPS ±27 %" in notes[0] and "vm vm2 IOPS ±22 %" in notes[0]
    assert "vm vm1 IOPS" not in notes[0] and " and 2 more;" in notes[0]


def test_compare_of_a_replicated_run_and_a_single_one(doc: dict[str, Any]) -> None:
    """Side by side, only the replicated run's rows have whiskers and bands."""
    runs = [ReportRun("one", copy.deepcopy(doc), MANIFEST), ReportRun("three", _replicated(doc), MANIFEST)]
    page = render_report(runs)
    whiskers = [trace for trace in _plot_data(page, "overview") if "array" in trace.get("error_x", {})]
    assert whiskers and all(label.startswith("three/") for trace in whiskers for label in trace["y"])
    bands = [trace for trace in _plot_data(page, "vm-iops") if trace.get("fill") == "toself"][:-1]
    assert len(bands) == 2 and all(trace["hovertemplate"].startswith("three/") for trace in bands)


def test_a_run_folders_report_draws_its_replicas(doc: dict[str, Any], tmp_path: Path) -> None:
    """Written and read back (each replica's series from timeseries.parquet), the bands are there."""
    replicated = _replicated(doc)
    write_run_folder(copy.deepcopy(replicated), tmp_path, argv=["sanlab"], started=STARTED, wall_s=0.1)
    read, manifest = read_run_folder(tmp_path)
    page = render_report([ReportRun("run", read, manifest)])
    bands = [trace for trace in _plot_data(page, "vm-iops") if trace.get("fill") == "toself"][:-1]
    assert len(bands) == 2
    written = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert [trace.get("fill") for trace in _plot_data(written, "vm-iops")] == [
        trace.get("fill") for trace in _plot_data(page, "vm-iops")
    ]
    expected = [8000.0 * max(SCALES)] * 2 + [8000.0 * min(SCALES)] * 2
    assert list(_values(bands[0]["y"])) == pytest.approx(expected)


def test_the_hosts_table_shows_plus_minus(doc: dict[str, Any]) -> None:
    replicated = _replicated(with_hosts(doc))
    page = _page(replicated)
    table = re.search(r'<table class="data" id="hosts">.*?</table>', page, re.S)
    assert table is not None
    hosts = [host for variant in replicated["variants"] for host in variant["hosts"]]
    assert hosts and all("ci95" in host for host in hosts)
    for host in hosts:
        assert f">{with_interval(host, 'iops', format_count)}</td>" in table[0]
        assert f">{with_interval(host, 'mean', format_ms)}</td>" in table[0]


def test_replications_that_agree_draw_no_band(doc: dict[str, Any]) -> None:
    """Nothing random: every replication the same series, no band (and no legend entry for one)."""
    same = _replicated(doc, (1.0, 1.0, 1.0))
    figure = vm_iops_figure(same, series_frame(same), variant_colors(same))
    assert figure is not None
    assert [trace.fill for trace in figure.plot.data] == [None, None]
    assert "Shaded: the" not in figure.caption


def test_one_runs_batch_means_intervals_have_whiskers_but_no_band(doc: dict[str, Any]) -> None:
    """`--replications 1`: IOPS and mean intervals from one run's batches, no percentile's, no replicas."""
    for variant in doc["variants"]:
        vm = variant["vms"][0]
        vm["ci95"] = {"iops": [vm["iops"] - 50, vm["iops"] + 50], "lat_ms": {"mean": [2.3, 2.5]}}
    page = _page(doc)
    whiskers = [trace for trace in _plot_data(page, "overview") if "array" in trace.get("error_x", {})]
    assert [len(trace["x"]) for trace in whiskers] == [2, 2]  # IOPS and mean; no p99
    assert not [trace for trace in _plot_data(page, "vm-iops") if trace.get("fill") == "toself"]
    assert "Whiskers: the 95 % interval of IOPS and mean by batch means" in page
    assert "±: half-width of the 95 % interval from batch means" in page
    assert ">8,000 ±50</td>" in page
