"""The import's round trip: a host simulated with `--esxtop-csv`, its esxcli listings written as
ESXi prints them (by `_esxcli_listings` below, from the scenario), imported with the capture,
simulated again: the imported host carries each device's load at the same IOPS and DAVG (within
5 %) and spreads it over the same paths (shares within 2 points)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sanlab.hostimport.esxcli import read_listings
from sanlab.hostimport.esxtop import read_capture
from sanlab.hostimport.scenario import build

NAA = ["naa.624a9370000000000000000000000a01", "naa.624a9370000000000000000000000a02"]

# One host, one array with two controllers, two FC paths (one to each), two devices: one round
# robin at iops=1 under a closed loop of 8 (70 % reads, 8 KiB), one fixed under paced arrivals.
ORIGINAL = f"""schema_version = 1
name = "original"
[run]
duration = "6s"
warmup = "1s"
[[array]]
name = "pure"
media = {{ kind = "flash", read_latency = "300us", write_latency = "80us", servers = 64 }}
[[volume]]
name = "{NAA[0]}"
arrays = ["pure"]
psp = {{ kind = "rr", iops = 1 }}
[[volume]]
name = "{NAA[1]}"
arrays = ["pure"]
[[host]]
name = "esx1"
adapter = {{ kind = "fc", lun_queue_depth = 64 }}
multipath = {{ psp = "fixed" }}
[[path]]
name = "vmhba1:C0:T0"
host = "esx1"
array = "pure"
adapter = "vmhba1"
[[path]]
name = "vmhba1:C0:T1"
host = "esx1"
array = "pure"
adapter = "vmhba1"
[[vm]]
name = "db"
host = "esx1"
volume = "{NAA[0]}"
adapter = {{ kind = "ideal" }}
[[vm.job]]
cmdline = "--name=db --ioengine=libaio --rw=randrw --rwmixread=70 --bs=8k --iodepth=8"
[[vm]]
name = "web"
host = "esx1"
volume = "{NAA[1]}"
adapter = {{ kind = "ideal" }}
[[vm.job]]
cmdline = "--name=web --ioengine=libaio --rw=randread --bs=4k --iodepth=64 --rate_iops=2000 --rate_process=poisson"
"""


def _esxcli_listings(folder: Path) -> list[Path]:
    """The four listings ESXi would print for ORIGINAL's host, in its text layout: two paths per
    device (vmhba1:C0:T0 to the first controller's port, :T1 to the second's), both active
    optimized in target port groups 0 and 1."""
    wwnn = "20000024ff000001"
    ports = ["21000024ff000a01", "21000024ff000a02"]
    psp = ["{policy=iops,iops=1,bytes=10485760,useANO=0; lastPathIndex=0: NumIOsPending=0,numBytesPending=0}", "{preferred=vmhba1:C0:T0:L2;current=vmhba1:C0:T0:L2}"]
    devices, nmp, nmp_paths, core_paths = [], [], [], []
    for k, naa in enumerate(NAA):
        lun = k + 1
        devices += [naa, f"   Display Name: PURE Fibre Channel Disk ({naa})", "   Size: 1048576", "   Device Type: Direct-Access", "   Multipath Plugin: NMP", "   Vendor: PURE", "   Model: FlashArray",
                    "   Is VVOL PE: false", "   Queue Full Sample Size: 0", "   Queue Full Threshold: 0", "   Device Max Queue Depth: 64", "   No of outstanding IOs with competing worlds: 32", ""]
        working = ", ".join(f"vmhba1:C0:T{t}:L{lun}" for t in (0, 1))
        nmp += [naa, f"   Device Display Name: PURE Fibre Channel Disk ({naa})", "   Storage Array Type: VMW_SATP_ALUA",
                "   Storage Array Type Device Config: {implicit_support=on; explicit_support=off; explicit_allow=on; alua_followover=on; action_OnRetryErrors=on; {TPG_id=0,TPG_state=AO}{TPG_id=1,TPG_state=AO}}",
                f"   Path Selection Policy: {'VMW_PSP_RR' if k == 0 else 'VMW_PSP_FIXED'}", f"   Path Selection Policy Device Config: {psp[k]}", "   Path Selection Policy Device Custom Config:", f"   Working Paths: {working}", "   Is USB: false", ""]
        for t, port in enumerate(ports):
            uid = f"fc.2000001b32000001:2100001b32000001-fc.{wwnn}:{port}-{naa}"
            current = "yes" if k == 1 and t == 0 else "no"
            nmp_paths += [uid, f"   Runtime Name: vmhba1:C0:T{t}:L{lun}", f"   Device: {naa}", f"   Device Display Name: PURE Fibre Channel Disk ({naa})", "   Group State: active",
                          f"   Storage Array Type Path Config: {{TPG_id={t},TPG_state=AO,RTP_id={t + 1},RTP_health=UP}}", f"   Path Selection Policy Path Config: {{current: {current}; preferred: {current}}}", ""]
            core_paths += [uid, f"   UID: {uid}", f"   Runtime Name: vmhba1:C0:T{t}:L{lun}", f"   Device: {naa}", f"   Device Display Name: PURE Fibre Channel Disk ({naa})", "   Adapter: vmhba1",
                           "   Channel: 0", f"   Target: {t}", f"   LUN: {lun}", "   Plugin: NMP", "   State: active", "   Transport: fc", "   Adapter Identifier: fc.2000001b32000001:2100001b32000001",
                           f"   Target Identifier: fc.{wwnn}:{port}", "   Maximum IO Size: 33553920", ""]
    out = []
    for name, lines in [("device-list.txt", devices), ("nmp-device-list.txt", nmp), ("nmp-path-list.txt", nmp_paths), ("core-path-list.txt", core_paths)]:
        (folder / name).write_text("\n".join(lines), encoding="utf-8")
        out.append(folder / name)
    return out


def _run(scenario: Path, out: Path) -> dict:
    p = subprocess.run([sys.executable, "-m", "sanlab.cli", "run", str(scenario), "--out", str(out), "--esxtop-csv", "--quiet"], capture_output=True, text=True, timeout=600, check=False)
    assert p.returncode == 0, p.stderr
    return json.loads((out / "results.json").read_text())["variants"][0]


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict, str, dict]:
    tmp = tmp_path_factory.mktemp("roundtrip")
    (tmp / "original.toml").write_text(ORIGINAL, encoding="utf-8")
    original = _run(tmp / "original.toml", tmp / "original-run")
    capture = tmp / "original-run/base/esxtop.csv"
    imported = build(read_listings(_esxcli_listings(tmp)), host="esx1", duration="6s", capture=read_capture(capture))
    (tmp / "imported.toml").write_text(imported.toml, encoding="utf-8")
    again = _run(tmp / "imported.toml", tmp / "imported-run")
    p = subprocess.run([sys.executable, "-m", "sanlab.cli", "compare", str(tmp / "imported-run"), "--esxtop", str(capture)], capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 0, p.stderr
    assert "devices: the capture's mean against the run" in p.stdout
    # The run's report gains the section, and keeps it when written again.
    for _ in range(2):
        page = (tmp / "imported-run/report.html").read_text()
        assert 'id="section-measured"' in page and all(f"{naa}: IOPS" in page and f"{naa}: DAVG ms" in page for naa in NAA)
        again_report = subprocess.run([sys.executable, "-m", "sanlab.cli", "report", str(tmp / "imported-run")], capture_output=True, text=True, timeout=300, check=False)
        assert again_report.returncode == 0, again_report.stderr
    return original, again, imported.toml, json.loads((tmp / "imported-run/esxtop-compare.json").read_text())


def test_each_device_carries_its_load_at_the_same_iops_and_davg(round_trip: tuple[dict, dict, str, dict]) -> None:
    original, again, toml, _ = round_trip
    assert "closed loop at 8.0 outstanding" in toml and "--rate_process=poisson" in toml and "open loop at 19" in toml, toml
    for before, after in zip(original["devices"], again["devices"], strict=True):
        assert before["name"] == after["name"]
        assert after["iops"] == pytest.approx(before["iops"], rel=0.05), before["name"]
        assert after["davg_ms"] == pytest.approx(before["davg_ms"], rel=0.05), before["name"]


def test_each_device_spreads_its_load_over_the_same_paths(round_trip: tuple[dict, dict, str, dict]) -> None:
    original, again, _, _ = round_trip
    share = {p["name"]: p["share"] for p in original["paths"]}
    for p in again["paths"]:
        assert 100 * p["share"] == pytest.approx(100 * share[p["name"]], abs=2), p["name"]


def test_compare_puts_the_capture_beside_the_run(round_trip: tuple[dict, dict, str, dict]) -> None:
    """`sanlab compare RUN --esxtop CAPTURE`: the original host's capture against the imported run."""
    _, again, _, comparison = round_trip
    # Only the reader's note on sanlab's own counter name; no device only one side has.
    assert [n.split(": ", 1)[1] for n in comparison["notes"]] == ["counter 'Queue Depth' read as 'Device Q Depth' (sanlab's export name)"]
    figures = {(f["entity"], f["figure"]): f for f in comparison["devices"]}
    for naa in NAA:
        for figure in ("IOPS", "DAVG ms"):
            f = figures[(naa, figure)]
            assert abs(f["error"]) < 0.05, f
        assert figures[(naa, "IOPS")]["simulated"] == next(d["iops"] for d in again["devices"] if d["name"] == naa)
    links = {f["entity"]: f for f in comparison["links"]}
    assert set(links) == {"vmhba1:C0:T0", "vmhba1:C0:T1"}
    assert all(abs(f["simulated"] - f["measured"]) < 2 for f in links.values()), links
