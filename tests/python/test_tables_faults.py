"""The terminal's fault tables: each fault edge with the host's reaction and the VMs' recovery, and
the failover counts; neither for a healthy run."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from rich.table import Table

from fault_doc import with_faults, with_replication_fault
from sanlab.views.rows import fold_repeats
from sanlab.views.tables import failover_counts_table, faults_table, psp_events_table

WIDTH = 100


def _render(table: Table) -> list[str]:
    console = Console(width=WIDTH, file=io.StringIO(), record=True, color_system=None)
    console.print(table)
    return console.export_text().splitlines()


def test_healthy_runs_have_no_fault_tables(doc: dict[str, Any]) -> None:
    assert faults_table(doc) is None
    assert failover_counts_table(doc) is None


def test_faults_table_lists_each_edge(doc: dict[str, Any]) -> None:
    table = faults_table(with_faults(doc))
    assert table is not None
    lines = _render(table)
    assert all(len(line) <= WIDTH for line in lines)
    rows = [line.split() for line in lines]
    # Notice: marked dead 10 ms after the start, alive 10 ms after the end; IOPS back after 2 s. The
    # detail is on the line under the target.
    notice = rows.index(["rr", "5.000", "start", "path_down", "path", "loc-0", "0.010", "2.50", "2.000"])
    assert rows[notice + 1] == ["notice"]
    assert rows[notice + 2] == ["10.000", "end", "path_down", "path", "loc-0", "0.010"]
    # The slower link is never undone and the IOPS stay low: not back; no path is marked dead.
    slow = rows.index(["15.000", "start", "link_latency", "path", "rem-0", "-", "8.00", "not", "back"])
    assert rows[slow + 1] == ["2", "ms"]
    # Four flaps in one row pair, with the worst reaction and latency over them.
    flap = rows.index(["20.000", "start", "path_down", "path", "loc-0", "0.500", "503", "0.000"])
    assert rows[flap + 1] == ["silent,", "×4", "every", "4", "s"]
    assert rows[flap + 2] == ["21.000", "end", "path_down", "path", "loc-0", "0.200"]
    assert not any(row[:1] == ["24.000"] for row in rows), "later occurrences are not listed"


def test_a_fault_never_noticed_says_so(doc: dict[str, Any]) -> None:
    faulty = with_faults(doc)
    faulty["variants"][0]["psp_events"] = []
    text = "\n".join(_render(faults_table(faulty)))  # type: ignore[arg-type]
    assert "never" in text


def test_failover_counts_table(doc: dict[str, Any]) -> None:
    table = failover_counts_table(with_faults(doc))
    assert table is not None
    rows = [line.split() for line in _render(table)]
    assert ["rr", "VM", "vm1", "40", "3", "(no_path", "3)", "0"] in rows
    assert ["device", "naa.1", "40", "3", "(no_path", "3)", "0"] in rows
    assert ["path", "loc-0", "0", "0", "25"] in rows
    assert not any("rem-0" in row for row in rows), "paths without counts are left out"


def test_a_fault_step_has_its_row(doc: dict[str, Any]) -> None:
    table = faults_table(with_replication_fault(doc))
    assert table is not None
    lines = _render(table)
    assert all(len(line) <= WIDTH for line in lines)
    rows = [line.split() for line in lines]
    start = rows.index(
        ["latency", "10.000", "start", "replication_down", "replication", "array-a<->array-b", "-", "5,000",
         "5.000"]  # fmt: skip
    )
    assert rows[start + 1 : start + 4] == [
        ["15.000", "mediator", "replication_down", "replication", "array-a<->array-b"],
        ["array-a", "keeps", "the", "volumes"],
        ["30.000", "end", "replication_down", "replication", "array-a<->array-b", "-"],
    ]


def test_a_flapping_path_s_events_fold_into_one_row_each(doc: dict[str, Any]) -> None:
    variant = with_faults(doc)["variants"][0]
    lines = _render(psp_events_table(variant))
    rows = [line.split() for line in lines]
    # The notice failure's two events stay as they are; the four flaps' are one row each.
    assert ["5.010", "naa.1", "path", "dead", "loc-0"] in rows
    assert ["20.500", "naa.1", "path", "dead", "loc-0", "×4", "every", "4", "s,", "last", "32.500"] in rows
    assert ["21.200", "naa.1", "path", "alive", "loc-0", "×4", "every", "4", "s,", "last", "33.200"] in rows
    assert len([row for row in rows if "loc-0" in row]) == 4


def test_two_alike_events_are_not_a_repeat() -> None:
    events = [
        {"t_s": t, "device": "d", "event": "path dead", "paths": ["p"]} for t in (1.0, 2.0, 4.0, 6.0, 8.0)
    ]
    folded = fold_repeats(events)
    # 1 s then 2 s apart: the first stands alone, the next four repeat every 2 s.
    assert [(r.event["t_s"], r.count, r.period_s, r.last_s) for r in folded] == [
        (1.0, 1, 0.0, 1.0),
        (2.0, 4, 2.0, 8.0),
    ]
