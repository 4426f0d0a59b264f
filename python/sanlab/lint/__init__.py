"""`sanlab lint`: what makes a benchmark measure something else than its author meant, with the
effect simulated on the user's scenario when one is given (docs/lint.md)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sanlab import engine
from sanlab.engine import ScenarioError
from sanlab.formatting import did_you_mean
from sanlab.lint.rules import RULES, Context, Doc, Finding, job_notes
from sanlab.lint.source import Benchmark, LintInputError, in_memory
from sanlab.notes import figure_notes

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
    document = engine.run(scenario, [variant] if variant else None, overrides, seed, duration)
    return document["variants"][0]


def _figures(variant: Doc, vm: str) -> dict[str, float]:
    vm_doc = next(v for v in variant["vms"] if v["name"] == vm)
    return {"VM IOPS": vm_doc["iops"], "VM p99 latency (ms)": vm_doc["lat_ms"]["p99"]}


def _linted(variant: Doc) -> list[Doc]:
    """The benchmark's jobs in a variant's document (fio clones one each)."""
    return [job for job in variant["jobs"] if job["entry"] == "lint"]


def _notes(ctx: Context, findings: list[Finding]) -> list[str]:
    """What the run's job reports change in the figures of the benchmark's jobs (the scenario's
    other VMs are not linted): `sanlab run`'s notes (`sanlab.notes`), then lint's own."""
    assert ctx.variant is not None
    ran = figure_notes({"variants": [{**ctx.variant, "jobs": ctx.jobs}]})
    return ran + list(job_notes(ctx, findings))


def _reading_error(e: ScenarioError, reading: Path) -> LintInputError:
    """The engine's message about the benchmark, without the reading scenario's own names."""
    message = str(e)
    for prefix in (f"{reading}: ", "vm[0].job[0].file: ", "vm[0].job[0].cmdline: ", "vm[0].job[0].rd: "):
        message = message.removeprefix(prefix)
    if "job's vars" in message:
        message += " (to sanlab lint: --var NAME=VALUE)"
    return LintInputError(message)


def _pick_run(benchmark: Benchmark, runs: list[str]) -> Benchmark:
    """The vdbench run to lint: `--rd`, else the first of several (vdbench's own run names)."""
    if benchmark.rd is not None and benchmark.rd not in runs:
        raise LintInputError(f"{benchmark.label}: no run `{benchmark.rd}` (runs: {', '.join(runs[:8])}{' ...' if len(runs) > 8 else ''}){did_you_mean(benchmark.rd, runs)}")
    if benchmark.rd is None and len(runs) > 1:
        return replace(benchmark, rd=runs[0])
    return benchmark


def lint(benchmark: Benchmark, scenario: Path | None = None, variant: str | None = None, duration: str | None = "5s", seed: int | None = None) -> LintResult:
    """Reads the benchmark with the engine's readers and runs every rule; with a scenario, runs the
    benchmark as VM 0's workload for `duration` and again with each finding's fix."""
    notes: list[str] = []
    # The benchmark in a scenario of its own, as a file names it: a vdbench file of several runs
    # then makes one variant per run, named as vdbench names them. Kept in memory, as the fixed
    # copies are: nothing is left behind when lint is killed.
    reading_text = READING_SCENARIO + f"job = [{replace(benchmark, rd=None).job_table()}]\n"
    with in_memory("reading.toml", reading_text) as reading:
        try:
            runs = engine.validate(reading)["variants"]
        except ScenarioError as e:
            raise _reading_error(e, reading) from None
        if benchmark.kind == "vdbench":
            benchmark = _pick_run(benchmark, runs)
            if len(runs) > 1:
                others = [name for name in runs if name != benchmark.rd]
                notes.append(f"run {benchmark.rd} of {len(runs)} linted; the others ({', '.join(others[:8])}{' ...' if len(others) > 8 else ''}) with --rd NAME")
        try:
            if scenario is None:
                document = engine.run(reading, [benchmark.rd] if benchmark.rd else None, seed=seed)
                as_written = document["variants"][0]
            else:
                if variant is None:
                    checked = engine.validate(scenario, [f"vm[0].job=[{benchmark.job_table()}]"])
                    variant = checked["variants"][0]
                as_written = _run(scenario, benchmark.job_table(), variant, duration, seed)
        except ScenarioError as e:
            raise _reading_error(e, reading) from None
    ctx = Context(benchmark, _linted(as_written), as_written if scenario is not None else None)
    findings = [finding for rule in RULES for finding in rule(ctx)]
    if scenario is None:
        notes.append("no --scenario: findings are read from the benchmark alone; give a scenario to see their effect simulated on its array")
    elif ctx.jobs:
        written_notes = _notes(ctx, findings)
        notes += written_notes
        vm = ctx.jobs[0]["vm"]
        written = _figures(as_written, vm)
        for finding in findings:
            if finding.change is None:
                continue
            extra: Any = finding.metrics or (lambda _doc: {})
            try:
                with benchmark.fixed_job_table(*finding.change) as table:
                    fixed = _run(scenario, table, variant, duration, seed)
            except ScenarioError as e:
                notes.append(f"{finding.rule}: the fix could not be simulated: {e}")
                continue
            finding.evidence = {
                "as written": {**written, **extra(as_written)},
                "with the fix": {**_figures(fixed, vm), **extra(fixed)},
            }
            fixed_notes = _notes(Context(benchmark, _linted(fixed), fixed), findings)
            notes += [f"{finding.rule}, with the fix: {note}" for note in fixed_notes if note not in written_notes]
    return LintResult(benchmark, scenario, variant, findings, notes)


__all__ = ["LintInputError", "LintResult", "lint"]
