"""The scenario `sanlab import esxi` builds from a host's listings (`hostimport/scenario.py`): every
listed value lands where sanlab models it, with its source in a comment, and the scenario runs."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from sanlab import _core
from sanlab.hostimport.esxcli import psp_options
from sanlab.hostimport.esxtop import read_capture
from sanlab.hostimport.host import CoreDevice, CorePath, Listings, NmpDevice, NmpPath, Source
from sanlab.hostimport.scenario import HostImportError, _adapter_queue, build

RR = "{policy=rr,iops=1,bytes=10485760,useANO=0; lastPathIndex=0: NumIOsPending=0,numBytesPending=0}"


def _at(line: int) -> Source:
    return Source("listing.txt", line)


def _device(name: str, line: int, dsnro: int = 32, depth: int = 64) -> CoreDevice:
    return CoreDevice(name, name, 102400, "PURE", "FlashArray", "NMP", False, 0, 8, depth, dsnro, _at(line))


def _nmp(name: str, psp: str, config: str, line: int) -> NmpDevice:
    return NmpDevice(name, "VMW_SATP_ALUA", "{...}", {0: "AO", 1: "ANO"}, psp, config, [], _at(line), psp_options(config))


def _two_paths(device: str, lun: int, states: tuple[str, str] = ("active", "active unoptimized"), targets: tuple[str, str] = ("fc.20000000aa:21000000aa", "fc.20000000aa:21000000ab")) -> tuple[list[NmpPath], list[CorePath]]:
    names = [f"vmhba1:C0:T{t}:L{lun}" for t in (0, 1)]
    nmp = [NmpPath(n, device, s, tpg, tpg + 10, None, None, _at(100 + lun * 10 + tpg)) for tpg, (n, s) in enumerate(zip(names, states))]
    core = [CorePath(n, device, "vmhba1", t, "dead" if s == "dead" else "active", "fc", None, _at(200 + lun)) for n, s, t in zip(names, states, targets)]
    return nmp, core


def _listings(*, second_psp: tuple[str, str] = ("VMW_PSP_RR", RR), second_dsnro: int = 32, second_states: tuple[str, str] = ("active", "active unoptimized")) -> Listings:
    p1, c1 = _two_paths("naa.1", 1)
    p2, c2 = _two_paths("naa.2", 2, second_states)
    return Listings(
        core_devices=[_device("naa.1", 1), _device("naa.2", 20, dsnro=second_dsnro)],
        nmp_devices=[_nmp("naa.1", "VMW_PSP_RR", RR, 40), _nmp("naa.2", *second_psp, 60)],
        nmp_paths=p1 + p2,
        core_paths=c1 + c2,
    )


def _run(tmp_path: Path, toml: str) -> dict:
    path = tmp_path / "imported.toml"
    path.write_text(toml, encoding="utf-8")
    return json.loads(_core.run(str(path), None, [], None, "2s", None))["variants"][0]


def test_listed_values_land_where_sanlab_models_them_with_their_sources(tmp_path: Path) -> None:
    imported = build(_listings())
    doc = tomllib.loads(imported.toml)
    host = doc["host"][0]
    assert host["adapter"]["lun_queue_depth"] == 64
    assert host["scheduler"] == {"kind": "esxi", "dsnro": 32}
    assert host["multipath"]["psp"] == {"kind": "rr", "iops": 1}
    # ESXi lists a path per LUN; sanlab's [[path]] is the link (adapter to target port) they share.
    assert [(p["name"], p.get("alua"), p["controller"]) for p in doc["path"]] == [("vmhba1:C0:T0", "AO", 1), ("vmhba1:C0:T1", "ANO", 2)]
    assert doc["array"][0]["controllers"] == 2, "one controller per target port group"
    assert [v["name"] for v in doc["volume"]] == ["naa.1", "naa.2"]
    assert "Device Max Queue Depth, listing.txt:1" in imported.toml
    assert "sanlab's default" in imported.toml, "what no listing says is marked as a default"
    assert imported.notes == []
    variant = _run(tmp_path, imported.toml)
    assert [v["name"] for v in variant["vms"]] == ["vm1", "vm2"]
    assert all(v["completed"] > 0 for v in variant["vms"])
    by_path = {p["name"]: p for p in variant["paths"]}
    assert set(by_path) == {"vmhba1:C0:T0:naa.1", "vmhba1:C0:T1:naa.1", "vmhba1:C0:T0:naa.2", "vmhba1:C0:T1:naa.2"}
    assert by_path["vmhba1:C0:T1:naa.1"]["ios"] == 0, "round robin without useANO leaves the unoptimized path idle"


def test_a_device_policy_of_its_own_is_its_volumes_and_per_host_settings_that_differ_are_noted(tmp_path: Path) -> None:
    # Both links optimized for both devices; FIXED on the second, preferring its second path.
    p1, c1 = _two_paths("naa.1", 1, ("active", "active"))
    p2, c2 = _two_paths("naa.2", 2, ("active", "active"))
    fixed = "{preferred=vmhba1:C0:T1:L2;current=vmhba1:C0:T1:L2}"
    listings = Listings(
        core_devices=[_device("naa.1", 1), _device("naa.2", 20, dsnro=64)],
        nmp_devices=[_nmp("naa.1", "VMW_PSP_RR", RR, 40), _nmp("naa.2", "VMW_PSP_FIXED", fixed, 60)],
        nmp_paths=p1 + p2,
        core_paths=c1 + c2,
    )
    imported = build(listings)
    doc = tomllib.loads(imported.toml)
    assert doc["host"][0]["multipath"]["psp"] == {"kind": "rr", "iops": 1}
    # ESXi's vmhba1:C0:T1:L2 is sanlab's path vmhba1:C0:T1:naa.2 (the link carries both devices).
    assert doc["volume"][1]["psp"] == {"kind": "fixed", "preferred": "vmhba1:C0:T1:naa.2"}
    assert "psp" not in doc["volume"][0]
    assert imported.notes == ["No of outstanding IOs with competing worlds (DSNRO): sanlab sets it per host; used 32 (1 of 2 devices), not: naa.2 (64, listing.txt:20)"]
    by_path = {p["name"]: p["ios"] for p in _run(tmp_path, imported.toml)["paths"]}
    assert by_path["vmhba1:C0:T1:naa.2"] > 0 and by_path["vmhba1:C0:T0:naa.2"] == 0, "FIXED keeps to its preferred path"
    assert by_path["vmhba1:C0:T0:naa.1"] > 0 and by_path["vmhba1:C0:T1:naa.1"] > 0, "round robin uses both"


def test_a_link_whose_devices_disagree_on_its_alua_state_gets_the_most_common_with_a_note() -> None:
    imported = build(_listings(second_states=("active", "active")))
    assert imported.notes == ["link vmhba1:C0:T1: its devices report {'ANO': 1, 'AO': 1}; sanlab gives a link one ALUA state: used ANO"]


def test_a_link_dead_for_every_device_is_down_from_the_start(tmp_path: Path) -> None:
    p1, c1 = _two_paths("naa.1", 1, ("active", "dead"))
    p2, c2 = _two_paths("naa.2", 2, ("active", "dead"))
    imported = build(Listings(core_devices=[_device("naa.1", 1), _device("naa.2", 2)], nmp_paths=p1 + p2, core_paths=c1 + c2))
    doc = tomllib.loads(imported.toml)
    assert doc["event"] == [{"kind": "path_down", "path": "vmhba1:C0:T1", "at": "0s"}]
    variant = _run(tmp_path, imported.toml)
    states = {p["name"]: p["state"] for p in variant["paths"]}
    assert states["vmhba1:C0:T1:naa.1"] == states["vmhba1:C0:T1:naa.2"] == "dead"
    # Dead for one device only: the link stays up (sanlab's link carries every device).
    partial = build(_listings(second_states=("active", "dead")))
    assert "event" not in tomllib.loads(partial.toml)
    assert partial.notes == ["link vmhba1:C0:T1: dead for vmhba1:C0:T1:L2 only; sanlab's link carries every device of its array: left up"]


def test_a_device_on_two_target_nodes_is_a_replicated_pair(tmp_path: Path) -> None:
    p, c = _two_paths("naa.9", 9, targets=("fc.20000000aa:21000000aa", "fc.20000000bb:21000000bb"))
    listings = Listings(core_devices=[_device("naa.9", 1)], nmp_devices=[_nmp("naa.9", "VMW_PSP_RR", RR, 2)], nmp_paths=p, core_paths=c)
    imported = build(listings)
    doc = tomllib.loads(imported.toml)
    assert doc["volume"] == [{"name": "naa.9", "arrays": ["array1", "array2"]}]
    assert [(p["name"], p["array"]) for p in doc["path"]] == [("vmhba1:C0:T0", "array1"), ("vmhba1:C0:T1", "array2")]
    assert doc["replication"] == [{"arrays": ["array1", "array2"]}]
    assert any("active-active pair" in n for n in imported.notes)
    assert _run(tmp_path, imported.toml)["vms"][0]["completed"] > 0


def test_what_cannot_be_imported_is_one_clear_error() -> None:
    with pytest.raises(HostImportError, match=r"listing.txt:60: device naa.2: path selection policy `VMW_PSP_XYZ` is not one sanlab models .*VMW_PSP_RR"):
        build(_listings(second_psp=("VMW_PSP_XYZ", "{}")))
    with pytest.raises(HostImportError, match="no paths"):
        build(Listings(core_devices=[_device("naa.1", 1)]))
    with pytest.raises(HostImportError, match=r"group state `half active` is not one ESXi prints"):
        build(_listings(second_states=("active", "half active")))


def test_the_adapter_kind_follows_the_paths_transport_and_its_queue_the_capture() -> None:
    listings = _listings()
    assert 'adapter = { kind = "fc", lun_queue_depth = 64 }  # transport fc, listing.txt:201' in build(listings).toml
    iscsi = Listings(
        core_devices=listings.core_devices,
        nmp_devices=listings.nmp_devices,
        nmp_paths=listings.nmp_paths,
        core_paths=[CorePath(p.runtime_name, p.device, p.adapter, "iqn.2010-06.com.purestorage:flasharray.1", p.state, "iscsi", None, p.source) for p in listings.core_paths],
    )
    assert 'kind = "sw_iscsi"' in build(iscsi).toml and "software iSCSI assumed" in build(iscsi).toml
    # esxtop's Physical Disk(vmhbaN)\Adapter Q Depth, summed over the host's HBAs (one queue in sanlab).
    capture = read_capture(Path(__file__).resolve().parents[1] / "data/esxi/esxtop/assembled_storage_pst.csv")
    assert _adapter_queue(capture, ["vmhba2", "vmhba9"], []) == (1024, "Adapter Q Depth of vmhba2 1024 summed, assembled_storage_pst.csv")
    assert _adapter_queue(None, ["vmhba2"], []) == (None, "")


def test_latency_is_weighted_by_commands_so_idle_samples_count_for_nothing() -> None:
    import numpy as np

    from sanlab.hostimport.workload import weighted_mean

    # esxtop writes 0 ms for a sample without commands: three idle samples, three at 0.3 ms.
    assert weighted_mean(np.array([0.0, 0.0, 0.0, 0.3, 0.3, 0.3]), np.array([0.0, 0.0, 0.0, 1000.0, 1000.0, 1000.0])) == pytest.approx(0.3)
    assert weighted_mean(np.array([0.2, 0.4]), np.array([3000.0, 1000.0])) == pytest.approx(0.25)


def test_every_policy_setting_is_carried_or_refused() -> None:
    latency = "{policy=latency,latencyEvalTime=180000,samplingCycles=16,curSamplingCycle=1,useANO=1; lastPathIndex=0}"
    doc = tomllib.loads(build(_listings(second_psp=("VMW_PSP_RR", latency))).toml)
    assert doc["volume"][1]["psp"] == {"kind": "rr_latency", "latency_eval_time": "180000ms", "num_sampling_cycles": 16, "use_ano": True}
    with pytest.raises(HostImportError, match=r"listing.txt:60: device naa.2: iops=abc in its path selection policy config is not a whole number"):
        build(_listings(second_psp=("VMW_PSP_RR", "{policy=rr,iops=abc,useANO=0}")))
    with pytest.raises(HostImportError, match=r"FIXED prefers vmhba9:C0:T0:L2, which is none of its listed paths"):
        build(_listings(second_psp=("VMW_PSP_FIXED", "{preferred=vmhba9:C0:T0:L2;current=vmhba9:C0:T0:L2}")))
