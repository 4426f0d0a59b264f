"""The run folder: resolved scenarios, manifest, Parquet tables and fio JSON of one run.

```
<out>/manifest.json
      results.json                       the engine's document without time series and resolved TOML
                                         (with each variant's path selection events and fault edges)
      summary.parquet                    variant, replication, entity_kind, entity, metric, value
      timeseries.parquet                 variant, replication, t_s, entity, metric, value
      report.html                        plots and tables, self-contained (`sanlab report` rewrites it)
      <variant>/scenario.resolved.toml
      <variant>/fio/<entry>.json           fio JSON per [[vm.job]] entry (its jobs); fio logs per job
      <variant>/vdbench/summary.html     vdbench's interval lines, for variants with vdbench jobs
      <variant>/esxtop.csv               with --esxtop-csv: the time series in esxtop's batch CSV
```

`read_run_folder` turns a folder back into the engine's document, which is all a report needs.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from sanlab import engine
from sanlab.document import Document, JobReport
from sanlab.errors import UserError
from sanlab.export.esxtop import write_esxtop_csvs
from sanlab.export.files import JsonBoundError, current_umask, loads_bounded
from sanlab.export.fio import VariantDevices, fio_document, fio_logs
from sanlab.export.vdbench import write_vdbench_summaries
from sanlab.notes import figure_notes
from sanlab.report import REPORT_FILE, ReportRun, render_report
from sanlab.results import json_summary, summary_table, timeseries_table

RESULTS_FILE = "results.json"
RESOLVED_FILE = "scenario.resolved.toml"
MANIFEST_FILE = "manifest.json"
TIMESERIES_FILE = "timeseries.parquet"

def safe_name(name: str) -> str:
    """A file name for a variant, job or scenario name, by the engine's one rule (runs of other
    characters than letters, digits, `.`, `_`, `-` become `_`); the engine checked at parse time
    that the names of a run give distinct ones."""
    return engine.file_name(name)


def utc_stamp(started: datetime) -> str:
    """Compact UTC time for folder names, e.g. `20261121T200900Z`."""
    return started.strftime("%Y%m%dT%H%M%SZ")


def prepare_out_dir(out_dir: Path) -> bool:
    """Creates `out_dir` if needed (so that a folder that cannot be made fails before the run);
    refuses one that already holds files, so runs never mix. Returns whether it created it."""
    created = not out_dir.exists()
    out_dir.mkdir(parents=True, exist_ok=True)
    if any(out_dir.iterdir()):
        raise FileExistsError(f"output folder {str(out_dir)!r} is not empty; choose another --out")
    return created


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


def _write_json(path: Path, document: Any, *, indent: int | None = None) -> None:
    # Without `indent` json uses its C encoder: at 10,000 VMs the indented (pure-Python)
    # encoding took 11 s for results.json alone. Readers parse either layout.
    path.write_text(json.dumps(document, indent=indent) + "\n", encoding="utf-8")


STAGING_SUFFIX = ".partial"
"""A run folder is written as `.<name>.<random>.partial` beside it, then renamed to its name."""


def write_run_folder(
    doc: Document,
    out_dir: Path,
    *,
    argv: Sequence[str],
    started: datetime,
    wall_s: float,
    esxtop_csv: bool = False,
) -> list[str]:
    """Writes the run folder `out_dir` (absent, or an empty folder) at once: every file goes into
    a new temporary folder beside it, which is renamed to `out_dir` when all are written. A run
    that fails or is interrupted while its folder is written leaves none, not half of one.

    `started` is the timezone-aware UTC start of the run and `wall_s` its total wall time.
    Returns the written files relative to `out_dir`; `manifest.json` is written last. A cancelled
    run (`doc["cancelled"]`) keeps the variants that finished.
    """
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{out_dir.name[:100]}."
    staging = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=prefix, suffix=STAGING_SUFFIX))
    try:
        os.chmod(staging, 0o777 & ~current_umask())  # as mkdir would make it, not mkdtemp's 0700
        with _frozen():
            files = _write_files(
                doc, staging, out_dir.name, argv=argv, started=started, wall_s=wall_s, esxtop_csv=esxtop_csv
            )
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    try:
        os.replace(staging, out_dir)  # replaces an empty folder; fails on one that holds files
    except OSError as exc:
        raise FileExistsError(
            f"cannot make {str(out_dir)!r} the run folder ({exc.strerror}); "
            f"the run is written in {str(staging)!r}"
        ) from None
    return files


@contextmanager
def _frozen() -> Iterator[None]:
    """Every object there is now (the document above all) left out of the garbage collector's
    passes while the folder is written: they all outlive it, and each full pass over a 10,000-VM
    document's millions of objects took a third of a second (1.5 s of its folder). A freeze of
    the caller's own is left as it is."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _write_files(
    doc: Document,
    out_dir: Path,
    label: str,
    *,
    argv: Sequence[str],
    started: datetime,
    wall_s: float,
    esxtop_csv: bool,
) -> list[str]:
    """Writes every file of the run folder into `out_dir`, the report labelled `label`."""
    files: list[str] = []
    root = f"{out_dir.as_posix()}/"

    def record(path: Path) -> None:
        # Every path is built under out_dir: its name past it, without pathlib's relative_to (0.7 s
        # for the 10,006 files of 10,000 VMs).
        name = path.as_posix()
        assert name.startswith(root), name
        files.append(name[len(root) :])

    for variant in doc["variants"]:
        variant_dir = out_dir / safe_name(variant["name"])
        fio_dir = variant_dir / "fio"
        fio_dir.mkdir(parents=True, exist_ok=True)
        resolved = variant_dir / RESOLVED_FILE
        resolved.write_text(variant["resolved_toml"], encoding="utf-8")
        record(resolved)
        devices = VariantDevices(variant)
        # One fio document per workload entry (one fio invocation), holding its jobs.
        entries: dict[str, list[JobReport]] = {}
        notes: dict[str, list[str]] = {}
        for number, job in enumerate(variant["jobs"], start=1):
            logs, log_notes = fio_logs(job, number, variant)
            for log_name, text in logs.items():
                log_path = fio_dir / safe_name(log_name)
                log_path.write_text(text, encoding="utf-8")
                record(log_path)
            entry = job.get("entry", job["name"])
            entries.setdefault(entry, []).append(job)
            entry_notes = notes.setdefault(entry, [])
            entry_notes += [note for note in log_notes if note not in entry_notes]
        for entry, jobs in entries.items():
            fio_path = fio_dir / f"{safe_name(entry)}.json"
            fio = fio_document(jobs, doc["version"], started, devices)
            fio["sanlab notes"] += notes[entry]
            _write_json(fio_path, fio)
            record(fio_path)
    for path in write_vdbench_summaries(doc, out_dir, safe_name):
        record(path)
    if esxtop_csv:
        for path in write_esxtop_csvs(doc, out_dir, safe_name, started):
            record(path)

    for name, table in (
        ("summary.parquet", summary_table(doc)),
        (TIMESERIES_FILE, timeseries_table(doc)),
    ):
        pq.write_table(table, out_dir / name, compression="zstd")
        record(out_dir / name)
    # Once for results.json and the report: each is passes over every variant's series.
    notes = figure_notes(doc)
    _write_json(out_dir / RESULTS_FILE, json_summary(doc, notes))
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
    report = render_report([ReportRun(label, doc, manifest)], notes=notes)
    (out_dir / REPORT_FILE).write_text(report, encoding="utf-8")
    _write_json(out_dir / MANIFEST_FILE, manifest, indent=2)  # small, and read by people
    return files


class RunFolderError(UserError):
    """A folder that is not a complete run folder, or one written by an older sanlab."""


def render_folders(runs: Sequence[ReportRun], extra: Sequence[tuple[str, str, str]] = ()) -> str:
    """The report page of run folders read back (with `extra` sections at its end); a document
    that lacks what the report reads (a damaged or hand-edited results.json) is a RunFolderError
    naming the folders."""
    try:
        return render_report(list(runs), extra)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, ArithmeticError, RecursionError) as exc:  # noqa: E501
        # ArithmeticError: a number the report cannot use (an integer too large for a float).
        names = ", ".join(run.label for run in runs)
        raise RunFolderError(
            f"{names}: {RESULTS_FILE} lacks what the report reads ({type(exc).__name__}: {exc}); the file is damaged"
        ) from None


_JSON_TYPES = {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean"}


def loads_damaged(path: Path, data: bytes) -> Any:
    """The JSON of a file sanlab wrote (`data`, its bytes), parsed within bounds; what is wrong
    with it is a RunFolderError naming the file as damaged."""
    try:
        return loads_bounded(data.decode("utf-8"))
    except JsonBoundError as exc:
        raise RunFolderError(f"{path}: {exc}; the file is damaged") from None
    except UnicodeDecodeError as exc:
        raise RunFolderError(f"{path}: not UTF-8 text (byte {exc.start}); the file is damaged") from None
    except json.JSONDecodeError as exc:
        raise RunFolderError(f"{path}: not valid JSON ({exc}); the file is damaged") from None


def _read_json(path: Path) -> dict[str, Any]:
    """A JSON object from `path`, or RunFolderError saying what is wrong with the file."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RunFolderError(f"{path}: cannot read ({exc.strerror})") from None
    document = loads_damaged(path, data)
    if not isinstance(document, dict):
        found = _JSON_TYPES.get(type(document), "null")
        raise RunFolderError(f"{path}: expected a JSON object, found {found}; the file is damaged")
    return document


def _check_variants(path: Path, doc: dict[str, Any]) -> None:
    """The engine document's outline: a list of variants, each an object with a name and lists."""
    variants = doc.get("variants")
    if not isinstance(variants, list) or not all(isinstance(v, dict) for v in variants):
        raise RunFolderError(f"{path}: expected `variants`, a list of objects; the file is damaged")
    for index, variant in enumerate(variants):
        if not isinstance(variant.get("name"), str):
            raise RunFolderError(f"{path}: variants[{index}] has no name; the file is damaged")
        for key in ("vms", "jobs", "paths", "devices", "arrays", "psp_events"):
            if not isinstance(variant.get(key), list):
                raise RunFolderError(f"{path}: variants[{index}].{key}: expected a list; the file is damaged")
        _check_faults(path, f"variants[{index}].faults", variant.get("faults", []))
        _check_replicas(path, f"variants[{index}].replicas", variant.get("replicas", []))


def _check_replicas(path: Path, where: str, replicas: object) -> None:
    """A replicated variant's replications: objects, each with its number and entity lists."""
    if not isinstance(replicas, list) or not all(isinstance(replica, dict) for replica in replicas):
        raise RunFolderError(f"{path}: {where}: expected a list of objects; the file is damaged")
    for number, replica in enumerate(replicas):
        replication = replica.get("replication")
        if not isinstance(replication, int) or isinstance(replication, bool) or replication < 0:
            raise RunFolderError(f"{path}: {where}[{number}].replication: expected a whole number; the file is damaged")
        for key in ("vms", "paths", "devices"):
            if not isinstance(replica.get(key), list):
                raise RunFolderError(f"{path}: {where}[{number}].{key}: expected a list; the file is damaged")


FAULT_FIELDS: tuple[tuple[str, tuple[type, ...], str], ...] = (
    ("t_s", (int, float), "a number"),
    ("kind", (str,), "a string"),
    ("phase", (str,), "a string"),
    ("target", (str,), "a string"),
    ("paths", (list,), "a list"),
    ("detail", (str,), "a string"),
)
"""The fields of a fault edge the tables and the report read, with their JSON types. Folders
written before faults existed have no `faults`, which is no fault."""


def _check_faults(path: Path, where: str, edges: object) -> None:
    """A variant's fault edges: a list of objects with FAULT_FIELDS, a phase (`start`, `end`, or a
    step between them such as `mediator`), and a longest latency that is a number or null."""
    if not isinstance(edges, list):
        raise RunFolderError(f"{path}: {where}: expected a list; the file is damaged")
    for number, edge in enumerate(edges):
        at = f"{where}[{number}]"
        if not isinstance(edge, dict):
            raise RunFolderError(f"{path}: {at}: expected an object; the file is damaged")
        for key, types, what in FAULT_FIELDS:
            value = edge.get(key)
            if not isinstance(value, types) or isinstance(value, bool):
                raise RunFolderError(f"{path}: {at}.{key}: expected {what}; the file is damaged")
        if not edge["phase"]:
            raise RunFolderError(f"{path}: {at}.phase: empty, expected start, end or a step; the file is damaged")
        if not all(isinstance(name, str) for name in edge["paths"]):
            raise RunFolderError(f"{path}: {at}.paths: expected path names; the file is damaged")
        latency = edge.get("max_io_latency_ms")
        if latency is not None and (not isinstance(latency, (int, float)) or isinstance(latency, bool)):
            raise RunFolderError(f"{path}: {at}.max_io_latency_ms: expected a number; the file is damaged")


def _read_timeseries(path: Path) -> pa.Table:
    """The time series with their replication (0 throughout in a folder written before
    replications)."""
    columns = ["variant", "t_s", "entity", "metric", "value"]
    try:
        table = pq.read_table(path)
        replication = table["replication"] if "replication" in table.column_names else pa.array([0] * len(table), pa.int32())
        return table.select(columns).append_column("replication", replication)
    except (pa.ArrowException, OSError, KeyError, ValueError) as exc:
        raise RunFolderError(
            f"{path}: not a Parquet table with columns {', '.join(columns)} ({exc}); the file is damaged"
        ) from None


def _series_of(rows: pa.Table, replication: int) -> dict[str, list[Any]]:
    """One replication's rows of a variant's time series, as the document holds them."""
    mine = rows.filter(pc.equal(rows["replication"], replication))
    return mine.select(["t_s", "entity", "metric", "value"]).to_pydict()


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
    manifest = _read_json(run_dir / MANIFEST_FILE)
    doc: Document = _read_json(run_dir / RESULTS_FILE)
    _check_variants(run_dir / RESULTS_FILE, doc)
    series = _read_timeseries(run_dir / TIMESERIES_FILE)
    names = {variant["name"] for variant in doc["variants"]}
    # In order of first appearance: the first unknown is the first in the file.
    for name in pc.unique(series["variant"]).to_pylist():
        if name not in names:
            raise RunFolderError(f"{run_dir / TIMESERIES_FILE}: variant {name!r} is not in {RESULTS_FILE}")
    for variant in doc["variants"]:
        # Arrow's filter keeps the file's order; a Python loop over the rows took 0.6 s at 1 M rows.
        rows = series.filter(pc.equal(series["variant"], variant["name"]))
        for replica in variant.get("replicas", []):
            replica["timeseries"] = _series_of(rows, replica.get("replication", 0))
        variant["timeseries"] = _series_of(rows, 0)
        resolved = run_dir / safe_name(variant["name"]) / RESOLVED_FILE
        if resolved.is_file():
            variant["resolved_toml"] = resolved.read_text(encoding="utf-8")
    return doc, manifest
