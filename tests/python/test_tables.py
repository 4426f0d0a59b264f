"""Terminal tables fit a 100-column terminal and show the numbers users compare."""

from __future__ import annotations

import copy
import io
from typing import Any

import pytest
from rich.console import Console
from rich.table import Table

from conftest import with_hosts, with_injector
from fault_doc import with_faults
from sanlab.analysis.tail import tail_iops
from sanlab.formatting import format_count, format_ms
from sanlab.views.fit import fit
from sanlab.views.rows import compact_names
from sanlab.views.tables import (
    cores_table,
    devices_table,
    faults_table,
    hosts_table,
    injector_table,
    kinds_tables,
    paths_table,
    paths_tables,
    psp_events_table,
    variants_table,
)

WIDTH = 100


def _console(width: int) -> Console:
    return Console(width=width, file=io.StringIO(), record=True, color_system=None)


def _render(table: Table) -> list[str]:
    console = _console(WIDTH)
    console.print(table)
    return console.export_text().splitlines()


@pytest.mark.parametrize(
    ("latency_ms", "text"),
    [(0.0523, "0.052"), (2.2, "2.20"), (13.04, "13.0"), (781.6, "782"), (1234.5, "1,234"), (0.0, "0")],
)
def test_format_ms(latency_ms: float, text: str) -> None:
    assert format_ms(latency_ms) == text


def test_format_count() -> None:
    assert format_count(13512.4) == "13,512"


def test_variants_table(doc: dict[str, Any]) -> None:
    lines = _render(variants_table(doc))
    assert all(len(line) <= WIDTH for line in lines)
    text = "\n".join(lines)
    for header in ("variant", "VM", "IOPS", "tail IOPS", "MB/s", "mean ms", "p50 ms", "p99 ms", "p99.9 ms"):
        assert header in text
    # The fixture's series is too short for a tail figure.
    assert any(line.split()[:4] == ["latency", "vm1", "13,000", "-"] for line in lines)


def test_tail_iops_uses_the_end_of_the_run(doc: dict[str, Any]) -> None:
    variant = doc["variants"][0]
    variant["sim_time_s"] = 400.0
    variant["timeseries"] = {
        "t_s": [float(t) for t in range(1, 401)],
        "entity": ["vm/vm1"] * 400,
        "metric": ["iops"] * 400,
        "value": [100.0 if t <= 340 else 200.0 for t in range(1, 401)],
    }
    assert tail_iops(variant) == {"vm1": 200.0}


def test_variants_table_groups_variants_with_several_vms(doc: dict[str, Any]) -> None:
    variant = doc["variants"][0]
    variant["vms"].append(dict(copy.deepcopy(variant["vms"][0]), name="vm2"))
    lines = _render(variants_table(doc))
    vm2 = next(index for index, line in enumerate(lines) if "vm2" in line)
    assert lines[vm2].split()[0] == "vm2"
    assert lines[vm2 + 1].strip() == ""


def test_paths_table_has_a_column_per_variant(doc: dict[str, Any]) -> None:
    lines = _render(paths_table(doc))
    assert all(len(line) <= WIDTH for line in lines)
    assert lines[0].startswith("paths: I/O share % / mean ms")
    assert lines[1].split() == ["path", "rr", "latency"]
    rem = next(line for line in lines if "rem-0" in line)
    assert rem.split() == ["rem-0", "50.0", "/", "6.00*", "0.0", "/", "-*"]
    assert "device" not in lines[1]


def test_compact_names() -> None:
    names = ["remote-2", "remote-0", "remote-1", "local-7", "vmhba1:C0:T0:L1", "remote-5"]
    assert compact_names(names) == "remote-{0..2}, remote-5, local-7, vmhba1:C0:T0:L1"
    # Paths of a volume: the number before the volume.
    on_volumes = ["remote-slow-0:busy_vol", "remote-slow-1:busy_vol", "remote-slow-0:quiet_vol", "local-0:busy_vol"]
    assert compact_names(on_volumes) == "remote-slow-{0..1}:busy_vol, remote-slow-0:quiet_vol, local-0:busy_vol"


def test_paths_table_shows_device_when_several(doc: dict[str, Any]) -> None:
    doc["variants"][0]["paths"][1]["device"] = "naa.2"
    lines = _render(paths_table(doc))
    assert lines[1].split()[0] == "device"


def test_psp_events_table(doc: dict[str, Any]) -> None:
    lines = _render(psp_events_table(doc["variants"][1]))
    assert next(line for line in lines if "drop" in line).split() == ["0.500", "naa.1", "drop", "rem-0"]


def test_kinds_tables() -> None:
    kinds = [
        {
            "extension_point": "multipath.psp",
            "kind": "rr",
            "platform": "ESXi NMP",
            "summary": "Round robin.",
            "params": [
                {"name": "iops", "type": "int", "default": 1000, "doc": "switch after N I/Os"},
                {"name": "use_ano", "type": "bool", "default": False, "doc": "use non-optimized paths"},
                {"name": "type", "type": "choice", "default": "iops", "doc": "switch on I/Os or bytes"},
            ],
        },
        {
            "extension_point": "multipath.psp",
            "kind": "rr_latency",
            "platform": "ESXi NMP",
            "summary": "Lowest-latency paths.",
            "params": [],
        },
        {"extension_point": "array", "kind": "flash", "summary": "Flash array.", "params": []},
    ]
    tables = kinds_tables(kinds)
    assert [table.title for table in tables] == ["multipath.psp", "array"]
    text = "\n".join(_render(tables[0]))
    assert "rr_latency" in text
    assert "iops: int = 1000" in text
    assert "use_ano: bool = false" in text
    assert "type: choice = iops" in text
    assert "platform" in text and "ESXi NMP" in text
    assert "platform" not in "\n".join(_render(tables[1])), "only path selectors have a platform"


def test_devices_table_shows_esxtop_figures(doc: dict[str, Any]) -> None:
    lines = _render(devices_table(doc))
    assert all(len(line) <= WIDTH for line in lines)
    assert lines[1].split() == ["variant", "device", "DQLEN", "ACTV", "QUED", "KAVG", "ms", "DAVG", "ms", "GAVG", "ms", "QFULL"]
    assert next(line for line in lines if line.startswith(" rr")).split() == ["rr", "naa.1", "32.0", "31.5", "0.2", "0.010", "2.39", "2.40", "0"]


def test_cores_table_only_when_an_array_has_cores(doc: dict[str, Any]) -> None:
    lines = _render(cores_table(doc))
    assert next(line for line in lines if "ctrl1.core1" in line).split() == ["array-a", "ctrl1.core1", "75.0", "/", "100", "75.0", "/", "100"]
    for variant in doc["variants"]:
        for array in variant["arrays"]:
            array["cores"] = []
    assert cores_table(doc) is None


def test_paths_tables_group_five_variants(doc: dict[str, Any]) -> None:
    doc["variants"] = [dict(copy.deepcopy(doc["variants"][0]), name=f"v{i}") for i in range(7)]
    tables = paths_tables(doc)
    assert [len(t.columns) for t in tables] == [1 + 5, 1 + 2]


def test_format_count_keeps_a_decimal_for_small_rates() -> None:
    assert (format_count(25.64), format_count(1.0), format_count(0.0)) == ("25.6", "1", "0")


def _header(lines: list[str]) -> str:
    """The words of a table's (possibly two-line) header, up to its rule."""
    rule = next(index for index, line in enumerate(lines) if line.startswith("─"))
    return " ".join(" ".join(lines[1:rule]).split())


def test_hosts_table_with_flow_control_shows_the_window(doc: dict[str, Any]) -> None:
    lines = _render(hosts_table(with_hosts(doc, controlled=("latency",))))
    assert all(len(line) <= WIDTH for line in lines)
    assert lines[0].startswith("hosts")
    for header in ("VMs", "IOPS", "VM", "DAVG", "kind", "threshold", "β", "window", "mean", "final", "L"):
        assert header in _header(lines).split()
    rows = [line.split() for line in lines if "esx" in line]
    assert rows == [
        ["rr", "esx1", "1", "1,000", "31.0", "30.5", "-"],
        ["esx2", "2", "2,000", "31.0", "30.5", "-"],
        ["latency", "esx1", "1", "1,000", "31.0", "30.5", "parda", "30.0", "1", "15.5", "16", "31.2"],
        ["esx2", "2", "2,000", "31.0", "30.5", "parda", "30.0", "2", "31", "32", "31.2"],
    ]
    # A blank line separates the variants, and the caption says what the window and L are.
    esx2 = next(index for index, line in enumerate(lines) if line.split()[:1] == ["esx2"])
    assert lines[esx2 + 1].strip() == ""
    assert "window: the device queue depth flow control sets" in " ".join(" ".join(lines).split())


def test_hosts_table_without_flow_control_has_no_window_columns(doc: dict[str, Any]) -> None:
    lines = _render(hosts_table(with_hosts(doc, controlled=())))
    header = sorted(_header(lines).split())
    assert header == ["DAVG", "IOPS", "VM", "VMs", "host", "mean", "ms", "ms", "variant"]
    assert [line.split() for line in lines if "esx2" in line] == [["esx2", "2", "2,000", "31.0", "30.5"]] * 2
    assert "window" not in " ".join(lines)


def test_no_hosts_table_for_one_host_without_flow_control(doc: dict[str, Any]) -> None:
    assert hosts_table(doc) is None  # a document from before hosts were reported
    for variant in with_hosts(doc, controlled=())["variants"]:
        del variant["hosts"][1]
    assert hosts_table(doc) is None
    doc["variants"][0]["hosts"][0]["flow_control"] = {
        "kind": "sioc", "latency_threshold_ms": 30.0, "beta": 1.0, "latency_estimate_ms": 12.0,
    }  # fmt: skip
    lines = _render(hosts_table(doc))
    assert next(line for line in lines if "sioc" in line).split()[-3:] == ["-", "-", "12.0"]


def test_injector_table_lists_the_curve_then_the_threshold(doc: dict[str, Any]) -> None:
    assert injector_table(doc) is None
    lines = _render(injector_table(with_injector(doc)))
    rows = [line.split() for line in lines if " ds " in line]
    assert rows[0][:5] == ["latency", "ds", "1", "300", "3.00"]
    assert [row[-3:] for row in rows[1:4]] == [["16", "1,600", "10.0"], ["32", "2,000", "15.0"], ["64", "2,000", "15.0"]]
    assert rows[-1][-4:] == ["of", "peak", "1,800", "12.5"]


def _seven_variants(doc: dict[str, Any]) -> dict[str, Any]:
    doc["variants"] = [dict(copy.deepcopy(doc["variants"][0]), name=f"variant_{i}") for i in range(7)]
    return doc


def test_fit_splits_a_wide_table_repeating_the_names_of_its_rows(doc: dict[str, Any]) -> None:
    table = paths_table(_seven_variants(doc))
    console = _console(50)
    parts = fit(table, console)
    for part in parts:
        console.print(part)
    text = console.export_text()
    assert len(parts) > 1
    assert "…" not in text
    assert all(len(line) <= 50 for line in text.splitlines())
    # Each part names its paths; each variant is in one part; the caption is printed once, last.
    assert all(part.columns[0].header == "path" for part in parts)
    headers = [column.header for part in parts for column in part.columns[1:]]
    assert headers == [f"variant_{i}" for i in range(7)]
    assert text.count("active-non-optimized") == 1
    assert text.rstrip().endswith("- no I/O")


def test_fit_leaves_a_table_that_fits_as_it_is(doc: dict[str, Any]) -> None:
    table = paths_table(doc)
    parts = fit(table, _console(WIDTH))
    assert len(parts) == 1
    assert [column.header for column in parts[0].columns] == [column.header for column in table.columns]


def test_fit_wraps_the_widest_text_where_rich_would_cut_a_column(doc: dict[str, Any]) -> None:
    table = faults_table(with_faults(doc))
    assert table is not None
    cut = _console(56)
    cut.print(table)
    assert "…" in cut.export_text(), "rich alone cuts a cell at this width"
    console = _console(56)
    for part in fit(table, console):
        console.print(part)
    lines = console.export_text().splitlines()
    assert not any("…" in line or len(line) > 56 for line in lines)
    # The numbers stay whole, on the row of their edge; the text under "edge, kind, target" wraps.
    assert ["rr", "5.000", "start", "0.010", "2.50", "2.000"] in [line.split() for line in lines]


def _legends(doc: dict[str, Any]) -> list[Table]:
    """Every table with a legend: paths, hosts with flow control, the injector, faults, failover
    counts, the path selector health with a degradation, and the summary with several VMs a row."""
    from fault_doc import with_faults as faulted
    from sanlab.views.summary import summary_table
    from sanlab.views.tables import failover_counts_table, health_table
    from test_health import even, two_selectors

    faults = faulted(copy.deepcopy(doc))
    found = [
        paths_table(doc),
        hosts_table(with_hosts(copy.deepcopy(doc))),
        injector_table(with_injector(copy.deepcopy(doc))),
        faults_table(faults),
        failover_counts_table(faults),
        health_table(two_selectors(even)),
        summary_table(faults, _console(60))[0],
    ]
    return [table for table in found if table is not None and table.caption]


@pytest.mark.parametrize("width", [60, 80, 100])
def test_a_legend_wraps_between_its_items_never_inside_one(doc: dict[str, Any], width: int) -> None:
    # On an 80-column pipe `u unavailable` was `u` at a line's end and `unavailable` at the next
    # one's start: rich wraps a caption at any space (a no-break space too) within the table's width.
    tables = _legends(doc)
    assert len(tables) >= 6
    for table in tables:
        console = _console(width)
        for part in fit(table, console):
            console.print(part)
        lines = [line.rstrip() for line in console.export_text().splitlines()]
        assert all(len(line) <= width for line in lines)
        items = table.caption.items
        assert items
        for item in items:
            if len(item) + 1 <= width:  # an item with its separator fits a line: it is on one
                assert any(item in line for line in lines), (width, item, lines)
            else:  # longer than a line: it alone wraps, from the start of a line
                assert any(line.startswith(item.split()[0]) for line in lines), (width, item, lines)
