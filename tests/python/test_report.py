"""The HTML report without a browser: self-contained page, figures present when their data is, captions
with the finding, `sanlab report` and `sanlab compare` on run folders."""

from __future__ import annotations

import copy
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from conftest import PARDA_THRESHOLD_MS, with_cores, with_hosts, with_injector
from sanlab.cli import main
from sanlab.export.runfolder import read_run_folder, write_run_folder
from sanlab.report import REPORT_FILE, ReportRun, render_report
from sanlab.report.figures import (
    MAX_NAMED_VARIANTS,
    PALETTE,
    SAME_IOPS_TOLERANCE,
    core_util_figure,
    host_flow_control_figure,
    injector_figure,
    latency_cdf_figure,
    log_ticks,
    overview_figure,
    path_timeline_figure,
    paths_figure,
    series_frame,
    variant_colors,
    vm_iops_figure,
    winners,
)
from sanlab.report.figures.heatmaps import pivot
from sanlab.report.groups import variant_groups

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
    # Every figure module that draws at most MAX_LINES of a kind reads its own binding of it.
    for module in ("common", "grid", "latency", "overview", "paths"):
        monkeypatch.setattr(f"sanlab.report.figures.{module}.MAX_LINES", 5)
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


GROUPS = ("notice", "silent")
WINNING_RR_IOPS = 20_000.0
"""In the second group of `_grouped`, rr's IOPS: more than latency's, unlike in the first."""


def _grouped(doc: dict[str, Any], groups: tuple[str, ...] = GROUPS) -> dict[str, Any]:
    """The document's variants once per group of `groups`, named `<group>-<variant>`; in the last
    group rr gets WINNING_RR_IOPS (its VM's IOPS and series)."""
    variants = []
    for group in groups:
        for variant in doc["variants"]:
            clone = copy.deepcopy(variant)
            clone["name"] = f"{group}-{variant['name']}"
            if group == groups[-1] and variant["name"] == "rr":
                clone["vms"][0]["iops"] = WINNING_RR_IOPS
                series = clone["timeseries"]
                series["value"] = [
                    WINNING_RR_IOPS if entity == "vm/vm1" else value
                    for entity, value in zip(series["entity"], series["value"], strict=True)
                ]
            variants.append(clone)
    doc["variants"] = variants
    return doc


@pytest.mark.parametrize(
    ("names", "groups"),
    [
        (["a-x", "a-y", "b-x", "b-y"], {"a": ["a-x", "a-y"], "b": ["b-x", "b-y"]}),
        # `sanlab compare` joins run and variant with `/`: the runs are the groups.
        (["r1/x", "r1/y", "r2/x"], {"r1": ["r1/x", "r1/y"], "r2": ["r2/x"]}),
        # A hyphen inside the group's name: names split at their last separator.
        (["path-fail-rr", "path-fail-mru", "ok-rr"], {"path-fail": ["path-fail-rr", "path-fail-mru"],
                                                      "ok": ["ok-rr"]}),  # fmt: skip
        # More settings than colours per run: the groups are each run's `-` groups.
        (
            [f"{run}/{g}-{s}" for run in "pq" for g in "abcdef" for s in "xy"],
            {f"{run}/{g}": [f"{run}/{g}-x", f"{run}/{g}-y"] for run in "pq" for g in "abcdef"},
        ),
    ],
)
def test_variants_group_by_name_prefix(names: list[str], groups: dict[str, list[str]]) -> None:
    found = variant_groups(names, len(PALETTE))
    assert found is not None and found.members == groups


@pytest.mark.parametrize(
    "names",
    [
        ["rr_iops1", "alua_rr", "latency"],  # `_` joins the words of one name
        ["rr", "a-x", "a-y", "b-x"],  # a name without the separator
        ["a-x", "a-y"],  # one group
        ["a-x", "b-y", "c-z"],  # no group of two
        ["a-x", "a-y", "b-z", "b-w"],  # no setting compared across groups
        [f"{g}-{s}" for g in "ab" for s in "abcdefghijk"],  # more settings than colours
    ],
)
def test_names_without_group_structure_keep_one_plot(names: list[str]) -> None:
    assert variant_groups(names, len(PALETTE)) is None


def test_a_setting_has_one_colour_in_every_group(doc: dict[str, Any]) -> None:
    colors = variant_colors(_grouped(doc))
    assert colors["notice-rr"] == colors["silent-rr"] != colors["notice-latency"] == colors["silent-latency"]


def test_grouped_time_lines_are_small_multiples(doc: dict[str, Any]) -> None:
    doc = _grouped(doc)
    figure = vm_iops_figure(doc, series_frame(doc), variant_colors(doc))
    assert figure is not None
    titles = [(a.text, a.xref) for a in figure.plot.layout.annotations]
    assert titles == [("notice", "x domain"), ("silent", "x2 domain")]
    lines = [(trace.name, trace.xaxis, trace.line.color, trace.showlegend) for trace in figure.plot.data]
    colors = variant_colors(doc)
    # A line per variant in its group's panel, named by its setting, the legend listing each once.
    assert lines == [
        ("rr", "x", colors["notice-rr"], True),
        ("latency", "x", colors["notice-latency"], True),
        ("rr", "x2", colors["silent-rr"], False),
        ("latency", "x2", colors["silent-latency"], False),
    ]
    assert (figure.plot.layout.xaxis2.matches, figure.plot.layout.yaxis2.matches) == ("x", "y")
    assert "One panel per group of variants" in figure.caption


def test_ungrouped_time_lines_share_one_plot(doc: dict[str, Any]) -> None:
    figure = vm_iops_figure(doc, series_frame(doc), variant_colors(doc))
    assert figure is not None
    assert {trace.xaxis for trace in figure.plot.data} == {"x"}
    assert not figure.plot.layout.annotations
    assert "One panel per group" not in figure.caption


def test_grouped_cdf_has_a_panel_per_group(doc: dict[str, Any]) -> None:
    doc = _grouped(doc)
    figure = latency_cdf_figure(doc, variant_colors(doc))
    assert figure is not None
    assert [(trace.name, trace.xaxis) for trace in figure.plot.data] == [
        ("rr", "x"), ("latency", "x"), ("rr", "x2"), ("latency", "x2"),
    ]  # fmt: skip


def test_winners_are_named_per_group(doc: dict[str, Any]) -> None:
    doc = _grouped(doc)
    assert winners(doc) == [
        ("notice", "latency gives the most IOPS (13,000), 1.6× rr (8,000)"),
        ("silent", "rr gives the most IOPS (20,000), 1.5× latency (13,000)"),
    ]
    overview = overview_figure(doc, variant_colors(doc))
    assert overview is not None
    assert overview.caption.startswith("The most IOPS per group (the summary above has the figures): "
                                       "latency in notice; rr in silent. ")  # fmt: skip
    page = _page(doc)
    summary = page[page.index('<ul class="winners" id="winners">') :]
    summary = summary[: summary.index("</ul>")]
    assert summary.count("<li>") == len(GROUPS)
    assert "<li><b>silent</b>: rr gives the most IOPS (20,000), 1.5× latency (13,000).</li>" in summary
    # The table marks each group's best, not only silent-rr's overall most.
    assert page.count('<td class="num best" style=') == len(GROUPS)


def test_a_group_of_one_has_no_winner(doc: dict[str, Any]) -> None:
    doc = _grouped(doc)
    doc["variants"] = [variant for variant in doc["variants"] if variant["name"] != "silent-latency"]
    assert winners(doc)[1] == ("silent", "rr alone, 20,000 IOPS")


def test_one_winner_sentence_without_groups(doc: dict[str, Any]) -> None:
    assert winners(doc) == [("", "latency gives the most IOPS (13,000), 1.6× rr (8,000)")]
    assert '<ul class="winners" id="winners"><li>latency gives the most IOPS' in _page(doc)


def test_variants_within_half_a_percent_share_the_win(doc: dict[str, Any]) -> None:
    rr = doc["variants"][0]
    rr["vms"][0]["iops"] = 13_000 * (1 - SAME_IOPS_TOLERANCE / 2)
    assert winners(doc) == [("", "rr and latency give the same IOPS (13,000)")]


def test_many_settling_variants_are_counted_not_listed(doc: dict[str, Any]) -> None:
    doc = _grouped(doc, ("a", "b", "c", "d"))
    for index, variant in enumerate(doc["variants"]):
        # Two samples in the last quarter at the VM's IOPS, which then become 2 to 2.5 times that:
        # the tail is 50 to 60 % under the whole run's.
        variant["sim_time_s"] = 4.0
        iops = variant["vms"][0]["iops"]
        series = variant["timeseries"]
        for t_s in (3.5, 4.0):
            series["t_s"].append(t_s)
            series["entity"].append("vm/vm1")
            series["metric"].append("iops")
            series["value"].append(iops)
        variant["vms"][0]["iops"] = iops * (2.0 + 0.5 * index / (len(doc["variants"]) - 1))
    overview = overview_figure(doc, variant_colors(doc))
    assert overview is not None
    assert "settles at" not in overview.caption
    assert f"{len(doc['variants'])} of {len(doc['variants'])} variants' IOPS differ" in overview.caption
    assert "(-60 % to -50 %" in overview.caption
    few = overview_figure(doc | {"variants": doc["variants"][:MAX_NAMED_VARIANTS]}, variant_colors(doc))
    assert few is not None and few.caption.count("settles at") == MAX_NAMED_VARIANTS


@pytest.mark.parametrize(
    ("low", "high", "labels"),
    [
        (0.25, 12.0, ["0.2", "0.3", "0.5", "1", "2", "3", "5", "10", "20"]),
        (0.02, 40.0, ["0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5", "10", "20", "50"]),
        (0.001, 150_000.0, ["0.001", "0.01", "0.1", "1", "10", "100", "1,000", "10,000", "100,000",
                            "1,000,000"]),  # fmt: skip
    ],
)
def test_log_axes_label_numbers_not_bare_digits(low: float, high: float, labels: list[str]) -> None:
    ticks = log_ticks(low, high)
    assert ticks["ticktext"] == labels
    for value, text in zip(ticks["tickvals"], ticks["ticktext"], strict=True):
        assert float(text.replace(",", "")) == pytest.approx(value)


def test_many_grouped_variants_stack_the_path_maps(doc: dict[str, Any]) -> None:
    groups = ("a", "b", "c", "d", "e")
    doc = _grouped(doc, groups)
    figure = paths_figure(doc)
    assert figure is not None
    share, latency = figure.plot.data
    # The share map above the latency map, both the figure's width, their columns setting by group.
    assert (share.xaxis, share.yaxis, latency.xaxis, latency.yaxis) == ("x", "y", "x2", "y2")
    assert figure.plot.layout.yaxis.domain[0] > figure.plot.layout.yaxis2.domain[1]
    assert [list(level) for level in share.x] == [[g for g in groups for _ in "ab"], ["rr", "latency"] * 5]
    assert "rr 50 % in every group, the other 5 none." in figure.caption


def test_series_frame_splits_entities_and_keeps_every_row_in_order() -> None:
    doc: Any = {
        "variants": [
            {"name": "a", "timeseries": {"t_s": [1.0, 1.0], "entity": ["path/p:v", "host/h"], "metric": ["iops", "iops"], "value": [3.0, 4.0]}},
            {"name": "b", "timeseries": {"t_s": [], "entity": [], "metric": [], "value": []}},
            {"name": "c", "timeseries": {"t_s": [2.0], "entity": ["array"], "metric": ["mbps"], "value": [5.0]}},
        ]
    }
    frame = series_frame(doc)
    assert frame.iloc[:2].to_dict("records") == [
        {"variant": "a", "t_s": 1.0, "kind": "path", "name": "p:v", "metric": "iops", "value": 3.0},
        {"variant": "a", "t_s": 1.0, "kind": "host", "name": "h", "metric": "iops", "value": 4.0},
    ]
    assert frame.iloc[2][["variant", "t_s", "kind", "metric", "value"]].tolist() == ["c", 2.0, "array", "mbps", 5.0]
    assert pd.isna(frame["name"].iloc[2]), "an entity without `/` has no name"
    assert series_frame({"variants": [doc["variants"][1]]}).empty, "no samples: an empty frame"


def test_a_heatmap_has_a_cell_per_row_and_time_the_mean_of_its_values_and_a_gap_without_any() -> None:
    frame = pd.DataFrame(
        {
            "name": ["p2", "p1", "p1", "p3", "p1"],
            "t_s": [1.0, 1.0, 2.0, 2.0, 2.0],
            "value": [10.0, 20.0, 30.0, 40.0, 50.0],
        }
    )
    names, times_s, z = pivot(frame, ["p1", "p2"])
    assert names == ["p1", "p2", "p3"], "the order given, then the others sorted"
    assert times_s.tolist() == [1.0, 2.0]
    assert z.dtype == np.float32
    assert z[0].tolist() == [20.0, 40.0], "p1 at 2 s: the mean of 30 and 50"
    assert z[1, 0] == 10.0 and np.isnan(z[1, 1]), "p2 has no sample at 2 s: a gap"
    assert np.isnan(z[2, 0]) and z[2, 1] == 40.0
