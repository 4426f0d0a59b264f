"""`sanlab validate SCENARIO`: checks a scenario without running it, and estimates what running
it costs from a short pilot of each variant."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich import box
from rich.table import Table

from sanlab import engine
from sanlab.commands import options
from sanlab.commands.terminal import console
from sanlab.formatting import few_names, format_bytes, format_count, format_tenths, shown_name
from sanlab.views.fit import fit
from sanlab.views.names import shown_document


def register(parser: argparse.ArgumentParser) -> None:
    options.add_scenario(parser, metavar="FILE")
    options.add_variants(parser)
    options.add_set(parser)


def main(args: argparse.Namespace) -> int:
    checked = engine.validate(args.scenario, args.sets, args.variants, cost=True)
    variants = few_names(checked["variants"])
    scenario = shown_name(checked["scenario"])
    count = len(checked["variants"])
    print(f"ok: {scenario} ({count} variant{'' if count == 1 else 's'}: {variants})", flush=True)
    cost = shown_document(checked["cost"])
    terminal = console()
    for part in fit(_cost_table(cost), terminal):
        terminal.print(part)
    if count > 1:
        # Many variants share the pilots' events: say how short each pilot was.
        terminal.print(
            f"pilots: {format_count(cost['pilot_events'])} simulator events or 1 s of wall time each, "
            f"whichever came first, {cost['pilot_threads']} at a time; a pilot that stopped before "
            "its run's end is extrapolated at the rate of its latter half"
        )
    for variant in cost["variants"]:
        if variant["parts"] > 1:
            terminal.print(
                f"{shown_name(variant['name'])}: {variant['parts']} independent parts (no host, path or array "
                "shared), each run on a core of its own when --jobs allows"
            )
    machine = cost["machine"]
    here = (
        "this machine's memory cannot be checked here (it is read from Linux's /proc/meminfo)"
        if machine is None
        else f"this machine has {format_bytes(machine['available_bytes'])} available"
        f" of {format_bytes(machine['total_bytes'])}"
        if not machine.get("limited_by")
        else f"this process may use {format_bytes(machine['available_bytes'])} more"
        f" of {format_bytes(machine['total_bytes'])} (the limit of {machine['limited_by']})"
    )
    terminal.print(f"peak memory (estimated): {format_bytes(cost['peak_memory_bytes'])}; {here}")
    if cost["warning"] is not None:
        print(f"warning: {shown_name(cost['warning'])}", file=sys.stderr, flush=True)
    return 0


def _estimate_text(value: float | None, text: str) -> str:
    return "unknown" if value is None else text


def _cost_row(name: str, sim_time_s: float, estimate: dict[str, Any], outstanding: str, values: float) -> list[str]:
    return [
        name,
        format_count(sim_time_s),
        _estimate_text(estimate["ios"], format_count(estimate["ios"] or 0)),
        _estimate_text(estimate["events"], format_count(estimate["events"] or 0)),
        _estimate_text(estimate["engine_s"], format_tenths(estimate["engine_s"] or 0)),
        outstanding,
        format_count(values),
    ]


def _cost_table(cost: dict[str, Any]) -> Table:
    """The estimate of each variant's run and their total (one process runs them in turn)."""
    table = Table(
        title="what running it costs (estimated from a pilot run of each variant)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
        show_edge=False,
    )
    table.add_column("variant", no_wrap=True)
    for header in ("simulated s", "I/Os", "events", "engine s", "outstanding", "series values"):
        table.add_column(header, justify="right", no_wrap=True)
    variants = cost["variants"]
    for variant in variants:
        table.add_row(
            *_cost_row(
                variant["name"], variant["sim_time_s"], variant,
                format_count(variant["outstanding"]), variant["samples"] * variant["series"],
            )
        )
    if len(variants) > 1:
        table.add_section()
        total_sim_s = sum(variant["sim_time_s"] for variant in variants)
        total_values = sum(variant["samples"] * variant["series"] for variant in variants)
        table.add_row(*_cost_row("total", total_sim_s, cost, "", total_values))
    return table
