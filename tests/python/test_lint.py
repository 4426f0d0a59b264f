"""`sanlab lint`: benchmarks that measure something else than meant are flagged with the option,
its line and the fix; with a scenario, the effect is simulated (as written against fixed); a clean
benchmark gets no finding."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HITAREA = ROOT / "scenarios/studies/vdbench_hitarea.toml"
LINT = ROOT / "tests/data/lint"

CliRunner = Callable[..., subprocess.CompletedProcess[str]]


def _lint(cli: CliRunner, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli("lint", *args, "--json")
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def _rules(doc: dict[str, Any]) -> list[str]:
    return [finding["rule"] for finding in doc["findings"]]


def _finding(doc: dict[str, Any], rule: str) -> dict[str, Any]:
    """The one finding of `rule`; the others a benchmark gets are only reads-unwritten (it reads only)."""
    assert set(_rules(doc)) - {rule} <= {"reads-unwritten"}, _rules(doc)
    (finding,) = [f for f in doc["findings"] if f["rule"] == rule]
    return finding


def test_the_hit_area_parm_file_is_flagged_with_its_effect_on_one_core(cli: CliRunner) -> None:
    # "When Testing Tools Attack!": rhpct=75 in vdbench's 1 MiB hit area, on an array that gives
    # each 1 MiB segment to one of 8 cores.
    code, doc = _lint(cli, str(ROOT / "scenarios/studies/parm/hitarea.vdb"), "--scenario", str(HITAREA), "--duration", "1s", "--strict")
    assert code == 1, "--strict exits 1 on a finding"
    assert doc["benchmark"]["rd"] == "hitarea_1m" and doc["notes"][0].startswith("run hitarea_1m of 3 linted")
    (finding,) = doc["findings"]
    assert (finding["rule"], finding["option"], finding["line"]) == ("hit-area", "rhpct", 5)
    written, fixed = finding["evidence"]["as written"], finding["evidence"]["with the fix"]
    # One core of eight takes most of the I/Os as written, an eighth without the hits.
    assert written["busiest core's share of I/Os"] > 0.7
    assert fixed["busiest core's share of I/Os"] < 0.15
    assert fixed["VM IOPS"] > 2 * written["VM IOPS"]


def test_the_hot_band_run_is_flagged(cli: CliRunner) -> None:
    _, doc = _lint(cli, str(ROOT / "scenarios/studies/parm/hitarea.vdb"), "--rd", "hotband", "--scenario", str(HITAREA), "--duration", "1s")
    assert _rules(doc) == ["hotband"]
    evidence = doc["findings"][0]["evidence"]
    assert evidence["as written"]["busiest core's share of I/Os"] > 2 * evidence["with the fix"]["busiest core's share of I/Os"]


@pytest.mark.parametrize("clean", ["clean.vdb", "clean.fio"])
def test_a_clean_benchmark_gets_no_finding(cli: CliRunner, clean: str) -> None:
    # 2 s: vdbench leaves its first interval (1 s) out of its totals, and a run of 1 s counts none (a note).
    code, doc = _lint(cli, str(LINT / clean), "--scenario", str(HITAREA), "--duration", "2s", "--strict")
    assert (code, doc["findings"], doc["notes"]) == (0, [], [])


def test_a_job_file_is_read_without_a_scenario(cli: CliRunner) -> None:
    code, doc = _lint(cli, str(ROOT / "scenarios/examples/jobs/oltp.fio"))
    assert code == 0, "without --strict, findings exit 0"
    found = {f["rule"]: (f["option"], f["line"], f["evidence"]) for f in doc["findings"]}
    assert found == {"skewed-offsets": ("random_distribution", 19, None), "norandommap": ("norandommap", 11, None)}, "oltp-log writes"
    assert "no --scenario" in doc["notes"][0]


def test_a_command_line_with_fios_defaults(cli: CliRunner) -> None:
    # fio's command-line default engine is psync and direct is 0.
    _, doc = _lint(cli, "--cmdline", "fio --name=t --rw=randread --iodepth=32")
    assert _rules(doc) == ["sync-engine-depth", "one-outstanding", "random-map-tail", "buffered-io", "reads-unwritten"]
    assert doc["findings"][0]["line"] == 3, "the argument that sets iodepth"


@pytest.mark.parametrize("engine", ["mmap", "splice", "sg"])
def test_every_synchronous_engine_the_engine_knows_is_flagged(cli: CliRunner, engine: str) -> None:
    """lint takes a job's depth from the engine's pacing, not a list of its own: ioengine=mmap
    runs at depth 1 (it was counted 32, and lint stayed silent)."""
    _, doc = _lint(cli, "--cmdline", f"fio --name=t --rw=randread --direct=1 --iodepth=32 --ioengine={engine}")
    assert "sync-engine-depth" in _rules(doc)
    assert "one-outstanding" in _rules(doc)
    _, doc = _lint(cli, "--cmdline", "fio --name=t --rw=randread --direct=1 --iodepth=32 --ioengine=libaio")
    assert "sync-engine-depth" not in _rules(doc)


def test_a_job_that_ends_before_the_run_is_flagged_with_its_running_time(cli: CliRunner) -> None:
    _, doc = _lint(cli, str(LINT / "sized.fio"), "--scenario", str(HITAREA), "--duration", "1s")
    finding = _finding(doc, "ends-early")
    running = "benchmark's running time (s)"
    assert finding["evidence"]["as written"][running] < 0.1
    assert finding["evidence"]["with the fix"][running] == pytest.approx(1.0)


def test_a_depth_the_guest_queue_holds_back(cli: CliRunner) -> None:
    # 512 outstanding against the VM's 128-deep virtual disk: 128 reach the host; with 128
    # the IOPS are the same and the latency is the device's.
    _, doc = _lint(cli, "--cmdline", "fio --name=t --ioengine=libaio --direct=1 --rw=randread --iodepth=512 --time_based", "--scenario", str(HITAREA), "--duration", "1s")
    finding = _finding(doc, "depth-beyond-device")
    assert finding["simulated_change"] == {"option": "iodepth", "value": "128"}
    written, fixed = finding["evidence"]["as written"], finding["evidence"]["with the fix"]
    assert fixed["VM IOPS"] == pytest.approx(written["VM IOPS"], rel=0.02)
    assert fixed["VM p99 latency (ms)"] < 0.5 * written["VM p99 latency (ms)"]


def test_the_text_output_names_option_line_and_fix(cli: CliRunner) -> None:
    result = cli("lint", str(ROOT / "scenarios/examples/jobs/oltp.fio"))
    assert result.returncode == 0, result.stderr
    assert "skewed-offsets — `random_distribution` (" in result.stdout and "oltp.fio:19)" in result.stdout
    assert "fix:    random_distribution=random" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no/such.fio"], "no/such.fio: no such file"),
        (["--cmdline", "fio --name=t --iodepht=4"], "unknown fio option `iodepht`; did you mean `iodepth`?"),
        ([str(LINT / "clean.fio"), "--rd", "x"], "--rd picks a vdbench run"),
        ([str(ROOT / "scenarios/studies/parm/hitarea.vdb"), "--rd", "nope"], "nope"),
    ],
)
def test_bad_input_gets_one_error_line(cli: CliRunner, args: list[str], message: str) -> None:
    result = cli("lint", *args)
    assert result.returncode == 2, result.stdout
    assert message in result.stderr and "Traceback" not in result.stderr


def test_a_ramp_shorter_than_the_caches_warm_up(cli: CliRunner) -> None:
    # 24 GiB of random reads against a 64 GiB cache: the rate climbs for about 1.5 s as the cache
    # fills; fio without ramp_time counts those seconds.
    line = "fio --name=t --ioengine=libaio --direct=1 --rw=randread --bs=8k --size=24g --iodepth=64 --time_based"
    _, doc = _lint(cli, "--cmdline", line, "--scenario", str(HITAREA), "--duration", "6s")
    finding = _finding(doc, "ramp-shorter-than-warm-up")
    assert finding["simulated_change"]["option"] == "ramp_time"
    reported = "IOPS fio reports (after ramp_time)"
    assert finding["evidence"]["with the fix"][reported] > 1.02 * finding["evidence"]["as written"][reported]


def test_runs_are_named_as_vdbench_names_them(cli: CliRunner) -> None:
    # A curve's points and a for loop's runs come from one rd line; lint takes vdbench's names.
    _, doc = _lint(cli, str(ROOT / "tests/data/vdbench/curve.vdb"))
    assert doc["benchmark"]["rd"] == "c" and doc["notes"][0].startswith("run c of 3 linted; the others (c_(50%), c_(90%))")
    _, doc = _lint(cli, str(ROOT / "tests/data/vdbench/for_loops.vdb"), "--rd", "sweep xfersize=8k threads=8 rdpct=50")
    assert doc["benchmark"]["rd"] == "sweep xfersize=8k threads=8 rdpct=50"
    # A curve point's rate is a share of its max run's: the engine says so.
    result = cli("lint", str(ROOT / "tests/data/vdbench/curve.vdb"), "--rd", "c_(50%)")
    assert result.returncode == 2 and "is a point of a vdbench curve" in result.stderr
    result = cli("lint", str(ROOT / "tests/data/vdbench/common.vdb"))
    assert result.returncode == 2 and "common.vdb: no run definition" in result.stderr and "reading" not in result.stderr


def test_a_random_pass_and_a_draining_queue(cli: CliRunner) -> None:
    # A random job without time_based ends with its random map's pass; iodepth_low lets the queue
    # drain. The pass's fix (lfsr) is simulated; the queue's is not (sanlab keeps iodepth).
    line = "fio --name=t --ioengine=libaio --direct=1 --rw=randread --iodepth=16 --iodepth_low=4 --size=256m"
    _, doc = _lint(cli, "--cmdline", line, "--scenario", str(HITAREA), "--duration", "1s")
    assert _rules(doc) == ["random-map-tail", "batched-depth", "reads-unwritten", "ends-early"]
    tail = next(f for f in doc["findings"] if f["rule"] == "random-map-tail")
    assert tail["simulated_change"] == {"option": "random_generator", "value": "lfsr"} and tail["evidence"]["with the fix"]["VM IOPS"] > 0
    batched = next(f for f in doc["findings"] if f["rule"] == "batched-depth")
    assert (batched["option"], batched["line"], batched["evidence"]) == ("iodepth_low", 6, None)


def test_group_reporting_over_a_slow_job(cli: CliRunner) -> None:
    _, doc = _lint(cli, str(LINT / "grouped.fio"), "--scenario", str(HITAREA), "--duration", "1s")
    finding = _finding(doc, "group-hides-slow-job")
    assert (finding["option"], finding["line"]) == ("group_reporting", 9)
    assert "job lint.large's read p99" in finding["effect"]


def test_a_vdbench_files_variables_come_from_var(cli: CliRunner) -> None:
    # A benchmark script's parameter file (sources in tests/data/vdbench/SOURCES.md): vdbench takes
    # its $variables from its command line, lint from --var.
    parm = str(ROOT / "tests/data/vdbench/proj_fio_vdbench_vdb_gen.cfg")
    result = cli("lint", parm)
    assert result.returncode == 2 and "`$xfer_sz` has no value" in result.stderr and "--var NAME=VALUE" in result.stderr
    given = ["--var", "files_threads=32", "--var", "seq_rnd=random", "--var", "xfer_sz=4k", "--var", "elap_secs=60", "--var", "rdwr=100"]
    code, doc = _lint(cli, parm, *given)
    assert (code, doc["benchmark"]["kind"], doc["findings"]) == (0, "vdbench", [])
