"""`sanlab import esxi` of an ESXi cluster: `--esxcli` once per host, devices of the same identity one
volume, each host its own paths and policy; every PSP ESXi 4.x-8.x prints mapped or refused."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ESXCLI = ROOT / "tests/data/esxi/esxcli"
CLARIION = [ESXCLI / "nmp-device-list.esx40-clariion.txt", ESXCLI / "nmp-path-list.esx40-clariion.txt"]


def _sanlab(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sanlab.cli", *args], capture_output=True, text=True, timeout=300, check=False)


def test_esx41_fixed_with_array_preference_is_sanlabs_fixed(tmp_path: Path) -> None:
    nmp = tmp_path / "nmp-device-list.txt"
    nmp.write_text(CLARIION[0].read_text().replace("VMW_PSP_FIXED", "VMW_PSP_FIXED_AP"), encoding="utf-8")
    out = tmp_path / "host.toml"
    p = _sanlab("import", "esxi", "--esxcli", str(nmp), str(CLARIION[1]), "-o", str(out))
    assert p.returncode == 0, p.stderr
    doc = tomllib.loads(out.read_text())
    assert doc["volume"][0]["psp"] == {"kind": "fixed", "preferred": "vmhba2:C0:T1"}
    assert "array preference is not modelled beyond ALUA" in out.read_text()
    # A PSP no ESXi ships with: refused, naming the nearest.
    nmp.write_text(CLARIION[0].read_text().replace("VMW_PSP_FIXED", "VMW_PSP_FIXD"), encoding="utf-8")
    p = _sanlab("import", "esxi", "--esxcli", str(nmp), str(CLARIION[1]), "-o", str(tmp_path / "bad.toml"))
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "`VMW_PSP_FIXD` is not one sanlab models" in p.stderr and "nearest: VMW_PSP_FIXED" in p.stderr, p.stderr
    assert f"{nmp}:1" in p.stderr, p.stderr


CAPTURE = ROOT / "tests/data/esxi/esxtop/assembled_storage_pst.csv"
NAA = "naa.600601604670290026cca5f7836fe111"


def _core_paths(nmp_paths: str) -> str:
    """`esxcli storage core path list` for the paths of an nmp path listing, in its text layout:
    the initiator and target port from each path's UID (`fc.<wwnn>:<wwpn>-fc.<wwnn>:<wwpn>-<naa>`)."""
    lines = []
    for record in nmp_paths.strip().split("\n\n"):
        uid, *fields = record.strip().splitlines()
        runtime = next(f.split(": ", 1)[1] for f in fields if f.startswith("Runtime Name"))
        initiator, target, device = uid.split("-")
        adapter, channel, t, lun = runtime.split(":")
        lines += [uid, f"   UID: {uid}", f"   Runtime Name: {runtime}", f"   Device: {device}", f"   Adapter: {adapter}", f"   Channel: {channel[1:]}", f"   Target: {t[1:]}",
                  f"   LUN: {lun[1:]}", "   Plugin: NMP", "   State: active", "   Transport: fc", f"   Adapter Identifier: {initiator}", f"   Target Identifier: {target}", ""]
    return "\n".join(lines)


def _cluster(tmp_path: Path, names: tuple[str, ...] = ("esx1", "esx2", "esx3")) -> list[Path]:
    """One folder per host: the ESX 4.0 CLARiiON host's listings, each host with its own HBA
    (vmhba2, vmhba3, vmhba4) and initiator WWN, the same LUN and array ports; and its core path
    listing made from its nmp path listing."""
    folders = []
    for k, name in enumerate(names):
        folder = tmp_path / name
        folder.mkdir()
        wwn = f"{0xc96eb647 + k:08x}"

        def host(text: str) -> str:
            return text.replace("vmhba2", f"vmhba{k + 2}").replace("c96eb647", wwn)  # noqa: B023

        for listing in CLARIION:
            (folder / listing.name).write_text(host(listing.read_text()), encoding="utf-8")
        (folder / "core-path-list.txt").write_text(_core_paths(host(CLARIION[1].read_text())), encoding="utf-8")
        folders.append(folder)
    return folders


def _capture(tmp_path: Path, host: str, adapter: str) -> Path:
    """The assembled capture as host `host` would write it for the CLARiiON LUN on `adapter`."""
    path = tmp_path / f"{host}.csv"
    text = CAPTURE.read_text().replace("esx01.example.com", host).replace("naa.89019b90c32f1b3212a6dcded7c1a8e8", NAA).replace("vmhba2", adapter)
    path.write_text(text, encoding="utf-8")
    return path


def test_three_hosts_are_one_volume_on_one_array_each_host_its_own_paths(tmp_path: Path) -> None:
    folders = _cluster(tmp_path)
    out = tmp_path / "cluster.toml"
    p = _sanlab("import", "esxi", *(a for f in folders for a in ("--esxcli", str(f))), "-o", str(out))
    assert p.returncode == 0, p.stderr
    doc = tomllib.loads(out.read_text())
    assert [v["name"] for v in doc["volume"]] == [NAA] and doc["volume"][0]["arrays"] == ["array1"]
    assert [a["name"] for a in doc["array"]] == ["array1"] and doc["array"][0]["controllers"] == 2
    assert [h["name"] for h in doc["host"]] == ["esx1", "esx2", "esx3"]
    for k, host in enumerate(("esx1", "esx2", "esx3")):
        mine = [(q["name"], q["adapter"], q["controller"], q["alua"]) for q in doc["path"] if q["host"] == host]
        hba = f"vmhba{k + 2}"
        assert mine == [(f"{host}:{hba}:C0:T1", hba, 2, "AO"), (f"{host}:{hba}:C0:T0", hba, 1, "ANO")]
        assert [(v["host"], v["volume"]) for v in doc["vm"] if v["host"] == host] == [(host, NAA)]
    text = out.read_text()
    assert "esx2/nmp-path-list.esx40-clariion.txt:9" in text and "esx3/core-path-list.txt:1" in text, "each value names its host's listing"
    # Each host prefers its own first optimized path: sanlab's fixed takes it on each host; said.
    assert "psp" not in doc["volume"][0] and [h["multipath"]["psp"] for h in doc["host"]] == [{"kind": "fixed"}] * 3
    assert "FIXED on each host, preferring its first optimized path (esx1:vmhba2:C0:T1, esx2:vmhba3:C0:T1, esx3:vmhba4:C0:T1)" in p.stderr, p.stderr
    run = _sanlab("run", str(out), "--duration", "2s", "--out", str(tmp_path / "run"), "--quiet")
    assert run.returncode == 0, run.stderr
    # Listings of two hosts in one occurrence: today's error.
    p = _sanlab("import", "esxi", "--esxcli", str(folders[0] / "nmp-path-list.esx40-clariion.txt"), str(folders[1] / "core-path-list.txt"), "-o", str(tmp_path / "mixed.toml"))
    assert p.returncode == 2 and "the path listings share no path" in p.stderr, p.stderr


def test_named_hosts_get_the_capture_naming_them_whatever_the_order(tmp_path: Path) -> None:
    names = ("esx-a", "esx-b", "esx-c")
    folders = _cluster(tmp_path, names)
    captures = [_capture(tmp_path, n, f"vmhba{k + 2}") for k, n in enumerate(names)]
    out = tmp_path / "cluster.toml"
    args = [a for f, n in zip(folders, names, strict=True) for a in ("--esxcli", str(f), "--host", n)]
    p = _sanlab("import", "esxi", *args, *(a for c in reversed(captures) for a in ("--esxtop", str(c))), "-o", str(out))
    assert p.returncode == 0, p.stderr
    doc = tomllib.loads(out.read_text())
    assert [h["name"] for h in doc["host"]] == list(names)
    # Each host's adapter queue is its own capture's (the capture of another host has another HBA).
    assert [h["adapter"]["queue_depth"] for h in doc["host"]] == [1024, 1024, 1024]
    for k, n in enumerate(names):
        assert f"Adapter Q Depth of vmhba{k + 2} 1024 summed, {n}.csv" in out.read_text()
    assert all("--rate_iops=" in v["job"][0]["cmdline"] for v in doc["vm"])
    run = _sanlab("run", str(out), "--duration", "2s", "--out", str(tmp_path / "run"), "--quiet")
    assert run.returncode == 0, run.stderr
    # A count of --host that is not the count of --esxcli; a capture of none of the hosts.
    p = _sanlab("import", "esxi", *args[:-2], "-o", str(tmp_path / "x.toml"))
    assert p.returncode == 2 and "2 --host for 3 --esxcli" in p.stderr and p.stderr.count("\n") == 1, p.stderr
    other = _capture(tmp_path, "esx-z", "vmhba2")
    p = _sanlab("import", "esxi", *args, "--esxtop", str(captures[0]), "--esxtop", str(other), "-o", str(tmp_path / "y.toml"))
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert f"{other}: line 1: the capture's host 'esx-z' is none of the hosts imported (esx-a, esx-b, esx-c)" in p.stderr, p.stderr
    # Hosts named with --host: a capture must name one of them, even when no capture does.
    p = _sanlab("import", "esxi", *args, "--esxtop", str(other), "-o", str(tmp_path / "z.toml"))
    assert p.returncode == 2 and "the capture's host 'esx-z' is none of the hosts imported" in p.stderr, p.stderr
    assert not any((tmp_path / f"{n}.toml").exists() for n in "xyz")


def test_captures_naming_no_host_are_taken_in_order_with_a_note(tmp_path: Path) -> None:
    folders = _cluster(tmp_path)
    captures = [_capture(tmp_path, f"prod{k}.example.com", f"vmhba{k + 2}") for k in range(2)]
    out = tmp_path / "cluster.toml"
    p = _sanlab("import", "esxi", *(a for f in folders for a in ("--esxcli", str(f))), *(a for c in captures for a in ("--esxtop", str(c))), "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert f"{captures[1]}: its host 'prod1.example.com' is none of esx1, esx2, esx3: taken as esx2's capture, by order" in p.stderr, p.stderr
    doc = tomllib.loads(out.read_text())
    assert ["--rate_iops=" in v["job"][0]["cmdline"] for v in doc["vm"]] == [True, True, False]


STORED = ROOT / "tests/data/esxi/cluster"


def test_the_stored_cluster_is_the_derivation(tmp_path: Path) -> None:
    """tests/data/esxi/cluster (the docs' example) is what `_cluster` and `_capture` write."""
    _cluster(tmp_path)
    for k in range(3):
        _capture(tmp_path, f"esx{k + 1}", f"vmhba{k + 2}")
    made = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file())
    stored = sorted(p.relative_to(STORED).as_posix() for p in STORED.rglob("*") if p.is_file() and p.name != "SOURCES.md")
    assert made == stored and len(made) == 12
    for name in made:
        assert (tmp_path / name).read_bytes() == (STORED / name).read_bytes(), name


def test_the_cluster_section_s_commands_run_as_written(tmp_path: Path) -> None:
    """The `sanlab …` lines of docs/from-your-host.md's cluster section (`text` blocks: they name
    repository files, which the page-examples test's folder does not hold)."""
    page = (ROOT / "docs/from-your-host.md").read_text()
    section = page[page.index("## An ESXi cluster"):page.index("## A Linux host")]
    blocks = re.findall(r"^```\w*\n(.*?)^```", section, re.S | re.M)
    commands = [line.strip() for block in blocks for line in block.splitlines() if line.strip().startswith("sanlab ")]
    assert sum(c.startswith("sanlab import esxi") for c in commands) == 2 and sum(c.startswith("sanlab run") for c in commands) == 3
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    for command in commands:
        args = shlex.split(command)[1:]
        if args[0] == "run":
            args = [*args, "--quiet", "--duration", "0.5s", "--out", str(tmp_path / f"run{len(list(tmp_path.iterdir()))}")]
        done = subprocess.run([sys.executable, "-m", "sanlab.cli", *args], capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path)
        assert done.returncode == 0, f"{command}: {done.stderr}"
    doc = tomllib.loads((tmp_path / "measured.toml").read_text())
    assert [h["name"] for h in doc["host"]] == ["esx1", "esx2", "esx3"] and len(doc["volume"]) == 1


def test_what_cannot_be_a_cluster_is_one_clear_error(tmp_path: Path) -> None:
    folders = _cluster(tmp_path, ("a", "b"))
    both = ["--esxcli", str(folders[0]), "--esxcli", str(folders[1])]
    cases = {
        # Two hosts' folders in one --esxcli: one host's listings expected, as today.
        "one": (["--esxcli", str(folders[0]), str(folders[1])], "with other values: expected the listings of one host"),
        "twice": ([*both, "--host", "x", "--host", "x"], "--host x is given twice"),
        "captures": ([*both, *(a for n in ("a", "b", "c") for a in ("--esxtop", str(_capture(tmp_path, n, "vmhba2"))))], "3 --esxtop for 2 hosts (esx1, esx2)"),
        "same": ([*both, "--host", "a", "--host", "b", "--esxtop", str(tmp_path / "a.csv"), "--esxtop", str(tmp_path / "a.csv")], "a second capture of host a"),
    }
    for name, (args, said) in cases.items():
        p = _sanlab("import", "esxi", *args, "-o", str(tmp_path / f"{name}.toml"))
        assert p.returncode == 2 and p.stderr.startswith("error: ") and p.stderr.count("\n") == 1, (name, p.stderr)
        assert said in p.stderr, (name, p.stderr)
        assert not (tmp_path / f"{name}.toml").exists()


def test_a_cluster_of_esx41_hosts_under_fixed_ap_runs(tmp_path: Path) -> None:
    folders = _cluster(tmp_path)
    for f in folders:
        listing = f / CLARIION[0].name
        listing.write_text(listing.read_text().replace("VMW_PSP_FIXED", "VMW_PSP_FIXED_AP"), encoding="utf-8")
    out = tmp_path / "cluster.toml"
    p = _sanlab("import", "esxi", *(a for f in folders for a in ("--esxcli", str(f))), "-o", str(out))
    assert p.returncode == 0, p.stderr
    doc = tomllib.loads(out.read_text())
    assert [h["multipath"]["psp"] for h in doc["host"]] == [{"kind": "fixed"}] * 3
    assert out.read_text().count("VMW_PSP_FIXED_AP: ESX 4.1's fixed with array preference, imported as sanlab's fixed: the array preference is not modelled beyond ALUA") == 3
    run = _sanlab("run", str(out), "--duration", "2s", "--out", str(tmp_path / "run"), "--quiet")
    assert run.returncode == 0, run.stderr


def test_a_host_without_a_core_path_listing_reaches_the_array_the_others_name(tmp_path: Path) -> None:
    folders = _cluster(tmp_path)
    (folders[1] / "core-path-list.txt").unlink()
    out = tmp_path / "cluster.toml"
    p = _sanlab("import", "esxi", *(a for f in folders for a in ("--esxcli", str(f))), "-o", str(out))
    assert p.returncode == 0, p.stderr
    doc = tomllib.loads(out.read_text())
    assert [a["name"] for a in doc["array"]] == ["array1"] and "replication" not in doc
    assert {q["array"] for q in doc["path"]} == {"array1"} and len(doc["path"]) == 6
    assert f"esx2: no core path listing names the targets of {NAA}: taken as the other hosts' listings name them" in p.stderr, p.stderr


def test_devices_without_an_identity_of_their_own_stay_with_their_host(tmp_path: Path) -> None:
    """ESXi names a device without an identity (a local disk) `mpx.vmhbaA:Cc:Tt:Ll`: the same
    name on two hosts is two devices, a volume per host."""
    folders = _cluster(tmp_path, ("esx1", "esx2"))
    local = "mpx.vmhba32:C0:T0:L0"
    for f in folders:
        for listing in f.iterdir():
            listing.write_text(listing.read_text().replace(NAA, local), encoding="utf-8")
    capture = _capture(tmp_path, "esx2", "vmhba3")
    capture.write_text(capture.read_text().replace(NAA, local), encoding="utf-8")
    out = tmp_path / "cluster.toml"
    p = _sanlab("import", "esxi", "--esxcli", str(folders[0]), "--esxcli", str(folders[1]), "--esxtop", str(capture), "-o", str(out))
    assert p.returncode == 0, p.stderr
    doc = tomllib.loads(out.read_text())
    assert [v["name"] for v in doc["volume"]] == [f"esx1:{local}", f"esx2:{local}"]
    assert [(v["host"], v["volume"]) for v in doc["vm"]] == [("esx1", f"esx1:{local}"), ("esx2", f"esx2:{local}")]
    assert "--rate_iops=" in doc["vm"][1]["job"][0]["cmdline"] and "--rate_iops=" not in doc["vm"][0]["job"][0]["cmdline"]
    run = _sanlab("run", str(out), "--duration", "2s", "--out", str(tmp_path / "run"), "--quiet")
    assert run.returncode == 0, run.stderr


def test_a_host_preferring_another_path_than_sanlabs_fixed_would_is_said(tmp_path: Path) -> None:
    folders = _cluster(tmp_path)
    listing = folders[1] / CLARIION[0].name
    listing.write_text(listing.read_text().replace("{preferred=vmhba3:C0:T1:L1", "{preferred=vmhba3:C0:T0:L1"), encoding="utf-8")
    out = tmp_path / "cluster.toml"
    p = _sanlab("import", "esxi", *(a for f in folders for a in ("--esxcli", str(f))), "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert 'esx2: { kind = "fixed", preferred = "esx2:vmhba3:C0:T0" }' in p.stderr and "each host's own policy applies to it" in p.stderr, p.stderr
    assert "psp" not in tomllib.loads(out.read_text())["volume"][0]
