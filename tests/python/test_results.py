"""Results turns the engine's document into flat pandas tables with a `variant` column."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import PARDA_THRESHOLD_MS, with_hosts
from sanlab.results import Results, flatten, percentile_name


@pytest.mark.parametrize(
    ("key", "name"),
    [
        ("1.000000", "p1"),
        ("50.000000", "p50"),
        ("99.900000", "p999"),
        ("99.990000", "p9999"),
        ("100.000000", "p100"),
    ],
)
def test_percentile_name(key: str, name: str) -> None:
    assert percentile_name(key) == name


def test_flatten_joins_nested_keys() -> None:
    assert flatten({"a": 1, "lat_ms": {"p99": 2.0, "deep": {"x": 3}}}) == {
        "a": 1,
        "lat_ms_p99": 2.0,
        "lat_ms_deep_x": 3,
    }


def test_entity_frames(doc: dict[str, Any]) -> None:
    results = Results(doc)
    assert results.scenario == "tiny_metro"
    assert results.variants == ["rr", "latency"]
    assert list(results.vms["variant"]) == ["rr", "latency"]
    assert {"name", "iops", "lat_ms_mean", "lat_ms_p999"} <= set(results.vms.columns)
    assert len(results.paths) == 4
    assert results.paths.loc[results.paths["variant"] == "latency", "share"].tolist() == [1.0, 0.0]
    assert list(results.devices["qued_mean"]) == [0.2, 0.2]
    assert list(results.arrays["replicated_ios"]) == [6000, 6000]
    assert list(results.conservation.columns) == ["variant", "component", "issued", "completed", "in_flight"]
    assert results.psp_events["paths"].tolist() == [["rem-0"]]


def test_jobs_one_row_per_direction(doc: dict[str, Any]) -> None:
    jobs = Results(doc).jobs
    assert len(jobs) == 4
    assert list(jobs["direction"]) == ["read", "write", "read", "write"]
    write = jobs[(jobs["variant"] == "rr") & (jobs["direction"] == "write")].iloc[0]
    assert write["total_ios"] == 12000
    assert write["lat_ns_n"] == 12000
    assert write["lat_ns_p99"] == 5952000
    assert write["lat_ns_p9999"] == 5999519


def test_summary_and_timeseries(doc: dict[str, Any]) -> None:
    results = Results(doc)
    assert list(results.summary.columns) == ["variant", "replication", "entity_kind", "entity", "metric", "value"]
    assert list(results.timeseries.columns) == ["variant", "replication", "t_s", "entity", "metric", "value"]
    assert len(results.timeseries) == 8


def test_empty_lists_give_frames_with_a_variant_column(doc: dict[str, Any]) -> None:
    for variant in doc["variants"]:
        variant["psp_events"] = []
    assert list(Results(doc).psp_events.columns) == ["variant"]


def test_summary_has_a_row_per_core_and_controller_metric(doc: dict[str, Any]) -> None:
    summary = Results(doc).summary
    core = summary[(summary.entity == "core/array-a/ctrl1.core1") & (summary.variant == "rr")]
    assert dict(zip(core.metric, core.value, strict=True))["share"] == 0.75
    assert set(summary.entity_kind) >= {"vm", "path", "device", "array", "core", "controller"}


def test_hosts_frame_one_row_per_variant_and_host(doc: dict[str, Any]) -> None:
    hosts = Results(with_hosts(doc, controlled=("latency",))).hosts
    assert list(zip(hosts["variant"], hosts["name"], strict=True)) == [
        ("rr", "esx1"), ("rr", "esx2"), ("latency", "esx1"), ("latency", "esx2"),
    ]  # fmt: skip
    assert {
        "vms", "iops", "mbps", "lat_ms_mean", "lat_ms_p999", "device_lat_ms", "flow_control_kind",
        "flow_control_latency_threshold_ms", "flow_control_beta", "flow_control_latency_estimate_ms",
        "window_final", "window_mean", "window_min", "window_max",
    } <= set(hosts.columns)  # fmt: skip
    latency = hosts[hosts["variant"] == "latency"]
    assert list(latency["flow_control_kind"]) == ["parda", "parda"]
    assert list(latency["flow_control_latency_threshold_ms"]) == [PARDA_THRESHOLD_MS] * 2
    assert list(latency["window_final"]) == [16.0, 32.0]
    assert hosts[hosts["variant"] == "rr"]["window_mean"].isna().all()


def test_documents_without_hosts_give_an_empty_hosts_frame(doc: dict[str, Any]) -> None:
    results = Results(doc)
    assert list(results.hosts.columns) == ["variant"]
    assert "host" not in set(results.summary.entity_kind)


def test_summary_has_host_rows_with_flow_control_metrics(doc: dict[str, Any]) -> None:
    summary = Results(with_hosts(doc, controlled=("latency",))).summary
    hosts = summary[summary.entity_kind == "host"]
    assert set(hosts.entity) == {"host/esx1", "host/esx2"}
    window = hosts[(hosts.variant == "latency") & (hosts.metric == "window_final")]
    assert dict(zip(window.entity, window.value, strict=True)) == {"host/esx1": 16.0, "host/esx2": 32.0}
    # Hosts without flow control have no window or threshold rows, not zeros.
    rr = hosts[hosts.variant == "rr"]
    assert not rr.metric.str.startswith(("window", "flow_control")).any()
    assert {"iops", "lat_ms_mean", "device_lat_ms"} <= set(rr.metric)
