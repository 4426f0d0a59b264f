"""Results turns the engine's document into flat pandas tables with a `variant` column."""

from __future__ import annotations

from typing import Any

import pytest

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
    assert list(results.summary.columns) == ["variant", "entity_kind", "entity", "metric", "value"]
    assert list(results.timeseries.columns) == ["variant", "t_s", "entity", "metric", "value"]
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
