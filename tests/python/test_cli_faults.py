"""`sanlab run` on a scenario with faults prints the fault and failover-count tables; without
faults it prints neither."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

CliRunner = Callable[..., subprocess.CompletedProcess[str]]

STUDIES = Path(__file__).resolve().parents[2] / "scenarios" / "studies"


def test_a_silent_failure_is_printed_with_the_hosts_reaction(cli: CliRunner, tmp_path: Path) -> None:
    run = cli(
        "run", str(STUDIES / "failover.toml"), "--variant", "silent-fixed", "--out", str(tmp_path / "run")
    )
    assert run.returncode == 0, run.stderr
    rows = [line.split() for line in run.stdout.splitlines()]
    # Found at the 30 s command timeout of the first command lost (sent 2 ms before the failure, its
    # later frames lost), alive again at the path checker's first probe after the path returned,
    # IOPS back once the lost commands were retried.
    start = rows.index(
        ["silent-fixed", "60.000", "start", "path_down", "path", "local-0", "29.998", "30,002", "30.000"]
    )
    assert rows[start + 1] == ["silent"]
    assert rows[start + 2] == ["120.000", "end", "path_down", "path", "local-0", "4.998"]
    assert ["silent-fixed", "VM", "vm1", "32", "0", "0"] in rows
    assert ["path", "local-0", "32", "0", "32"] in rows


def test_a_healthy_run_prints_no_fault_tables(cli: CliRunner, tmp_path: Path) -> None:
    run = cli(
        "run", str(STUDIES / "metro_cluster_psp.toml"), "--variant", "fixed", "--duration", "4s",
        "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "faults and failover" not in run.stdout and "failover counts" not in run.stdout
