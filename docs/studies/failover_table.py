"""Prints the measured tables of docs/studies/failover.md, one per fault, from a run folder.

Usage, from the repository root:
       .venv/bin/sanlab run scenarios/studies/failover.toml --out runs/failover
       .venv/bin/python docs/studies/failover_table.py runs/failover

Variants are named `<fault>-<policy>`; every figure comes from `sanlab.analysis.failover`, as the terminal's
fault table shows it, plus the mean VM IOPS before the fault and while it lasts.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from sanlab.analysis.failover import LEVEL_WINDOW_S, counts, faults, level_before, vm_iops
from sanlab.export.runfolder import read_run_folder
from sanlab.formatting import format_count, format_ms
from sanlab.views.rows import failed_text, marked_text

HEADER = (
    "| policy | IOPS before | IOPS during | retried | failed | failed over | marked dead, s "
    "| alive again, s | longest I/O, ms | IOPS back, s |\n|---|---|---|---|---|---|---|---|---|---|"
)


def row(variant: dict[str, Any]) -> str:
    """The table row of one variant: its single fault (or flapping one) and the VM's figures."""
    (fault,) = faults(variant)
    policy = variant["name"].split("-", 1)[1]
    times_s, iops = vm_iops(variant, "vm1")
    before = level_before(times_s, iops, fault.start_s, fault.start_s - LEVEL_WINDOW_S)
    # While it lasts: from its start to its (last occurrence's) end, or the run's end.
    last_end_s = fault.end_s if fault.period_s is None else None
    during = level_before(times_s, iops, last_end_s or variant["sim_time_s"], fault.start_s)
    found = counts(variant)
    vm = next((c for c in found if c.kind == "VM"), None)
    failed_over = sum(c.failed_over for c in found if c.kind == "path")
    back = fault.recovery_s.get("vm1")
    cells = [
        policy,
        format_count(before or 0.0),
        format_count(during or 0.0),
        str(vm.retried) if vm else "0",
        failed_text(vm) if vm else "0",
        str(failed_over),
        marked_text(fault, fault.marked_dead_s),
        marked_text(fault, fault.marked_alive_s),
        "-" if fault.max_latency_ms is None else format_ms(fault.max_latency_ms),
        "not back" if back is None else f"{back:g}",
    ]
    return "| " + " | ".join(cells) + " |"


def main(run_dir: str) -> None:
    doc, _ = read_run_folder(Path(run_dir))
    by_fault: dict[str, list[dict[str, Any]]] = {}
    for variant in doc["variants"]:
        by_fault.setdefault(variant["name"].split("-", 1)[0], []).append(variant)
    for name, variants in by_fault.items():
        # The fault as the scenario describes it: the variant description after the policy's.
        print(f"\n**{name}**: {variants[0]['description'].split('; ', 1)[1]}\n")
        print(HEADER)
        for variant in variants:
            print(row(variant))


if __name__ == "__main__":
    main(sys.argv[1])
