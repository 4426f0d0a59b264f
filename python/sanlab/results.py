"""The engine's result document as pandas DataFrames and Arrow tables."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from typing import Any

import pandas as pd
import pyarrow as pa

from sanlab.document import ENTITY_KINDS, Document, Variant, entities, sorted_percentiles
from sanlab.notes import figure_notes

SUMMARY_SCHEMA = pa.schema(
    [
        ("variant", pa.string()),
        ("replication", pa.int32()),
        ("entity_kind", pa.string()),
        ("entity", pa.string()),
        ("metric", pa.string()),
        ("value", pa.float64()),
    ]
)

JSON_OMITTED_KEYS = ("timeseries", "resolved_toml", "resolved")
"""Per-variant keys left out of `json_summary` (the run folder keeps them in their own files)."""

TIMESERIES_SCHEMA = pa.schema(
    [
        ("variant", pa.string()),
        ("replication", pa.int32()),
        ("t_s", pa.float64()),
        ("entity", pa.string()),
        ("metric", pa.string()),
        ("value", pa.float64()),
    ]
)


def json_summary(doc: Document, notes: Sequence[str] | None = None) -> Document:
    """The engine's document without the bulky per-variant time series and resolved scenario
    (nor its replications' time series), with `notes` on what changes what a figure means when
    there are any (`sanlab.notes`; computed here unless given)."""
    summary = dict(doc)
    summary["variants"] = [_json_variant(variant) for variant in doc["variants"]]
    if notes is None:
        notes = figure_notes(doc)
    if notes:
        summary["notes"] = list(notes)
    return summary


def _json_variant(variant: Variant) -> dict[str, Any]:
    kept = {key: value for key, value in variant.items() if key not in JSON_OMITTED_KEYS}
    if "replicas" in variant:
        kept["replicas"] = [
            {key: value for key, value in replica.items() if key not in JSON_OMITTED_KEYS}
            for replica in variant["replicas"]
        ]
    return kept


def replicas(variant: Variant) -> list[Mapping[str, Any]]:
    """Each replication of a variant (its entities and time series), the variant itself when it
    ran once."""
    return list(variant.get("replicas", [variant]))


def flatten(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Flattens nested mappings: `{"lat_ms": {"p99": 2.1}}` becomes `{"lat_ms_p99": 2.1}`."""
    flat: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, Mapping):
            flat.update(flatten(value, f"{prefix}{key}_"))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def percentile_name(key: str) -> str:
    """Turns a fio percentile key into a column suffix: "99.900000" -> "p999", "50.000000" -> "p50"."""
    return "p" + key.rstrip("0").rstrip(".").replace(".", "")


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _summary_columns(doc: Document) -> tuple[list[Any], ...]:
    """SUMMARY_SCHEMA's columns: a row per numeric field of every entity, appended column by
    column (a tuple yielded per value, then transposed, took twice as long at 10,000 VMs)."""
    variants: list[str] = []
    replications: list[int] = []
    kinds: list[str] = []
    names: list[str] = []
    metrics: list[str] = []
    values: list[float] = []

    def add(name: str, replication: int, kind: str, entity: str, count: int) -> None:
        """The other columns of the `count` rows just added."""
        variants.extend(itertools.repeat(name, count))
        replications.extend(itertools.repeat(replication, count))
        kinds.extend(itertools.repeat(kind, count))
        names.extend(itertools.repeat(entity, count))

    for variant in doc["variants"]:
        name = variant["name"]
        # Each replication's own figures where there are several (a variant's are their means).
        for replica in replicas(variant):
            replication = replica.get("replication", 0)
            for key, kind in ENTITY_KINDS:
                # Volumes and arrays: the first replication's (their figures have no interval).
                source = replica if key in replica else variant if replication == 0 else {}
                for item in entities(source, key):
                    count = 0
                    for metric, value in flatten(item).items():
                        if _is_number(value):
                            metrics.append(metric)
                            values.append(float(value))
                            count += 1
                    add(name, replication, kind, f"{kind}/{item['name']}", count)
        # An array's cores and controllers are entities of their own.
        for array in variant["arrays"]:
            for key, kind in (("cores", "core"), ("controllers", "controller")):
                for part in array.get(key, []):
                    count = 0
                    for metric in ("share", "util", "iops"):
                        # A controller of an array without modelled cores has no utilisation.
                        if part[metric] is not None:
                            metrics.append(metric)
                            values.append(float(part[metric]))
                            count += 1
                    add(name, 0, kind, f"{kind}/{array['name']}/{part['name']}", count)
    return variants, replications, kinds, names, metrics, values


def summary_table(doc: Document) -> pa.Table:
    """Every numeric field of every VM, host, path, device and array, one row each (long format)."""
    columns = _summary_columns(doc)
    return pa.Table.from_arrays(
        [pa.array(column, type=field.type) for column, field in zip(columns, SUMMARY_SCHEMA, strict=True)],
        schema=SUMMARY_SCHEMA,
    )


def timeseries_table(doc: Document) -> pa.Table:
    """The sampled time series of all variants (and of each of their replications) in one long table."""
    tables = []
    for variant, series, replication in (
        (variant, replica.get("timeseries", variant["timeseries"]), replica.get("replication", 0))
        for variant in doc["variants"]
        for replica in replicas(variant)
    ):
        rows = len(series["t_s"])
        lengths = {name: len(series[name]) for name in ("entity", "metric", "value")}
        if any(length != rows for length in lengths.values()):
            raise ValueError(
                f"variant {variant['name']!r}: timeseries columns differ in length (t_s {rows}, {lengths})"
            )
        tables.append(
            pa.Table.from_arrays(
                [
                    pa.array([variant["name"]] * rows, type=pa.string()),
                    pa.array([replication] * rows, type=pa.int32()),
                    pa.array(series["t_s"], type=pa.float64()),
                    pa.array(series["entity"], type=pa.string()),
                    pa.array(series["metric"], type=pa.string()),
                    pa.array(series["value"], type=pa.float64()),
                ],
                schema=TIMESERIES_SCHEMA,
            )
        )
    if not tables:
        return TIMESERIES_SCHEMA.empty_table()
    return pa.concat_tables(tables)


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    if not rows:
        return pd.DataFrame(columns=["variant"])
    return pd.DataFrame(rows)


def _job_rows(doc: Document) -> Iterator[dict[str, Any]]:
    for variant in doc["variants"]:
        for job in variant["jobs"]:
            for direction in ("read", "write"):
                stats = job[direction]
                lat_ns = stats["lat_ns"]
                row: dict[str, Any] = {
                    "variant": variant["name"],
                    "job": job["name"],
                    "vm": job["vm"],
                    "direction": direction,
                }
                row.update(flatten({k: v for k, v in stats.items() if k != "lat_ns"}))
                for stat in ("min", "max", "mean", "stddev"):
                    row[f"lat_ns_{stat}"] = lat_ns[stat]
                row["lat_ns_n"] = lat_ns["N"]
                for key, value in sorted_percentiles(lat_ns.get("percentile", {})):
                    row[f"lat_ns_{percentile_name(key)}"] = value
                yield row


class Results:
    """Results of one `sanlab.run`: the raw document and one DataFrame per entity kind.

    Every DataFrame has a `variant` column; nested fields are flattened with `_`
    (`lat_ms.p99` becomes the column `lat_ms_p99`).
    """

    def __init__(self, raw: Document) -> None:
        self.raw = raw

    def __repr__(self) -> str:
        return f"Results(scenario={self.scenario!r}, variants={self.variants!r})"

    @property
    def scenario(self) -> str:
        """Scenario name."""
        return str(self.raw["scenario"])

    @property
    def variants(self) -> list[str]:
        """Variant names in run order."""
        return [variant["name"] for variant in self.raw["variants"]]

    def _entities(self, key: str) -> pd.DataFrame:
        return _frame(
            [
                {"variant": variant["name"], **flatten(item)}
                for variant in self.raw["variants"]
                for item in entities(variant, key)
            ]
        )

    @cached_property
    def vms(self) -> pd.DataFrame:
        """One row per VM: IOPS, MB/s, latency in ms."""
        return self._entities("vms")

    @cached_property
    def hosts(self) -> pd.DataFrame:
        """One row per host: VMs, IOPS, VM and device latency in ms, and under flow control (PARDA,
        SIOC) its kind, threshold, β, window (device queue depth) and latency estimate."""
        return self._entities("hosts")

    @cached_property
    def paths(self) -> pd.DataFrame:
        """One row per path: ALUA and path state, I/O share, IOPS, latency in ms."""
        return self._entities("paths")

    @cached_property
    def devices(self) -> pd.DataFrame:
        """One row per host device: queue depth, mean active and queued I/Os."""
        return self._entities("devices")

    @cached_property
    def arrays(self) -> pd.DataFrame:
        """One row per array: front-end and replicated I/Os."""
        return self._entities("arrays")

    @cached_property
    def conservation(self) -> pd.DataFrame:
        """One row per component: issued, completed and in-flight I/Os at the end."""
        return self._entities("conservation")

    @cached_property
    def psp_events(self) -> pd.DataFrame:
        """Path selection events (e.g. the latency policy dropping paths), in time order."""
        return self._entities("psp_events")

    @cached_property
    def jobs(self) -> pd.DataFrame:
        """One row per job and direction (read, write), latency in ns as fio reports it."""
        return _frame(list(_job_rows(self.raw)))

    @cached_property
    def summary(self) -> pd.DataFrame:
        """Long table of every numeric VM, host, path, device and array field."""
        return summary_table(self.raw).to_pandas()

    @cached_property
    def timeseries(self) -> pd.DataFrame:
        """Long table of sampled metrics: variant, t_s, entity, metric, value."""
        return timeseries_table(self.raw).to_pandas()
