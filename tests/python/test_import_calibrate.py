"""`sanlab import esxi|linux|windows … --calibrate`: the twin fitted in one step. The capture's VM
figures become `NAME.points.csv`, each measured array's service time (the direction most of its
requests took) is fitted by `sanlab calibrate`'s machinery, and `NAME.calibrated.toml` (based on
the imported scenario) runs at the capture's IOPS within 5 % and latency within 10 %; without a
capture it is one line and writes nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DS8K = ROOT / "tests/data/linux/multipath/linux-scsi.ibm-ds8k-create.txt"
DS8K_IOSTAT = ROOT / "tests/data/linux/iostat/constructed.ibm-ds8k.xt.txt"
RMS = ROOT / "tests/data/windows/mpclaim/rmscode.summary-and-disk1.txt"
HV01 = ROOT / "tests/data/windows/typeperf/constructed.hv01.physicaldisk.csv"
FAST = ("--generations", "3", "--popsize", "4", "--fit-duration", "2s")


def _sanlab(*args: object, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sanlab.cli", *map(str, args)], capture_output=True, text=True, timeout=600, check=False, cwd=cwd)


def _run(scenario: Path, out: Path) -> dict:
    done = _sanlab("run", scenario, "--quiet", "--duration", "3s", "--json", "--out", out)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["variants"][0]


@pytest.mark.parametrize(
    ("platform", "inputs", "iops", "lat_ms", "key"),
    [
        ("linux", ("--multipath", DS8K, "--iostat", DS8K_IOSTAT), 5000, 0.4, "read_latency"),
        ("windows", ("--mpclaim", RMS, "--typeperf", HV01), 20000, 0.4, "read_latency"),
    ],
    ids=["linux", "windows"],
)
def test_the_calibrated_twin_runs_at_the_capture_s_load(tmp_path: Path, platform: str, inputs: tuple, iops: float, lat_ms: float, key: str) -> None:
    done = _sanlab("import", platform, *inputs, "-o", "host.toml", "--calibrate", *FAST, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "measured and fitted" in done.stdout and f"array[0].media.{key}" in done.stdout
    points = (tmp_path / "host.points.csv").read_text().splitlines()
    assert points[0] == "label,vm:vm1:iops,vm:vm1:lat_ms"
    figures = [float(x) for x in points[1].split(",")[1:]]
    assert figures == [pytest.approx(iops, rel=0.01), pytest.approx(lat_ms, rel=0.01)]
    calibrated = tomllib.loads((tmp_path / "host.calibrated.toml").read_text())
    assert calibrated["base"] == "host.toml" and key in calibrated["array"][0]["media"]
    vm = _run(tmp_path / "host.calibrated.toml", tmp_path / "run")["vms"][0]
    assert vm["iops"] == pytest.approx(iops, rel=0.05) and vm["lat_ms"]["mean"] == pytest.approx(lat_ms, rel=0.10)


def test_an_esxi_host_s_twin_takes_the_guest_latency(tmp_path: Path) -> None:
    """esx1's capture: a mixed open loop of 1,333 commands/s whose guest saw 1.12 ms (GAVG) over a
    DAVG of 0.90 ms. The import's array (the DAVG per direction) answers faster than the guest saw;
    the fit moves the reads' service time (three quarters of the commands) until the twin's VM sees
    the capture's GAVG."""
    cluster = ROOT / "tests/data/esxi/cluster"
    done = _sanlab("import", "esxi", "--esxcli", cluster / "esx1", "--esxtop", cluster / "esx1.csv", "-o", "esx1.toml", "--calibrate", *FAST, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "--rate_iops=1000,333.333" in (tmp_path / "esx1.toml").read_text()  # a rate per direction
    imported = _run(tmp_path / "esx1.toml", tmp_path / "imported")["vms"][0]
    twin = _run(tmp_path / "esx1.calibrated.toml", tmp_path / "twin")["vms"][0]
    assert imported["lat_ms"]["mean"] < 1.0  # DAVG alone: the guest's 0.2 ms more are not in it
    assert twin["iops"] == pytest.approx(1333.33, rel=0.05) and twin["lat_ms"]["mean"] == pytest.approx(1.12, rel=0.10)
    # The cluster of three such hosts: one point of each host's VM, one array fitted for all.
    hosts = [arg for k in (1, 2, 3) for arg in ("--esxcli", cluster / f"esx{k}", "--host", f"esx{k}", "--esxtop", cluster / f"esx{k}.csv")]
    done = _sanlab("import", "esxi", *hosts, "-o", "cluster.toml", "--calibrate", *FAST, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "cluster.points.csv").read_text().startswith("label,vm:esx1_vm1:iops,vm:esx1_vm1:lat_ms,vm:esx2_vm1:iops")
    for vm in _run(tmp_path / "cluster.calibrated.toml", tmp_path / "cluster")["vms"]:
        assert vm["iops"] == pytest.approx(1333.33, rel=0.05) and vm["lat_ms"]["mean"] == pytest.approx(1.12, rel=0.10), vm["name"]


def test_calibrate_without_a_capture_is_one_line(tmp_path: Path) -> None:
    for platform, inputs, option in (("linux", ("--multipath", DS8K), "--iostat FILE"), ("windows", ("--mpclaim", RMS), "--typeperf FILE")):
        done = _sanlab("import", platform, *inputs, "-o", tmp_path / "host.toml", "--calibrate")
        assert done.returncode == 2 and done.stderr.count("error:") == 1 and f"give the capture ({option})" in done.stderr, done.stderr
        assert not list(tmp_path.iterdir())


def test_calibrate_files_never_replace_an_input(tmp_path: Path) -> None:
    """`-o x.toml --calibrate` writes x.points.csv: an input of that name is refused first."""
    capture = tmp_path / "host.points.csv"
    capture.write_bytes(DS8K_IOSTAT.read_bytes())
    done = _sanlab("import", "linux", "--multipath", DS8K, "--iostat", capture, "-o", tmp_path / "host.toml", "--calibrate")
    assert done.returncode == 2 and done.stderr.count("error:") == 1, done.stderr
    assert capture.read_bytes() == DS8K_IOSTAT.read_bytes() and not (tmp_path / "host.toml").exists()
