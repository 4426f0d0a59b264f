"""fio JSON written for each simulated job follows `fio --output-format=json`."""

from __future__ import annotations

import csv
import json
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from conftest import ONE_VM
from sanlab import _core
from sanlab.export.fio import VariantDevices, fio_document, fio_logs

STARTED = datetime(2026, 11, 21, 20, 9, 5, 250000, tzinfo=UTC)
DIRECTION_KEYS = {
    "io_bytes", "io_kbytes", "bw_bytes", "bw", "iops", "runtime", "total_ios",
    "short_ios", "drop_ios", "slat_ns", "clat_ns", "lat_ns",
}  # fmt: skip


def _write_job(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["variants"][0]["jobs"][0]


def test_top_level_fields(doc: dict[str, Any]) -> None:
    fio = fio_document([_write_job(doc)], "0.1.0", STARTED)
    assert list(fio) == ["fio version", "timestamp", "timestamp_ms", "time", "global options", "jobs", "sanlab notes"]
    assert fio["fio version"] == "sanlab-0.1.0"
    assert fio["timestamp"] == int(STARTED.timestamp())
    assert fio["timestamp_ms"] == int(STARTED.timestamp() * 1000)
    assert fio["time"] == "Sat Nov 21 20:09:05 2026"
    assert fio["global options"] == {}
    assert len(fio["jobs"]) == 1


def test_job_fields(doc: dict[str, Any]) -> None:
    job = fio_document([_write_job(doc)], "0.1.0", STARTED)["jobs"][0]
    assert job["jobname"] == "writer"
    assert job["groupid"] == 0
    assert job["error"] == 0
    assert job["job options"] == {"rw": "randwrite", "bs": "32k", "iodepth": "32"}
    assert job["job_runtime"] == 1500
    for direction in ("read", "write", "trim"):
        assert set(job[direction]) == DIRECTION_KEYS


def test_direction_values(doc: dict[str, Any]) -> None:
    write = fio_document([_write_job(doc)], "0.1.0", STARTED)["jobs"][0]["write"]
    io_bytes = 12000 * 32768
    assert write["io_bytes"] == io_bytes
    assert write["io_kbytes"] == io_bytes // 1024
    assert write["bw_bytes"] == io_bytes * 1000 // 1500
    assert write["bw"] == write["bw_bytes"] // 1024
    assert write["iops"] == 8000.0
    assert write["runtime"] == 1500
    assert write["total_ios"] == 12000
    assert (write["short_ios"], write["drop_ios"]) == (0, 0)


def test_latency_objects(doc: dict[str, Any]) -> None:
    write = fio_document([_write_job(doc)], "0.1.0", STARTED)["jobs"][0]["write"]
    assert write["slat_ns"] == {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
    assert write["clat_ns"] == write["lat_ns"]
    lat = write["clat_ns"]
    assert lat["N"] == 12000
    assert lat["mean"] == 2.4e6
    assert all(isinstance(lat[key], int) for key in ("min", "max", "N"))
    percentiles = lat["percentile"]
    assert all(re.fullmatch(r"\d+\.\d{6}", key) for key in percentiles)
    assert all(isinstance(value, int) for value in percentiles.values())
    assert list(percentiles)[:3] == ["1.000000", "5.000000", "10.000000"]
    assert list(percentiles)[-1] == "99.990000"


def test_empty_directions_have_no_percentiles(doc: dict[str, Any]) -> None:
    job = fio_document([_write_job(doc)], "0.1.0", STARTED)["jobs"][0]
    for direction in ("read", "trim"):
        stats = job[direction]
        assert stats["total_ios"] == 0
        assert stats["iops"] == 0.0
        assert "percentile" not in stats["clat_ns"]
        assert stats["lat_ns"]["N"] == 0


def test_reads_like_fio_json(doc: dict[str, Any]) -> None:
    """A reader of fio's JSON finds per-direction clat percentiles and bandwidth where fio puts them."""
    text = json.dumps(fio_document([_write_job(doc)], "0.1.0", STARTED))
    parsed = json.loads(text)
    job = parsed["jobs"][0]
    p99_ms = job["write"]["clat_ns"]["percentile"]["99.000000"] / 1e6
    assert p99_ms > job["write"]["clat_ns"]["mean"] / 1e6
    assert job["write"]["bw"] * 1024 <= job["write"]["bw_bytes"]


ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def simulated_job() -> dict[str, Any]:
    """A job the engine ran: the fio_file example's first clone, 2 s."""
    doc = json.loads(_core.run(str(ROOT / "scenarios/examples/fio_file.toml"), ["all"], [], None, "2s"))
    job: dict[str, Any] = doc["variants"][0]["jobs"][0]
    return job


def _fio_tool(name: str) -> str:
    """A tool of Debian's fio package (`make test` installs it)."""
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is missing: install Debian's fio package (apt-get install fio), as `make test` does")
    return path


def test_jsonplus_bins_and_latency_shares_come_from_the_histogram(simulated_job: dict[str, Any]) -> None:
    job = fio_document([simulated_job], "0.1.0", STARTED)["jobs"][0]
    read = job["read"]
    bins = read["clat_ns"]["bins"]
    assert sum(bins.values()) == read["total_ios"] == read["clat_ns"]["N"] > 1000
    assert list(map(int, bins)) == sorted(map(int, bins))
    assert read["clat_ns"]["min"] * 0.98 <= int(next(iter(bins))) <= read["clat_ns"]["max"] * 1.02
    shares = [v for key in ("latency_ns", "latency_us", "latency_ms") for v in job[key].values()]
    assert sum(shares) == pytest.approx(100.0)
    # The example's flash answers reads in 150 us: the shares sit in fio's 250 us range.
    assert job["latency_us"]["250"] > 50.0


def test_keys_are_fios_own(simulated_job: dict[str, Any], tmp_path: Path, real_fio: Callable[..., dict[str, Any]]) -> None:
    """Every key sanlab writes is one real fio 3.x writes with --output-format=json+ (null engine)."""
    real = real_fio(["--output-format=json+", "--ioengine=null", "--size=1m", "--bs=4k", "--name=t", "--rw=randrw"])
    ours = fio_document([simulated_job], "0.1.0", STARTED)
    assert set(ours) - {"sanlab notes"} <= set(real)
    assert set(ours["jobs"][0]) - {"job_start"} <= set(real["jobs"][0])
    for direction in ("read", "write"):
        assert set(ours["jobs"][0][direction]) <= set(real["jobs"][0][direction])
        clat = ours["jobs"][0][direction]["clat_ns"]
        # A direction without I/O has no percentiles or bins, as in fio.
        assert set(clat) == set(real["jobs"][0][direction]["clat_ns"]) if clat["N"] else set(clat) < set(real["jobs"][0][direction]["clat_ns"])
    for key in ("latency_ns", "latency_us", "latency_ms"):
        assert list(ours["jobs"][0][key]) == list(real["jobs"][0][key])


def test_fio_jsonplus_clat2csv_reads_sanlab_output(simulated_job: dict[str, Any], tmp_path: Path) -> None:
    """fio's own tools/fio_jsonplus_clat2csv (Debian's fio package) turns sanlab's JSON into CSV rows."""
    source = tmp_path / "sanlab.json"
    source.write_text(json.dumps(fio_document([simulated_job], "0.1.0", STARTED)), encoding="utf-8")
    # The first run writes the CSV; the second checks it against the JSON.
    tool = [_fio_tool("fio_jsonplus_clat2csv"), str(source), str(tmp_path / "clat.csv")]
    subprocess.run(tool, check=True, capture_output=True, text=True)
    done = subprocess.run([*tool, "--validate"], check=True, capture_output=True, text=True)
    assert "clat_job0.csv validated" in done.stdout
    with (tmp_path / "clat_job0.csv").open(encoding="utf-8") as f:
        rows = list(csv.reader(f, skipinitialspace=True))
    header, body = rows[0], [r for r in rows[1:] if r]
    count = header.index("read_clat_ns_count")
    assert sum(int(r[count]) for r in body if r[count]) == simulated_job["read"]["total_ios"]
    assert float([r for r in body if r[count]][-1][count + 2]) == pytest.approx(1.0)


def test_run_lists_ignored_fio_options_once(cli: Any, tmp_path: Path) -> None:
    """Options without effect on the model are named once per run, on stderr."""
    result = cli("run", str(ROOT / "scenarios/examples/fio_file.toml"), "--duration", "2s", "--quiet", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("ignored:")]
    assert lines == ["ignored: direct, filename, randrepeat (fio options without effect on the model; `sanlab kinds` says why)"]


def _one_server(tmp_path: Path, cmdline: str, duration: str) -> Path:
    """A scenario running a fio command line on one flash server whose reads take 100 us: the
    shared base's, with the VM's job replaced (an array of tables is replaced whole)."""
    scenario = tmp_path / "one_server.toml"
    scenario.write_text(
        f"""schema_version = 1
name = "one_server"
base = "{ONE_VM.as_posix()}"
[run]
duration = "{duration}"
[[vm]]
name = "vm"
host = "h"
volume = "lun"
adapter = {{ kind = "ideal" }}
[[vm.job]]
kind = "fio"
cmdline = "{cmdline}"
""",
        encoding="utf-8",
    )
    return scenario


def _one_server_jobs(tmp_path: Path, cmdline: str, duration: str) -> list[dict[str, Any]]:
    """Jobs the engine ran from a fio command line on one flash server whose reads take 100 us."""
    jobs: list[dict[str, Any]] = json.loads(_core.run(str(_one_server(tmp_path, cmdline, duration)), [], [], None, None))["variants"][0]["jobs"]
    return jobs


RECORDED = ROOT / "tests/data/fio/recorded"


@pytest.fixture
def real_fio(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., dict[str, Any]]:
    """The JSON Debian's fio wrote for `fio ARGS` (with `files` in its working folder), as recorded
    once in tests/data/fio/recorded/<test>.json: fio takes its samples and runtimes by its wall
    clock, so a live run would make a test depend on the machine's load. `pytest
    tests/python/test_fio.py --record-fio` runs fio and records them again."""

    def output(args: Sequence[str], files: dict[str, str] | None = None) -> dict[str, Any]:
        command, files = ["fio", *args], files or {}
        path = RECORDED / f"{request.node.name}.json"
        if request.config.getoption("record_fio"):
            for name, text in files.items():
                (tmp_path / name).write_text(text, encoding="utf-8")
            fio = _fio_tool("fio")
            done = subprocess.run([fio, *args], check=True, capture_output=True, text=True, cwd=tmp_path)
            version = subprocess.run([fio, "--version"], check=True, capture_output=True, text=True).stdout.strip()
            record = {"fio": version, "command": command, "files": files, "output": json.loads(done.stdout)}
            path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        if not path.exists():
            pytest.fail(f"{path} is missing: record it with `pytest tests/python/test_fio.py --record-fio`")
        record = json.loads(path.read_text(encoding="utf-8"))
        if (record["command"], record["files"]) != (command, files):
            pytest.fail(f"{path} holds `{shlex.join(record['command'])}`, the test runs `{shlex.join(command)}`: record it again with --record-fio")
        result: dict[str, Any] = record["output"]
        return result

    return output


def _real_fio_job(real_fio: Callable[..., dict[str, Any]], *args: str) -> dict[str, Any]:
    """The job object Debian's fio wrote for `args` with the null engine."""
    job: dict[str, Any] = real_fio(["--output-format=json", "--ioengine=null", "--size=64m", "--bs=4k", "--name=t", "--rw=randread", *args])["jobs"][0]
    return job


def test_latency_target_depth_and_errors_as_fio_reports_them(tmp_path: Path, real_fio: Callable[..., dict[str, Any]]) -> None:
    base = "fio --name=j --ioengine=libaio --rw=randread --bs=4k --size=1g --time_based --runtime=5"
    jobs = _one_server_jobs(tmp_path, f"{base} --iodepth=32 --latency_target=650us --latency_window=100ms --rate_iops_min=100", "5s")
    job = fio_document([jobs[0]], "0.1.0", STARTED)["jobs"][0]
    assert 1 < job["latency_depth"] < 32
    assert (job["latency_target"], job["latency_percentile"], job["latency_window"], job["error"]) == (650_000, 100.0, 100_000, 0)
    real = _real_fio_job(real_fio, "--iodepth=8", "--latency_target=1s", "--latency_window=100ms", "--time_based", "--runtime=1")
    assert {k for k in job if k.startswith("latency_")} == {k for k in real if k.startswith("latency_")}
    # A missed rate_iops_min ends the job with fio's EIO; a target depth 1 misses, with ETIMEDOUT.
    jobs = _one_server_jobs(tmp_path, f"{base} --iodepth=1 --rate_iops_min=20000", "5s")
    assert fio_document([jobs[0]], "0.1.0", STARTED)["jobs"][0]["error"] == 5
    assert jobs[0]["fio"]["error"]["message"] == "rate_iops_min=20000 not met for reads, got 10000 IOPS"
    jobs = _one_server_jobs(tmp_path, f"{base} --iodepth=4 --latency_target=50us", "5s")
    assert fio_document([jobs[0]], "0.1.0", STARTED)["jobs"][0]["error"] == 110


# fio's disk_util keys (stat.c `json_array_add_disk_util`) less `util`, which sanlab does not simulate.
DISK_UTIL_KEYS = [
    "name", "read_ios", "write_ios", "read_sectors", "write_sectors",
    "read_merges", "write_merges", "read_ticks", "write_ticks", "in_queue",
]  # fmt: skip


def test_disk_util_from_the_device_figures(tmp_path: Path) -> None:
    """disk_util counts the VM's device over the run: its I/Os, sectors and time per direction."""
    scenario = _one_server(tmp_path, "fio --name=j --ioengine=libaio --rw=randrw --rwmixread=75 --bs=8k --iodepth=4 --time_based --runtime=2", "2s")
    variant = json.loads(_core.run(str(scenario), [], [], None, None))["variants"][0]
    job, device = variant["jobs"][0], variant["devices"][0]
    fio = fio_document([job], "0.1.0", STARTED, VariantDevices(variant))
    assert list(fio)[-2:] == ["disk_util", "sanlab notes"]
    [disk] = fio["disk_util"]
    assert list(disk) == DISK_UTIL_KEYS
    assert disk["name"] == device["name"] == "lun"
    # The VM's only job and no warm-up: the device saw exactly the job's I/Os.
    assert (disk["read_ios"], disk["write_ios"]) == (job["read"]["total_ios"], job["write"]["total_ios"])
    assert disk["read_ios"] + disk["write_ios"] == device["ios"]
    assert disk["read_ios"] > 2 * disk["write_ios"] > 0
    assert (disk["read_sectors"], disk["write_sectors"]) == (job["read"]["io_bytes"] // 512, job["write"]["io_bytes"] // 512)
    assert (disk["read_merges"], disk["write_merges"]) == (0, 0)
    assert disk["in_queue"] == disk["read_ticks"] + disk["write_ticks"]
    assert disk["in_queue"] == pytest.approx(device["gavg_ms"] * device["ios"], rel=1e-3)
    # Reads take 100 us on the flash, writes 20 us: the device time per read is the longer.
    assert disk["read_ticks"] / disk["read_ios"] > disk["write_ticks"] / disk["write_ios"]
    assert any("no `util`" in note for note in fio["sanlab notes"])
    # A vVol's device is its array's protocol endpoint: the base's volume replaced by a vVol (an
    # array of tables is replaced whole).
    text = scenario.read_text(encoding="utf-8") + '[[volume]]\nname = "lun"\narrays = ["a"]\ntype = "vvol"\n'
    scenario.write_text(text, encoding="utf-8")
    vvol = json.loads(_core.run(str(scenario), [], [], None, None))["variants"][0]
    [pe] = fio_document([vvol["jobs"][0]], "0.1.0", STARTED, VariantDevices(vvol))["disk_util"]
    assert (pe["name"], pe["read_ios"]) == ("a-pe", vvol["jobs"][0]["read"]["total_ios"])
    # Without the resolved scenario the device cannot be found: said so.
    without = {key: value for key, value in variant.items() if key not in ("resolved", "resolved_toml")}
    fio = fio_document([job], "0.1.0", STARTED, VariantDevices(without))
    assert "disk_util" not in fio
    assert fio["sanlab notes"][-1] == "disk_util: not written: the results carry no resolved scenario with VM vm to find its device"


def test_steadystate_object_as_fio_writes_it(tmp_path: Path, real_fio: Callable[..., dict[str, Any]]) -> None:
    jobs = _one_server_jobs(tmp_path, "fio --name=j --ioengine=libaio --rw=randread --bs=4k --iodepth=1 --time_based --runtime=10 --ss=iops:1% --ss_dur=3", "10s")
    job = fio_document([jobs[0]], "0.1.0", STARTED)["jobs"][0]
    ss = job["steadystate"]
    assert (ss["ss"], ss["duration"], ss["attained"]) == ("iops:1.000000%", 3, 1)
    assert ss["data"]["iops"][1:] == [10_000, 10_000] and ss["data"]["bw"][1:] == [40_960_000, 40_960_000]
    assert job["job_runtime"] == 3000
    real = _real_fio_job(real_fio, "--ss=iops:50%", "--ss_dur=2", "--time_based", "--runtime=3")["steadystate"]
    assert list(ss) == list(real) and list(ss["data"]) == list(real["data"])
    # A latency criterion (fio 3.41, steadystate.c): each interval's mean latency, listed with
    # its mean between iops_mean and iops, as fio's stat.c writes them.
    jobs = _one_server_jobs(tmp_path, "fio --name=j --ioengine=libaio --rw=randread --bs=4k --iodepth=1 --time_based --runtime=10 --ss=lat:1% --ss_dur=3", "10s")
    ss = fio_document([jobs[0]], "0.1.0", STARTED)["jobs"][0]["steadystate"]
    assert (ss["ss"], ss["attained"]) == ("lat:1.000000%", 1)
    assert list(ss["data"]) == ["bw_mean", "iops_mean", "lat_mean", "lat_ns", "iops", "bw"]
    assert ss["data"]["lat_ns"] == [100_000] * 3 and ss["data"]["lat_mean"] == 100_000


# fio's own log parser from fio's source (tools/fiologparser.py), when the fio repository is fetched
# here; Debian's copy (fio-3.33) splits lines into exactly 4 fields and fails on fio 3.33's own logs.
FIO_SOURCE = Path("/work/.mirror/axboe+fio/repo")


def _check_fio_log(path: Path) -> list[tuple[int, int, int]]:
    """Our checker of fio's log format: `time_ms, value, direction, bs, offset` per line."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split(", ")
        assert len(fields) == 5 and all(f.isdigit() for f in fields), line
        rows.append((int(fields[0]), int(fields[1]), int(fields[2])))
    return rows


def test_fio_logs_from_the_time_series(cli: Any, tmp_path: Path) -> None:
    """A job asking for fio's logs gets them in its run folder, windowed, in fio's format."""
    args = "--write_bw_log=t --write_iops_log=t --write_lat_log=t --log_avg_msec=2000"
    scenario = _one_server(tmp_path, f"fio --name=j --ioengine=libaio --rw=randread --bs=4k --iodepth=1 --time_based --runtime=6 {args}", "6s")
    result = cli("run", str(scenario), "--quiet", "--out", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    fio_dir = tmp_path / "out" / "base" / "fio"
    assert sorted(p.name for p in fio_dir.glob("*.log")) == ["t_bw.1.log", "t_clat.1.log", "t_iops.1.log", "t_lat.1.log"]
    # 10,000 reads per second of 4 KiB at 100 us, in 2 s windows.
    assert _check_fio_log(fio_dir / "t_iops.1.log")[1:] == [(4000, 10000, 0), (6000, 10000, 0)]
    assert _check_fio_log(fio_dir / "t_bw.1.log")[1:] == [(4000, 40000, 0), (6000, 40000, 0)]
    assert [v for _, v, _ in _check_fio_log(fio_dir / "t_lat.1.log")] == [100_000] * 3
    written = json.loads((fio_dir / "vm-0.json").read_text(encoding="utf-8"))
    # The read completing at the run's last instant comes after the last sample, which disk_util sums.
    assert written["disk_util"][0]["read_ios"] == written["jobs"][0]["read"]["total_ios"] - 1
    notes = written["sanlab notes"]
    assert any("no `slat` (not simulated)" in n for n in notes)
    tool = tmp_path / "fiologparser.py"
    shown = subprocess.run(["git", f"--git-dir={FIO_SOURCE}", "show", "HEAD:tools/fiologparser.py"], capture_output=True, text=True, check=False)
    if shown.returncode == 0:
        tool.write_text(shown.stdout, encoding="utf-8")
        out = subprocess.run(["python3", str(tool), "-s", str(fio_dir / "t_iops.1.log")], capture_output=True, text=True, check=True).stdout
        sums = [float(line.split(", ")[1]) for line in out.splitlines()]
        assert sums and all(v == pytest.approx(10000.0, rel=0.01) for v in sums[2:]), out


def test_fio_logs_say_why_not_for_a_shared_vm(doc: dict[str, Any]) -> None:
    variant = doc["variants"][0]
    job = {**variant["jobs"][0], "options": {"write_bw_log": "t"}}
    variant["jobs"] = [job, {**job, "name": "other"}]
    files, notes = fio_logs(job, 1, variant)
    assert files == {}
    assert notes == [f"writer: fio logs not written: VM {job['vm']} runs other jobs too, and sanlab keeps time series per VM"]


def test_fio_plot_charts_sanlab_logs_by_iodepth(cli: Any, tmp_path: Path) -> None:
    """fio-plot (PyPI `fio-plot`) charts IOPS and latency at two queue depths from sanlab's fio logs.

    fio-plot finds logs by name, `<rw>-iodepth-<d>-numjobs-<n>_<type>.<N>.log`, so the jobs name
    their logs that way (its JSON charts are tested below).
    """
    logs = tmp_path / "logs"
    logs.mkdir()
    for depth in (1, 8):
        prefix = f"randread-iodepth-{depth}-numjobs-1"
        cmdline = f"fio --name=j --ioengine=libaio --rw=randread --bs=4k --iodepth={depth} --time_based --runtime=3 --write_iops_log={prefix} --write_lat_log={prefix}"
        run_dir = tmp_path / f"qd{depth}"
        run_dir.mkdir()
        result = cli("run", str(_one_server(run_dir, cmdline, "3s")), "--quiet", "--out", str(run_dir / "out"))
        assert result.returncode == 0, result.stderr
        for log in (run_dir / "out" / "base" / "fio").glob("*.log"):
            shutil.copy(log, logs / log.name)
    plot = [sys.executable, "-m", "fio_plot", "-i", str(logs), "-T", "sanlab", "-g", "-t", "iops", "lat", "-r", "randread", "-n", "1"]
    done = subprocess.run([*plot, "-d", "1", "8", "-o", "chart.png"], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    png = (tmp_path / "chart.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 20_000
    # A depth no job ran finds no log: fio-plot really selects sanlab's files by their names.
    missing = subprocess.run([*plot, "-d", "4", "-o", "none.png"], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert missing.returncode != 0 and "No log files found" in missing.stdout


SAMPLE_KEYS = [
    "bw_min", "bw_max", "bw_agg", "bw_mean", "bw_dev", "bw_samples",
    "iops_min", "iops_max", "iops_mean", "iops_stddev", "iops_samples",
]  # fmt: skip


def _samples(direction: dict[str, Any]) -> dict[str, Any]:
    return {key: direction[key] for key in SAMPLE_KEYS}


def test_bw_and_iops_samples_have_fios_keys_in_fios_order(simulated_job: dict[str, Any], tmp_path: Path, real_fio: Callable[..., dict[str, Any]]) -> None:
    real = _real_fio_job(real_fio, "--runtime=1", "--time_based")
    ours = fio_document([simulated_job], "0.1.0", STARTED)["jobs"][0]
    for direction in ("read", "write", "trim"):
        keys = [key for key in real[direction] if key in SAMPLE_KEYS]
        assert keys == SAMPLE_KEYS
        assert [key for key in ours[direction] if key in SAMPLE_KEYS] == keys
    assert list(ours["iodepth_level"]) == list(real["iodepth_level"])
    assert _samples(ours["trim"]) == _samples(real["trim"])


@pytest.mark.parametrize(
    "args",
    [
        ("--rate_iops=1000",),
        ("--rate_iops=1000", "--bwavgtime=1000", "--iopsavgtime=250"),
        ("--rate_iops=400", "--iopsavgtime=700"),
    ],
)
def test_samples_are_taken_as_fio_takes_them(tmp_path: Path, args: tuple[str, ...], real_fio: Callable[..., dict[str, Any]]) -> None:
    """A paced job's samples against Debian's fio (null engine) running the same options: one per
    window that ended before the job did, the same rates in whole units."""
    common = ("--iodepth=4", "--time_based", "--runtime=3", *args)
    ours = fio_document(_one_server_jobs(tmp_path, " ".join(("fio --name=j --ioengine=libaio --rw=randread --bs=4k", *common)), "3s")[:1], "0.1.0", STARTED)["jobs"][0]["read"]
    real = _real_fio_job(real_fio, *common)["read"]
    options = dict(a.removeprefix("--").split("=") for a in args)
    windows = {key: (3000 - 1) // int(options.get(f"{key}avgtime", "500")) for key in ("iops", "bw")}
    for key, count in windows.items():
        assert ours[f"{key}_samples"] == count > 1
        # fio also takes the window that ends with the job when its clock reaches that end within
        # LOG_MSEC_SLACK (1 ms, stat.c) before the job stops: one more or not, by the machine's timing.
        assert real[f"{key}_samples"] in (count, count + 1)
    rate = int(options["rate_iops"])
    # Every window holds exactly the paced I/Os; fio's real clock makes its windows a little short.
    assert (ours["iops_min"], ours["iops_max"], ours["iops_mean"], ours["iops_stddev"]) == (rate, rate, float(rate), 0.0)
    assert ours["bw_min"] == ours["bw_max"] == rate * 4096 // 1024
    assert real["iops_mean"] == pytest.approx(rate, rel=0.01)
    assert real["bw_mean"] == pytest.approx(ours["bw_mean"], rel=0.01)
    assert ours["bw_agg"] == pytest.approx(100.0, abs=0.1) and real["bw_agg"] == pytest.approx(100.0, abs=0.1)


def test_a_per_io_log_samples_every_io_as_in_fio(tmp_path: Path, real_fio: Callable[..., dict[str, Any]]) -> None:
    """With write_bw_log / write_iops_log and no log_avg_msec, fio samples every I/O: IOPS 1 each,
    bandwidth the I/O's bytes x 10^6 over its latency in ns."""
    common = ("--rate_iops=200", "--time_based", "--runtime=1", "--write_bw_log=x", "--write_iops_log=x")
    jobs = _one_server_jobs(tmp_path, " ".join(("fio --name=j --ioengine=libaio --rw=randread --bs=4k", *common)), "1s")
    ours = fio_document([jobs[0]], "0.1.0", STARTED)["jobs"][0]["read"]
    real = _real_fio_job(real_fio, *common)["read"]
    for job in (ours, real):
        assert job["iops_samples"] == job["bw_samples"] == job["total_ios"] > 100
        assert (job["iops_min"], job["iops_max"], job["iops_mean"]) == (1, 1, 1.0)
    # The latency's min and max are the histogram's, within its 1 % resolution.
    lat = ours["clat_ns"]
    assert ours["bw_max"] == pytest.approx(4096 * 10**6 / lat["min"], rel=0.01)
    assert ours["bw_min"] == pytest.approx(4096 * 10**6 / lat["max"], rel=0.01)


def test_iodepth_level_counts_each_submission_by_the_depth_it_reaches(tmp_path: Path) -> None:
    """A closed loop at depth 8 fills once (depths 1, 2-3, 4-7, then 8) and then submits at 8, as
    fio's libaio job on a file reports (1, 2 and 4 at fio's floor of 0.1 %)."""
    job = _one_server_jobs(tmp_path, "fio --name=j --ioengine=libaio --rw=randread --bs=4k --iodepth=8 --time_based --runtime=1", "1s")[0]
    issued = job["iodepth_level"]
    assert issued[:3] == [1, 2, 4] and issued[4:] == [0, 0, 0]
    assert sum(issued) >= job["read"]["total_ios"] > 1000
    level = fio_document([job], "0.1.0", STARTED)["jobs"][0]["iodepth_level"]
    assert level == {"1": 0.1, "2": 0.1, "4": 0.1, "8": pytest.approx(100.0 * issued[3] / sum(issued)), "16": 0.0, "32": 0.0, ">=64": 0.0}
    # A sync engine keeps one request in flight: every submission at depth 1.
    sync = _one_server_jobs(tmp_path, "fio --name=j --ioengine=psync --rw=randread --bs=4k --iodepth=8 --time_based --runtime=1", "1s")[0]
    assert fio_document([sync], "0.1.0", STARTED)["jobs"][0]["iodepth_level"]["1"] == 100.0


@pytest.mark.parametrize(
    "args",
    [
        ("--fsync=4",),
        ("--fdatasync=4",),
        ("--sync_file_range=wait_before,write:4",),
        ("--fsync=4", "--fdatasync=6"),
        ("--ioengine=libaio", "--iodepth=8", "--fsync=1"),
    ],
)
def test_syncs_are_counted_as_fio_counts_them(tmp_path: Path, args: tuple[str, ...], real_fio: Callable[..., dict[str, Any]]) -> None:
    """A sync every N writes, against Debian's fio writing 1 MiB in 4 KiB blocks: none after the
    last write; at depth 8 one before each write once a completion came (249 for 256 writes);
    `total_ios` counts only the fsyncs, and `iodepth_level` counts syncs over the writes' total
    (past 100 %), as fio 3.33 writes them. Each sync took 0 ns: it ends in the guest."""
    engine = () if "--ioengine=libaio" in args else ("--ioengine=psync",)
    cmd = " ".join(("fio --name=j --rw=write --size=1m --bs=4k", *engine, *args))
    job = _one_server_jobs(tmp_path, cmd, "5s")[0]
    ours = fio_document([job], "0.1.0", STARTED)
    real = _real_fio_job(real_fio, "--rw=write", "--size=1m", *args)
    mine = ours["jobs"][0]
    assert mine["write"]["total_ios"] == real["write"]["total_ios"] == 256
    assert mine["sync"]["total_ios"] == real["sync"]["total_ios"]
    assert mine["sync"]["lat_ns"]["N"] == real["sync"]["lat_ns"]["N"] > 0
    assert mine["iodepth_level"] == pytest.approx(real["iodepth_level"])
    assert (mine["sync"]["lat_ns"]["max"], mine["sync"]["lat_ns"]["bins"]) == (0, {"0": mine["sync"]["lat_ns"]["N"]})
    assert list(mine["sync"]["lat_ns"]["percentile"]) == list(mine["write"]["clat_ns"]["percentile"])
    assert any(note.startswith("sync:") for note in ours["sanlab notes"])
    assert sum(job["syncs"].values()) == mine["sync"]["lat_ns"]["N"]


def test_one_document_per_invocation_with_fios_groups(cli: Any, tmp_path: Path, real_fio: Callable[..., dict[str, Any]]) -> None:
    """A command line's jobs share one fio document, as fio writes one: its global options, and
    with group_reporting one object per reporting group (a stonewall starts the next), its I/Os
    the sum of the group's jobs and bw_agg against the group's bandwidth; Debian's fio (null
    engine) gives the same shape."""
    common = "--rw=randread --bs=4k --iodepth=4 --size=64m --group_reporting --time_based --runtime=1"
    jobs = "--name=a --numjobs=2 --name=b --rw=randwrite --name=after --stonewall"
    scenario = _one_server(tmp_path, f"fio --ioengine=libaio {common} {jobs}", "2s")
    assert cli("run", str(scenario), "--quiet", "--out", str(tmp_path / "out")).returncode == 0
    (path,) = (tmp_path / "out" / "base" / "fio").glob("*.json")
    ours = json.loads(path.read_text(encoding="utf-8"))
    real = real_fio(["--output-format=json", "--ioengine=null", *common.split(), *jobs.split()])
    assert list(ours["global options"]) == list(real["global options"])
    assert [j["groupid"] for j in ours["jobs"]] == [j["groupid"] for j in real["jobs"]] == [0, 1]
    assert [(j["jobname"], j["job options"]) for j in ours["jobs"]] == [(j["jobname"], j["job options"]) for j in real["jobs"]]
    results = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["variants"][0]["jobs"]
    group0 = [j for j in results if j["fio_place"]["group"] == 0]
    assert len(group0) == 3 and {j["entry"] for j in results} == {path.stem}
    first = ours["jobs"][0]
    for d in ("read", "write"):
        assert first[d]["total_ios"] == sum(j[d]["total_ios"] for j in group0) > 0
        assert first[d]["clat_ns"]["N"] == sum(j[d]["lat_ns"]["N"] for j in group0)
        assert sum(first[d]["clat_ns"]["bins"].values()) == first[d]["clat_ns"]["N"]
    # The group's reads come from two jobs: their samples add up, as fio's pure sum.
    assert first["read"]["iops_mean"] == pytest.approx(sum(j["read"]["iops_samples"]["mean"] for j in group0))
    assert 0 < first["write"]["bw_agg"] <= 100.0 and first["read"]["bw_agg"] == pytest.approx(100.0, abs=1)
    assert sum(first["iodepth_level"].values()) == pytest.approx(100.0, abs=0.5)
    # fio adds up the members' runtimes (3 x 1 s; fio 3.33 wrote 3,007 ms) and gives every job
    # its invocation's elapsed time (two groups of 1 s one after the other).
    assert (first["job_runtime"], real["jobs"][0]["job_runtime"]) == (3000, pytest.approx(3000, abs=100))
    assert [j["elapsed"] for j in ours["jobs"]] == [2, 2]


def test_a_job_files_globals_names_and_options_as_fio_lists_them(tmp_path: Path, real_fio: Callable[..., dict[str, Any]]) -> None:
    """Every [global] section's options (the one after the first job too), repeated section names
    kept as fio's jobname, and no `job options` for a job without its own, as Debian's fio
    writes them for the same file."""
    job_file = "[global]\nioengine=null\nsize=1m\n[a]\n[global]\niodepth=2\n[a]\nrw=write\n"
    (tmp_path / "jobs.fio").write_text(job_file, encoding="utf-8")
    scenario = _one_server(tmp_path, "fio --name=x", "1s")
    scenario.write_text(scenario.read_text(encoding="utf-8").replace('kind = "fio"\ncmdline = "fio --name=x"', 'kind = "fio_file"\nfile = "jobs.fio"'), encoding="utf-8")
    ours = fio_document(json.loads(_core.run(str(scenario), [], [], None, None))["variants"][0]["jobs"], "0.1.0", STARTED)
    real = real_fio(["--output-format=json", "jobs.fio"], {"jobs.fio": job_file})
    assert ours["global options"] == real["global options"] == {"ioengine": "null", "size": "1m", "iodepth": "2"}
    assert [(j["jobname"], j.get("job options")) for j in ours["jobs"]] == [(j["jobname"], j.get("job options")) for j in real["jobs"]]


def test_ramp_time_is_left_out_of_samples_and_depths(tmp_path: Path) -> None:
    """fio resets its samples and depth counts when ramp_time ends: a 1 s ramp leaves 2 s of windows."""
    job = _one_server_jobs(tmp_path, "fio --name=j --ioengine=libaio --rw=randread --bs=4k --iodepth=8 --rate_iops=1000 --time_based --runtime=2 --ramp_time=1", "3s")[0]
    read = fio_document([job], "0.1.0", STARTED)["jobs"][0]["read"]
    assert read["iops_samples"] == 3 and read["iops_min"] == 1000
    assert sum(job["iodepth_level"]) == read["total_ios"] == 2000


def test_fio_plot_draws_its_json_bar_charts_from_sanlab_output(cli: Any, tmp_path: Path) -> None:
    """fio-plot's JSON charts (`-l`: IOPS and latency per queue depth, `-H`: latency histogram)
    from the fio JSON of sanlab's run folders; they need iops_stddev and the CPU keys."""
    json_dir = tmp_path / "json"
    json_dir.mkdir()
    for depth in (1, 8):
        cmdline = f"fio --name=j --ioengine=libaio --rw=randread --bs=4k --iodepth={depth} --numjobs=1 --time_based --runtime=2"
        run_dir = tmp_path / f"qd{depth}"
        run_dir.mkdir()
        result = cli("run", str(_one_server(run_dir, cmdline, "2s")), "--quiet", "--out", str(run_dir / "out"))
        assert result.returncode == 0, result.stderr
        (found,) = (run_dir / "out" / "base" / "fio").glob("*.json")
        document = json.loads(found.read_text(encoding="utf-8"))
        assert document["jobs"][0]["read"]["iops_samples"] == 3
        shutil.copy(found, json_dir / f"randread-qd{depth}.json")
    plot = [sys.executable, "-m", "fio_plot", "-i", str(json_dir), "-T", "sanlab", "-r", "randread", "-n", "1"]
    for chart, depths in (("-l", ["1", "8"]), ("-H", ["8"])):
        done = subprocess.run([*plot, chart, "-d", *depths, "-o", "chart.png"], capture_output=True, text=True, cwd=tmp_path, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
        png = (tmp_path / "chart.png").read_bytes()
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 20_000
        (tmp_path / "chart.png").unlink()
    # A depth no run has finds no file: fio-plot really selects sanlab's documents by their options.
    missing = subprocess.run([*plot, "-l", "-d", "4", "-o", "none.png"], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert missing.returncode != 0 and "Could not find any" in missing.stdout
