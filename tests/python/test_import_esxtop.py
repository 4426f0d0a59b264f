"""The esxtop batch reader (`sanlab.hostimport.esxtop`) on public captures (tests/data/esxi/esxtop,
SOURCES.md names each), on a capture `sanlab run --esxtop-csv` wrote, and on each kind of bad
input. Values are checked against the files themselves (read here with the csv module) and against
the run's own results."""

from __future__ import annotations

import csv
import gzip
import json
import math
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from sanlab.hostimport.esxtop import DEVICE, NFS, PATH, VIRTUAL_DISK, WORLD, CaptureError, read_capture

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests/data/esxi/esxtop"
NFS_FILE = DATA / "elatov_nfs_2012.csv"
VDISK_FILE = DATA / "elatov_vdisk_2012.csv"
ASSEMBLED = DATA / "assembled_storage_pst.csv"
NO_STORAGE = DATA / "visualesxtop_origincsvfile.csv"
ONE_VM = ROOT / "tests/data/scenarios/one_vm.toml"
NAA = "naa.89019b90c32f1b3212a6dcded7c1a8e8"


def _columns(path: Path) -> dict[str, list[str]]:
    """Each header cell -> its column's cells, read plainly with the csv module."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return {name: [row[i] for row in rows[1:]] for i, name in enumerate(rows[0])}


def _floats(cells: list[str]) -> list[float]:
    return [float(c) if c else math.nan for c in cells]


# --- Public captures -------------------------------------------------------------------------


def test_elatov_nfs_trim_reads_as_the_post_prints_it() -> None:
    cap = read_capture(NFS_FILE)
    assert cap.host == "local"
    assert (cap.zone, cap.bias_min) == ("UTC", 0)
    assert cap.start == datetime(2012, 12, 11, 20, 20, 0, tzinfo=timezone.utc)
    # esxtop's 3 s interval, with its drift (20:20:06 -> 20:20:10).
    assert cap.t_s.tolist() == [0, 3, 6, 10, 13, 16, 19, 22, 25, 28]
    assert cap.entities() == [(NFS, "NFS_Datastore")]
    cols = _columns(NFS_FILE)
    for counter in ("Reads/sec", "Average Guest MilliSec/Read"):
        expected = _floats(cols[f"\\\\local\\{NFS}(NFS_Datastore)\\{counter}"])
        assert cap.get(NFS, "NFS_Datastore", counter).tolist() == expected
    # The spike the post finds: 171.45 ms at 20:20:13 while reads ran at 352.22/s.
    at = cap.t_s.tolist().index(13.0)
    assert cap.get(NFS, "NFS_Datastore", "Average Guest MilliSec/Read")[at] == 171.45
    assert cap.get(NFS, "NFS_Datastore", "Reads/sec")[at] == 352.22
    assert cap.columns[(NFS, "NFS_Datastore", "Reads/sec")].number == 2
    assert cap.notes == [] and cap.unused_counters == []


def test_elatov_virtual_disks_keep_parenthesised_names_whole() -> None:
    cap = read_capture(VDISK_FILE)
    vms = cap.instances(VIRTUAL_DISK)
    assert len(vms) == 15
    assert "SQL01 (104c07ff-3663-44fb-9d89-a563c801611c):scsi0:1" in vms
    cols = _columns(VDISK_FILE)
    for vm in vms:
        assert cap.get(VIRTUAL_DISK, vm, "Reads/sec").tolist() == _floats(cols[f"\\\\local\\{VIRTUAL_DISK}({vm})\\Reads/sec"])
    # A VM's own row adds up its disks' (the capture's, not ours: 6.36 and 345.87 reads/s).
    for vm in ("SQL02 (df09cdf2-1e74-45fb-9ccc-90d1c402fc6b)", "SQL01 (104c07ff-3663-44fb-9d89-a563c801611c)"):
        disks = [v for v in vms if v.startswith(vm + ":")]
        assert len(disks) >= 5
        total = sum(cap.get(VIRTUAL_DISK, d, "Reads/sec")[0] for d in disks)
        assert cap.get(VIRTUAL_DISK, vm, "Reads/sec")[0] == pytest.approx(total)
    # Both trims come from one capture: the 20:20:13 row agrees with the NFS trim's.
    nfs = read_capture(NFS_FILE)
    at = nfs.t_s.tolist().index(13.0)
    assert cap.start == nfs.start + timedelta(seconds=13)
    for counter in ("Reads/sec", "Average Guest MilliSec/Read"):
        assert cap.get(NFS, "NFS_Datastore", counter)[0] == nfs.get(NFS, "NFS_Datastore", counter)[at]


def test_unquoted_and_gzipped_captures_read_the_same(tmp_path: Path) -> None:
    text = NFS_FILE.read_text(encoding="utf-8")
    plain = tmp_path / "unquoted.csv"
    plain.write_text(text.replace('"', ""), encoding="utf-8")
    packed = tmp_path / "capture.csv.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    ref = read_capture(NFS_FILE)
    for path in (plain, packed):
        cap = read_capture(path)
        assert cap.t_s.tolist() == ref.t_s.tolist()
        assert cap.get(NFS, "NFS_Datastore", "Reads/sec").tolist() == ref.get(NFS, "NFS_Datastore", "Reads/sec").tolist()


def test_wanted_restricts_groups_and_the_rest_is_listed() -> None:
    cap = read_capture(VDISK_FILE, wanted={VIRTUAL_DISK: {"Reads/sec"}})
    assert {g for g, _ in cap.entities()} == {VIRTUAL_DISK}
    assert cap.unused_counters == [f"{NFS}\\Average Guest MilliSec/Read", f"{NFS}\\Reads/sec"]
    assert "2 counters present and not used" in cap.note()
    assert cap.groups == {NFS: 2, VIRTUAL_DISK: 15}


def test_assembled_capture_zone_groups_and_odd_names() -> None:
    """The stand-in assembled from public parsers' header cells (values ours, SOURCES.md)."""
    cap = read_capture(ASSEMBLED)
    assert cap.host == "esx01.example.com"
    assert (cap.zone, cap.bias_min) == ("Pacific Standard Time", 480)
    assert cap.start == datetime(2024, 3, 4, 10, 0, 0, tzinfo=timezone(timedelta(hours=-8)))
    assert str(cap.times_utc[0]) == "2024-03-04T18:00:00.000000"
    assert cap.t_s.tolist() == [0, 5, 10]
    assert {g for g, _ in cap.entities()} == {DEVICE, PATH, WORLD, VIRTUAL_DISK, "Physical Disk Adapter", "Physical Disk"}
    cols = _columns(ASSEMBLED)
    for (group, instance, counter), col in cap.columns.items():
        assert col.name == f"\\\\esx01.example.com\\{group}({instance})\\{counter}"
        np.testing.assert_array_equal(cap.get(group, instance, counter), _floats(cols[col.name]))
    odd = "web, db (old) \\ test:scsi0:0"
    assert odd in cap.instances(VIRTUAL_DISK)
    # A world that exits leaves empty cells: NaN, not an error.
    world = cap.get(WORLD, f"{NAA}-2012201", "Commands/sec")
    assert world[:2].tolist() == [1200.0, 2000.0] and math.isnan(world[2])
    # Non-storage columns are not converted (Group Memory's Memctl? holds "Y"), but listed.
    assert "Group Memory\\Memctl?" in cap.unused_counters
    assert f"{DEVICE}\\Aborts/sec" in cap.unused_counters
    assert cap.groups["Memory"] == 1 and cap.groups[DEVICE] == 31
    dev = cap.series[(DEVICE, NAA)]
    assert len(dev) == 21  # 31 per-LUN counters, 21 of them used
    gavg, davg, kavg = (dev[f"Average {w} MilliSec/Command"] for w in ("Guest", "Driver", "Kernel"))
    np.testing.assert_allclose(gavg, davg + kavg)
    paths = sum(cap.get(PATH, p, "Commands/sec") for p in cap.instances(PATH))
    np.testing.assert_allclose(paths, dev["Commands/sec"])
    frame = cap.to_frame()
    assert frame.shape == (3, sum(len(v) for v in cap.series.values()))
    assert frame[(DEVICE, NAA, "Reads/sec")].tolist() == [900.0, 1500.0, 600.0]


# --- A capture sanlab wrote --------------------------------------------------------------------

ROUND_TRIP = f"""
schema_version = 1
name = "esxtop_roundtrip"
base = "{ONE_VM.as_posix()}"

[run]
duration = "3s"

[[host]]
name = "h"
adapter = {{ kind = "ideal" }}
multipath = {{ psp = {{ kind = "rr", iops = 1 }} }}

[[path]]
name = "p0"
host = "h"
array = "a"

[[path]]
name = "p1"
host = "h"
array = "a"

[[vm]]
name = "vm"
host = "h"
volume = "lun"
adapter = {{ kind = "ideal" }}

[[vm.job]]
kind = "fio"
cmdline = "--name=job --rw=randrw --rwmixread=70 --bs=8k --iodepth=8"
"""


@pytest.fixture(scope="module")
def sanlab_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("esxtop_rt")
    scenario = tmp / "rt.toml"
    scenario.write_text(ROUND_TRIP, encoding="utf-8")
    out = tmp / "run"
    p = subprocess.run(
        [sys.executable, "-m", "sanlab.cli", "run", str(scenario), "--out", str(out), "--esxtop-csv", "--quiet"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert p.returncode == 0, p.stderr
    return out


def test_sanlab_capture_reads_back_what_the_run_reported(sanlab_run: Path) -> None:
    variant = json.loads((sanlab_run / "results.json").read_text())["variants"][0]
    cap = read_capture(sanlab_run / "base/esxtop.csv")
    assert cap.host == "h" and cap.zone == "UTC"
    assert cap.samples == int(variant["measured_s"])
    assert np.diff(cap.t_s).tolist() == [1.0] * (cap.samples - 1)
    [device] = variant["devices"]
    dev = cap.series[(DEVICE, device["name"])]
    assert dev["Commands/sec"].mean() == pytest.approx(device["iops"], rel=1e-3)
    np.testing.assert_allclose(dev["Reads/sec"] + dev["Writes/sec"], dev["Commands/sec"])
    assert dev["Reads/sec"].sum() / dev["Commands/sec"].sum() == pytest.approx(0.7, abs=0.02)
    # sanlab writes DQLEN as "Queue Depth"; it is read as esxtop's "Device Q Depth".
    assert dev["Device Q Depth"].tolist() == [device["queue_depth"]] * cap.samples
    assert any("'Queue Depth' read as 'Device Q Depth'" in n for n in cap.notes)
    assert dev["Active Commands"].mean() == pytest.approx(device["actv_mean"], abs=0.01)
    assert dev["Average Driver MilliSec/Command"].mean() == pytest.approx(device["davg_ms"], abs=0.01)
    assert dev["Average Guest MilliSec/Command"].mean() == pytest.approx(device["gavg_ms"], abs=0.01)
    total = dev["Commands/sec"].sum()
    for path in variant["paths"]:
        series = cap.get(PATH, path["name"], "Commands/sec")
        assert series.mean() == pytest.approx(path["iops"], rel=1e-3)
        assert series.sum() / total == pytest.approx(path["share"], abs=0.005)


# --- Bad input ---------------------------------------------------------------------------------


def _error(path: Path) -> CaptureError:
    with pytest.raises(CaptureError) as e:
        read_capture(path)
    assert str(path) in str(e.value)
    return e.value


def test_another_tools_csv() -> None:
    msr = ROOT / "tests/data/traces/msr.csv"  # an MSR Cambridge block trace
    e = _error(msr)
    assert "line 1, column 1" in str(e) and "(PDH-CSV 4.0)" in str(e) and "not an esxtop batch capture" in str(e)
    assert (e.line, e.column) == (1, 1)


def test_capture_without_storage_groups_lists_what_it_has() -> None:
    e = _error(NO_STORAGE)  # VisualEsxtop's sample: CPU and memory only
    assert "no storage group" in str(e)
    assert "Memory (7 columns), Physical Cpu (4 columns)" in str(e)
    assert "Physical Disk SCSI Device" in str(e)


def test_truncated_last_row_is_dropped_with_a_note(tmp_path: Path) -> None:
    cut = tmp_path / "cut.csv"
    data = NFS_FILE.read_bytes()
    cut.write_bytes(data[: len(data) - 12])  # inside the last row: '"12/11/2012 20:20:28","0.0'
    cap = read_capture(cut)
    assert cap.samples == 9
    assert cap.get(NFS, "NFS_Datastore", "Reads/sec").tolist() == read_capture(NFS_FILE).get(NFS, "NFS_Datastore", "Reads/sec")[:9].tolist()
    [note] = cap.notes
    assert f"{cut}: line 11: the last row is cut short" in note and "dropped" in note


def test_cut_without_a_whole_row_is_an_error(tmp_path: Path) -> None:
    cut = tmp_path / "cut.csv"
    lines = NFS_FILE.read_text().splitlines(keepends=True)
    cut.write_text(lines[0] + lines[1][:25], encoding="utf-8")
    e = _error(cut)
    assert "expected at least one sample" in str(e)


def test_short_row_inside_the_capture(tmp_path: Path) -> None:
    bad = tmp_path / "short.csv"
    lines = NFS_FILE.read_text().splitlines(keepends=True)
    lines[4] = '"12/11/2012 20:20:10","481.29"\n'
    bad.write_text("".join(lines), encoding="utf-8")
    e = _error(bad)
    assert f"{bad}: line 5: expected 3 cells" in str(e) and "found 2" in str(e)


def test_non_numeric_value(tmp_path: Path) -> None:
    bad = tmp_path / "nan.csv"
    bad.write_text(NFS_FILE.read_text().replace('"418.35"', '"n/a"'), encoding="utf-8")
    e = _error(bad)
    assert f"line 4, column 2 (\\\\local\\{NFS}(NFS_Datastore)\\Reads/sec): expected a number of at most 2^64 (an empty cell for a missing value), found 'n/a'" in str(e)
    assert (e.line, e.column) == (4, 2)


def test_time_not_esxtops(tmp_path: Path) -> None:
    bad = tmp_path / "time.csv"
    bad.write_text(NFS_FILE.read_text().replace("12/11/2012 20:20:06", "2012-12-11T20:20:06"), encoding="utf-8")
    e = _error(bad)
    assert "line 4, column 1: expected a time MM/DD/YYYY HH:MM:SS, found '2012-12-11T20:20:06'" in str(e)


def test_empty_file_and_header_only(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("", encoding="utf-8")
    assert "found an empty file" in str(_error(empty))
    header = tmp_path / "header.csv"
    header.write_text(NFS_FILE.read_text().splitlines(keepends=True)[0], encoding="utf-8")
    assert "line 2: expected at least one sample" in str(_error(header))


def test_two_hosts_in_one_capture(tmp_path: Path) -> None:
    bad = tmp_path / "hosts.csv"
    text = VDISK_FILE.read_text()
    bad.write_text(text.replace("\\\\local\\Virtual Disk(Linux", "\\\\esx02\\Virtual Disk(Linux"), encoding="utf-8")
    e = _error(bad)
    assert "expected one host's capture" in str(e) and "esx02, local" in str(e)
