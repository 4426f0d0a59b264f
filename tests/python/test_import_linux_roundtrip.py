"""`sanlab import linux`'s round trip: a Linux host simulated (a dm-multipath map with service-time
over four paths, two ALUA optimized and two not, under a closed loop; an NVMe subsystem over two
controllers with round-robin under Poisson arrivals of reads and writes), its `multipath -ll` and `nvme list-subsys`
written as they print them and its counters as `iostat -xty` prints them (sysstat 12.3 and
later), imported and simulated again: each device's IOPS within 5 %, latency within 10 %, the
paths' shares within 2 points; and `sanlab compare --iostat` says so of the second run against
the capture."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from sanlab.hostimport.compare import read_comparison
from sanlab.hostimport.esxtop import DEVICE, PATH, Capture, read_capture

# One array of two controllers behind the map (links 1:0:0 and 2:0:0 to controller 1, optimized;
# 1:0:1 and 2:0:1 to controller 2, not), one NVM subsystem on an array of its own.
ORIGINAL = """schema_version = 1
name = "original"
[run]
duration = "6s"
warmup = "1s"
[[array]]
name = "array1"
controllers = 2
media = { kind = "flash", read_latency = "300us", write_latency = "80us", servers = 64 }
[[array]]
name = "array2"
media = { kind = "flash", read_latency = "120us", write_latency = "40us", servers = 64 }
[[volume]]
name = "mpatha"
arrays = ["array1"]
[[volume]]
name = "nvme-subsys0"
arrays = ["array2"]
psp = { kind = "nvme_round_robin" }
[[host]]
name = "lnx1"
adapter = { kind = "fc" }
multipath = { psp = { kind = "dm_service_time" } }
""" + "".join(
    f'[[path]]\nname = "{name}"\nhost = "lnx1"\narray = "array1"\nadapter = "host{name[0]}"\ncontroller = {1 + int(name[-1])}\n' + ('alua = "ANO"\n' if name.endswith("1") else "")
    for name in ("1:0:0", "2:0:0", "1:0:1", "2:0:1")
) + "".join(
    f'[[path]]\nname = "nvme{k}"\nhost = "lnx1"\narray = "array2"\nadapter = "nn-0x2000f4c7aa0cd7c{k + 2}:pn-0x2100f4c7aa0cd7c{k + 2}"\n' for k in range(2)
) + """[[vm]]
name = "db"
host = "lnx1"
volume = "mpatha"
adapter = { kind = "ideal" }
[[vm.job]]
cmdline = "--name=db --ioengine=libaio --rw=randrw --rwmixread=70 --bs=8k --iodepth=16"
[[vm]]
name = "web"
host = "lnx1"
volume = "nvme-subsys0"
adapter = { kind = "ideal" }
[[vm.job]]
cmdline = "--name=web --ioengine=libaio --rw=randrw --rwmixread=80 --bs=4k --iodepth=64 --rate_iops=2400,600 --rate_process=poisson"
"""

MULTIPATH = """mpatha (3600a098038303053453f463045727a41) dm-0 NETAPP,LUN C-Mode
size=100G features='3 queue_if_no_path pg_init_retries 50' hwhandler='1 alua' wp=rw
|-+- policy='service-time 0' prio=50 status=active
| |- 1:0:0:1 sdb 8:16 active ready running
| `- 2:0:0:1 sdc 8:32 active ready running
`-+- policy='service-time 0' prio=10 status=enabled
  |- 1:0:1:1 sdd 8:48 active ready running
  `- 2:0:1:1 sde 8:64 active ready running
"""
"""ORIGINAL's map as `multipath -ll` prints it (RHEL 8 and later): the optimized group first."""
DISKS = {"sdb": "1:0:0", "sdc": "2:0:0", "sdd": "1:0:1", "sde": "2:0:1"}

NVME = """nvme-subsys0 - NQN=nqn.1992-08.com.netapp:sn.f7565b15a66911ef9668d039ea951c46:subsystem.lnx1
               hostnqn=nqn.2014-08.org.nvmexpress:uuid:4c4c4544-0056-5410-8048-c7c04f425633
               iopolicy=round-robin
\\
 +- nvme0 fc traddr=nn-0x2036d039ea951c45:pn-0x2038d039ea951c45,host_traddr=nn-0x2000f4c7aa0cd7c2:pn-0x2100f4c7aa0cd7c2 live optimized
 +- nvme1 fc traddr=nn-0x2036d039ea951c45:pn-0x2037d039ea951c45,host_traddr=nn-0x2000f4c7aa0cd7c3:pn-0x2100f4c7aa0cd7c3 live optimized
"""
"""ORIGINAL's subsystem as nvme-cli 2.x prints `nvme list-subsys /dev/nvme0n1`."""

HEADER = "Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util"


def _row(device: str, reads: float, writes: float, rkb: float, wkb: float, r_await: float, w_await: float, queue: float) -> str:
    """A device's line as sysstat 12.3+ prints it (`iostat.c`, `write_ext_stat`): two decimals,
    sizes in kB, no merges, discards or flushes in a simulated run."""
    rsz = rkb / reads if reads else 0.0
    wsz = wkb / writes if writes else 0.0
    util = min(100.0, 100.0 * queue)
    return f"{device:<13} {reads:9.2f} {rkb:9.2f} {0:8.2f} {0:6.2f} {r_await:7.2f} {rsz:8.2f} {writes:7.2f} {wkb:9.2f} {0:8.2f} {0:6.2f} {w_await:7.2f} {wsz:8.2f} {0:7.2f} {0:9.2f} {0:8.2f} {0:6.2f} {0:7.2f} {0:8.2f} {0:7.2f} {0:7.2f} {queue:7.2f} {util:6.2f}"


def _device_row(cap: Capture, name: str, k: int, as_: str) -> str:
    """A device's counters in sample k as iostat's view of it: a dm device or an NVMe head sees the
    guest-side time (`Average Guest MilliSec`: its own queue and below) and holds ACTV + QUED."""
    get = lambda c: float(cap.get(DEVICE, name, c)[k])  # noqa: E731
    return _row(as_, get("Reads/sec"), get("Writes/sec"), get("MBytes Read/sec") * 1024, get("MBytes Written/sec") * 1024, get("Average Guest MilliSec/Read"), get("Average Guest MilliSec/Write"), get("Active Commands") + get("Queued Commands"))


def _path_row(cap: Capture, disk: str, k: int) -> str:
    """A path's disk in sample k: its commands split in the map's read share and request sizes (a
    path's counters are not per direction in the run's capture), its awaits the map's driver time
    per direction scaled by the path's driver time over the map's, its queue by Little's law."""
    dev = lambda c: float(cap.get(DEVICE, "mpatha", c)[k])  # noqa: E731
    commands = float(cap.get(PATH, DISKS[disk], "Commands/sec")[k])
    driver = float(cap.get(PATH, DISKS[disk], "Average Driver MilliSec/Command")[k]) if commands else 0.0
    reads, writes = dev("Reads/sec"), dev("Writes/sec")
    share = commands / (reads + writes) if reads + writes else 0.0
    scale = driver / dev("Average Driver MilliSec/Command") if commands else 0.0
    return _row(disk, reads * share, writes * share, dev("MBytes Read/sec") * 1024 * share, dev("MBytes Written/sec") * 1024 * share, dev("Average Driver MilliSec/Read") * scale, dev("Average Driver MilliSec/Write") * scale, commands * driver / 1000)


def _iostat_capture(esxtop_csv: Path, path: Path) -> None:
    """The run's counters as `iostat -xty 1` prints them: the banner, then per sample its time, the
    CPU figures and a line per device (dm-0 the map, sdb..sde its paths, nvme0n1 the subsystem's
    head). The first report repeats the first sample, as iostat's first covers the time since boot
    and the reader leaves it out."""
    cap = read_capture(esxtop_csv)
    lines = [f"Linux 6.8.0-45-generic (lnx1) \t{cap.start:%m/%d/%Y} \t_x86_64_\t(8 CPU)", ""]
    for r, k in enumerate([0, *range(cap.samples)]):
        when = cap.start + timedelta(seconds=float(cap.t_s[k]) + (r > 0))
        rows = [_device_row(cap, "mpatha", k, "dm-0"), *(_path_row(cap, disk, k) for disk in DISKS), _device_row(cap, "nvme-subsys0", k, "nvme0n1")]
        lines += [f"{when:%m/%d/%Y %I:%M:%S %p}", "avg-cpu:  %user   %nice %system %iowait  %steal   %idle", "           2.10    0.00    3.40    1.20    0.00   93.30", "", HEADER, *rows, "", ""]
    path.write_text("\n".join(lines), encoding="utf-8")


def _sanlab(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sanlab.cli", *map(str, args)], capture_output=True, text=True, timeout=600, check=False)


def _run(scenario: Path, out: Path, *extra: str) -> dict:
    p = _sanlab("run", scenario, "--out", out, "--quiet", *extra)
    assert p.returncode == 0, p.stderr
    return json.loads((out / "results.json").read_text())["variants"][0]


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict, str, dict]:
    tmp = tmp_path_factory.mktemp("linux-roundtrip")
    (tmp / "original.toml").write_text(ORIGINAL, encoding="utf-8")
    original = _run(tmp / "original.toml", tmp / "original-run", "--esxtop-csv")
    (tmp / "multipath.txt").write_text(MULTIPATH, encoding="utf-8")
    (tmp / "nvme.txt").write_text(NVME, encoding="utf-8")
    _iostat_capture(tmp / "original-run/base/esxtop.csv", tmp / "iostat.txt")
    p = _sanlab("import", "linux", "--multipath", tmp / "multipath.txt", "--nvme", tmp / "nvme.txt", "--iostat", tmp / "iostat.txt", "--host", "lnx1", "-o", tmp / "imported.toml", "--duration", "6s")
    assert p.returncode == 0, p.stderr
    again = _run(tmp / "imported.toml", tmp / "imported-run")
    done = _sanlab("compare", tmp / "imported-run", "--iostat", tmp / "iostat.txt", "--multipath", tmp / "multipath.txt")
    assert done.returncode == 0, done.stderr
    return original, again, (tmp / "imported.toml").read_text(), read_comparison(tmp / "imported-run/iostat-compare.json")


def test_the_import_reads_the_host_it_was_written_from(round_trip: tuple[dict, dict, str, dict]) -> None:
    _, _, toml, _ = round_trip
    assert 'multipath = { psp = { kind = "dm_service_time" } }' in toml and 'psp = { kind = "nvme_round_robin" }' in toml
    assert "closed loop at 16 outstanding (aqu-sz 16.00" in toml and "--rate_process=poisson" in toml
    # A mixed open loop is a rate per direction: one value would cap reads and writes each at it.
    assert re.search(r"--rw=randrw --rwmixread=(79|80|81) --bs=4096 --iodepth=64 --rate_iops=2\d{3}(\.\d+)?,[56]\d{2}(\.\d+)? ", toml)
    assert toml.count('alua = "ANO"') == 2 and toml.count('alua = "AO"') == 4


def test_round_trip_carries_each_device_at_the_same_iops_and_latency(round_trip: tuple[dict, dict, str, dict]) -> None:
    original, again, _, _ = round_trip
    before = {d["name"]: d for d in original["devices"]}
    assert set(before) == {d["name"] for d in again["devices"]} == {"mpatha", "nvme-subsys0"}
    for after in again["devices"]:
        assert after["iops"] == pytest.approx(before[after["name"]]["iops"], rel=0.05), after["name"]
        assert after["gavg_ms"] == pytest.approx(before[after["name"]]["gavg_ms"], rel=0.10), after["name"]


def test_round_trip_spreads_the_load_over_the_same_paths(round_trip: tuple[dict, dict, str, dict]) -> None:
    original, again, _, _ = round_trip
    share = {p["name"]: p["share"] for p in original["paths"]}
    assert set(share) == {p["name"] for p in again["paths"]}
    for p in again["paths"]:
        assert 100 * p["share"] == pytest.approx(100 * share[p["name"]], abs=2), p["name"]


def test_compare_says_the_second_run_matches_the_capture(round_trip: tuple[dict, dict, str, dict]) -> None:
    _, _, _, document = round_trip
    figures = {(f["entity"], f["figure"]): f for f in document["devices"]}
    for device in ("mpatha", "nvme-subsys0"):
        assert abs(figures[(device, "IOPS")]["error"]) < 0.05, device
        assert abs(figures[(device, "latency ms")]["error"]) < 0.10, device
    links = {f["entity"]: f for f in document["links"]}
    assert set(links) == set(DISKS.values())
    assert all(abs(100 * f["error"]) < 2 for f in links.values()), links
