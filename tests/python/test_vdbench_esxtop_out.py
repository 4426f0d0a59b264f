"""vdbench's summary lines and esxtop's batch CSV in the run folder, from a real run of the
vdbench series example (a for loop over xfersize, then a curve)."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sanlab.export.runfolder import safe_name

ROOT = Path(__file__).resolve().parents[2]
SERIES = ROOT / "scenarios/examples/vdbench_series.toml"
LINE = re.compile(r"^\s*(\d\d:\d\d:\d\d\.\d{3})\s+(\S+)\s+(.*)$")


def _run_with_csv(scenario: Path, out: Path) -> Path:
    """`sanlab run --esxtop-csv` into `out`, in a subprocess as a user runs it."""
    p = subprocess.run(
        [sys.executable, "-m", "sanlab.cli", "run", str(scenario), "--out", str(out), "--esxtop-csv", "--quiet"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    return out


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run_with_csv(SERIES, tmp_path_factory.mktemp("series") / "run")


def _lines(path: Path) -> list[list[str]]:
    """The interval and avg lines of a summary.html: [clock, label, columns...]."""
    out = []
    for text in path.read_text(encoding="utf-8").splitlines():
        m = LINE.match(text)
        if m:
            out.append([m.group(1), m.group(2), *m.group(3).split()])
    return out


def test_summary_lines_per_run(run_dir: Path) -> None:
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert f"{safe_name('xfer xfersize=4k')}/vdbench/summary.html" in manifest["files"]
    for run, bytes_io in (("xfer xfersize=4k", 4096), ("xfer xfersize=64k", 65536), ("curve xfersize=8k", 8192)):
        folder = safe_name(run)
        text = (run_dir / folder / "vdbench/summary.html").read_text(encoding="utf-8")
        assert "Starting RD=" in text
        lines = _lines(run_dir / folder / "vdbench/summary.html")
        # Intervals 1-4 (elapsed=4, interval=1), then vdbench's avg_2-4 (the first left out).
        assert [line[1] for line in lines] == ["1", "2", "3", "4", "avg_2-4"], lines
        for line in lines:
            rate, mib, per_io, resp, depth = float(line[2]), float(line[3]), int(line[4]), float(line[6]), float(line[-1])
            assert per_io == bytes_io, line
            assert mib == pytest.approx(rate * bytes_io / 1024**2, rel=1e-3)
            assert depth == pytest.approx(rate * resp / 1000, abs=0.1)
        avg = lines[-1]
        assert float(avg[5]) == pytest.approx(70, abs=3), "read pct from the run's totals"
        assert all(cell == "-" for cell in lines[1][5:6] + lines[1][7:11]), "not sampled per interval"
        assert float(avg[9]) >= float(avg[6]), "resp max at least the mean"
        assert float(avg[10]) > 0, "resp stddev"


def test_curve_point_summary_names_its_rate(run_dir: Path) -> None:
    summary = run_dir / safe_name("curve_(50%) xfersize=8k") / "vdbench/summary.html"
    text = summary.read_text(encoding="utf-8")
    m = re.search(r"Starting RD=curve_\(50%\) xfersize=8k; I/O rate: (\d+)", text)
    assert m, text
    avg = _lines(summary)[-1]
    assert float(avg[2]) == pytest.approx(int(m.group(1)), rel=0.03)


def test_esxtop_csv_is_perfmon_layout(run_dir: Path) -> None:
    with (run_dir / safe_name("xfer xfersize=4k") / "esxtop.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    assert header[0] == "(PDH-CSV 4.0) (UTC)(0)"
    commands = [i for i, h in enumerate(header) if re.fullmatch(r"\\\\esx1\\Physical Disk SCSI Device\(.+\)\\Commands/sec", h)]
    assert len(commands) == 1, header
    assert any(h.endswith("\\Average Guest MilliSec/Command") for h in header)
    assert any(re.fullmatch(r"\\\\esx1\\Physical Disk Path\(.+\)\\Average Driver MilliSec/Command", h) for h in header)
    assert len(rows) == 1 + 4, "one row per sample"
    assert re.fullmatch(r"\d\d/\d\d/\d{4} \d\d:\d\d:\d\d", rows[1][0])
    # Reads and writes apart: they add up to Commands/sec, at rdpct=70, 4k each; the kernel's
    # time is the guest's less the driver's.
    col = {h.rsplit("\\", 1)[1]: i for i, h in enumerate(header) if "Physical Disk SCSI Device" in h}
    for row in rows[1:]:
        v = {name: float(row[i]) for name, i in col.items()}
        assert v["Reads/sec"] + v["Writes/sec"] == pytest.approx(v["Commands/sec"], rel=1e-3)
        assert v["Reads/sec"] / v["Commands/sec"] == pytest.approx(0.7, abs=0.03)
        assert v["MBytes Read/sec"] == pytest.approx(v["Reads/sec"] * 4096 / 1024**2, rel=1e-2)
        assert v["MBytes Written/sec"] == pytest.approx(v["Writes/sec"] * 4096 / 1024**2, rel=1e-2)
        for d in ("Command", "Read", "Write"):
            guest, driver, kernel = (v[f"Average {w} MilliSec/{d}"] for w in ("Guest", "Driver", "Kernel"))
            assert 0 < driver <= guest and kernel == pytest.approx(guest - driver, abs=0.011), (d, v)
    # The device's Commands/sec is the summary's i/o rate of the same interval.
    lines = _lines(run_dir / safe_name("xfer xfersize=4k") / "vdbench/summary.html")
    for row, line in zip(rows[1:], lines[:4], strict=True):
        assert float(row[commands[0]]) == pytest.approx(float(line[2]), rel=1e-3)


def test_summary_lines_at_the_files_interval(tmp_path: Path) -> None:
    """interval=2 over 500 ms samples: each summary line adds up four samples (the esxtop rows)."""
    parm = tmp_path / "two_s.vdb"
    parm.write_text("sd=sd1,size=1g\nwd=wd1,sd=sd1,xfersize=8k\nrd=rd1,wd=wd1,iorate=max,elapsed=6,interval=2\n", encoding="utf-8")
    text = SERIES.read_text(encoding="utf-8").replace('file = "parm/series.vdb"', f'file = "{parm}"')
    text = text.replace('warmup = "0s"', 'warmup = "0s"\nsample_interval = "500ms"').replace('duration = "4s"', 'duration = "6s"')
    scenario = tmp_path / "two_s.toml"
    scenario.write_text(text, encoding="utf-8")
    out = _run_with_csv(scenario, tmp_path / "run")
    folder = next(d for d in out.iterdir() if (d / "vdbench/summary.html").exists())
    lines = _lines(folder / "vdbench/summary.html")
    assert [(line[0], line[1]) for line in lines] == [("00:00:02.000", "1"), ("00:00:04.000", "2"), ("00:00:06.000", "3"), ("00:00:06.000", "avg_2-3")], lines
    with (folder / "esxtop.csv").open(newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    commands = next(i for i, h in enumerate(rows[0]) if re.fullmatch(r"\\\\esx1\\Physical Disk SCSI Device\(.+\)\\Commands/sec", h))
    per_sample = [float(row[commands]) for row in rows[1:]]
    assert len(per_sample) == 12
    for k, line in enumerate(lines[:3]):
        assert float(line[2]) == pytest.approx(sum(per_sample[4 * k : 4 * k + 4]) / 4, rel=1e-3), line
