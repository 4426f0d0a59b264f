"""The classes the in-process fuzz harness of the newer commands found (benches/fuzz_newer.py,
docs/robustness.md "Round 4"), each on its own reproducer, and the harness's saved inputs
(tests/data/fuzz_newer/) replayed: each ends in success or one line of `UserError`."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from sanlab.hostimport.linux.iostat import parse_iostat
from sanlab.hostimport.linux.nvme import parse_nvme
from sanlab.hostimport.linux.records import LinuxInputError

REPO = Path(__file__).resolve().parents[2]
LINUX = REPO / "tests" / "data" / "linux"
SAVED = REPO / "tests" / "data" / "fuzz_newer"


def _harness():  # noqa: ANN202 (the module benches/fuzz_newer.py)
    spec = importlib.util.spec_from_file_location("fuzz_newer", REPO / "benches" / "fuzz_newer.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_newer"] = module
    spec.loader.exec_module(module)
    return module


def test_an_iostat_header_with_r_await_and_await_but_no_w_await_is_read() -> None:
    """The header check took `await` for both directions, the row read `w_await` when `r_await`
    was there: a KeyError traceback. A pair is read only when both of it are there."""
    text = (LINUX / "iostat" / "sysstat.expected.iostat-x.txt").read_text(encoding="utf-8")
    first_report = text[: text.index("avg-cpu", text.index("avg-cpu") + 1)]
    capture = parse_iostat(first_report.replace(" w_await ", "   await "), "iostat.txt")
    row = capture.reports[0][0]
    assert (row.device, row.read_await_ms, row.write_await_ms) == ("sda", 9.61, 9.61)  # `await` for both, as in the oldest


def test_an_iostat_header_with_a_rate_unit_in_one_direction_only_is_read() -> None:
    text = (LINUX / "iostat" / "sysstat.expected.iostat-x.txt").read_text(encoding="utf-8")
    text = text.replace("     w/s     wkB/s", "     w/s     wMB/s").replace("     r/s     rkB/s   rrqm/s", "     r/s     rkB/s   rMB/s")
    capture = parse_iostat(text, "iostat.txt")
    assert capture.reports[0][0].device == "sda"


def test_one_nvme_subsystem_listed_twice_is_refused_naming_both() -> None:
    """Two subsystems of one name made two volumes of that name: a scenario written that the
    engine refused (`volume nvme-subsys0 is defined twice`). Conflicting records are an error
    naming both, as for esxcli's runtime names."""
    text = (LINUX / "nvme" / "ontap-sanhost.rhel9-tcp.txt").read_text(encoding="utf-8")
    first = text.split("\n\n")[0] if "\n\n" in text else text
    twice = first + "\n" + first.replace("nvme102 ", "nvme902 ").replace("nvme151 ", "nvme951 ").replace("nvme4 ", "nvme904 ").replace("nvme53 ", "nvme953 ")
    with pytest.raises(LinuxInputError, match=r"nvme.txt:\d+: subsystem nvme-subsys4 is also at nvme.txt:1: expected each subsystem once"):
        parse_nvme(twice, "nvme.txt")


@pytest.mark.parametrize("case", sorted(p for p in SAVED.glob("*/case.json")) if SAVED.is_dir() else [], ids=lambda p: p.parent.name)
def test_saved_fuzz_inputs_end_in_success_or_one_line(case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    harness = _harness()
    found, index = harness.load(case.parent)
    monkeypatch.chdir(tmp_path)  # as the harness runs: a relative write lands in the input's folder
    outcome = harness.run_case(found, tmp_path, index)
    assert outcome is None, outcome


@pytest.mark.parametrize("bound", ["1e400", "-1e400", "1e30"])
def test_a_free_bound_past_2_64_is_one_error(bound: str) -> None:
    """`1e400..16:int` was an OverflowError traceback (round() of infinity)."""
    from sanlab.calibration.inputs import CalibrationError, parse_free

    with pytest.raises(CalibrationError, match=r"is not a finite number of at most 2\^64"):
        parse_free(f"array[0].media.servers={bound}..16:int")
    with pytest.raises(CalibrationError, match=r"is not a finite number of at most 2\^64"):
        parse_free(f"array[0].media.servers=1..{bound.lstrip('-')}:int")


def test_a_device_queue_of_no_command_is_said_not_written(tmp_path: Path) -> None:
    """A dm device's `queue/nr_requests:0` capped the paths' queue depth to 0, written as
    `lun_queue_depth = 0`, which the engine refuses (the read-back stopped the import). A
    figure that holds no command is said, not written, as an HBA's queue below one is."""
    import contextlib
    import io

    from sanlab import cli

    sysfs = tmp_path / "sysfs.txt"
    text = (LINUX / "sysfs" / "constructed.ibm-ds8k.grep-H.txt").read_text(encoding="utf-8")
    sysfs.write_text(re.sub(r"(?m)^(/sys/block/dm-0/queue/nr_requests:)\d+$", r"\g<1>0", text), encoding="utf-8")
    out, err = tmp_path / "host.toml", io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["import", "linux", "--multipath", str(LINUX / "multipath" / "linux-scsi.ibm-ds8k-create.txt"), "--sysfs", str(sysfs), "-o", str(out)])
    assert code == 0, err.getvalue()
    assert "lun_queue_depth" not in out.read_text(encoding="utf-8")
    assert "device queue depth 0 (dm-0 queue/nr_requests 0" in err.getvalue() and "holds no command: not written" in err.getvalue()


def test_a_fixed_preferred_path_the_path_listing_gives_another_device_is_refused_naming_both() -> None:
    """The device listing's FIXED prefers vmhba2:C0:T1:L1; the path listing gives that runtime
    name to another device (a device name changed): it was written as this device's preferred
    path, which the engine refused. The preferred path must be one of the device's own."""
    from sanlab.hostimport.esxcli import read_listings
    from sanlab.hostimport.scenario import HostImportError, build_cluster

    esxcli = REPO / "tests" / "data" / "esxi" / "esxcli"
    paths = (esxcli / "nmp-path-list.esx40-clariion.derived.csv").read_text(encoding="utf-8")
    lines = paths.splitlines(keepends=True)
    at = next(k for k, line in enumerate(lines) if "vmhba2:C0:T1:L1" in line)
    lines[at] = lines[at].replace("naa.600601604670290026cca5f7836fe111,", "naa.600601604670290026cca5f7836fe222,", 1)
    folder = Path(__import__("tempfile").mkdtemp())
    (folder / "paths.csv").write_text("".join(lines), encoding="utf-8")
    listings = read_listings([esxcli / "nmp-device-list.esx40-clariion.txt", folder / "paths.csv"])
    with pytest.raises(HostImportError, match=r"FIXED prefers vmhba2:C0:T1:L1, which is none of its listed paths \(vmhba2:C0:T0:L1\), and the path listing gives vmhba2:C0:T1:L1 to device naa.600601604670290026cca5f7836fe222"):
        build_cluster([("esx1", listings, None)])


ESXCLI_DATA = REPO / "tests" / "data" / "esxi" / "esxcli"
NAA = "naa.600601604670290026cca5f7836fe111"
COUNTERS = ("Commands/sec", "Reads/sec", "Writes/sec", "MBytes Read/sec", "MBytes Written/sec", "Active Commands", "Queued Commands", "Average Driver MilliSec/Command")


@pytest.mark.parametrize(
    ("values", "said"),
    [
        ({"MBytes Read/sec": "1e18"}, "bytes per command at 1000 commands/s, above the 4,294,967,296 a request can be"),
        ({"Active Commands": "100000"}, "100000 commands outstanding (Active Commands + Queued Commands), above the 65536 a job can hold"),
        ({"Commands/sec": "2e9", "Reads/sec": "1.4e9", "Writes/sec": "6e8", "MBytes Read/sec": "1e7", "Active Commands": "0.5"}, "2e+09 commands/s, outside the rates a job can issue (3.171e-08 to 1e+09)"),
    ],
)
def test_a_load_past_the_engines_bounds_for_a_job_is_said_not_written(tmp_path: Path, values: dict[str, str], said: str) -> None:
    """A capture of 1e18 MB/s was written `--bs=6447604371278022049792`, which the engine refuses
    (the read-back stopped the import): a size, depth or rate past what a job takes is said."""
    import contextlib
    import io

    from sanlab import cli

    cells = {"Commands/sec": "1000", "Reads/sec": "700", "Writes/sec": "300", "MBytes Read/sec": "2.73", "MBytes Written/sec": "1.17",
             "Active Commands": "4", "Queued Commands": "0", "Average Driver MilliSec/Command": "0.51", **values}  # fmt: skip
    header = ['"(PDH-CSV 4.0) (UTC)(0)"', *(f'"\\\\esx1\\Physical Disk SCSI Device({NAA})\\{c}"' for c in COUNTERS)]
    rows = [[f'"01/01/2026 00:00:{5 * k:02d}"', *(f'"{cells[c]}"' for c in COUNTERS)] for k in range(3)]
    capture = tmp_path / "esxtop.csv"
    capture.write_text("\n".join(",".join(row) for row in [header, *rows]) + "\n", encoding="utf-8")
    out, err = tmp_path / "host.toml", io.StringIO()
    listings = [str(ESXCLI_DATA / "nmp-device-list.esx40-clariion.txt"), str(ESXCLI_DATA / "nmp-path-list.esx40-clariion.txt")]
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["import", "esxi", "--esxcli", *listings, "--esxtop", str(capture), "-o", str(out)])
    assert code == 0, err.getvalue()
    assert said in err.getvalue(), err.getvalue()


def test_an_iostat_load_past_the_engines_bounds_is_said_not_written(tmp_path: Path) -> None:
    """The same bound for `import linux` (one function, `workload.beyond_a_job`): an iostat
    capture of 1e15 kB/s read gives a request size no job can have."""
    import contextlib
    import io

    from sanlab import cli

    lines = (LINUX / "iostat" / "constructed.ibm-ds8k.xt.txt").read_text(encoding="utf-8").splitlines()
    column = None
    for k, line in enumerate(lines):
        cells = line.split()
        if cells and cells[0].rstrip(":") == "Device":
            column = cells.index("rkB/s")
        elif column is not None and len(cells) > column and cells[0] != "avg-cpu:":
            cells[column] = "1000000000000000"
            lines[k] = " ".join(cells)
        else:
            column = None if not cells else column
    capture = tmp_path / "iostat.txt"
    capture.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out, err = tmp_path / "host.toml", io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["import", "linux", "--multipath", str(LINUX / "multipath" / "linux-scsi.ibm-ds8k-create.txt"), "--iostat", str(capture), "-o", str(out)])
    assert code == 0, err.getvalue()
    assert "a request can be" in err.getvalue(), err.getvalue()


def _iostat_with(tmp_path: Path, column: str, value: str) -> tuple[int, str, str]:
    """`import linux` of the DS8000 listing and its iostat capture with `column` of every row
    set to `value`: exit code, stderr and the scenario written (empty when none)."""
    import contextlib
    import io

    from sanlab import cli

    lines = (LINUX / "iostat" / "constructed.ibm-ds8k.xt.txt").read_text(encoding="utf-8").splitlines()
    at = None
    for k, line in enumerate(lines):
        cells = line.split()
        if cells and cells[0].rstrip(":") == "Device":
            at = cells.index(column)
        elif at is not None and len(cells) > at and cells[0] != "avg-cpu:":
            cells[at] = value
            lines[k] = " ".join(cells)
    capture = tmp_path / "iostat.txt"
    capture.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out, err = tmp_path / "host.toml", io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["import", "linux", "--multipath", str(LINUX / "multipath" / "linux-scsi.ibm-ds8k-create.txt"), "--iostat", str(capture), "-o", str(out)])
    return code, err.getvalue(), out.read_text(encoding="utf-8") if out.exists() else ""


def test_an_await_past_the_engines_longest_duration_is_said_not_written(tmp_path: Path) -> None:
    """An r_await of 1e18 ms was written `read_latency = "2305843009213693952000.0us"`, past the
    365 days the engine takes: the service time's bounds are one function (`no_service_time`)
    for ESXi's DAVG and iostat's and typeperf's await alike."""
    code, err, written = _iostat_with(tmp_path, "r_await", "1000000000000000000")
    assert code == 0, err
    assert "the reads' await (1e+18 ms, above the 365 days the engine takes) is no service time: left out" in err, err
    assert "e+" not in written.split("[[volume]]")[0]


def test_an_arrays_servers_are_at_most_the_engines(tmp_path: Path) -> None:
    """Four servers per outstanding command: 300,000 outstanding (an open loop's) gave 1.2 M
    servers, past the engine's 1,000,000."""
    import contextlib
    import io

    from sanlab import cli

    cells = {"Commands/sec": "1000", "Reads/sec": "700", "Writes/sec": "300", "MBytes Read/sec": "2.73", "MBytes Written/sec": "1.17",
             "Active Commands": "300000.5", "Queued Commands": "0", "Average Driver MilliSec/Command": "0.51"}  # fmt: skip
    header = ['"(PDH-CSV 4.0) (UTC)(0)"', *(f'"\\\\esx1\\Physical Disk SCSI Device({NAA})\\{c}"' for c in COUNTERS)]
    rows = [[f'"01/01/2026 00:00:{5 * k:02d}"', *(f'"{cells[c]}"' for c in COUNTERS)] for k in range(3)]
    capture = tmp_path / "esxtop.csv"
    capture.write_text("\n".join(",".join(row) for row in [header, *rows]) + "\n", encoding="utf-8")
    out, err = tmp_path / "host.toml", io.StringIO()
    listings = [str(ESXCLI_DATA / "nmp-device-list.esx40-clariion.txt"), str(ESXCLI_DATA / "nmp-path-list.esx40-clariion.txt")]
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(["import", "esxi", "--esxcli", *listings, "--esxtop", str(capture), "-o", str(out)])
    assert code == 0, err.getvalue()
    assert "servers = 1000000 }" in out.read_text(encoding="utf-8")
