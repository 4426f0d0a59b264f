"""`sanlab import esxi` as a user types it: real public listings in, a scenario that runs out; bad
input one line and exit 2."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from sanlab import engine

ROOT = Path(__file__).resolve().parents[2]
ESXCLI = ROOT / "tests/data/esxi/esxcli"


def _sanlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sanlab.cli", *args], capture_output=True, text=True, timeout=300, check=False)


def test_public_listings_become_a_scenario_that_runs(tmp_path: Path) -> None:
    out = tmp_path / "clariion.toml"
    # One host's listings, from the same post: a CLARiiON LUN under FIXED, one path optimized.
    p = _sanlab("import", "esxi", "--esxcli", str(ESXCLI / "nmp-device-list.esx40-clariion.txt"), str(ESXCLI / "nmp-path-list.esx40-clariion.txt"), "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert f"wrote {out}" in p.stdout
    doc = tomllib.loads(out.read_text())
    assert doc["volume"][0]["psp"] == {"kind": "fixed", "preferred": "vmhba2:C0:T1"}
    assert [(q["name"], q["alua"]) for q in doc["path"]] == [("vmhba2:C0:T1", "AO"), ("vmhba2:C0:T0", "ANO")]
    assert "nmp-path-list.esx40-clariion.txt:9" in out.read_text(), "each value names its listing and line"
    engine.validate(out)
    run = _sanlab("run", str(out), "--duration", "2s", "--out", str(tmp_path / "run"), "--quiet")
    assert run.returncode == 0, run.stderr


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    p = _sanlab("import", "esxi", "--esxcli", str(ROOT / "tests/data/traces/msr.csv"), "-o", str(tmp_path / "x.toml"))
    assert p.returncode == 2
    assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1, p.stderr
    assert not (tmp_path / "x.toml").exists()
    # A capture of another host: none of its devices is in the listings.
    capture = ROOT / "tests/data/esxi/esxtop/assembled_storage_pst.csv"
    p = _sanlab("import", "esxi", "--esxcli", str(ESXCLI / "nmp-device-list.esx40-clariion.txt"), str(ESXCLI / "nmp-path-list.esx40-clariion.txt"), "--esxtop", str(capture), "-o", str(tmp_path / "y.toml"))
    assert p.returncode == 2, p.stderr
    assert "none of the capture's devices" in p.stderr and "same host" in p.stderr, p.stderr


def test_a_duration_is_escaped_and_the_scenario_read_back_before_it_is_written(tmp_path: Path) -> None:
    """`--duration` went into the TOML unquoted: a `"` in it added keys; now it is escaped, and a
    scenario the engine refuses is said, not written."""
    listings = [str(ESXCLI / "nmp-device-list.esx40-clariion.txt"), str(ESXCLI / "nmp-path-list.esx40-clariion.txt")]
    out = tmp_path / "host.toml"
    p = _sanlab("import", "esxi", "--esxcli", *listings, "--duration", '5s"\nwarmup = "1s', "-o", str(out))
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("error: the scenario imported does not validate") and p.stderr.count("\n") == 1, p.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == [], "nothing written, no temporary left"
    p = _sanlab("import", "esxi", "--esxcli", *listings, "--duration", "5s", "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert tomllib.loads(out.read_text())["run"] == {"duration": "5s"}


def test_compare_with_a_capture_takes_one_run(tmp_path: Path) -> None:
    capture = ROOT / "tests/data/esxi/esxtop/assembled_storage_pst.csv"
    p = _sanlab("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--esxtop", str(capture))
    assert p.returncode == 2
    assert p.stderr == "error: compare --esxtop compares one run folder with the capture: give one RUN_DIR\n"


def test_listings_and_captures_of_different_hosts_are_refused(tmp_path: Path) -> None:
    # Three posts' listings: none shares a path or device with another.
    p = _sanlab("import", "esxi", "--esxcli", str(ESXCLI / "core-path-list.vnx-fc.txt"), str(ESXCLI / "nmp-path-list.esx40-clariion.txt"), "-o", str(tmp_path / "mix.toml"))
    assert p.returncode == 2 and "the path listings share no path" in p.stderr and "give listings of one host" in p.stderr, p.stderr
    # A capture without a device group (an NFS datastore only), a missing one.
    listings = [str(ESXCLI / "nmp-device-list.esx40-clariion.txt"), str(ESXCLI / "nmp-path-list.esx40-clariion.txt")]
    p = _sanlab("import", "esxi", "--esxcli", *listings, "--esxtop", str(ROOT / "tests/data/esxi/esxtop/elatov_nfs_2012.csv"), "-o", str(tmp_path / "nfs.toml"))
    assert p.returncode == 2 and "no Physical Disk SCSI Device group" in p.stderr, p.stderr
    p = _sanlab("import", "esxi", "--esxcli", *listings, "--esxtop", str(tmp_path / "nope.csv"), "-o", str(tmp_path / "nope.toml"))
    assert p.returncode == 2 and "no such file: expected an esxtop batch capture" in p.stderr, p.stderr
