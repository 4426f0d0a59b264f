"""The HTML report without a browser: self-contained page, figures present when their data is, captions
with the finding, `sanlab report` and `sanlab compare` on run folders."""

from __future__ import annotations

import copy
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from conftest import PARDA_THRESHOLD_MS, with_cores, with_hosts, with_injector
from sanlab.cli import main
from sanlab.report import REPORT_FILE, ReportRun, render_report
from sanlab.report.figures import (
    core_util_figure,
    host_flow_control_figure,
    injector_figure,
    latency_cdf_figure,
    overview_figure,
    path_timeline_figure,
    paths_figure,
    series_frame,
    variant_colors,
)
from sanlab.runfolder import read_run_folder, write_run_folder

STARTED = datetime(2026, 11, 21, 20, 9, 5, tzinfo=UTC)
MANIFEST = {"argv": ["sanlab", "run", "tiny.toml"], "wall_s": 0.5, "started_utc": "2026-11-21T20:09:05Z"}



def _figure_keys(page: str) -> list[str]:
    return re.findall(r'<figure class="plot" id="([a-z-]+)"', page)


def test_page_is_self_contained(doc: dict[str, Any]) -> None:
    page = render_report([ReportRun("run", doc, MANIFEST)])
    assert page.startswith("<!DOCTYPE html>")
    assert "Plotly.newPlot" in page
    assert len(page) > 3_000_000, "plotly.js is inlined"
    assert not re.search(r"<script[^>]+src=", page), "no script is loaded from elsewhere"
    assert "sanlab run tiny.toml" in page


def test_figures_follow_the_data(doc: dict[str, Any]) -> None:
    keys = _figure_keys(render_report([ReportRun("run", doc, MANIFEST)]))
    # The sample has VM and path time series but no device queue or core rows.
    assert keys == ["overview", "paths", "path-timeline", "vm-iops", "latency-cdf"]
    keys = _figure_keys(render_report([ReportRun("run", with_cores(doc), MANIFEST)]))
    assert "core-util" in keys


def test_every_figure_has_a_title_axis_titles_and_a_caption(doc: dict[str, Any]) -> None:
    doc = with_hosts(with_cores(doc))
    colors = variant_colors(doc)
    series = series_frame(doc)
    for figure in (
        overview_figure(doc, colors),
        paths_figure(doc),
        latency_cdf_figure(doc, colors),
        core_util_figure(doc, series),
        host_flow_control_figure(doc, series, colors),
    ):
        assert figure is not None
        assert figure.title in figure.plot.layout.title.text
        assert len(figure.caption) > 40
        layout = figure.plot.layout.to_plotly_json()
        axes = [value for key, value in layout.items() if re.fullmatch(r"[xy]axis\d*", key)]
        titled = [axis for axis in axes if axis.get("title", {}).get("text")]
        assert len(titled) >= 2, (figure.key, axes)
        for axis in titled:
            text = axis["title"]["text"]
            assert re.search(r", (ms|s|%)|IOPS|I/Os|path|variant|core", text), text


def test_captions_state_the_finding(doc: dict[str, Any]) -> None:
    colors = variant_colors(doc)
    overview = overview_figure(doc, colors)
    assert overview is not None
    assert overview.caption.startswith("latency gives the most IOPS (13,000)")
    paths = paths_figure(doc)
    assert paths is not None
    assert "rr 50 %" in paths.caption  # half of rr's I/O goes to the remote path at 6 ms vs 2.2 ms
    cores = core_util_figure(with_cores(doc, hot_core=5), series_frame(with_cores(doc, hot_core=5)))
    assert cores is not None
    assert "core array-a/5 averages 90 %" in cores.caption


def test_no_core_rows_no_core_figure(doc: dict[str, Any]) -> None:
    assert core_util_figure(doc, series_frame(doc)) is None


def test_run_folder_round_trip(doc: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    write_run_folder(copy.deepcopy(doc), out, argv=["sanlab"], started=STARTED, wall_s=0.1)
    read, manifest = read_run_folder(out)
    assert read == doc  # the resolved scenarios too, read back from each variant's folder
    assert manifest["files"][-2:] == [REPORT_FILE, "manifest.json"]


def test_report_command_rewrites_the_same_page(doc: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    write_run_folder(doc, out, argv=["sanlab"], started=STARTED, wall_s=0.1)
    written = (out / REPORT_FILE).read_text()
    (out / REPORT_FILE).unlink()
    assert main(["report", str(out)]) == 0
    assert (out / REPORT_FILE).read_text() == written


def test_compare_puts_runs_side_by_side(
    doc: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("before", "after"):
        (tmp_path / name).mkdir()
        write_run_folder(copy.deepcopy(doc), tmp_path / name, argv=["sanlab"], started=STARTED, wall_s=0.1)
    page = tmp_path / "cmp" / "both.html"
    assert main(["compare", str(tmp_path / "before"), str(tmp_path / "after"), "--out", str(page)]) == 0
    text = page.read_text()
    for label in ("before/rr", "before/latency", "after/rr", "after/latency"):
        assert label in text
    assert "sanlab compare of 2 runs" in text
    assert "before/latency" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["report", "{tmp}/missing"], "is not a folder"),
        (["report", "{tmp}"], "no manifest.json"),
        (["compare", "{tmp}"], "two or more run folders"),
    ],
)
def test_bad_run_folders_exit_2(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([arg.format(tmp=tmp_path) for arg in args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert message in err
    assert "Traceback" not in err


def test_folder_from_an_older_sanlab_is_named(doc: dict[str, Any], tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    write_run_folder(doc, out, argv=["sanlab"], started=STARTED, wall_s=0.1)
    (out / "results.json").unlink()
    assert main(["report", str(out)]) == 2


def test_interrupted_run_is_flagged(doc: dict[str, Any]) -> None:
    doc["cancelled"] = True
    page = render_report([ReportRun("run", doc, MANIFEST)])
    assert "The run was interrupted: the variants shown finished, the others did not run." in page


def _page(doc: dict[str, Any]) -> str:
    return render_report([ReportRun("run", doc, MANIFEST)])


def test_flow_control_section_and_hosts_table(doc: dict[str, Any]) -> None:
    page = _page(with_hosts(doc, controlled=("latency",)))
    assert _figure_keys(page)[-1] == "host-flow-control"
    assert 'id="section-flow-control"' in page
    assert '<a href="#section-flow-control">Host flow control</a>' in page
    hosts = page[page.index('<table class="data" id="hosts">') :]
    hosts = hosts[: hosts.index("</table>")]
    assert hosts.count("<tr>") == 1 + 4
    for header in ("VM mean ms", "DAVG ms", "kind", "threshold ms", "β", "window mean", "L ms"):
        assert f">{header}</th>" in hosts


def test_hosts_without_flow_control_get_a_table_but_no_section(doc: dict[str, Any]) -> None:
    page = _page(with_hosts(doc, controlled=()))
    assert 'id="hosts"' in page
    assert "window mean" not in page
    assert "host-flow-control" not in page
    assert "section-flow-control" not in page


def test_documents_without_hosts_render_without_host_parts(doc: dict[str, Any], tmp_path: Path) -> None:
    page = _page(doc)
    assert 'id="hosts"' not in page
    assert "section-flow-control" not in page
    # A run folder from before hosts were reported still rebuilds its report.
    out = tmp_path / "run"
    out.mkdir()
    write_run_folder(doc, out, argv=["sanlab"], started=STARTED, wall_s=0.1)
    assert "hosts" not in (out / "results.json").read_text()
    assert main(["report", str(out)]) == 0


def test_flow_control_figure_plots_controlled_hosts_against_the_threshold(doc: dict[str, Any]) -> None:
    uncontrolled = with_hosts(copy.deepcopy(doc), controlled=())
    assert host_flow_control_figure(uncontrolled, series_frame(uncontrolled), {}) is None
    doc = with_hosts(doc, controlled=("latency",))
    figure = host_flow_control_figure(doc, series_frame(doc), variant_colors(doc))
    assert figure is not None
    # Only the controlled variant: its two hosts in the window and the latency estimate panel.
    assert {trace.name for trace in figure.plot.data} == {"esx1", "esx2"}
    assert len(figure.plot.data) == 2 * 2
    # The variant's column title, then the threshold's label.
    labels = [annotation.text for annotation in figure.plot.layout.annotations]
    assert labels == ["latency", f"threshold {PARDA_THRESHOLD_MS:.1f} ms"]
    (threshold,) = figure.plot.layout.shapes
    assert (threshold.y0, threshold.line.dash, threshold.yref) == (PARDA_THRESHOLD_MS, "dash", "y2")
    assert "In latency, L ends at 31.2 ms (threshold 30.0 ms) and the windows at esx1 16, esx2 32." in (
        figure.caption
    )


def test_flow_control_caption_names_equal_windows_once(doc: dict[str, Any]) -> None:
    doc = with_hosts(doc, controlled=("latency",))
    for host in doc["variants"][1]["hosts"]:
        host["window"]["final"] = 64.0
    figure = host_flow_control_figure(doc, series_frame(doc), variant_colors(doc))
    assert figure is not None
    assert figure.caption.endswith("L ends at 31.2 ms (threshold 30.0 ms) and every window at 64.")


def test_injector_figure_marks_the_threshold_on_the_curve(doc: dict[str, Any]) -> None:
    assert injector_figure(doc, variant_colors(doc)) is None
    doc = with_injector(doc)
    figure = injector_figure(doc, variant_colors(doc))
    assert figure is not None
    curve, mark = figure.plot.data
    assert list(curve.y) == [3.0, 10.0, 15.0, 15.0]
    assert (list(mark.x), list(mark.y)) == ([1800.0], [12.5])
    assert "the peak is 2,000 IOPS and the threshold 12.5 ms (90 % of peak, 8 KiB reads)" in figure.caption
    page = _page(doc)
    assert 'data-figure="sioc-injector"' in page


def _many(doc: dict[str, Any], copies: int) -> dict[str, Any]:
    """The document with `copies` of each variant's VM, job and paths (and their series), each copy's
    latency and IOPS scaled by its number so that the top ones are known."""
    for variant in doc["variants"]:
        vm, job, paths = variant["vms"][0], variant["jobs"][0], list(variant["paths"])
        series = variant["timeseries"]
        rows = list(zip(series["t_s"], series["entity"], series["metric"], series["value"], strict=True))
        for k in range(1, copies):
            scale = 1.0 + k / copies
            clone = copy.deepcopy(vm)
            clone["name"] = f"{vm['name']}-{k}"
            clone["lat_ms"] = {stat: value * scale for stat, value in vm["lat_ms"].items()}
            variant["vms"].append(clone)
            job_clone = copy.deepcopy(job)
            job_clone["name"], job_clone["vm"] = f"{job['name']}-{k}", clone["name"]
            for direction in ("read", "write"):
                percentiles = job_clone[direction]["lat_ns"].get("percentile", {})
                for key in percentiles:
                    percentiles[key] *= scale
            variant["jobs"].append(job_clone)
            for path in paths:
                path_clone = copy.deepcopy(path)
                path_clone["name"] = f"{path['name']}-{k}"
                path_clone["lat_ms"] = {stat: value * scale for stat, value in path["lat_ms"].items()}
                variant["paths"].append(path_clone)
            for t_s, entity, metric, value in rows:
                series["t_s"].append(t_s)
                series["entity"].append(f"{entity}-{k}")
                series["metric"].append(metric)
                series["value"].append(value * scale)
    return doc


def test_figures_summarise_above_max_lines(doc: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sanlab.report.figures.MAX_LINES", 5)
    doc = _many(doc, 30)  # 30 VMs, 30 writer jobs and 60 paths per variant
    colors = variant_colors(doc)
    series = series_frame(doc)
    overview = overview_figure(doc, colors)
    assert overview is not None
    assert len(overview.plot.data[0].y) == 2 * 5  # the bars: 5 VMs of each variant
    assert "the 5 of its 30 VMs with the highest p99" in overview.caption
    assert "vm1-29" in overview.plot.data[0].y[0]  # the highest p99 first
    paths = paths_figure(doc)
    assert paths is not None
    assert len(paths.plot.data[0].y) == 5
    assert "The 5 of 60 paths with the highest mean latency" in paths.caption
    timeline = path_timeline_figure(doc, series)
    assert timeline is not None
    assert all(len(trace.y) <= 5 for trace in timeline.plot.data if trace.type == "heatmap")
    assert "the 5 of 30 paths with the highest mean IOPS" in timeline.caption
    cdf = latency_cdf_figure(doc, colors)
    assert cdf is not None
    bands = [trace for trace in cdf.plot.data if trace.fill == "toself"]
    assert len(bands) == 2 and len(cdf.plot.data) - len(bands) == 2 * 5
    assert "the 5 of its 30 job curves with the highest p99; the band spans all" in cdf.caption


def test_figures_below_max_lines_draw_everything(doc: dict[str, Any]) -> None:
    doc = _many(doc, 3)  # under MAX_LINES: as before, nothing summarised
    colors = variant_colors(doc)
    overview = overview_figure(doc, colors)
    assert overview is not None and len(overview.plot.data[0].y) == 2 * 3
    assert "highest" not in overview.caption
    cdf = latency_cdf_figure(doc, colors)
    assert cdf is not None and not any(trace.fill == "toself" for trace in cdf.plot.data)
