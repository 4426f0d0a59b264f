"""`sanlab lint JOBFILE [--scenario S]`: what makes a benchmark measure something else than meant;
findings printed for people, or as JSON (docs/lint.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from sanlab.commands import options
from sanlab.commands.terminal import console
from sanlab.formatting import shown_name
from sanlab.lint import LintResult, lint
from sanlab.lint.source import KIND_NAMES, read_benchmark


def register(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Reads a fio job file, a fio command line (in a file, or with --cmdline) or a vdbench parameter "
        "file as `sanlab run` reads it, and flags what makes it measure something else than its author meant: "
        "each finding with its option and line, what it does, its effect and the fix. With --scenario, the "
        "benchmark runs as the scenario's first VM's workload, and again with each fix, so the effect is shown "
        "in figures (docs/lint.md). Exit 0 with findings printed; --strict exits 1 when there is any."
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("jobfile", nargs="?", metavar="JOBFILE", help="fio job file, fio command line in a file, or vdbench parameter file")
    source.add_argument("--cmdline", metavar="TEXT", help='a fio command line in quotes, as in "fio --name=t --rw=randread --iodepth=32"')
    parser.add_argument("--scenario", type=Path, metavar="S", help="scenario to simulate the benchmark on (its VM 0 runs it)")
    options.add_variant(parser, "the scenario's variant to run (default: its first)")
    parser.add_argument("--rd", metavar="NAME", help="a vdbench file's run to lint (default: its first)")
    parser.add_argument("--var", action="append", default=[], type=_variable, metavar="NAME=VALUE", help="a vdbench file's $NAME, as vdbench takes NAME=VALUE on its command line (repeatable)")
    options.add_duration(parser, "5s", value="5s")
    options.add_seed(parser, "seed of the simulations")
    parser.add_argument("--strict", action="store_true", help="exit 1 when anything is found (for benchmark kits' CI)")
    options.add_json(parser, "print the findings as JSON")


def _variable(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"`{text}`: expected NAME=VALUE, e.g. threads=8")
    return name, value


def result_json(result: LintResult) -> dict[str, Any]:
    benchmark = result.benchmark
    return {
        "benchmark": {"kind": benchmark.kind, "file": str(benchmark.path) if benchmark.path else None, "rd": benchmark.rd},
        "scenario": str(result.scenario) if result.scenario else None,
        "variant": result.variant,
        "findings": [
            {
                "rule": f.rule,
                "option": f.option,
                "line": f.line,
                "what": f.what,
                "effect": f.effect,
                "fix": f.fix,
                "simulated_change": None if f.change is None else {"option": f.change[0], "value": f.change[1]},
                "evidence": f.evidence or None,
            }
            for f in result.findings
        ],
        "notes": result.notes,
    }


def _figure(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _print(result: LintResult, out: Console) -> None:
    """The findings for people. Names and values from the benchmark (run, job, option values)
    are in the texts: each line is shown escaped (`shown_name`) as a `Text`, so neither an ESC
    sequence nor markup (`[/]`, `[red]`) in them acts; styles are the `Text`'s."""

    def line(text: str = "", style: str = "") -> None:
        out.print(Text(shown_name(text), style=style), soft_wrap=True)

    benchmark = result.benchmark
    where = str(benchmark.path) if benchmark.path else "--cmdline"
    on = f" on {result.scenario} (variant {result.variant or ''})" if result.scenario else ""
    line(f"{KIND_NAMES[benchmark.kind]} {where}{on}: {len(result.findings)} finding(s)")
    for finding in result.findings:
        at = f"{where}:{finding.line}" if finding.line and benchmark.path else (f"argument {finding.line}" if finding.line else where)
        line()
        out.print(Text.assemble((finding.rule, "bold"), shown_name(f" — `{finding.option}` ({at})")), soft_wrap=True)
        line(f"  what:   {finding.what}")
        line(f"  effect: {finding.effect}")
        if finding.evidence:
            change = finding.change
            assert change is not None
            fixed = f"{change[0]}={change[1]}" if change[1] is not None else f"without {change[0]}"
            table = Table("simulated", "as written", shown_name(fixed), box=None, padding=(0, 2))
            written, with_fix = finding.evidence["as written"], finding.evidence["with the fix"]
            for key, value in written.items():
                table.add_row(key, _figure(value), _figure(with_fix[key]))
            out.print(table)
        line(f"  fix:    {finding.fix}")
    for note in result.notes:
        line()
        line(note, "dim")


def main(args: argparse.Namespace) -> int:
    benchmark = read_benchmark(args.jobfile, args.cmdline, args.rd, tuple(args.var))
    result = lint(benchmark, args.scenario, args.variant, args.duration, args.seed)
    if args.json:
        print(json.dumps(result_json(result), indent=2))
    else:
        _print(result, console())
    return 1 if args.strict and result.findings else 0
