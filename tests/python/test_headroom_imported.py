"""`sanlab headroom --grow rate` on fio command lines, as `sanlab import esxi|linux|windows` writes
them (one `cmdline` job per device: an open loop at the captured rate, `--rate_iops=R,W`, or a
closed loop at the captured outstanding I/Os, `--iodepth=N`): the line rewritten as fio reads it,
checked against the engine's own reading of the rewritten line, then headroom end to end on one
imported host of each platform.

The imported arrays answer at a fixed service time on 64 servers (the import's flash array, its
latency the capture's DAVG): 0.4 ms for the Linux and Windows fixtures, so a closed loop of N
outstanding I/Os waits ceil(N / 64) service times (160,000 IOPS once N ≥ 64); 0.9 ms for the
ESXi one. Runs of 2 s (1 s measured), 2 to 8 seeds a point."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sanlab import engine
from sanlab.headroom.grow import CmdlineScaling, GrowError, plan_growth, read_cmdline, sets_at
from test_headroom import ROOT

DATA = ROOT / "tests" / "data"
IMPORTS = {
    "esxi": ["--esxcli", "esxi/cluster/esx1", "--esxtop", "esxi/cluster/esx1.csv"],
    "linux": [
        "--multipath", "linux/multipath/linux-scsi.ibm-ds8k-create.txt",
        "--iostat", "linux/iostat/constructed.ibm-ds8k.xt.txt",
    ],
    "windows": [
        "--mpclaim", "windows/mpclaim/rmscode.summary-and-disk1.txt",
        "--typeperf", "windows/typeperf/constructed.hv01.physicaldisk.csv",
    ],
}  # fmt: skip
"""One fixture host of each platform, its files under tests/data (docs/from-your-host.md)."""
SHORT = ["--duration", "2s", "--seed", "1", "--seeds", "2"]


def _sanlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "sanlab.cli", *args], capture_output=True, text=True, timeout=300, check=False
    )


def _imported(platform: str, folder: Path) -> Path:
    """The fixture host imported into `folder`."""
    args = [arg if arg.startswith("--") else str(DATA / arg) for arg in IMPORTS[platform]]
    written = folder / f"{platform}.toml"
    done = _sanlab("import", platform, *args, "-o", str(written))
    assert done.returncode == 0, done.stderr
    return written


def _cmdline_doc(line: str) -> dict[str, Any]:
    """Today's run of a one-VM scenario whose job is the fio command line `line`."""
    scenario = ROOT / "tests" / "data" / "scenarios" / "one_vm.toml"
    return engine.run(scenario, ["base"], [f"vm[0].job[0].cmdline={json.dumps(line)}"], 1, "0.2s")


LINE = (
    "fio --rw=randread --bs=4k --iodepth 4 --ioengine=libaio --name=deep --iodepth=6"
    " --name=shallow --name=paced --rate_iops=300,100 --rate 1m --name=global --numjobs=2"
    " --name=sync --ioengine=psync --name=clones --ioengine=sync --numjobs 3"
)
"""Globals before the first --name and after --name=global, options as `--key value` and
`--key=value`, a job's own value over the global one, rate and rate_iops together, sync engines."""


def test_a_command_line_is_scaled_as_fio_reads_it() -> None:
    _, sections = read_cmdline(LINE)
    assert [section.name for section in sections] == ["deep", "shallow", "paced", "sync", "clones"]
    assert sections[1].option("iodepth") == "4" and sections[0].option("iodepth") == "6"
    today = _cmdline_doc(LINE)["variants"][0]
    scalings, _ = plan_growth(today["resolved"], today["jobs"], ["vm"])
    (scaling,) = scalings
    assert isinstance(scaling, CmdlineScaling) and scaling.loop == "mixed" and not scaling.whole
    assert scaling.what == (
        "fio command line, jobs deep: iodepth 6 (closed loop: outstanding I/Os); shallow: iodepth 4 (closed "
        "loop: outstanding I/Os); paced: rate 1048576 and rate_iops 300,100 (open loop); sync: numjobs 2 "
        "(closed loop on psync: one I/O outstanding per job); clones: numjobs 3 (closed loop on sync: one "
        "I/O outstanding per job)"
    )
    (line,) = sets_at(scalings, 2.5)
    scaled = json.loads(line.partition("=")[2])
    assert scaled == (
        "fio --rw=randread --bs=4k --iodepth 4 --ioengine=libaio --name=deep --iodepth=15"
        " --name=shallow --iodepth=10 --name=paced --rate_iops=750,250 --rate 2621440 --name=global"
        " --numjobs=2 --name=sync --numjobs=5 --ioengine=psync --name=clones --ioengine=sync --numjobs 8"
    )
    # The engine reads the rewritten line as scaled: each job's options and outstanding I/Os.
    jobs = _cmdline_doc(scaled)["variants"][0]["jobs"]
    by_job: dict[str, list[dict[str, Any]]] = {}
    for job in jobs:
        by_job.setdefault(job["fio_place"]["name"], []).append(job)
    assert [job["pacing"]["depth"] for job in by_job["deep"]] == [15]
    assert [job["pacing"]["depth"] for job in by_job["shallow"]] == [10]
    assert by_job["paced"][0]["options"]["rate_iops"] == "750,250"
    assert by_job["paced"][0]["options"]["rate"] == "2621440"
    assert (len(by_job["sync"]), len(by_job["clones"])) == (5, 8)  # clones of one outstanding I/O each
    assert sets_at(scalings, 1.0) == []  # today as given


def test_an_unbalanced_quote_is_one_line() -> None:
    resolved = {"vm": [{"name": "a", "job": [{"cmdline": "fio --name='x --rw=read"}]}]}
    with pytest.raises(GrowError) as caught:
        plan_growth(resolved, [], ["a"])
    message = str(caught.value)
    assert message.startswith("VM a job job[0]: cmdline: cannot split it into words") and "\n" not in message


def _option(set_line: str, key: str) -> int:
    """A whole option of the command line a `--set vm[0].job[0].cmdline="..."` line gives."""
    words = json.loads(set_line.partition("=")[2]).split()
    return int(next(word for word in words if word.startswith(f"--{key}=")).partition("=")[2])


SERVICE_MS = {"linux": 0.4, "windows": 0.4}
"""The imported arrays' service time (the fixtures' DAVG), on 64 servers."""


@pytest.mark.parametrize("platform", ["linux", "windows"])
def test_headroom_on_an_imported_closed_loop_host(tmp_path: Path, platform: str) -> None:
    """The Linux (2 outstanding) and Windows (8) fixtures: the line's iodepth grows. With 64
    servers of a fixed 0.4 ms, N outstanding I/Os wait ceil(N / 64) service times, so p99 ≤ 1.3 ms
    holds up to N = 192 (1.2 ms) and fails at 193 (1.6 ms); 192 keep the servers busy: 160,000 IOPS."""
    scenario = _imported(platform, tmp_path)
    out = tmp_path / "h"
    done = _sanlab("headroom", str(scenario), "--slo", "p99<=1.3ms", *SHORT, "--out", str(out), "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    largest = max(n for n in range(1, 1000) if math.ceil(n / 64) * SERVICE_MS[platform] <= 1.3)
    assert largest == 192
    (at_limit,) = doc["at_limit"]
    assert at_limit.startswith("vm[0].job[0].cmdline=") and _option(at_limit, "iodepth") == largest
    depths = {_option(point["sets"][0], "iodepth"): point for point in doc["curve"] if point["sets"]}
    assert depths[largest]["holds"] and not depths[largest + 1]["holds"]
    assert doc["limit_iops"] == pytest.approx(64 / SERVICE_MS[platform] * 1000, rel=0.01)
    assert doc["scaled"][0].endswith("(closed loop: outstanding I/Os)")


def test_headroom_on_an_imported_open_loop_host(tmp_path: Path) -> None:
    """The ESXi fixture: 1,333 IOPS captured, 75 % reads, written `--rate_iops=1000,333.333` under
    an iodepth cap of 64 (the import's: it caps what may be outstanding). The factor scales both
    directions' rates: each point delivers factor × today's IOPS, reads and writes at 3:1, until
    the 64 servers of a fixed 0.9 ms are busy, 64 / 0.9 ms = 71,111 IOPS. There fio's cap holds
    arrivals back before they reach the host: the latency never rises (p99 0.9 ms), the load stops
    growing, and headroom says so rather than a limit."""
    scenario = _imported("esxi", tmp_path)
    done = _sanlab(
        "headroom", str(scenario), "--slo", "p99<=5ms", *SHORT, "--out", str(tmp_path / "h"), "--json"
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    ceiling = 64 / 0.9 * 1000
    assert doc["limited_by"] == "stalled" and doc["limit_iops"] == pytest.approx(ceiling, rel=0.01)
    today = doc["today"]["iops"]
    grew = [point for point in doc["curve"] if point["factor"] * today < 0.95 * ceiling]
    assert len(grew) >= 6
    for point in grew:
        assert point["iops"]["mean"] == pytest.approx(point["factor"] * today, rel=0.03), point["factor"]
    (at_limit,) = doc["at_limit"]
    words = json.loads(at_limit.partition("=")[2]).split()
    rates = next(word for word in words if word.startswith("--rate_iops=")).partition("=")[2]
    reads, writes = (float(value) for value in rates.split(","))
    assert reads / writes == pytest.approx(3.0, rel=1e-4)
    assert reads + writes == pytest.approx(doc["bracket"][0] * 1333.333, rel=1e-4)
    assert "--iodepth=64" in words  # the cap, as imported
    assert {doc["bottleneck"]["kind"], doc["utilisation"]["limit"][1]["kind"]} == {
        "device queue",
        "array media",
    }
