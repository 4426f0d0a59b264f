"""vdbench's `priority=` end to end: `sanlab run` on the corpus file tests/data/vdbench/priority.vdb,
where a paced workload (4k reads, iorate=2000, priority=1) and an iorate=max one (64k writes,
priority=2) share one SD's 8 threads."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

from conftest import ONE_VM

ROOT = Path(__file__).resolve().parents[2]
PARM = ROOT / "tests/data/vdbench/priority.vdb"

SCENARIO = """schema_version = 1
name = "vdbench_priority"
base = "{base}"
[run]
duration = "4s"
warmup = "0s"
[[array]]
name = "a"
media = {{ kind = "flash", read_latency = "150us", write_latency = "20us", servers = 4 }}
[[vm]]
name = "vm"
host = "h"
volume = "lun"
[[vm.job]]
kind = "vdbench"
file = "{parm}"
"""


def test_priority_workload_keeps_its_rate_beside_a_max_one(
    cli: Callable[..., subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    scenario = tmp_path / "priority.toml"
    scenario.write_text(SCENARIO.format(base=ONE_VM.as_posix(), parm=PARM.as_posix()), encoding="utf-8")
    p = cli("run", str(scenario), "--json", "--quiet")
    assert p.returncode == 0, p.stderr
    variant = json.loads(p.stdout)["variants"][0]
    job, vm = variant["jobs"][0], variant["vms"][0]
    assert job["options"]["priority"] == "paced:1:2000 rest:2:max"
    # The paced workload (the job's reads) gets its rate although the other keeps every thread
    # busy; 4 array servers for 8 threads make requests queue at the array.
    reads, writes = job["read"], job["write"]
    assert abs(reads["iops"] - 2000) < 2000 * 0.04, reads["iops"]
    assert writes["iops"] > 10 * reads["iops"], writes["iops"]
    busy = (reads["iops"] * reads["lat_ns"]["mean"] + writes["iops"] * writes["lat_ns"]["mean"]) / 1e9
    assert abs(busy - 8) < 0.2, busy
    assert vm["issued"] == vm["completed"] + vm["in_flight"] and vm["in_flight"] <= 8
    for c in variant["conservation"]:
        assert c["issued"] == c["completed"] + c.get("failed", 0) + c["in_flight"], c
