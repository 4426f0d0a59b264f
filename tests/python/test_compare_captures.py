"""`sanlab compare RUN_DIR --iostat CAPTURE` and `--typeperf CAPTURE`: a Linux or Windows run beside
the capture its scenario was imported from, as `--esxtop` does for ESXi (one document and reader,
`hostimport/compare.py`): the tables, the JSON file (`iostat-compare.json`, `typeperf-compare.json`)
read back, the report's section kept by `sanlab report`; bad input one line and exit 2."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from sanlab.export.runfolder import RunFolderError
from sanlab.hostimport.compare import DISK_FIGURES, read_comparison
from test_report_browser import ARTIFACTS, CHROMIUM, Chromium, load_report

ROOT = Path(__file__).resolve().parents[2]
DS8K = ROOT / "tests/data/linux/multipath/linux-scsi.ibm-ds8k-create.txt"
DS8K_IOSTAT = ROOT / "tests/data/linux/iostat/constructed.ibm-ds8k.xt.txt"
RMS = ROOT / "tests/data/windows/mpclaim/rmscode.summary-and-disk1.txt"
HV01 = ROOT / "tests/data/windows/typeperf/constructed.hv01.physicaldisk.csv"
GORANS2 = ROOT / "tests/data/windows/typeperf/dbxtune.gorans2.physicaldisk.csv"
ESX1 = ROOT / "tests/data/esxi/cluster/esx1.csv"


def _sanlab(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sanlab.cli", *map(str, args)], capture_output=True, text=True, timeout=600, check=False, cwd=cwd)


@pytest.fixture(scope="module")
def linux_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("linux")
    assert _sanlab("import", "linux", "--multipath", DS8K, "--iostat", DS8K_IOSTAT, "-o", tmp / "ds8k.toml", "--duration", "3s").returncode == 0
    assert _sanlab("run", tmp / "ds8k.toml", "--quiet", "--out", tmp / "run").returncode == 0
    return tmp / "run"


@pytest.fixture(scope="module")
def windows_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("windows")
    assert _sanlab("import", "windows", "--mpclaim", RMS, "--typeperf", HV01, "-o", tmp / "hv01.toml", "--duration", "3s").returncode == 0
    assert _sanlab("run", tmp / "hv01.toml", "--quiet", "--out", tmp / "run").returncode == 0
    return tmp / "run"


def _figures(document: dict) -> dict[tuple[str, str], dict]:
    return {(f["entity"], f["figure"]): f for f in document["devices"]}


def test_iostat_beside_a_linux_run_with_its_listing(linux_run: Path) -> None:
    done = _sanlab("compare", linux_run, "--iostat", DS8K_IOSTAT, "--multipath", DS8K)
    assert done.returncode == 0, done.stderr
    assert "devices: the capture's mean against the run" in done.stdout and "links: share of all commands" in done.stdout
    document = read_comparison(linux_run / "iostat-compare.json")
    assert document["tool"] == "iostat" and document["variant"] == "base"
    figures = _figures(document)
    assert [f for (e, f) in figures if e == "mpathc"] == list(DISK_FIGURES)
    expected = {"IOPS": 5000, "read %": 80, "request KiB": 4, "queue": 2, "latency ms": 0.4, "read ms": 0.4, "write ms": 0.4}
    for figure, value in expected.items():
        f = figures[("mpathc", figure)]
        assert f["measured"] == pytest.approx(value, rel=1e-3), figure
        assert f["simulated"] == pytest.approx(value, rel=0.05), figure
        assert abs(f["error"]) < 0.05, figure
    # The paths sda (0:0:0) and sde (1:0:0) carry half each, measured and simulated.
    assert {f["entity"]: (round(f["measured"]), round(f["simulated"])) for f in document["links"]} == {"0:0:0": (50, 50), "1:0:0": (50, 50)}
    series = document["measured"]["mpathc"]
    assert sorted(series) == ["await_ms", "iops", "t_s"] and series["t_s"] == [0.0, 5.0, 10.0, 15.0]  # iostat -t's times
    page = (linux_run / "report.html").read_text(encoding="utf-8")
    assert 'id="section-measured-iostat"' in page and "mpathc: latency ms" in page
    # `sanlab report` keeps the section while the file is there.
    (linux_run / "report.html").unlink()
    assert _sanlab("report", linux_run).returncode == 0
    assert 'id="section-measured-iostat"' in (linux_run / "report.html").read_text(encoding="utf-8")


def test_iostat_without_the_listing_names_what_to_give(linux_run: Path, tmp_path: Path) -> None:
    """dm-0 is the map only the listing says; iostat -N prints the map's alias, matched by name."""
    done = _sanlab("compare", linux_run, "--iostat", DS8K_IOSTAT, "--json", tmp_path / "c.json")
    assert done.returncode == 2 and done.stderr.count("error:") == 1
    assert "none of the capture's devices (dm-0, sda, sde) is a device of the run (mpathc)" in done.stderr and "give --multipath" in done.stderr
    named = tmp_path / "named.txt"
    named.write_text(DS8K_IOSTAT.read_text().replace("dm-0 ", "mpathc "))
    done = _sanlab("compare", linux_run, "--iostat", named, "--json", tmp_path / "c.json")
    assert done.returncode == 0, done.stderr
    document = read_comparison(tmp_path / "c.json")
    assert _figures(document)[("mpathc", "IOPS")]["measured"] == pytest.approx(5000)
    assert document["links"] == [] and "no path shares: give --multipath" in done.stderr


def test_typeperf_beside_a_windows_run(windows_run: Path) -> None:
    done = _sanlab("compare", windows_run, "--typeperf", HV01)
    assert done.returncode == 0, done.stderr
    document = read_comparison(windows_run / "typeperf-compare.json")
    figures = _figures(document)
    expected = {"IOPS": 20000, "read %": 70, "request KiB": 8, "queue": 8, "latency ms": 0.4}
    for figure, value in expected.items():
        assert figures[("disk2", figure)]["measured"] == pytest.approx(value, rel=0.01), figure
        assert figures[("disk2", figure)]["simulated"] == pytest.approx(value, rel=0.05), figure
    assert document["links"] == [] and "per disk, not per path" in done.stderr
    assert "in the capture, not in the run: 0 C:, 1 D:" in done.stderr
    assert document["measured"]["disk2"]["t_s"][:2] == [0.0, pytest.approx(5.007)]
    assert 'id="section-measured-typeperf"' in (windows_run / "report.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("option", "capture", "said"),
    [
        ("--typeperf", GORANS2, "none of the capture's devices (0 C:) is a device of the run (disk2): is it the host the run was imported from (GORANS2)?"),
        ("--iostat", HV01, "this is an esxtop or typeperf capture (PDH-CSV), not an `iostat -x` capture"),
        ("--typeperf", DS8K_IOSTAT, "not a typeperf capture"),
        ("--typeperf", ESX1, "expected columns of PhysicalDisk"),
        ("--multipath", DS8K, "--multipath goes with --iostat"),
    ],
)
def test_bad_input_is_one_line(windows_run: Path, tmp_path: Path, option: str, capture: Path, said: str) -> None:
    done = _sanlab("compare", windows_run, option, capture, "--json", tmp_path / "c.json")
    assert done.returncode == 2 and done.stderr.count("error:") == 1 and said in done.stderr, done.stderr
    assert not (tmp_path / "c.json").exists()


def test_two_captures_at_once_are_refused(windows_run: Path) -> None:
    done = _sanlab("compare", windows_run, "--typeperf", HV01, "--iostat", DS8K_IOSTAT)
    assert done.returncode == 2 and "not allowed with argument" in done.stderr


def test_a_comparison_file_of_another_tool_or_shape_is_damaged(tmp_path: Path) -> None:
    base = {"tool": "iostat", "capture": "c", "variant": "base", "devices": [], "links": [], "notes": [], "measured": {"d": {"t_s": [0.0], "iops": [1.0], "await_ms": [0.4]}}}
    path = tmp_path / "iostat-compare.json"
    path.write_text(json.dumps(base))
    assert read_comparison(path)["tool"] == "iostat"
    for change, said in (({"tool": "perfmon"}, "tool: expected one of esxtop, iostat, typeperf"), ({"measured": {"d": {"t_s": [0.0], "iops": [1.0], "davg_ms": [0.4]}}}, "expected an object of t_s, iops and await_ms")):
        path.write_text(json.dumps({**base, **change}))
        with pytest.raises(RunFolderError, match=said):
            read_comparison(path)
    # A file written before the tool was named is esxtop's.
    old = {**base, "measured": {"d": {"t_s": [0.0], "iops": [1.0], "davg_ms": [0.4]}}}
    del old["tool"]
    path.write_text(json.dumps(old))
    assert "tool" not in read_comparison(path)



@pytest.fixture
def chromium() -> Iterator[Chromium]:
    """test_report_browser's headless Chromium, with a fresh profile."""
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (`make test` does: apt-get install chromium)")
    profile = Path(tempfile.mkdtemp(prefix="sanlab-chromium-"))
    browser = Chromium(profile)
    try:
        yield browser
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)


def test_the_sections_render_offline(chromium: Chromium, linux_run: Path, windows_run: Path) -> None:
    """The iostat and typeperf sections draw their figures in headless Chromium, offline, without a
    JavaScript error (test_report_browser's harness)."""
    assert _sanlab("compare", linux_run, "--iostat", DS8K_IOSTAT, "--multipath", DS8K).returncode == 0
    assert _sanlab("compare", windows_run, "--typeperf", HV01).returncode == 0
    for run, key in ((linux_run, "iostat-compare"), (windows_run, "typeperf-compare")):
        figures = load_report(chromium, run / "report.html", ARTIFACTS / f"report-{key}.png")
        found = [figure for figure in figures if figure["key"] == key]
        # One device: its IOPS and latency, measured and simulated.
        assert len(found) == 1 and found[0]["rendered"] and found[0]["traces"] == 4, found
