"""The utilisation table of `sanlab run`'s report (docs/report.md#utilisation): every resource on
one 0-1 scale, highest first, with how it is measured, against figures theory knows: the 1 Gb/s
link of `headroom_link.toml`, busy λ × 0.524 ms (each 64 KiB read's data holds its array-to-host
transmitter 65,536 × 8 / 10^9 s), and the M/M/1 server, busy ρ = λ × 100 µs; and the same table
from the run folder read back (`sanlab report`), which has the resolved scenario as TOML and the
time series from Parquet.

Noise: 5 s measured at 1,000 Poisson reads a second (5,000 reads) and at 5,000 (25,000): the
measured IOPS are within 3 % of the offered rate, the busy shares within 1 % of the measured
IOPS times the service."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sanlab import engine
from sanlab.analysis.utilisation import utilisations
from sanlab.export.runfolder import read_run_folder
from sanlab.report import REPORT_FILE, ReportRun, render_report
from sanlab.report.page import UTILISATION_SHOWN

ROOT = Path(__file__).resolve().parents[2]
LINK = ROOT / "tests" / "data" / "scenarios" / "headroom_link.toml"
MM1 = ROOT / "scenarios" / "validation" / "mm1.toml"
LINK_MS = 65536 * 8 / 1e9 * 1e3
"""A 64 KiB read's data on the 1 Gb/s array-to-host transmitter: 0.524288 ms."""
WINDOW = ROOT / "tests" / "data" / "scenarios" / "measured_window.toml"
MANIFEST = {"argv": ["sanlab", "run"], "wall_s": 0.1, "started_utc": "2026-11-29T00:00:00Z"}


def _table(page: str) -> str:
    found = re.search(r'<table class="data" id="utilisation">.*?</table>', page, re.S)
    assert found, "the report has no utilisation table"
    return found.group(0)


def _rows(page: str) -> list[tuple[str, str, str, float, str]]:
    """(variant, kind, name, utilisation, how) of every row, unescaped."""
    cells = re.findall(r"<tr><td><span[^>]*></span>(.*?)</td><td>(.*?)</td><td>(.*?)</td>"
                       r"<td class=num>(.*?)</td><td>(.*?)</td></tr>", _table(page))  # fmt: skip
    return [
        (html.unescape(v), html.unescape(k), html.unescape(n), float(u), html.unescape(h))
        for v, k, n, u, h in cells
    ]


def test_the_link_is_busy_lambda_times_its_transmission(tmp_path: Path) -> None:
    """headroom_link.toml: the array-to-host link is the busiest resource, at the VM's IOPS ×
    0.524 ms (0.524 at the offered 1,000), the other direction idle (its frames are 0-byte
    commands); `sanlab report` rewrites the same table from the folder."""
    out = tmp_path / "run"
    command = [sys.executable, "-m", "sanlab.cli", "run", str(LINK), "--out", str(out), "--quiet"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    page = (out / REPORT_FILE).read_text(encoding="utf-8")
    assert '<a href="#section-utilisation">Utilisation</a>' in page
    rows = _rows(page)
    assert [row[3] for row in rows] == sorted((row[3] for row in rows), reverse=True)
    variant, kind, name, shown, how = rows[0]
    assert (variant, kind, name) == ("base", "link", "h-flash (array to host)")
    assert how.startswith("transmitter busy share over the measured time") and "over 1 Gb/s" in how
    doc, _ = read_run_folder(out)
    figure = utilisations(doc["variants"][0])[0]
    iops = doc["variants"][0]["vms"][0]["iops"]
    assert iops == pytest.approx(1000, rel=0.03)
    assert figure["utilisation"] == pytest.approx(iops * LINK_MS / 1000, rel=0.01)
    assert shown == pytest.approx(figure["utilisation"], abs=0.005)  # printed to two decimals
    writes = next(row for row in rows if row[2] == "h-flash (host to array)")
    assert writes[3] == 0.0
    # From the folder alone (resolved TOML, Parquet series): the same table.
    again = render_report([ReportRun("run", doc, MANIFEST)])
    assert _table(again) == _table(page)


def test_the_mm1_server_is_busy_rho_and_what_is_not_covered_is_said() -> None:
    """M/M/1 at 5,000 IOPS of 100 µs: the server busy ρ = 0.5 (the measured IOPS × 0.1 ms), first
    of each variant, before the ideal host's device queue (a queue of 2^20 slots, all but empty);
    the note lists what has no figure."""
    doc = engine.run(MM1, ["md1", "mm1"], [], 1, "6s")
    page = render_report([ReportRun("run", doc, MANIFEST)])
    rows = _rows(page)
    assert [(row[0], row[1], row[2]) for row in rows] == [
        ("md1", "array media", "server"),
        ("md1", "device queue", "h/lun"),
        ("mm1", "array media", "server"),
        ("mm1", "device queue", "h/lun"),
    ]
    for variant, row in zip(doc["variants"], rows[::2], strict=True):
        busy = utilisations(variant)[0]["utilisation"]
        assert busy == pytest.approx(variant["vms"][0]["iops"] * 0.1 / 1000, rel=0.01)
        assert busy == pytest.approx(0.5, rel=0.03) and row[3] == pytest.approx(busy, abs=0.005)
        assert row[4].startswith("busy servers / servers (1)")
    assert all(row[3] == 0.0 and "DQLEN 1048576.0" in row[4] for row in rows[1::2])
    note = page[page.index('<table class="data" id="utilisation">') :].split("</p>")[0]
    assert "Not on the table" in note and "front-end ports" in note
    assert f"The {UTILISATION_SHOWN} busiest" not in note  # nothing left out of two rows a variant


def test_busy_shares_and_occupancies_are_over_the_measured_time_only() -> None:
    """measured_window.toml: 8,000 reads a second during the 5 s warm-up, 2,000 after. Every
    figure is the measured time's: the server busy X × 100 µs (0.2, not the whole run's 0.5), the
    link X × 32.768 µs (0.066, not 0.164), the VM's disk queue holding X × R by Little's law (0.31,
    where the warm-up's load held about 4), the host adapter the same requests."""
    variant = engine.run(WINDOW)["variants"][0]
    vm = variant["vms"][0]
    x, r_s = vm["iops"], vm["lat_ms"]["mean"] / 1000
    assert x == pytest.approx(2000, rel=0.03)
    found = {(item["kind"], item["name"]): item["utilisation"] for item in utilisations(variant)}
    assert found[("array media", "server")] == pytest.approx(x * 100e-6, rel=0.02)
    assert found[("link", "h-server (array to host)")] == pytest.approx(x * 4096 * 8 / 1e9, rel=0.01)
    assert found[("link", "h-server (host to array)")] == 0.0  # commands are 0-byte frames
    assert vm["disk_queue"]["actv_mean"] == pytest.approx(x * r_s, rel=0.02) and vm["disk_queue"]["actv_mean"] < 0.5
    assert found[("VM disk queue", "vm")] == pytest.approx(vm["disk_queue"]["actv_mean"] / 64)
    assert vm["disk_queue"]["depth"] == 64 and vm["adapter_queue"]["depth"] == 254
    assert variant["hosts"][0]["adapter_queue"]["actv_mean"] == pytest.approx(vm["disk_queue"]["actv_mean"], rel=1e-6)
    # The ideal host adapter's queue cannot fill: not on the table.
    assert not any(kind == "host adapter queue" for kind, _ in found)
