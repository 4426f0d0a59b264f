"""What `sanlab run` prints: every table for a small run, a summary sized to a screen for a large
one, and no cell cut with "…" at 80 or 120 columns, on the failover and poor-health studies."""

from __future__ import annotations

import copy
import io
import math
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

import sanlab
from fault_doc import with_faults
from sanlab.commands import run as run_command
from sanlab.cli import main
from sanlab.views.summary import (
    SCREEN_LINES,
    every_table,
    fits_a_screen,
    line_count,
    prefix_breaks,
    print_tables,
    summary_table,
    verbose_adds,
)

STUDIES = Path(__file__).resolve().parents[2] / "scenarios" / "studies"
SCREEN = 50
"""The most lines the summary of the failover (30 variants) and poor-health (19) studies may take."""


def _console(width: int) -> Console:
    return Console(width=width, file=io.StringIO(), record=True, color_system=None)


def _printed(tables: list[Any], width: int) -> list[str]:
    console = _console(width)
    print_tables(console, tables)
    return console.export_text().splitlines()


def _many(doc: dict[str, Any], faults: int, policies: int) -> dict[str, Any]:
    """`faults` × `policies` copies of the faulty variant, named `<fault>-<policy>` as in the
    failover study."""
    faulty = with_faults(doc)["variants"][0]
    doc["variants"] = [
        dict(copy.deepcopy(faulty), name=f"fault{f}-policy{p}")
        for f in range(faults)
        for p in range(policies)
    ]
    return doc


def test_prefix_breaks_set_apart_variants_sharing_a_prefix() -> None:
    names = ["fixed", "mru", "rr", "rr_latency", "hpp", "dm_a", "dm_b", "notice-x", "notice-y", "solo"]
    # `fixed`, `mru` and `hpp` stand alone next to others alone: no line between them.
    assert prefix_breaks(names) == {1, 3, 4, 6, 8}
    assert prefix_breaks(["rr_iops1", "alua_rr", "latency", "fixed", "mru"]) == set()


def test_the_summary_has_a_row_per_variant_and_the_most_useful_columns_that_fit(doc: dict[str, Any]) -> None:
    doc = _many(doc, faults=6, policies=5)
    wide, left_wide = summary_table(doc, _console(120))
    narrow, left_narrow = summary_table(doc, _console(48))
    assert [column.header for column in wide.columns] == [
        "variant", "IOPS", "tail\nIOPS", "p99\nms", "p99.9\nms", "marked\ns", "max\nms", "back\ns",
    ]  # fmt: skip
    # Narrow, the figures most used come first: IOPS, p99.9, back s, then max ms, ...
    assert [column.header for column in narrow.columns] == ["variant", "IOPS", "p99.9\nms", "back\ns"]
    assert left_wide == ["MB/s", "mean ms", "p50 ms"]
    assert left_narrow == ["MB/s", "mean ms", "p50 ms", "tail IOPS", "p99 ms", "marked s", "max ms"]
    lines = _printed([narrow], 48)
    assert not any("…" in line or len(line) > 48 for line in lines)
    # The slowest recovery over the variant's three faults: IOPS not back after one.
    row = next(line.split() for line in lines if line.startswith(" fault0-policy0"))
    assert row[1:] == ["8,000", "7.20", "not", "back"]
    # A blank line between faults, as the names share a prefix per fault.
    rows = [line for line in lines if line.strip()]
    assert len(lines) - len(rows) == 5 + 1  # between the six faults, and after the table


def _run(doc: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> None:
    """`sanlab run` on `doc` instead of the engine's results, writing no run folder."""
    monkeypatch.setattr(run_command, "_run_engine", lambda args, mode, *replications: (doc, False))
    monkeypatch.setattr(run_command, "write_run_folder", lambda *args, **kwargs: None)
    assert main(["run", "unused.toml", "--out", str(tmp_path / "run"), *args]) == 0


def test_a_run_that_fits_a_screen_prints_every_table(
    doc: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(doc, tmp_path, monkeypatch)
    out = capsys.readouterr().out
    assert "paths: I/O share" in out and "devices (esxtop)" in out and "path selection events" in out
    assert "--verbose" not in out


def test_a_large_run_prints_the_summary_and_what_verbose_adds(
    doc: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _many(doc, faults=6, policies=5)
    assert not fits_a_screen([table for _, table in every_table(doc)])
    _run(doc, tmp_path, monkeypatch)
    out = capsys.readouterr().out.splitlines()
    assert len(out) <= SCREEN
    assert "paths: I/O share" not in "\n".join(out)
    adds = next(line for line in out if line.startswith("--verbose adds"))
    for name in ("MB/s", "paths", "devices", "path selection events", "fault edges", "failover counts"):
        assert name in adds
    assert out[-2:] == [f"run folder: {tmp_path / 'run'}", f"report: {tmp_path / 'run' / 'report.html'}"]

    _run(doc, tmp_path, monkeypatch, "--verbose")
    verbose = capsys.readouterr().out
    assert "paths: I/O share" in verbose and "faults and failover" in verbose and "--verbose" not in verbose
    assert verbose.count("\n") > SCREEN_LINES


def test_quiet_and_verbose_exclude_each_other(cli: Any) -> None:
    result = cli("run", "x.toml", "--quiet", "--verbose")
    assert result.returncode == 2
    assert "not allowed with argument" in result.stderr


@pytest.fixture(scope="module")
def studies() -> dict[str, dict[str, Any]]:
    """The failover and poor-health studies cut short, every variant (8 outstanding I/Os instead of
    32: a quarter of the time; the tables' shapes are the same): failover to 2 s into its faults,
    poor health with its three faults moved into its first 20 s."""
    failover = sanlab.run(STUDIES / "failover.toml", duration="62s", set={"vm[0].job[0].iodepth": 8})
    events = (
        'event=[{kind="link_latency", path="local-0", at="5s", until="15s", latency="2ms"},'
        ' {kind="path_down", path="local-9", at="3s", until="4s", every="5s"},'
        ' {kind="replication_down", arrays=["local", "remote"], at="16s"}]'
    )
    poor = sanlab.run(STUDIES / "poor_health.toml", duration="20s", set=[events, "vm[0].job[0].iodepth=8"])
    return {"failover": failover.raw, "poor_health": poor.raw}


@pytest.mark.e2e
@pytest.mark.parametrize("study", ["failover", "poor_health"])
@pytest.mark.parametrize("width", [80, 120])
def test_no_cell_is_cut_and_the_summary_fits_a_screen(
    studies: dict[str, dict[str, Any]], study: str, width: int
) -> None:
    doc = studies[study]
    named = every_table(doc)
    assert {"path selector health", "paths", "path selection events", "fault edges"} <= {n for n, _ in named}
    tables = [table for _, table in named]
    lines = _printed(tables, width)
    assert not [line for line in lines if "…" in line]
    assert max(len(line) for line in lines) <= width
    assert line_count(tables, width) == len(lines) > SCREEN_LINES
    summary, left_out = summary_table(doc, _console(width))
    lines = _printed([summary], width)
    assert not [line for line in lines if "…" in line]
    # The summary, the line on what --verbose adds (as the terminal wraps it), the run folder, the report.
    assert len(lines) + math.ceil(len(verbose_adds(named, left_out)) / width) + 2 <= SCREEN
    names = [line.split()[0] for line in lines if line.strip()]
    assert [name for name in names if name in {v["name"] for v in doc["variants"]}] == [
        variant["name"] for variant in doc["variants"]
    ]
