"""The run folder: resolved scenarios, manifest, Parquet tables and fio JSON of one run.

```
<out>/manifest.json
      results.json                       the engine's document without time series and resolved TOML
      summary.parquet                    variant, entity_kind, entity, metric, value
      timeseries.parquet                 variant, t_s, entity, metric, value
      report.html                        plots and tables, self-contained (`sanlab report` rewrites it)
      <variant>/scenario.resolved.toml
      <variant>/fio/<job>.json
```

`read_run_folder` turns a folder back into the engine's document, which is all a report needs.
"""

from __future__ import annotations

import json
import platform
import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from sanlab.fio import fio_document
from sanlab.report import REPORT_FILE, ReportRun, render_report
from sanlab.results import Document, json_summary, summary_table, timeseries_table

RESULTS_FILE = "results.json"
MANIFEST_FILE = "manifest.json"
TIMESERIES_FILE = "timeseries.parquet"

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(name: str) -> str:
    """A file name for a variant, job or scenario name: runs of other characters become `_`."""
    cleaned = _UNSAFE.sub("_", name).strip(".")
    if not cleaned:
        raise ValueError(f"cannot make a file name from {name!r}")
    return cleaned


def utc_stamp(started: datetime) -> str:
    """Compact UTC time for folder names, e.g. `20261121T200900Z`."""
    return started.strftime("%Y%m%dT%H%M%SZ")


def prepare_out_dir(out_dir: Path) -> None:
    """Creates `out_dir` if needed; refuses one that already holds files, so runs never mix."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if any(out_dir.iterdir()):
        raise FileExistsError(f"output folder {str(out_dir)!r} is not empty; choose another --out")


def new_default_out_dir(root: Path, scenario: str, started: datetime) -> Path:
    """Creates `<root>/<scenario>-<UTC stamp>`, adding `-2`, `-3`… if that folder exists."""
    root.mkdir(parents=True, exist_ok=True)
    base = f"{safe_name(scenario)}-{utc_stamp(started)}"
    candidate = root / base
    suffix = 1
    while True:
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            suffix += 1
            candidate = root / f"{base}-{suffix}"


def _check_unique(names: Sequence[str], what: str) -> None:
    """Refuses names that would share a file once made safe (e.g. `a b` and `a_b`)."""
    seen: dict[str, str] = {}
    for name in names:
        key = safe_name(name)
        if key in seen:
            raise ValueError(f"{what} names {seen[key]!r} and {name!r} share the file name {key!r}")
        seen[key] = name


def _write_json(path: Path, document: Any) -> None:
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def write_run_folder(
    doc: Document,
    out_dir: Path,
    *,
    argv: Sequence[str],
    started: datetime,
    wall_s: float,
) -> list[str]:
    """Writes every file of the run folder into the existing `out_dir`.

    `started` is the timezone-aware UTC start of the run and `wall_s` its total wall time.
    Returns the written files relative to `out_dir`; `manifest.json` is written last, so a
    folder with a manifest is complete. A cancelled run (`doc["cancelled"]`) keeps the variants
    that finished.
    """
    files: list[str] = []

    def record(path: Path) -> None:
        files.append(path.relative_to(out_dir).as_posix())

    _check_unique([variant["name"] for variant in doc["variants"]], "variant")
    for variant in doc["variants"]:
        _check_unique([job["name"] for job in variant["jobs"]], f"variant {variant['name']!r}: job")
        variant_dir = out_dir / safe_name(variant["name"])
        fio_dir = variant_dir / "fio"
        fio_dir.mkdir(parents=True, exist_ok=True)
        resolved = variant_dir / "scenario.resolved.toml"
        resolved.write_text(variant["resolved_toml"], encoding="utf-8")
        record(resolved)
        for job in variant["jobs"]:
            fio_path = fio_dir / f"{safe_name(job['name'])}.json"
            _write_json(fio_path, fio_document(job, doc["version"], started))
            record(fio_path)

    for name, table in (
        ("summary.parquet", summary_table(doc)),
        (TIMESERIES_FILE, timeseries_table(doc)),
    ):
        pq.write_table(table, out_dir / name, compression="zstd")
        record(out_dir / name)
    _write_json(out_dir / RESULTS_FILE, json_summary(doc))
    record(out_dir / RESULTS_FILE)

    files.extend([REPORT_FILE, MANIFEST_FILE])
    manifest = {
        "sanlab_version": doc["version"],
        "scenario": doc["scenario"],
        "scenario_file": doc["file"],
        "scenario_sha256": doc["scenario_sha256"],
        "argv": list(argv),
        "started_utc": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "wall_s": wall_s,
        "cancelled": bool(doc.get("cancelled", False)),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "variants": [
            {
                "name": variant["name"],
                "description": variant["description"],
                "seed": variant["seed"],
                "wall_s": variant["wall_s"],
                "sim_time_s": variant["sim_time_s"],
                "measured_s": variant["measured_s"],
                "events": variant["events"],
                "ios": variant["ios"],
            }
            for variant in doc["variants"]
        ],
        "files": files,
    }
    report = render_report([ReportRun(out_dir.name, doc, manifest)])
    (out_dir / REPORT_FILE).write_text(report, encoding="utf-8")
    _write_json(out_dir / MANIFEST_FILE, manifest)
    return files


class RunFolderError(Exception):
    """A folder that is not a complete run folder, or one written by an older sanlab."""


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise RunFolderError(f"{path}: not valid JSON ({exc})") from None


def read_run_folder(run_dir: Path) -> tuple[Document, dict[str, Any]]:
    """The engine's document (with each variant's time series) and the manifest of a run folder."""
    if not run_dir.is_dir():
        raise RunFolderError(
            f"{str(run_dir)!r} is not a folder; expected a run folder written by `sanlab run`"
        )
    if not (run_dir / MANIFEST_FILE).is_file():
        raise RunFolderError(
            f"{str(run_dir)!r} has no {MANIFEST_FILE}: not a run folder, or its run did not finish"
        )
    for name in (RESULTS_FILE, TIMESERIES_FILE):
        if not (run_dir / name).is_file():
            raise RunFolderError(
                f"{str(run_dir)!r} has no {name}: it was written by an older sanlab; run the scenario again"
            )
    manifest: dict[str, Any] = _read_json(run_dir / MANIFEST_FILE)
    doc: Document = _read_json(run_dir / RESULTS_FILE)
    series = pq.read_table(run_dir / TIMESERIES_FILE).to_pydict()
    by_variant: dict[str, dict[str, list[Any]]] = {
        variant["name"]: {"t_s": [], "entity": [], "metric": [], "value": []} for variant in doc["variants"]
    }
    for name, t_s, entity, metric, value in zip(
        series["variant"], series["t_s"], series["entity"], series["metric"], series["value"], strict=True
    ):
        columns = by_variant.get(name)
        if columns is None:
            raise RunFolderError(f"{run_dir / TIMESERIES_FILE}: variant {name!r} is not in {RESULTS_FILE}")
        columns["t_s"].append(t_s)
        columns["entity"].append(entity)
        columns["metric"].append(metric)
        columns["value"].append(value)
    for variant in doc["variants"]:
        variant["timeseries"] = by_variant[variant["name"]]
    return doc, manifest
