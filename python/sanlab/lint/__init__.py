"""`sanlab lint`: what makes a benchmark measure something else than its author meant, with the
effect simulated on the user's scenario when one is given (docs/lint.md)."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sanlab import _core
from sanlab._core import ScenarioError
from sanlab.lint.rules import RULES, Context, Doc, Finding
from sanlab.lint.source import Benchmark, LintInputError

# Where the benchmark runs when no scenario is given: only to read it as the engine does (the
# findings then carry no simulated figures).
READING_SCENARIO = """schema_version = 1
name = "lint"
description = "reads a benchmark for sanlab lint"
[run]
duration = "1ms"
[[array]]
name = "array"
media = { kind = "flash", read_latency = "100us", write_latency = "50us", servers = 64 }
[[volume]]
name = "lun"
arrays = ["array"]
[[host]]
name = "host"
adapter = { kind = "fc" }
[[path]]
host = "host"
array = "array"
[[vm]]
name = "vm"
host = "host"
volume = "lun"
"""


@dataclass
class LintResult:
    benchmark: Benchmark
    scenario: Path | None
    variant: str | None
    findings: list[Finding]
    notes: list[str]


def _run(scenario: Path, job_table: str, variant: str | None, duration: str | None, seed: int | None) -> Doc:
    overrides = [f"vm[0].job=[{job_table}]", "run.warmup=0s"]
    document = json.loads(_core.run(str(scenario), [variant] if variant else None, overrides, seed, duration))
    return document["variants"][0]


def _figures(variant: Doc, vm: str) -> dict[str, float]:
    vm_doc = next(v for v in variant["vms"] if v["name"] == vm)
    return {"VM IOPS": vm_doc["iops"], "VM p99 latency (ms)": vm_doc["lat_ms"]["p99"]}


def lint(benchmark: Benchmark, scenario: Path | None = None, variant: str | None = None, duration: str | None = "5s", seed: int | None = None) -> LintResult:
    """Reads the benchmark with the engine's readers and runs every rule; with a scenario, runs the
    benchmark as VM 0's workload for `duration` and again with each finding's fix."""
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="sanlab-lint-") as tmp:
        folder = Path(tmp)
        try:
            if scenario is None:
                reading = folder / "reading.toml"
                reading.write_text(READING_SCENARIO, encoding="utf-8")
                as_written = _run(reading, benchmark.job_table(), None, None, seed)
            else:
                if variant is None:
                    checked = json.loads(_core.validate(str(scenario), [f"vm[0].job=[{benchmark.job_table()}]"], None, False))
                    variant = checked["variants"][0]
                as_written = _run(scenario, benchmark.job_table(), variant, duration, seed)
        except ScenarioError as e:
            raise LintInputError(str(e)) from None
        runs = benchmark.runs() if benchmark.kind == "vdbench" else []
        if len(runs) > 1:
            others = [name for name in runs if name != benchmark.rd]
            notes.append(f"run {benchmark.rd} of {len(runs)} linted; the others ({', '.join(others[:8])}) with --rd NAME")
        jobs = [job for job in as_written["jobs"] if job["entry"] == "lint"]
        ctx = Context(benchmark, jobs, as_written if scenario is not None else None)
        findings = [finding for rule in RULES for finding in rule(ctx)]
        if scenario is not None and jobs:
            vm = jobs[0]["vm"]
            written = _figures(as_written, vm)
            for finding in findings:
                if finding.change is None:
                    continue
                extra: Any = finding.metrics or (lambda _doc: {})
                fixed_text = benchmark.with_option(*finding.change)
                try:
                    fixed = _run(scenario, benchmark.job_table(fixed_text, folder), variant, duration, seed)
                except ScenarioError as e:
                    notes.append(f"{finding.rule}: the fix could not be simulated: {e}")
                    continue
                finding.evidence = {
                    "as written": {**written, **extra(as_written)},
                    "with the fix": {**_figures(fixed, vm), **extra(fixed)},
                }
        elif scenario is None:
            notes.append("no --scenario: findings are read from the benchmark alone; give a scenario to see their effect simulated on its array")
    return LintResult(benchmark, scenario, variant, findings, notes)


__all__ = ["LintInputError", "LintResult", "lint"]
