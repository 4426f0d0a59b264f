"""`sanlab lint`: benchmarks that measure something else than meant are flagged with the option,
its line and the fix; with a scenario, the effect is simulated (as written against fixed); a clean
benchmark gets no finding."""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from sanlab import engine
from sanlab.lint.rules import (
    Context,
    depth_beyond_the_device,
    ends_before_the_run,
    group_hides_a_slow_job,
    ramp_shorter_than_warm_up,
)
from sanlab.lint.source import Benchmark

ROOT = Path(__file__).resolve().parents[2]
HITAREA = ROOT / "scenarios/studies/vdbench_hitarea.toml"
LINT = ROOT / "tests/data/lint"
CACHES = ROOT / "tests/data/lint_caches.toml"

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
    assert "hitarea=1m (vdbench's default) at its start" in finding["what"]
    written, fixed = finding["evidence"]["as written"], finding["evidence"]["with the fix"]
    # docs/lint.md's example and prose: one core of eight takes 78 % of the I/Os as written, 12.6 %
    # without the hits, and the VM gets 2.5 times the IOPS. Over seeds 1-8 (1 s): shares
    # 0.7789-0.7829 and 0.1256-0.1263, IOPS 112,968-113,356 and 282,634-283,096, ratio
    # 2.495-2.504, p99 1.141 ms and 0.294-0.298 ms.
    share = "busiest core's share of I/Os"
    assert written[share] == pytest.approx(0.783, abs=0.005)
    assert fixed[share] == pytest.approx(0.126, abs=0.001)
    assert fixed["VM IOPS"] / written["VM IOPS"] == pytest.approx(2.5, abs=0.01)
    assert written["VM IOPS"] == pytest.approx(113_016, rel=0.005)
    assert fixed["VM IOPS"] == pytest.approx(282_736, rel=0.003)
    assert written["VM p99 latency (ms)"] == pytest.approx(1.14, abs=0.005)
    assert fixed["VM p99 latency (ms)"] == pytest.approx(0.296, abs=0.003)
    # vdbench leaves its first interval (1 s) out of its totals: a run of 1 s reports none.
    assert doc["notes"][1].startswith("job lint.sd1 (VM vdbench) completed no I/O in the measured time")


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
    # No --duration: lint's default, 5 s (docs/lint.md). 64 MiB in 1 MiB reads take 8 ms.
    _, doc = _lint(cli, str(LINT / "sized.fio"), "--scenario", str(HITAREA))
    finding = _finding(doc, "ends-early")
    assert "of the 5.00 s simulated" in finding["effect"]
    running = "benchmark's running time (s)"
    assert finding["evidence"]["as written"][running] < 0.1
    assert finding["evidence"]["with the fix"][running] == pytest.approx(5.0)


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
    assert tail["simulated_change"] == {"option": "random_generator", "value": "lfsr"}
    # The study's 64 GiB cache holds the 256 MiB region: every 64 KiB block misses once, whatever
    # the order (15/16 hits), and the fix changes nothing (IOPS within -0.05 % to +0.35 % over
    # seeds 1-6). The order shows on a smaller cache: the next test.
    written, fixed = tail["evidence"]["as written"], tail["evidence"]["with the fix"]
    assert written["array cache hit ratio"] == fixed["array cache hit ratio"] == 15 / 16
    assert fixed["VM IOPS"] == pytest.approx(written["VM IOPS"], rel=0.006)
    batched = next(f for f in doc["findings"] if f["rule"] == "batched-depth")
    assert (batched["option"], batched["line"], batched["evidence"]) == ("iodepth_low", 6, None)
    assert next(f for f in doc["findings"] if f["rule"] == "reads-unwritten")["evidence"] is None, "not simulated"


def test_a_random_maps_pass_ends_next_to_what_it_read(cli: CliRunner) -> None:
    """docs/lint.md's random-map-tail row: on a 16 MiB cache of 64 KiB blocks, a 256 MiB pass hits
    0.11 with fio's random map and 0.06 with lfsr, and the VM gets 4 % more IOPS; the hits come in
    the pass's last part (the array's latency falls to half there), none with lfsr."""
    line = "fio --name=t --ioengine=libaio --direct=1 --rw=randread --iodepth=16 --size=256m"
    _, doc = _lint(cli, "--cmdline", line, "--scenario", str(CACHES), "--variant", "small_cache", "--duration", "1s")
    assert _rules(doc) == ["random-map-tail", "reads-unwritten", "ends-early"], "the pass ends at about 0.56 s"
    tail = doc["findings"][0]
    written, fixed = tail["evidence"]["as written"], tail["evidence"]["with the fix"]
    # Over seeds 1-8: hit ratio 0.1086-0.1140 with the map, 0.0547-0.0861 with lfsr (our lfsr's
    # order depends on the seed more than a shuffle does), IOPS with lfsr 0.951-0.978 of the map's.
    hits = "array cache hit ratio"
    assert written[hits] == pytest.approx(0.112, abs=0.004)
    assert fixed[hits] == pytest.approx(0.06, abs=0.03)
    assert written[hits] > 1.25 * fixed[hits]
    assert fixed["VM IOPS"] / written["VM IOPS"] == pytest.approx(0.96, abs=0.02)
    # Where the hits are: the array's mean latency per 50 ms, over the pass's first 250 ms and its
    # last sample. Over seeds 1-8: the last sample at 0.489-0.524 of the start with the map,
    # 0.998-1.003 with lfsr.
    for generator, last in (("", 0.51), (" --random_generator=lfsr", 1.0)):
        job = f'vm[0].job=[{{ kind = "fio", cmdline = "{line.removeprefix("fio ")}{generator}" }}]'
        variant = engine.run(CACHES, ["small_cache"], [job, "run.warmup=0s", "run.sample_interval=50ms"], None, "1s")["variants"][0]
        ts = variant["timeseries"]
        latency = [v for e, m, v in zip(ts["entity"], ts["metric"], ts["value"], strict=True) if (e, m) == ("array/a", "lat_ms_mean") and v > 0]
        start = sum(latency[:5]) / 5
        assert latency[-1] / start == pytest.approx(last, abs=0.04), generator or "random map"


def test_skewed_offsets_are_a_cache_figure(cli: CliRunner) -> None:
    # docs/lint.md's skewed-offsets row: simulated with random, the cache hit ratio shown. The page
    # gives no figure; over seeds 1-4 (1 s, 100 GiB): 0.859-0.868 with zipf:1.2, 0.0425-0.0437
    # uniform, the repeats of ~149,000 draws over 1,638,400 cache blocks of 64 KiB.
    line = "fio --name=t --ioengine=libaio --direct=1 --rw=randread --bs=8k --iodepth=32 --size=100g --time_based --random_distribution=zipf:1.2"
    _, doc = _lint(cli, "--cmdline", line, "--scenario", str(HITAREA), "--duration", "1s")
    finding = _finding(doc, "skewed-offsets")
    assert finding["simulated_change"] == {"option": "random_distribution", "value": "random"}
    written, fixed = finding["evidence"]["as written"], finding["evidence"]["with the fix"]
    assert written["array cache hit ratio"] == pytest.approx(0.864, abs=0.01)
    assert fixed["array cache hit ratio"] == pytest.approx(0.043, abs=0.002)


def test_a_pass_drawn_with_replacement_repeats_one_in_e(cli: CliRunner) -> None:
    """docs/lint.md's norandommap row: n draws over n blocks leave about n/e untouched, so n/e of
    them repeat; on a cache of 4 KiB blocks that holds the region, those are its hits."""
    line = "fio --name=t --ioengine=libaio --direct=1 --rw=randread --iodepth=16 --size=64m --norandommap"
    _, doc = _lint(cli, "--cmdline", line, "--scenario", str(CACHES), "--variant", "block_cache", "--duration", "1s")
    assert _rules(doc) == ["norandommap", "reads-unwritten", "ends-early"], "a 64 MiB pass ends at about 0.11 s"
    finding = doc["findings"][0]
    written, fixed = finding["evidence"]["as written"], finding["evidence"]["with the fix"]
    # 16,384 draws; over seeds 1-6 the hit ratio is 0.3674-0.3730 (1/e = 0.3679).
    assert written["array cache hit ratio"] == pytest.approx(math.exp(-1), abs=0.006)
    assert fixed["array cache hit ratio"] == 0, "fio's random map reads each block once a pass"


def test_a_synchronous_engine_keeps_one_request_outstanding(cli: CliRunner) -> None:
    """docs/lint.md: a synchronous engine runs at depth 1 whatever iodepth says (sync-engine-depth),
    and with one request outstanding IOPS = 1 / latency (one-outstanding)."""
    line = "--name=t --direct=1 --rw=randread --iodepth=32 --size=10g --time_based"
    _, doc = _lint(cli, "--cmdline", f"fio {line}", "--scenario", str(HITAREA), "--duration", "1s")
    assert _rules(doc) == ["sync-engine-depth", "one-outstanding", "reads-unwritten"]
    written = doc["findings"][0]["evidence"]["as written"]
    # The same job at iodepth=1 with an asynchronous engine: over seeds 1-6, psync at 32 gets
    # 4,743-4,760 IOPS and libaio at 1 4,746-4,761; IOPS x mean latency is 0.9999 +/- 0.0002.
    depth_one = f'vm[0].job=[{{ kind = "fio", cmdline = "{line.replace("iodepth=32", "iodepth=1")} --ioengine=libaio" }}]'
    variant = engine.run(HITAREA, ["hitarea_1m"], [depth_one, "run.warmup=0s"], None, "1s")["variants"][0]
    vm = variant["vms"][0]
    assert written["VM IOPS"] == pytest.approx(vm["iops"], rel=0.01)
    assert vm["iops"] * vm["lat_ms"]["mean"] / 1000 == pytest.approx(1, abs=0.001)


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


def _job(name: str = "lint.t", depth: int = 16, end_ms: float = 1000.0, p99_ms: float = 1.0, **options: str) -> dict[str, Any]:
    """A benchmark job's report as the rules read it: reads only, for the whole run by default."""
    read = {"total_ios": 1000, "runtime_ms": end_ms, "iops": 1000.0, "lat_ns": {"percentile": {"99.000000": p99_ms * 1e6}}}
    write = {"total_ios": 0, "runtime_ms": 0.0, "iops": 0.0, "lat_ns": {"percentile": {}}}
    return {"name": name, "vm": "vm", "entry": "lint", "options": {"ioengine": "libaio", "rw": "randread", **options}, "pacing": {"depth": depth}, "end_ms": end_ms, "read": read, "write": write}


def _findings(rule: Callable[[Context], Any], jobs: list[dict[str, Any]], actv: float = 16.0, vm_iops: list[float] | None = None) -> list[str]:
    """`rule`'s findings on a 1 s run of `jobs`, whose host device holds `actv` on average and
    whose VM's IOPS were `vm_iops` per sample (a flat 100 over 8 samples by default)."""
    series = vm_iops or [100.0] * 8
    variant = {
        "sim_time_s": 1.0,
        "jobs": jobs,
        "vms": [{"name": "vm", "host": "h", "lat_ms": {"mean": 1.0}}],
        "devices": [{"host": "h", "ios": 1000, "actv_mean": actv, "qued_mean": 0.0, "volume": "lun", "davg_ms": 0.2, "queue_depth": 1024, "kavg_ms": 0.0}],
        "timeseries": {
            "t_s": [(i + 1) / len(series) for i in range(len(series))],
            "entity": ["vm/vm"] * len(series),
            "metric": ["iops"] * len(series),
            "value": series,
        },
    }
    benchmark = Benchmark("fio", "fio --name=t --rw=randread --iodepth=16", None)
    return [finding.rule for finding in rule(Context(benchmark, jobs, variant))]


def test_the_thresholds_the_page_states() -> None:
    """docs/lint.md, "Choices that are ours": a job ends early before 90 % of the run; more than
    1.1 times the device's average depth counts as held back; a slow job has a p99 over twice the
    others' median; the warm-up ends with the last sample of the run's first half more than 5 %
    from the second half's mean, with at least 6 samples. Each just inside and just outside."""
    assert _findings(ends_before_the_run, [_job(end_ms=899)]) == ["ends-early"]
    assert _findings(ends_before_the_run, [_job(end_ms=901)]) == []
    assert _findings(depth_beyond_the_device, [_job(depth=16)], actv=14.5) == ["depth-beyond-device"]  # 16 > 15.95
    assert _findings(depth_beyond_the_device, [_job(depth=16)], actv=14.6) == []  # 16 < 16.06
    grouped = {"group_reporting": "1"}
    assert _findings(group_hides_a_slow_job, [_job("a", **grouped), _job("b", p99_ms=2.01, **grouped)]) == ["group-hides-slow-job"]
    assert _findings(group_hides_a_slow_job, [_job("a", **grouped), _job("b", p99_ms=1.99, **grouped)]) == []
    assert _findings(ramp_shorter_than_warm_up, [_job()], vm_iops=[94.9, *[100.0] * 7]) == ["ramp-shorter-than-warm-up"]
    assert _findings(ramp_shorter_than_warm_up, [_job()], vm_iops=[95.1, *[100.0] * 7]) == []
    assert _findings(ramp_shorter_than_warm_up, [_job()], vm_iops=[50.0, *[100.0] * 4]) == [], "5 samples"
