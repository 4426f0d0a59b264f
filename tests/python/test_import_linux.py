"""`sanlab import linux --multipath`: real public `multipath -ll` listings of both generations
(tests/data/linux/multipath/SOURCES.md) read into maps, made into a scenario the engine reads
back, every value naming its line; bad input one line and exit 2."""

from __future__ import annotations

import json
import math
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from sanlab import engine
from sanlab.hostimport.linux.multipath import parse_multipath, read_multipath
from sanlab.hostimport.linux.records import LinuxInputError
from sanlab.hostimport.linux.topology import from_multipath, group_states
from sanlab.hostimport.topology import wwid_prefix

ROOT = Path(__file__).resolve().parents[2]
MP = ROOT / "tests/data/linux/multipath"
FIXTURES = sorted(p.name for p in MP.glob("*.txt"))


def _sanlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sanlab.cli", *args], capture_output=True, text=True, timeout=300, check=False)


def _maps(name: str):  # type: ignore[no-untyped-def]
    maps, _ = read_multipath(MP / name)
    return {m.name: m for m in maps}


def _hctls(m) -> set[tuple[int, int, int, int]]:  # type: ignore[no-untyped-def]
    return {p.hctl for g in m.groups for p in g.paths}


def test_both_generations_of_one_host_read_alike() -> None:
    """The FalconStor host's maps, printed by the current and the RHEL 5 multipath: the same maps,
    features and paths (its sd names changed between the two boots)."""
    new, old = _maps("check-multipath.falcon-ipstor.txt"), _maps("check-multipath.falcon-ipstor.rhel5.txt")
    assert set(new) == set(old) == {"mpatha", "mpathb"}
    for name in new:
        assert (new[name].wwid, new[name].vendor, new[name].product) == (old[name].wwid, "FALCON", "IPSTOR DISK")
        assert new[name].features == old[name].features == ["queue_if_no_path"]
        assert new[name].hwhandler is None and old[name].hwhandler is None
        assert _hctls(new[name]) == _hctls(old[name]) and len(_hctls(new[name])) == 4
    assert [g.prio for g in old["mpathb"].groups] == [-4] and old["mpathb"].groups[0].status == "active"
    assert [p.checker for p in old["mpathb"].groups[0].paths] == ["undef"] * 4
    assert [p.device_state for p in new["mpatha"].groups[0].paths] == ["running"] * 4


def test_names_prefixes_and_padded_vendors() -> None:
    dgc = _maps("check-multipath.dgc-emc.txt")
    assert "36006016019e02a00d009495ddbf3e011" in dgc and dgc["36006016019e02a00d009495ddbf3e011"].wwid == "36006016019e02a00d009495ddbf3e011"
    assert dgc["36003005700f0eb70160c9b590a77c13e"].product == "RAID 5/6 SAS 6G"
    assert _maps("check-multipath.fujitsu-eternus.rhel5.txt")["tex-lun4"].vendor == "FUJITSU"
    pure = _maps("os-brick.pure-log-lines.txt")["3624a93707edcfde1127040370004ee62"]
    assert (pure.vendor, pure.product, pure.groups[0].selector) == ("PURE", "FlashArray", "queue-length 0")
    reload = _maps("watson.hitachi-reload.rhel5.txt")["mpath5"]
    assert (reload.wwid, reload.dm, [g.prio for g in reload.groups]) == ("360060e801045249004f2a5f900000031", "dm-7", [1, 0])
    created = _maps("anaconda.create-undef.txt")
    assert created["mpathb"].wwid.startswith("1ATA     ST3120026AS") and created["mpathb"].dm is None
    assert created["mpatha"].groups[0].status == "undef" and created["mpatha"].groups[0].paths[0].dm_state == "undef"
    ds8k = _maps("linux-scsi.ibm-ds8k-create.txt")["mpathc"]
    assert ds8k.dm == "dm-0" and _hctls(ds8k) == {(0, 0, 0, 1079787648), (1, 0, 0, 1079787648)}
    iet = _maps("check-multipath.iet-failed.txt")["1STORAGE_server_target2"]
    assert iet.wwid == "1STORAGE_server_target2" and [p.down for p in iet.groups[0].paths] == [None, "failed faulty"]
    # NAA-6 to the end of the vendor's identifier, NAA-5 to the end of the OUI, others nothing.
    assert wwid_prefix("3600507680282874fc400000000000002") == "3600507680282874f"
    assert wwid_prefix("350002ac20398383d") == "350002ac" and wwid_prefix("1Proware_FF010000333001EC") == ""


def test_log_lines_are_counted_not_read() -> None:
    _, notes = read_multipath(MP / "os-brick.pure-log-lines.txt")
    assert notes == [f"{MP / 'os-brick.pure-log-lines.txt'}: 3 of multipath's log lines (`Mon dd hh:mm:ss | …`) skipped"]


def test_group_states_follow_the_group_dm_uses() -> None:
    squeeze = _maps("check-multipath.netapp-squeeze.txt")["foobar_backup_lun0"]
    assert group_states(squeeze) == ["AO", "ANO"]
    # Equal priorities above 0 are equally good: a failover grouping of four const-prio paths.
    assert group_states(_maps("check-multipath.proware-failover.txt")["fc-p6-vicepb"]) == ["AO"] * 4
    # prio 0 on both (no prioritizer): the enabled group is the passive SP's.
    assert group_states(_maps("check-multipath.dgc-emc.txt")["36006016019e02a00d009495ddbf3e011"]) == ["AO", "ANO"]
    # No group active (`multipath -d`): the highest priority.
    maps, _ = parse_multipath("create: m (3600a0b800067fabc000067694d23fe6e) undef IBM,1726\nsize=1G features='0' hwhandler='1 rdac' wp=undef\n|-+- policy='round-robin 0' prio=1 status=undef\n| `- 1:0:0:1 sdb 8:16 undef ghost running\n`-+- policy='round-robin 0' prio=6 status=undef\n  `- 2:0:0:1 sdd 8:48 undef ready running\n", "x")
    assert group_states(maps[0]) == ["ANO", "AO"] and maps[0].groups[0].paths[0].down is None


def test_topology_links_arrays_controllers() -> None:
    top = from_multipath(list(_maps("check-multipath.netapp-squeeze.txt").values()))
    assert [(link.name, link.adapter, link.array, link.controller, link.alua) for link in top.links] == [
        ("0:0:0", "host0", "array1", 1, "AO"), ("1:0:0", "host1", "array1", 1, "AO"), ("0:0:1", "host0", "array1", 2, "ANO"), ("1:0:1", "host1", "array1", 2, "ANO"),
        ("0:0:2", "host0", "array2", 1, "AO"), ("1:0:2", "host1", "array2", 1, "AO"), ("0:0:3", "host0", "array2", 2, "ANO"), ("1:0:3", "host1", "array2", 2, "ANO"),
    ]
    assert [(a.name, a.controllers) for a in top.arrays] == [("array1", 2), ("array2", 2)]
    # Two CLARiiON LUNs owned by different SPs: the links disagree, most common kept and said.
    dgc = from_multipath(list(_maps("check-multipath.dgc-emc.txt").values()))
    assert len(dgc.arrays) == 2 and sum("sanlab gives a link one ALUA state" in n for n in dgc.notes) == 4
    # Different WWID prefixes behind the same target ports are one array, and said.
    falcon = from_multipath(list(_maps("check-multipath.falcon-ipstor.txt").values()))
    assert len(falcon.arrays) == 1 and any("share target ports" in n for n in falcon.notes)
    assert all(v.psp == {"kind": "dm_round_robin", "path_grouping_policy": "multibus"} for v in falcon.volumes)
    proware = from_multipath(list(_maps("check-multipath.proware-failover.txt").values()))
    assert proware.volumes[0].psp == {"kind": "dm_round_robin", "path_grouping_policy": "failover"} and proware.arrays[0].controllers is None


def _import(tmp_path: Path, name: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path / (name + ".toml")
    return _sanlab("import", "linux", "--multipath", str(MP / name), "-o", str(out)), out


@pytest.mark.parametrize("name", [n for n in FIXTURES if n != "check-multipath.netapp-orphan.txt"])
def test_every_public_listing_becomes_a_scenario_the_engine_reads(tmp_path: Path, name: str) -> None:
    p, out = _import(tmp_path, name)
    assert p.returncode == 0, p.stderr
    engine.validate(out)
    text = out.read_text()
    doc = tomllib.loads(text)
    maps, _ = read_multipath(MP / name)
    assert [v["name"] for v in doc["volume"]] == [m.name for m in maps if any(x.hctl for g in m.groups for x in g.paths)]
    for line in text.splitlines():
        if line.startswith("alua = "):
            assert f"{MP / name}:" in line, line


def test_a_map_with_a_failed_path_and_queueing_runs(tmp_path: Path) -> None:
    listing = tmp_path / "mp.txt"
    listing.write_text(
        "mpatha (3600507680282874fc400000000000002) dm-0 NETAPP,LUN\n"
        "size=500G features='3 queue_if_no_path pg_init_retries 50' hwhandler='1 alua' wp=rw\n"
        "|-+- policy='service-time 0' prio=50 status=active\n"
        "| |- 2:0:0:0 sdb 8:16 active ready running\n"
        "| `- 4:0:0:0 sde 8:64 active ready running\n"
        "`-+- policy='service-time 0' prio=10 status=enabled\n"
        "  `- 5:0:0:0 sdd 8:48 failed faulty offline\n"
    )
    out = tmp_path / "host.toml"
    p = _sanlab("import", "linux", "--multipath", str(listing), "-o", str(out), "--duration", "2s")
    assert p.returncode == 0, p.stderr
    assert "features pg_init_retries 50 (mpatha): not modelled by sanlab" in p.stderr
    doc = tomllib.loads(out.read_text())
    assert doc["host"][0]["multipath"] == {"psp": {"kind": "dm_service_time"}}
    assert doc["host"][0]["failover"] == {"apd_timeout": "never"}
    assert [(q["name"], q["alua"]) for q in doc["path"]] == [("2:0:0", "AO"), ("4:0:0", "AO"), ("5:0:0", "ANO")]
    assert doc["event"] == [{"kind": "path_down", "path": "5:0:0", "at": "0s"}]
    assert f"# the path was `failed faulty offline` when listed ({listing}:7)" in out.read_text()
    run = _sanlab("run", str(out), "--out", str(tmp_path / "run"), "--quiet", "--json")
    assert run.returncode == 0, run.stderr


def _refused(tmp_path: Path, text: str | None = None, path: Path | None = None) -> str:
    listing = path or tmp_path / "bad.txt"
    if text is not None:
        listing.write_text(text)
    out = tmp_path / "x.toml"
    p = _sanlab("import", "linux", "--multipath", str(listing), "-o", str(out))
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1, p.stderr
    assert "Traceback" not in p.stderr and not out.exists()
    return p.stderr


GOOD = (MP / "check-multipath.netapp-squeeze.txt").read_text()


def test_bad_listings_are_one_line(tmp_path: Path) -> None:
    # Another tool's output.
    assert "an esxcli storage listing" in _refused(tmp_path, path=ROOT / "tests/data/esxi/esxcli/nmp-path-list.esx40-clariion.txt")
    assert "is not a line of `multipath -ll` output" in _refused(tmp_path, path=ROOT / "tests/data/traces/msr.csv")
    # Cut short: after a group line, in a path line, after a map line, in the features.
    lines = GOOD.splitlines(keepends=True)
    assert "its path group lists no path: the listing is cut short" in _refused(tmp_path, "".join(lines[:6]))
    cut = _refused(tmp_path, "".join(lines[:4]) + "| `- 1:0:0:0 sde 8:64  active\n")
    assert "bad.txt:5: path 1:0:0:0" in cut and "expected three states" in cut
    assert "has no `size=… features=… hwhandler=…` line after it" in _refused(tmp_path, lines[0])
    assert "counts 3 words and has 1" in _refused(tmp_path, GOOD.replace("features='1 queue_if_no_path'", "features='3 queue_if_no_path'", 1))
    # An unknown policy: named, with the nearest.
    policy = _refused(tmp_path, GOOD.replace("round-robin 0", "service-tme 0"))
    assert "path selector `service-tme 0` is not one sanlab models" in policy and "nearest: service-time" in policy
    # A state multipath does not print.
    assert "path checker state `redy`" in _refused(tmp_path, GOOD.replace("active ready running", "active redy running", 1))
    # /dev/zero, an empty file, a map listed twice, only an orphan path.
    assert "not a regular file" in _refused(tmp_path, path=Path("/dev/zero"))
    assert "the file is empty" in _refused(tmp_path, "\n\n")
    assert "is also at" in _refused(tmp_path, GOOD + GOOD)
    assert "no map has a path with a SCSI address" in _refused(tmp_path, path=MP / "check-multipath.netapp-orphan.txt")


def test_the_output_is_never_an_input(tmp_path: Path) -> None:
    listing = tmp_path / "mp.txt"
    listing.write_text(GOOD)
    p = _sanlab("import", "linux", "--multipath", str(listing), "-o", str(listing))
    assert p.returncode == 2 and "it is an input" in p.stderr
    assert listing.read_text() == GOOD


def test_a_cut_listing_in_memory_names_the_line() -> None:
    with pytest.raises(LinuxInputError, match=r"^x:3: a path before any path group"):
        parse_multipath("mpatha (3600a) dm-0 A,B\nsize=1G features='0' hwhandler='0' wp=rw\n  `- 1:0:0:0 sda 8:0 active ready running\n", "x")


def _linux_doc_commands() -> list[str]:
    """The `sanlab …` lines of the fenced blocks of docs/from-your-host.md's Linux section (they
    name repository files, so they are `text` blocks the page-examples test leaves alone)."""
    page = (ROOT / "docs/from-your-host.md").read_text()
    start = page.index("## A Linux host")
    end = page.find("\n## ", start + 1)
    section = page[start : end if end >= 0 else len(page)]
    blocks = re.findall(r"^```\w*\n(.*?)^```", section, re.S | re.M)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip().startswith("sanlab ")]


def test_the_linux_section_s_commands_run_as_written(tmp_path: Path) -> None:
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    commands = _linux_doc_commands()
    assert any(c.startswith("sanlab import linux") for c in commands) and any(c.startswith("sanlab run") for c in commands)
    for command in commands:
        args = shlex.split(command)[1:]
        if args[0] == "run":
            args = [*args, "--quiet", "--duration", "0.2s"]
        done = subprocess.run([sys.executable, "-m", "sanlab.cli", *args], capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path)
        assert done.returncode == 0, f"{command}: {done.stderr}"


# --- `nvme list-subsys` (--nvme) ---------------------------------------------------------------

NVME = ROOT / "tests/data/linux/nvme"


def test_every_nvme_cli_generation_reads() -> None:
    from sanlab.hostimport.linux.nvme import read_nvme

    ubuntu = read_nvme(NVME / "ontap-sanhost.ubuntu2404-tcp.txt")[0]
    assert (ubuntu.name, ubuntu.iopolicy, ubuntu.iopolicy_source.line) == ("nvme-subsys0", "round-robin", 3)  # type: ignore[union-attr]
    assert [(c.name, c.state, c.ana_state) for c in ubuntu.controllers] == [("nvme0", "live", "optimized"), ("nvme1", "live", "optimized"), ("nvme2", "live", "non-optimized"), ("nvme3", "live", "non-optimized")]
    assert ubuntu.controllers[0].address == "traddr=192.168.166.155,trsvcid=4420,host_traddr=192.168.166.150,src_addr=192.168.166.150"
    # The 2.x text and the JSON written from it agree; 1.6's text and JSON too.
    text, json_ = read_nvme(NVME / "ontap-sanhost.rhel9-tcp.txt"), read_nvme(NVME / "constructed.rhel9-tcp.2x.json")
    assert [(c.name, c.address, c.state, c.ana_state) for c in text[0].controllers] == [(c.name, c.address, c.state, c.ana_state) for c in json_[0].controllers]
    old_text, old_json = read_nvme(NVME / "nvme-cli-1.6.doc-example.txt"), read_nvme(NVME / "nvme-cli-1.6.doc-example.json")
    assert [(s.name, s.nqn, [c.name for c in s.controllers]) for s in old_text] == [(s.name, s.nqn, [c.name for c in s.controllers]) for s in old_json] == [("nvme-subsys0", "nvmf-test", ["nvme0", "nvme1"]), ("nvme-subsys1", "nvmf-test2", ["nvme2", "nvme3"])]
    assert old_text[0].controllers[0].address == "traddr=1.1.1.3 trsvcid=4420 host_traddr=1.1.1.1" and old_text[0].controllers[0].state is None
    fc = read_nvme(NVME / "ontap-sanhost.rhel9-fc.txt")[0]
    assert [c.ana_state for c in fc.controllers] == ["optimized", "optimized", "non-optimized", "non-optimized"]


def test_nvme_states_and_policies_become_a_scenario(tmp_path: Path) -> None:
    listing = tmp_path / "subsys.txt"
    listing.write_text(
        "nvme-subsys3 - NQN=nqn.2010-06.com.purestorage:flasharray.1a2b\n"
        "               hostnqn=nqn.2014-08.org.nvmexpress:uuid:0000\n"
        "               iopolicy=queue-depth\n"
        "\\\n"
        " +- nvme3 fc traddr=nn-0x1:pn-0x2,host_traddr=nn-0x3:pn-0x4 live optimized\n"
        " +- nvme4 fc traddr=nn-0x1:pn-0x5,host_traddr=nn-0x3:pn-0x6 connecting non-optimized\n"
        " +- nvme5 fc traddr=nn-0x1:pn-0x7,host_traddr=nn-0x3:pn-0x8 live inaccessible\n"
        " +- nvme6 fc traddr=nn-0x1:pn-0x9,host_traddr=nn-0x3:pn-0xa deleting (no IO) change\n"
    )
    out = tmp_path / "nvme.toml"
    p = _sanlab("import", "linux", "--nvme", str(listing), "-o", str(out), "--duration", "1s")
    assert p.returncode == 0, p.stderr
    doc = tomllib.loads(out.read_text())
    assert doc["host"][0]["multipath"] == {"psp": {"kind": "nvme_queue_depth"}} and doc["host"][0]["adapter"] == {"kind": "fc"}
    assert [(q["name"], q["alua"], q["adapter"]) for q in doc["path"]] == [("nvme3", "AO", "nn-0x3:pn-0x4"), ("nvme4", "ANO", "nn-0x3:pn-0x6"), ("nvme5", "unavailable", "nn-0x3:pn-0x8"), ("nvme6", "transitioning", "nn-0x3:pn-0xa")]
    assert [(e["path"], e["at"]) for e in doc["event"]] == [("nvme4", "0s"), ("nvme6", "0s")]
    assert "iopolicy=queue-depth, " + str(listing) + ":3" in out.read_text()
    run = _sanlab("run", str(out), "--out", str(tmp_path / "run"), "--quiet")
    assert run.returncode == 0, run.stderr
    # Without an iopolicy line: the kernel's default numa, said.
    p = _sanlab("import", "linux", "--nvme", str(NVME / "ontap-sanhost.rhel9-tcp.txt"), "-o", str(out))
    assert p.returncode == 0 and "transport tcp: sanlab models no NVMe over tcp adapter" in p.stderr
    text = out.read_text()
    assert 'multipath = { psp = { kind = "nvme_numa" } }  # the kernel\'s default iopolicy (numa)' in text
    assert tomllib.loads(text)["host"][0]["adapter"] == {"kind": "ideal"}


def test_json_iopolicy_under_v_and_both_listings_on_one_host(tmp_path: Path) -> None:
    from sanlab.hostimport.linux.nvme import parse_nvme

    doc = '[{"HostNQN": "h", "Subsystems": [{"Name": "nvme-subsys1", "NQN": "n", "IOPolicy": "round-robin", "Type": "nvm", "Paths": [{"Name": "nvme1", "Transport": "pcie", "Address": "0000:41:00.0", "State": "live"}]}]}]'
    (s,) = parse_nvme(doc, "j.json")
    assert (s.iopolicy, s.iopolicy_source.line, s.controllers[0].address) == ("round-robin", 1, "0000:41:00.0")  # type: ignore[union-attr]
    out = tmp_path / "both.toml"
    p = _sanlab("import", "linux", "--multipath", str(MP / "os-brick.svc.txt"), "--nvme", str(NVME / "ontap-sanhost.ubuntu2404-tcp.txt"), "-o", str(out))
    assert p.returncode == 0, p.stderr
    doc2 = tomllib.loads(out.read_text())
    assert [a["name"] for a in doc2["array"]] == ["array1", "array2"]
    assert [(v["name"], v["arrays"], v.get("psp")) for v in doc2["volume"]] == [("36005076da00638089c000000000004d5", ["array1"], None), ("nvme-subsys0", ["array2"], {"kind": "nvme_round_robin"})]
    engine.validate(out)


def _nvme_refused(tmp_path: Path, text: str) -> str:
    listing = tmp_path / "bad-nvme.txt"
    listing.write_text(text)
    p = _sanlab("import", "linux", "--nvme", str(listing), "-o", str(tmp_path / "x.toml"))
    assert p.returncode == 2 and p.stderr.startswith("error: ") and p.stderr.count("\n") == 1, p.stderr
    return p.stderr


def test_bad_nvme_listings_are_one_line(tmp_path: Path) -> None:
    good = (NVME / "ontap-sanhost.ubuntu2404-tcp.txt").read_text()
    policy = _nvme_refused(tmp_path, good.replace("iopolicy=round-robin", "iopolicy=queue_depth"))
    assert "bad-nvme.txt:3: nvme-subsys0: iopolicy `queue_depth` is not one the kernel has" in policy and "nearest: queue-depth" in policy
    assert "state `alive` is not one the kernel prints" in _nvme_refused(tmp_path, good.replace("live optimized", "alive optimized", 1))
    assert "lists no controller" in _nvme_refused(tmp_path, "".join(good.splitlines(keepends=True)[:3]))
    assert "this is `multipath -ll` output" in _nvme_refused(tmp_path, GOOD)
    assert "not JSON" in _nvme_refused(tmp_path, '{"Subsystems": [')
    assert "nvme show-topology" in _nvme_refused(tmp_path, "nvme-subsys1 - NQN=n\n\\\n +- ns 1\n \\\n  +- nvme1 rdma traddr=1 live optimized\n")
    p = _sanlab("import", "linux", "-o", str(tmp_path / "y.toml"))
    assert p.returncode == 2 and "give --multipath FILE" in p.stderr


# --- /sys/block settings (--sysfs) -------------------------------------------------------------

SYSFS = ROOT / "tests/data/linux/sysfs"


def test_sysfs_lines_read_and_run_together_lines_skipped() -> None:
    from sanlab.hostimport.linux.sysfs import read_sysfs

    values, notes = read_sysfs(SYSFS / "linux-usb.find-grep-aH.txt")
    got = {(v.device, v.attribute): v.value for v in values}
    assert got == {("sdf", "queue/scheduler"): "mq-deadline", ("sdf", "queue/nr_requests"): "2", ("sdf", "queue/rotational"): "1", ("sdf", "queue/max_sectors_kb"): "120"}
    assert notes and "34 lines of other attributes skipped" in notes[0]


def test_sysfs_gives_the_device_queue_and_the_largest_request(tmp_path: Path) -> None:
    out = tmp_path / "ds8k.toml"
    p = _sanlab("import", "linux", "--multipath", str(MP / "linux-scsi.ibm-ds8k-create.txt"), "--sysfs", str(SYSFS / "constructed.ibm-ds8k.grep-H.txt"), "-o", str(out))
    assert p.returncode == 0, p.stderr
    doc = tomllib.loads(out.read_text())
    # Two paths in the group dm uses, 32 commands each; dm-0's max_sectors_kb.
    assert doc["host"][0]["adapter"] == {"kind": "fc", "lun_queue_depth": 64}
    assert doc["host"][0]["disk_max_io_size"] == "1280KiB"
    assert f"device/queue_depth of sda 32 + sde 32 ({SYSFS / 'constructed.ibm-ds8k.grep-H.txt'}:13)" in out.read_text()
    assert "I/O scheduler bfq (sda, sde): its reordering is not modelled" in p.stderr
    assert "I/O scheduler mq-deadline (dm-0)" in p.stderr and "queue/rotational 1 (sda, sde)" in p.stderr
    engine.validate(out)


def test_sysfs_depth_counts_only_the_group_dm_uses_and_the_map_s_pool(tmp_path: Path) -> None:
    from sanlab.hostimport.linux.sysfs import parse_sysfs, settings

    maps, _ = read_multipath(MP / "os-brick.svc.txt")
    top = from_multipath(maps)
    values, _ = parse_sysfs("\n".join(f"/sys/block/{d}/device/queue_depth:64" for d in ("sde", "sdf", "sdg", "sdh")) + "\n/sys/block/sdg/queue/max_sectors_kb:16\n", "s")
    keys, notes = settings(values, top, {v.name: v.active_disks for v in top.volumes})
    assert keys.adapter == [("lun_queue_depth", 128, "device/queue_depth of sde 64 + sdg 64 (s:1): the paths of the group dm uses, each holding that many commands")]
    assert keys.host == [] and any("max_sectors_kb 16" in n and "not written" in n for n in notes)
    values, _ = parse_sysfs("/sys/block/sde/device/queue_depth:64\n/sys/block/sdg/device/queue_depth:64\n/sys/block/dm-2/queue/nr_requests:100\n", "s")
    keys, _ = settings(values, top, {v.name: v.active_disks for v in top.volumes})
    assert keys.adapter[0][1] == 100 and keys.adapter[0][2].startswith("dm-2 queue/nr_requests 100 (s:3)")


def _sysfs_refused(tmp_path: Path, text: str | None = None, path: Path | None = None) -> str:
    listing = path or tmp_path / "bad-sysfs.txt"
    if text is not None:
        listing.write_text(text)
    p = _sanlab("import", "linux", "--multipath", str(MP / "linux-scsi.ibm-ds8k-create.txt"), "--sysfs", str(listing), "-o", str(tmp_path / "x.toml"))
    assert p.returncode == 2 and p.stderr.startswith("error: ") and p.stderr.count("\n") == 1, p.stderr
    assert not (tmp_path / "x.toml").exists()
    return p.stderr


def test_bad_sysfs_is_one_line(tmp_path: Path) -> None:
    assert "are they from the same host?" in _sysfs_refused(tmp_path, path=SYSFS / "linux-usb.find-grep-aH.txt")
    assert "bad-sysfs.txt:2: sda device/queue_depth is `32/sys/block/sde/device/queue_depth:32`" in _sysfs_refused(tmp_path, "/sys/block/sda/queue/nr_requests:256\n/sys/block/sda/device/queue_depth:32/sys/block/sde/device/queue_depth:32\n")
    scheduler = _sysfs_refused(tmp_path, "/sys/block/sda/queue/scheduler:mq-deadline [bfg] none\n")
    assert "queue/scheduler `bfg` is not one the kernel has" in scheduler and "nearest: bfq" in scheduler
    assert "expected /sys/block/DEVICE/ATTRIBUTE:VALUE" in _sysfs_refused(tmp_path, "256\n32\n")
    assert "this is `multipath -ll` output" in _sysfs_refused(tmp_path, path=MP / "os-brick.svc.txt")
    assert "is also at" in _sysfs_refused(tmp_path, "/sys/block/sda/device/queue_depth:32\n/sys/block/sda/device/queue_depth:64\n")
    assert "not a regular file" in _sysfs_refused(tmp_path, path=Path("/dev/zero"))


# --- iostat -x (--iostat) ----------------------------------------------------------------------

IOSTAT = ROOT / "tests/data/linux/iostat"


def test_three_header_generations_read_in_sanlab_units() -> None:
    from sanlab.hostimport.linux.iostat import parse_iostat, read_iostat

    gen1 = read_iostat(IOSTAT / "csdn.rhel6-rsec.txt")
    assert gen1.generation.startswith("sysstat up to 11.5.6") and gen1.host == "localhost" and len(gen1.reports) == 1
    sda = gen1.reports[0][0]
    # rsec/s over r/s, in bytes; `await` for both directions where there is no r_await.
    assert (sda.device, sda.read_size_bytes, sda.write_size_bytes, sda.read_await_ms, sda.write_await_ms, sda.queue) == ("sda", pytest.approx(1.06 * 512 / 0.03), pytest.approx(16.18 * 512 / 1.27), 7.32, 7.32, 0.01)
    assert "a single report, used as it is" in gen1.notes[0]
    # -m: MB/s (2^20 bytes) over w/s agrees with avgrq-sz in sectors.
    xvdf = read_iostat(IOSTAT / "yeonghoey.xmdz.txt").reports[0][0]
    assert xvdf.write_size_bytes == pytest.approx(49.86 * 512, rel=0.001) and math.isnan(xvdf.read_size_bytes) and xvdf.write_await_ms == 1.30
    gen2 = read_iostat(IOSTAT / "linux-raid.nvme-11.6.txt")
    assert gen2.generation.startswith("sysstat 11.5.7 to 12.1.1")
    # The first of two reports left out; the rate wider than its column read; rareq-sz 4.00 kB.
    (nvme,) = gen2.reports[0]
    assert (nvme.reads_per_s, nvme.read_size_bytes, nvme.read_await_ms, nvme.queue) == (114589.0, 4096.0, 0.29, 33.54)
    gen3 = read_iostat(IOSTAT / "sysstat.expected.iostat-x.txt")
    assert gen3.generation.startswith("sysstat 12.1.2") and len(gen3.reports) == 1 and "the first of 2 reports left out" in gen3.notes[0]
    assert read_iostat(IOSTAT / "sysstat-12.2.0.expected.iostat-x.txt").generation == gen3.generation
    flush = read_iostat(IOSTAT / "sysstat.expected.iostat-x-ALL-flush.txt")
    assert len(flush.reports) == 2 and flush.reports[0][0].device == "sda"
    # Decimal commas read as points, and said.
    comma = read_iostat(IOSTAT / "constructed.decimal-comma.txt")
    assert [(r.device, r.reads_per_s, r.queue) for r in comma.reports[0]] == [(r.device, r.reads_per_s, r.queue) for r in gen3.reports[0]]
    assert any("decimal commas" in n for n in comma.notes)
    # -t timestamps of every form are skipped.
    header = "Device            r/s     w/s     rkB/s     wkB/s   rrqm/s   wrqm/s  %rrqm  %wrqm r_await w_await aqu-sz rareq-sz wareq-sz  svctm  %util"
    row = "sdb 10.00 0.00 40.00 0.00 0 0 0 0 0.50 0.00 0.01 4.00 0.00 0.10 1.00"
    for stamp in ("05/31/2018 10:04:45 AM", "06/01/20 12:53:20", "2023-03-15T10:00:00+0000"):
        cap = parse_iostat(f"{stamp}\n{header}\n{row}\n\n{stamp}\n{header}\n{row}\n", "t")
        assert len(cap.reports) == 1 and cap.reports[0][0].read_size_bytes == 4096.0


def test_a_capture_becomes_each_volume_s_load_and_its_array_s_speed(tmp_path: Path) -> None:
    """Imported, then run: the simulated host carries the capture's load at its latency."""
    out = tmp_path / "ds8k.toml"
    p = _sanlab("import", "linux", "--multipath", str(MP / "linux-scsi.ibm-ds8k-create.txt"), "--iostat", str(IOSTAT / "constructed.ibm-ds8k.xt.txt"), "-o", str(out), "--duration", "5s")
    assert p.returncode == 0, p.stderr
    assert "the first of 5 reports left out" in p.stderr
    doc = tomllib.loads(out.read_text())
    assert doc["vm"][0]["job"][0]["cmdline"] == "--name=load --ioengine=libaio --rw=randrw --rwmixread=80 --bs=4096 --iodepth=2"
    assert doc["array"][0]["media"] == {"kind": "flash", "read_latency": "400.0us", "write_latency": "400.0us", "servers": 64}
    assert "r_await and w_await of sda + sde at the capture's load" in out.read_text()
    run = _sanlab("run", str(out), "--out", str(tmp_path / "run"), "--json")
    assert run.returncode == 0, run.stderr
    (vm,) = json.loads(run.stdout)["variants"][0]["vms"]
    assert vm["iops"] == pytest.approx(5000, rel=0.05) and vm["read_iops"] / vm["iops"] == pytest.approx(0.8, abs=0.02)
    assert vm["lat_ms"]["mean"] == pytest.approx(0.4, rel=0.10)


def test_an_open_load_and_an_idle_volume(tmp_path: Path) -> None:
    from sanlab.hostimport.linux.iostat import parse_iostat
    from sanlab.hostimport.load import loads

    top = from_multipath(list(_maps("os-brick.svc.txt").values()))
    header = "Device:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz avgqu-sz   await r_await w_await  svctm  %util"
    reports = "".join(f"{header}\nsde 0 0 {r:.2f} 10.00 {r * 8:.2f} 40.00 0 {q:.2f} 1.00 1.20 0.50 0.1 5\nsdg 0 0 {r:.2f} 10.00 {r * 8:.2f} 40.00 0 {q:.2f} 1.00 1.20 0.50 0.1 5\n\n" for r, q in ((1, 0.1), (100, 0.31), (120, 0.47), (80, 0.22)))
    volume_loads, media, _ = loads(top, parse_iostat(reports, "cap"))
    (load,) = volume_loads.values()
    assert "--rate_iops=" in load.cmdline and "--rate_process=poisson" in load.cmdline and "open loop at 220 IOPS" in load.why
    assert "sde + sdg" in load.why and media["array1"].table.startswith('{ kind = "flash", read_latency = "1200.0us", write_latency = "500.0us"')
    idle = parse_iostat(f"{header}\nsde 0 0 0 0 0 0 0 0 0 0 0 0 0\n\n{header}\nsde 0 0 0 0 0 0 0 0 0 0 0 0 0\n", "idle")
    assert loads(top, idle)[0] == {} and any("did no I/O in the capture" in n for n in loads(top, idle)[2])


def _iostat_refused(tmp_path: Path, text: str | None = None, path: Path | None = None, multipath: str = "linux-scsi.ibm-ds8k-create.txt") -> str:
    capture = path or tmp_path / "bad-iostat.txt"
    if text is not None:
        capture.write_text(text)
    p = _sanlab("import", "linux", "--multipath", str(MP / multipath), "--iostat", str(capture), "-o", str(tmp_path / "x.toml"))
    assert p.returncode == 2 and p.stderr.startswith("error: ") and p.stderr.count("\n") == 1, p.stderr
    assert not (tmp_path / "x.toml").exists()
    return p.stderr


def test_bad_captures_are_one_line(tmp_path: Path) -> None:
    assert "this is `iostat` without -x" in _iostat_refused(tmp_path, path=IOSTAT / "sysstat.expected.iostat-no-x.txt")
    assert "is it from the same host?" in _iostat_refused(tmp_path, path=IOSTAT / "yeonghoey.xmdz.txt", multipath="check-multipath.proware-failover.txt")
    good = (IOSTAT / "constructed.ibm-ds8k.xt.txt").read_text().splitlines(keepends=True)
    cut = _iostat_refused(tmp_path, "".join(good[:8]) + good[8][:40] + "\n")
    assert "bad-iostat.txt:9:" in cut and "cells for the header's 23 columns: the line is cut short" in cut
    human = re.sub(r"(sda\s+)6\.00", r"\g<1>1.2M", "".join(good[:10]), count=1)
    assert "sda r/s is `1.2M`: expected a number as iostat prints it (capture without --human)" in _iostat_refused(tmp_path, human)
    assert "capture without --pretty" in _iostat_refused(tmp_path, "     r/s     rkB/s Device\n    6.90    222.14 sda\n")
    assert "this is `multipath -ll` output" in _iostat_refused(tmp_path, path=MP / "os-brick.svc.txt")
    assert "iostat's JSON (-o JSON)" in _iostat_refused(tmp_path, '{"sysstat": {"hosts": []}}')
    assert "two captures in one file?" in _iostat_refused(tmp_path, (IOSTAT / "csdn.rhel6-rsec.txt").read_text() + "\n" + (IOSTAT / "sysstat.expected.iostat-x.txt").read_text())
    assert "not a regular file" in _iostat_refused(tmp_path, path=Path("/dev/zero"))


def test_formats_without_a_public_sample_read_as_print_c_prints_them() -> None:
    """No public listing has a historical-service-time map or a RHEL 5 failed path
    (tests/data/linux/multipath/SOURCES.md): both on lines written after libmultipath/print.c."""
    hst = "mpathx (3600a098038303053453f463045727a61) dm-3 NETAPP,LUN C-Mode\nsize=10G features='0' hwhandler='1 alua' wp=rw\n`-+- policy='historical-service-time 0' prio=50 status=active\n  `- 3:0:0:1 sdf 8:80 active ready running\n"
    maps, _ = parse_multipath(hst, "h")
    assert from_multipath(maps).volumes[0].psp == {"kind": "dm_historical_service_time"} and maps[0].product == "LUN C-Mode"
    old = "mpath1 (36006016035303900df9eaf55ec5bec11) dm-0 DGC,VRAID\n[size=1.0T][features=1 queue_if_no_path][hwhandler=1 emc][rw]\n\\_ round-robin 0 [prio=1][active]\n \\_ 7:0:2:0 sdd 8:48  [active][ready]\n\\_ round-robin 0 [prio=0][enabled]\n \\_ 8:0:2:0 sde 8:64  [failed][faulty]\n"
    maps, _ = parse_multipath(old, "o")
    top = from_multipath(maps)
    assert [(link.name, link.alua, link.down) for link in top.links] == [("7:0:2", "AO", None), ("8:0:2", "ANO", "failed faulty")]
    assert maps[0].hwhandler == "emc" and top.volumes[0].queueing == "never"
