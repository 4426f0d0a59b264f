"""`sanlab import windows`: public `mpclaim -s -d` and `mpclaim -s -d N` outputs and typeperf
captures (tests/data/windows/SOURCES.md) read, made into a scenario the engine reads back and
runs; the constructed capture's load carried within 5 % and its latency within 10 %; bad input
one line and exit 2; and the round trip: a Windows host simulated, its mpclaim listings and
typeperf counters written as Windows prints them, imported and simulated again."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from datetime import datetime, timezone
from pathlib import Path

import pytest

from sanlab import engine
from sanlab.hostimport.esxtop import DEVICE, read_capture
from sanlab.hostimport.windows.mpclaim import parse_mpclaim, read_mpclaim
from sanlab.hostimport.windows.topology import from_mpclaim
from sanlab.hostimport.windows.typeperf import read_typeperf

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests/data/windows"
MPCLAIM = DATA / "mpclaim"
NICK = MPCLAIM / "nickjeffrey.summary-and-disk0.txt"
RMS = MPCLAIM / "rmscode.summary-and-disk1.txt"
VPLEX = MPCLAIM / "andy0583.vplex-metro-disk2.txt"
VENDOR = MPCLAIM / "check-mpio.vendor-dsm.summary.txt"
GORANS2 = DATA / "typeperf/dbxtune.gorans2.physicaldisk.csv"
HV01 = DATA / "typeperf/constructed.hv01.physicaldisk.csv"


def _sanlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sanlab.cli", *args], capture_output=True, text=True, timeout=600, check=False)


# --- mpclaim ---------------------------------------------------------------------------------


def test_summary_and_disk_listing_in_one_file() -> None:
    listing = read_mpclaim([NICK])
    assert [(s.mpio_disk, s.system_disk, s.policy, s.dsm) for s in listing.summary.values()] == [(0, 2, "RR", "Microsoft DSM"), (1, 3, "RR", "Microsoft DSM"), (2, 4, "RR", "Microsoft DSM")]
    disk = listing.disks[0]
    assert (disk.path_count, disk.policy, disk.access, disk.dsm, disk.serial) == (4, "Round Robin", "Symmetric Access", "Microsoft DSM", "6000D31004704E000000000000000008")
    assert [(p.path_id, p.state, (p.port, p.bus, p.target, p.lun), p.weight, p.tpg_state, p.tpg_id) for p in disk.paths] == [
        ("0000000077050007", "Active/Optimized", (5, 0, 7, 1), 0, "Active/Optimized", 61498),
        ("0000000077050006", "Active/Unoptimized", (5, 0, 6, 1), 0, "Active/Unoptimized", 61498),
        ("0000000077050003", "Standby", (5, 0, 3, 1), 0, "Standby", 61495),
        ("0000000077050002", "Unavailable", (5, 0, 2, 1), 0, "Unavailable", 61495),
    ]
    assert str(disk.paths[0].source) == f"{NICK}:17"


def test_layouts_of_other_hosts() -> None:
    rms = read_mpclaim([RMS])
    assert sorted(rms.summary) == [0, 1] and list(rms.disks) == [1]
    assert [(p.target, p.tpg_id) for p in rms.disks[1].paths] == [(1, 256), (0, 256)]  # `* TPG_State` lines
    vplex = read_mpclaim([VPLEX])
    assert not vplex.summary and vplex.disks[2].policy == "Round Robin with Subset" and vplex.disks[2].access == "ALUA Not Supported"
    assert [p.state for p in vplex.disks[2].paths] == ["Active/Optimized"] * 4 + ["Standby"] * 4 and all(p.tpg_state is None for p in vplex.disks[2].paths)
    # Several files: the summary in one, a disk in another.
    both = read_mpclaim([VENDOR, VPLEX])
    assert sorted(both.summary) == [0, 4, 11] and list(both.disks) == [2]


def test_topology_states_controllers_and_policies() -> None:
    top = from_mpclaim(read_mpclaim([NICK]))
    assert [(link.name, link.adapter, link.controller, link.alua) for link in top.links] == [
        ("005|000|007", "port5", 1, "AO"), ("005|000|006", "port5", 1, "ANO"), ("005|000|003", "port5", 2, "standby"), ("005|000|002", "port5", 2, "unavailable"),
    ]
    assert [(a.name, a.controllers) for a in top.arrays] == [("array1", 2)] and "6000D31004704E00" in top.arrays[0].why
    assert [(v.name, v.psp) for v in top.volumes] == [("disk2", {"kind": "mpio_round_robin"})]
    assert sum("has no `mpclaim -s -d" in n for n in top.notes) == 2
    # No ALUA: Standby is the DSM's own, kept AO and out of the subset; no TPG, sanlab's two controllers.
    vplex = from_mpclaim(read_mpclaim([VPLEX]))
    assert {link.alua for link in vplex.links} == {"AO"} and vplex.arrays[0].controllers is None
    assert vplex.volumes[0].name == "mpio-disk2" and vplex.volumes[0].psp == {"kind": "mpio_round_robin_subset", "subset": ["004|000|009", "004|000|008", "004|000|011", "004|000|010"]}


def _two_disks(policy: str, code: str, weights: tuple[int, int] = (0, 0)) -> str:
    """Two disks over the same two links (nickjeffrey's layout), the first with `policy`."""
    summary = "MPIO Disk    System Disk  LB Policy    DSM Name\n" + "-" * 60 + f"\nMPIO Disk0   Disk 2       {code:<12} Microsoft DSM\nMPIO Disk1   Disk 3       RR           Microsoft DSM\n\n"
    disks = ""
    for n, name in ((0, policy), (1, "Round Robin")):
        disks += f"MPIO Disk{n}: 02 Paths, {name}, Implicit Only\n Controlling DSM: Microsoft DSM\n SN: 600A0B80001234560000000000000{n:03d}\n\nPath ID          State              SCSI Address      Weight\n" + "-" * 60 + "\n"
        for t, (state, w) in enumerate((("Active/Optimized", weights[0]), ("Standby", weights[1]))):
            disks += f"00000000770300{t:02d} {state:<18} 003|000|{t:03d}|{n + 1:03d}   {w}\n  TPG_State : {state:<18}, TPG_Id: {t + 1}, : {t + 1}\n\n"
    return summary + disks


@pytest.mark.parametrize(("name", "code", "kind"), [("Fail Over Only", "FOO", "mpio_failover_only"), ("Least Queue Depth", "LQD", "mpio_least_queue_depth"), ("Least Blocks", "LB", "mpio_least_blocks"), ("Weighted Paths", "WP", "mpio_weighted_paths"), ("Round Robin with Subset", "RRWS", "mpio_round_robin_subset")])
def test_every_policy_is_a_sanlab_kind_and_runs(tmp_path: Path, name: str, code: str, kind: str) -> None:
    listing = tmp_path / "mpclaim.txt"
    listing.write_text(_two_disks(name, code, (5, 1)), encoding="utf-8")
    out = tmp_path / "host.toml"
    p = _sanlab("import", "windows", "--mpclaim", str(listing), "-o", str(out), "--duration", "1s")
    assert p.returncode == 0, p.stderr
    doc = tomllib.loads(out.read_text())
    psp = next(v for v in doc["volume"] if v["name"] == "disk2").get("psp") or doc["host"][0]["multipath"]["psp"]
    assert psp["kind"] == kind
    # Two volumes share each link: their paths are named `<link>:<volume>`, as the engine names them.
    if code == "WP":
        assert psp["weights"] == {"003|000|000:disk2": 5, "003|000|001:disk2": 1}
    if code == "RRWS":
        assert psp["subset"] == ["003|000|000:disk2"]
    run = _sanlab("run", str(out), "--json", "--quiet", "--out", str(tmp_path / "run"))
    assert run.returncode == 0, run.stderr
    paths = {x["name"]: x["ios"] for x in json.loads(run.stdout)["variants"][0]["paths"]}
    if code == "WP":  # the least weight carries the I/O: the standby path, weight 1
        assert paths["003|000|001:disk2"] == 0, paths  # ... unless its ALUA state keeps it out
    assert paths["003|000|000:disk2"] > 0


# --- typeperf --------------------------------------------------------------------------------


def test_a_public_typeperf_capture() -> None:
    cap = read_typeperf(GORANS2)
    assert cap.host == "GORANS2" and len(cap.reports) == 4
    assert {row.device for report in cap.reports for row in report} == {"0 C:"}  # _Total is not read
    first = cap.reports[0][0]
    assert (first.reads_per_s, first.writes_per_s, first.read_size_bytes, first.queue) == (0.199608, 16.866842, 16384.0, 0.003429)
    assert first.read_await_ms == pytest.approx(0.433) and first.write_await_ms == pytest.approx(0.198)


def test_typeperf_s_own_lines_and_blank_first_sample() -> None:
    cap = read_typeperf(HV01)
    assert cap.host == "HV01" and len(cap.reports) == 12
    assert any("'The command completed successfully.', the tool's own message, skipped" in n for n in cap.notes)
    assert any("blank counter left out" in n and "2 E: 1" in n for n in cap.notes)


def test_the_walk_of_the_docs_carries_the_capture(tmp_path: Path) -> None:
    """rmscode's listing with the constructed capture of its Disk 2: 20,000 IOPS at 0.4 ms."""
    out = tmp_path / "hv01.toml"
    p = _sanlab("import", "windows", "--mpclaim", str(RMS), "--typeperf", str(HV01), "-o", str(out), "--duration", "3s")
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    engine.validate(out)
    assert 'name = "HV01"' in text and "closed loop at 8 outstanding (Avg. Disk Queue Length 8.00" in text and "--rwmixread=70 --bs=8192 --iodepth=8" in text
    assert 'read_latency = "399.9us"' in text and "Avg. Disk sec/Read and Avg. Disk sec/Write of 2 E:" in text
    run = _sanlab("run", str(out), "--json", "--quiet", "--out", str(tmp_path / "run"))
    assert run.returncode == 0, run.stderr
    variant = json.loads(run.stdout)["variants"][0]
    [disk] = variant["devices"]
    assert disk["iops"] == pytest.approx(20000, rel=0.05) and disk["gavg_ms"] == pytest.approx(0.4, rel=0.10)
    assert {x["name"]: round(x["share"], 2) for x in variant["paths"]} == {"005|000|001": 0.5, "005|000|000": 0.5}
    # The what-if of the docs: LQD instead of RR with one link 0.2 ms slower.
    slow = _sanlab("run", str(out), "--json", "--quiet", "--out", str(tmp_path / "rr-slow"), "--set", 'path[1].link={latency="200us"}')
    lqd = _sanlab("run", str(out), "--json", "--quiet", "--out", str(tmp_path / "lqd-slow"), "--set", 'path[1].link={latency="200us"}', "--set", "host[0].multipath.psp=mpio_least_queue_depth")
    rr_v, lqd_v = (json.loads(r.stdout)["variants"][0] for r in (slow, lqd))
    assert lqd_v["devices"][0]["iops"] > rr_v["devices"][0]["iops"]
    assert next(x["share"] for x in lqd_v["paths"] if x["name"] == "005|000|000") < 0.5


@pytest.mark.parametrize("listing", [NICK, RMS, VPLEX])
def test_every_public_listing_becomes_a_scenario_that_runs(tmp_path: Path, listing: Path) -> None:
    out = tmp_path / "host.toml"
    p = _sanlab("import", "windows", "--mpclaim", str(listing), "-o", str(out), "--duration", "1s")
    assert p.returncode == 0, p.stderr
    for line in out.read_text().splitlines():
        if line.startswith("alua = "):
            assert f"{listing}:" in line, line
    run = _sanlab("run", str(out), "--json", "--quiet", "--out", str(tmp_path / "run"))
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["variants"][0]["devices"][0]["iops"] > 0


# --- bad input: one line, exit 2, nothing written ----------------------------------------------


def _refused(tmp_path: Path, *args: str, text: str | None = None) -> str:
    if text is not None:
        (tmp_path / "bad.txt").write_text(text, encoding="utf-8")
    out = tmp_path / "x.toml"
    p = _sanlab("import", "windows", *args, *([] if "-o" in args else ["-o", str(out)]))
    assert p.returncode == 2, p.stdout + p.stderr
    lines = [line for line in p.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert not out.exists()
    return lines[0]


def test_another_tools_output(tmp_path: Path) -> None:
    multipath = ROOT / "tests/data/linux/multipath/os-brick.svc.txt"
    assert "this is `multipath -ll` output, not the output of `mpclaim" in _refused(tmp_path, "--mpclaim", str(multipath))
    assert "give it to `sanlab import esxi --esxtop` (esxtop) or `sanlab import windows --typeperf`" in _refused(tmp_path, "--mpclaim", str(GORANS2))
    assert "expected typeperf's CSV header cell" in _refused(tmp_path, "--mpclaim", str(NICK), "--typeperf", str(NICK))
    processor = tmp_path / "cpu.csv"
    processor.write_text('"(PDH-CSV 4.0)","\\\\H\\Processor(_Total)\\% Processor Time"\n"11/27/2026 14:00:00.000","3.5"\n', encoding="utf-8")
    assert 'no storage group: expected columns of PhysicalDisk; the capture has Processor (1 columns). Capture every counter of the disks: typeperf "\\PhysicalDisk(*)\\*"' in _refused(tmp_path, "--mpclaim", str(NICK), "--typeperf", str(processor))
    assert "not a regular file" in _refused(tmp_path, "--mpclaim", "/dev/zero")
    assert "bad.txt:1: the file is empty" in _refused(tmp_path, "--mpclaim", str(tmp_path / "bad.txt"), text="")


def test_a_listing_cut_short(tmp_path: Path) -> None:
    lines = NICK.read_text().splitlines(keepends=True)
    assert "MPIO Disk0 counts 4 paths, 3 listed: the listing is cut short" in _refused(tmp_path, "--mpclaim", str(tmp_path / "bad.txt"), text="".join(lines[:24]))
    cut = "".join(lines[:16]) + lines[16][:30] + "\n"
    assert "bad.txt:17: `0000000077050007 Active/Optimi` is not a line of the output of `mpclaim" in _refused(tmp_path, "--mpclaim", str(tmp_path / "bad.txt"), text=cut)
    assert "a TPG_State line before any path" in _refused(tmp_path, "--mpclaim", str(tmp_path / "bad.txt"), text="".join(lines[8:16]) + lines[17])
    assert "Element not found" in _refused(tmp_path, "--mpclaim", str(tmp_path / "bad.txt"), text="PS C:\\> mpclaim -s -d 9\nElement not found.\n")


def test_unknown_policies_and_states_name_the_nearest(tmp_path: Path) -> None:
    text = NICK.read_text()
    assert "LB Policy `RRW` is not one mpclaim prints (known: FOO RR RRWS LQD WP LB VS; nearest: RRWS)" in _refused(tmp_path, "--mpclaim", str(tmp_path / "bad.txt"), text=text.replace("Disk 2       RR ", "Disk 2       RRW"))
    assert "policy `Round Robbin` is not one mpclaim prints" in _refused(tmp_path, "--mpclaim", str(tmp_path / "bad.txt"), text=text.replace("04 Paths, Round Robin,", "04 Paths, Round Robbin,"))
    assert "path state `Active/Optimised` is not one mpclaim prints (known: Active/Optimized, Active/Unoptimized, Standby, Unavailable; nearest: Active/Optimized)" in _refused(tmp_path, "--mpclaim", str(tmp_path / "bad.txt"), text=text.replace("0000000077050007 Active/Optimized", "0000000077050007 Active/Optimised"))


def test_a_vendor_dsm_is_refused_with_its_name(tmp_path: Path) -> None:
    e = _refused(tmp_path, "--mpclaim", str(VENDOR))
    assert f"{VENDOR}:4: MPIO Disk0 is controlled by IBM SDDDSM (LB Policy VS)" in e and "sanlab models the Microsoft DSM's (FOO RR RRWS LQD WP LB)" in e
    listed = NICK.read_text().replace(" Controlling DSM: Microsoft DSM", " Controlling DSM: Dell EqualLogic DSM").replace("RR           Microsoft DSM", "RR           Microsoft DSM", 1)
    assert "MPIO Disk0 is controlled by Dell EqualLogic DSM" in _refused(tmp_path, "--mpclaim", str(tmp_path / "bad.txt"), text=listed)


def test_two_hosts_and_another_hosts_capture(tmp_path: Path) -> None:
    other = RMS.read_text().replace("MPIO Disk1   Disk 2", "MPIO Disk1   Disk 7")
    (tmp_path / "other.txt").write_text(other, encoding="utf-8")
    assert "MPIO Disk1 is Disk 7 (RR, Microsoft DSM) here and Disk 2" in _refused(tmp_path, "--mpclaim", str(RMS), str(tmp_path / "other.txt"))
    assert "MPIO Disk1 is listed twice" in _refused(tmp_path, "--mpclaim", str(RMS), str(RMS))
    e = _refused(tmp_path, "--mpclaim", str(RMS), "--typeperf", str(GORANS2))
    assert f"{GORANS2}: line 1: none of the capture's disks (0 C:) is an MPIO disk's (Disk 2): is it from the same host (GORANS2)?" in e
    assert "the capture's counters name host 'HV01', not 'sql01' (--host)" in _refused(tmp_path, "--mpclaim", str(RMS), "--typeperf", str(HV01), "--host", "sql01")


def test_the_output_is_never_an_input(tmp_path: Path) -> None:
    listing = tmp_path / "mpclaim.txt"
    listing.write_text(RMS.read_text(), encoding="utf-8")
    before = listing.read_text()
    e = _refused(tmp_path, "--mpclaim", str(listing), "-o", str(listing))
    assert "mpclaim.txt" in e and listing.read_text() == before
    capture = tmp_path / "hv01.csv"
    capture.write_bytes(HV01.read_bytes())
    _refused(tmp_path, "--mpclaim", str(listing), "--typeperf", str(capture), "-o", str(capture))
    assert capture.read_bytes() == HV01.read_bytes()


def test_a_disk_listing_without_summary_is_said(tmp_path: Path) -> None:
    listing = parse_mpclaim(VPLEX.read_text(), "v")
    top = from_mpclaim(listing)
    assert any("in no `mpclaim -s -d` summary" in n for n in top.notes)


# --- round trip ----------------------------------------------------------------------------------

# A Windows host: one array of two controllers, three links (two optimized, one not), two MPIO
# disks: Disk 2 round robin under a closed loop of 8 (70 % reads, 8 KiB), Disk 3 least queue
# depth under Poisson arrivals (3,000 reads/s of 4 KiB).
ORIGINAL = """schema_version = 1
name = "original"
[run]
duration = "6s"
warmup = "1s"
[[array]]
name = "array1"
controllers = 2
media = { kind = "flash", read_latency = "300us", write_latency = "80us", servers = 64 }
[[volume]]
name = "disk2"
arrays = ["array1"]
[[volume]]
name = "disk3"
arrays = ["array1"]
psp = { kind = "mpio_least_queue_depth" }
[[host]]
name = "WIN1"
adapter = { kind = "fc" }
multipath = { psp = { kind = "mpio_round_robin" } }
[[path]]
name = "003|000|000"
host = "WIN1"
array = "array1"
adapter = "port3"
controller = 1
[[path]]
name = "003|000|001"
host = "WIN1"
array = "array1"
adapter = "port3"
controller = 1
[[path]]
name = "003|000|002"
host = "WIN1"
array = "array1"
adapter = "port3"
controller = 2
alua = "ANO"
[[vm]]
name = "sql"
host = "WIN1"
volume = "disk2"
adapter = { kind = "ideal" }
[[vm.job]]
cmdline = "--name=sql --ioengine=libaio --rw=randrw --rwmixread=70 --bs=8k --iodepth=8"
[[vm]]
name = "web"
host = "WIN1"
volume = "disk3"
adapter = { kind = "ideal" }
[[vm.job]]
cmdline = "--name=web --ioengine=libaio --rw=randread --bs=4k --iodepth=64 --rate_iops=3000 --rate_process=poisson"
"""


def _mpclaim_listing(path: Path) -> None:
    """ORIGINAL's MPIO disks as `mpclaim -s -d` and `mpclaim -s -d N` print them, one after the
    other in one file: links 003|000|000 and 003|000|001 in target port group 1 (optimized),
    003|000|002 in group 2 (unoptimized)."""
    lines = ["For more information about a particular disk, use 'mpclaim -s -d #' where # is the MPIO disk number.", "", "MPIO Disk    System Disk  LB Policy    DSM Name", "-" * 79]
    policies = [("RR", "Round Robin"), ("LQD", "Least Queue Depth")]
    for n, (code, _) in enumerate(policies):
        lines.append(f"MPIO Disk{n}   Disk {n + 2}       {code:<12} Microsoft DSM")
    for n, (_, name) in enumerate(policies):
        lines += ["", f"MPIO Disk{n}: 03 Paths, {name}, Implicit Only", " Controlling DSM: Microsoft DSM", f" SN: 600A0B800012345600000000000000{n + 2:02d}", " Supported Load Balance Policies: FOO RR RRWS LQD WP LB", "", "Path ID          State              SCSI Address      Weight", "-" * 75]
        for t, (state, tpg) in enumerate((("Active/Optimized", 1), ("Active/Optimized", 1), ("Active/Unoptimized", 2))):
            lines += [f"00000000770300{t:02d} {state:<18} 003|000|{t:03d}|{n + 1:03d}   0", f"  TPG_State : {state:<18}, TPG_Id: {tpg}, : {t + 1}", ""]
    path.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")


def _typeperf_capture(esxtop_csv: Path, path: Path) -> None:
    """The run's device counters (its esxtop capture) as `typeperf "\\PhysicalDisk(*)\\*"` writes
    them: per disk the reads and writes per second, bytes per read and write, seconds per read and
    write (the device's guest-seen latency: the time below the disk, as Windows counts it) and the
    requests in the disk (ACTV + QUED); `_Total` beside them, typeperf's first blank sample and its
    closing lines."""
    cap = read_capture(esxtop_csv)
    disks = {f"{name[-1]} {'EF'[k]}:": name for k, name in enumerate(("disk2", "disk3"))}
    counters = ("Disk Reads/sec", "Disk Writes/sec", "Avg. Disk Bytes/Read", "Avg. Disk Bytes/Write", "Avg. Disk sec/Read", "Avg. Disk sec/Write", "Avg. Disk Queue Length")
    header = ["(PDH-CSV 4.0) (Coordinated Universal Time)(0)"] + [f"\\\\WIN1\\PhysicalDisk({i})\\{c}" for i in [*disks, "_Total"] for c in counters]
    rows = [[cap.start.strftime("%m/%d/%Y %H:%M:%S.000")] + [" "] * (len(header) - 1)]
    for k in range(cap.samples):
        cells: list[float] = []
        for name in disks.values():
            get = lambda c: float(cap.get(DEVICE, name, c)[k])  # noqa: E731
            reads, writes = get("Reads/sec"), get("Writes/sec")
            rbytes = get("MBytes Read/sec") * (1 << 20) / reads if reads else 0.0
            wbytes = get("MBytes Written/sec") * (1 << 20) / writes if writes else 0.0
            cells += [reads, writes, rbytes, wbytes, get("Average Guest MilliSec/Read") / 1000, get("Average Guest MilliSec/Write") / 1000, get("Active Commands") + get("Queued Commands")]
        total = [a + b for a, b in zip(cells[:7], cells[7:], strict=True)]  # only the sums mean anything; typeperf's own is not read
        when = cap.start.timestamp() + cap.t_s[k] + 5
        rows.append([datetime.fromtimestamp(when, timezone.utc).strftime("%m/%d/%Y %H:%M:%S.000"), *(f"{v:.6f}" for v in cells + total)])
    text = "\r\n".join(",".join(f'"{c}"' for c in row) for row in [header, *rows])
    path.write_text("\r\n" + text + "\r\nExiting, please wait...\r\nThe command completed successfully.\r\n", encoding="utf-8")


def _run(scenario: Path, out: Path, *extra: str) -> dict:
    p = _sanlab("run", str(scenario), "--out", str(out), "--quiet", *extra)
    assert p.returncode == 0, p.stderr
    return json.loads((out / "results.json").read_text())["variants"][0]


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict, str]:
    tmp = tmp_path_factory.mktemp("windows-roundtrip")
    (tmp / "original.toml").write_text(ORIGINAL, encoding="utf-8")
    original = _run(tmp / "original.toml", tmp / "original-run", "--esxtop-csv")
    _mpclaim_listing(tmp / "mpclaim.txt")
    _typeperf_capture(tmp / "original-run/base/esxtop.csv", tmp / "disks.csv")
    p = _sanlab("import", "windows", "--mpclaim", str(tmp / "mpclaim.txt"), "--typeperf", str(tmp / "disks.csv"), "-o", str(tmp / "imported.toml"), "--duration", "6s")
    assert p.returncode == 0, p.stderr
    text = (tmp / "imported.toml").read_text()
    return original, _run(tmp / "imported.toml", tmp / "imported-run"), text


def test_round_trip_carries_each_disk_at_the_same_iops_and_latency(round_trip: tuple[dict, dict, str]) -> None:
    original, again, toml = round_trip
    assert "closed loop at 8 outstanding" in toml and "--rate_process=poisson" in toml and 'name = "WIN1"' in toml
    assert 'psp = { kind = "mpio_least_queue_depth" }' in toml
    for before, after in zip(original["devices"], again["devices"], strict=True):
        assert before["name"] == after["name"]
        assert after["iops"] == pytest.approx(before["iops"], rel=0.05), before["name"]
        assert after["gavg_ms"] == pytest.approx(before["gavg_ms"], rel=0.10), before["name"]


def test_round_trip_spreads_the_load_over_the_same_paths(round_trip: tuple[dict, dict, str]) -> None:
    original, again, _ = round_trip
    share = {p["name"]: p["share"] for p in original["paths"]}
    assert set(share) == {p["name"] for p in again["paths"]}
    for p in again["paths"]:
        assert 100 * p["share"] == pytest.approx(100 * share[p["name"]], abs=2), p["name"]


def test_the_windows_section_s_commands_run_as_written(tmp_path: Path) -> None:
    """The `sanlab …` lines of the fenced blocks of docs/from-your-host.md's Windows section."""
    import re
    import shlex

    page = (ROOT / "docs/from-your-host.md").read_text()
    section = page[page.index("## A Windows host"):]
    blocks = re.findall(r"^```\w*\n(.*?)^```", section, re.S | re.M)
    commands = [line.strip() for block in blocks for line in block.splitlines() if line.strip().startswith("sanlab ")]
    assert [c.split()[1] for c in commands] == ["import", "run", "compare", "run", "run"]
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    for command in commands:
        args = shlex.split(command)[1:]
        if args[0] == "run":
            args = [*args, "--quiet", "--duration", "0.2s"]
        done = subprocess.run([sys.executable, "-m", "sanlab.cli", *args], capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path)
        assert done.returncode == 0, f"{command}: {done.stderr}"


def test_outputs_redirected_by_windows_powershell_read_as_utf16(tmp_path: Path) -> None:
    """Windows PowerShell's `>` writes UTF-16 with a byte order mark: both files read as the UTF-8
    ones, the capture's last sample kept (its line ends in UTF-16's line break)."""
    (tmp_path / "mpclaim.txt").write_text(RMS.read_text(), encoding="utf-16")
    (tmp_path / "disks.csv").write_bytes(HV01.read_text(encoding="utf-8").encode("utf-16"))
    out = tmp_path / "host.toml"
    p = _sanlab("import", "windows", "--mpclaim", str(tmp_path / "mpclaim.txt"), "--typeperf", str(tmp_path / "disks.csv"), "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert "cut short" not in p.stderr and "2 E:, 12 samples: 20001.7 IOPS" in out.read_text()


def test_a_summary_without_any_disk_s_paths(tmp_path: Path) -> None:
    summary = "".join(NICK.read_text().splitlines(keepends=True)[:7])
    e = _refused(tmp_path, "--mpclaim", str(tmp_path / "bad.txt"), text=summary)
    assert "bad.txt:5: no MPIO disk with its paths: give each disk's `mpclaim -s -d N`" in e
    # Without a capture, each volume runs --workload.
    out = tmp_path / "host.toml"
    p = _sanlab("import", "windows", "--mpclaim", str(VPLEX), "--workload", "--name=w --rw=randwrite --bs=64k --iodepth=4", "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert 'cmdline = "--name=w --rw=randwrite --bs=64k --iodepth=4"  # --workload' in out.read_text()
