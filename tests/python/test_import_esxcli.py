"""The esxcli readers against genuine public listings (tests/data/esxi/esxcli, see SOURCES.md)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sanlab.hostimport import esxcli
from sanlab.hostimport.esxcli import ListingError, read_listings
from sanlab.input_files import InputFileError

DATA = Path(__file__).resolve().parents[1] / "data" / "esxi" / "esxcli"


def text(name: str) -> str:
    return (DATA / name).read_text()


def unsourced(records):
    return [dataclasses.replace(r, source=None) for r in records]


# ---------------------------------------------------------------------------------------------
# Every fixture, values checked against the file


def test_core_device_list_text_apple_ssd():
    (dev,) = esxcli.read_core_devices(text("core-device-list.apple-ssd.txt"), "f")
    assert dev.name == "t10.ATA_APPLE_SSD_SM256E"
    assert dev.display_name == "Local ATA Disk (t10.ATA_APPLE_SSD_SM256E)"
    assert dev.size_mb == 239372
    assert (dev.vendor, dev.model, dev.multipath_plugin) == ("ATA", "APPLE SSD SM256E", "NMP")
    assert dev.is_vvol_pe is False
    assert (dev.queue_full_sample_size, dev.queue_full_threshold) == (0, 0)
    assert dev.max_queue_depth == 31
    assert dev.dsnro == 32
    assert dev.source == esxcli.Source("f", 1)


def test_core_device_list_text_esxi55_two_devices_padded_values():
    cdrom, disk = esxcli.read_core_devices(text("core-device-list.esxi55-local.txt"), "f")
    assert cdrom.name == "mpx.vmhba33:C0:T0:L0" and cdrom.size_mb == 0
    assert (cdrom.vendor, cdrom.model) == ("PLDS", "DVD-RW DU8A6SH")  # printed padded
    assert disk.name.endswith("Z9A3SHJH") and disk.size_mb == 953869 and disk.dsnro == 32
    # ESXi 5.5 prints neither "Device Max Queue Depth" nor "Is VVOL PE": not given, not defaulted.
    assert disk.max_queue_depth is None and disk.is_vvol_pe is None
    assert (cdrom.source.line, disk.source.line) == (1, 34)


def test_core_device_list_genuine_csv():
    devices = esxcli.read_core_devices(text("core-device-list.pi-control.csv"), "f")
    assert [d.size_mb for d in devices] == [2861588, 1907729, 3819]
    assert devices[2].name == "mpx.vmhba33:C0:T0:L0"
    assert (devices[2].vendor, devices[2].model) == ("SanDisk", "Cruzer Blade")
    assert all(d.dsnro == 32 and d.multipath_plugin == "NMP" for d in devices)
    assert devices[0].max_queue_depth is None
    assert [d.source.line for d in devices] == [2, 3, 4]


def test_nmp_device_list_round_robin_iops_1000():
    (dev,) = esxcli.read_nmp_devices(text("nmp-device-list.omnios-rr.txt"), "f")
    assert dev.name == "naa.600144f009d4d236000056918f920002"
    assert (dev.satp, dev.psp) == ("VMW_SATP_ALUA", "VMW_PSP_RR")
    assert dev.psp_options["policy"] == "rr" and dev.psp_options["iops"] == "1000"
    assert dev.psp_options["bytes"] == "10485760" and dev.psp_options["useANO"] == "0"
    assert dev.tpg_states == {0: "AO"}
    assert dev.working_paths == ["vmhba37:C1:T0:L4", "vmhba37:C0:T0:L4"]
    assert dev.psp_config.startswith("{policy=rr,iops=1000,")


def test_nmp_device_list_pure_iops_1_two_tpgs():
    (dev,) = esxcli.read_nmp_devices(text("nmp-device-list.pure-flasharray.txt"), "f")
    assert dev.psp == "VMW_PSP_RR" and dev.psp_options["iops"] == "1"
    assert dev.tpg_states == {0: "AO", 1: "AO"}
    assert len(dev.working_paths) == 4 and dev.working_paths[0] == "vmhba3:C0:T3:L253"


def test_old_nmp_device_list_fixed_alua_cx():
    (dev,) = esxcli.read_nmp_devices(text("nmp-device-list.esx40-clariion.txt"), "f")
    assert (dev.satp, dev.psp) == ("VMW_SATP_ALUA_CX", "VMW_PSP_FIXED")
    assert dev.tpg_states == {1: "ANO", 2: "AO"}
    assert dev.psp_options == {"preferred": "vmhba2:C0:T1:L1", "current": "vmhba2:C0:T1:L1"}
    assert dev.working_paths == ["vmhba2:C0:T1:L1"]


def test_old_nmp_path_list_alua_states_and_ids():
    optimized, unoptimized = esxcli.read_nmp_paths(text("nmp-path-list.esx40-clariion.txt"), "f")
    assert optimized.runtime_name == "vmhba2:C0:T1:L1"
    assert optimized.device == "naa.600601604670290026cca5f7836fe111"
    assert (optimized.group_state, optimized.tpg_id, optimized.rtp_id) == ("active", 2, 14)
    assert (optimized.current, optimized.preferred) == (True, True)
    assert unoptimized.group_state == "active unoptimized"
    assert (unoptimized.tpg_id, unoptimized.rtp_id) == (1, 5)
    assert (unoptimized.current, unoptimized.preferred) == (False, False)
    assert (optimized.source.line, unoptimized.source.line) == (1, 9)


def test_core_path_list_fc_without_indent_or_blank_lines():
    first, second = esxcli.read_core_paths(text("core-path-list.vnx-fc.txt"), "f")
    assert (first.runtime_name, first.adapter, first.state, first.transport) == (
        "vmhba0:C0:T0:L23", "vmhba0", "active", "fc")
    assert first.device == "naa.6006016094602800e07ff528b73ae011"
    assert first.target == "fc.50060160c46036df:50060167446036df"
    assert second.target == "fc.50060160c46036df:5006016f446036df"
    assert first.max_io_size_bytes is None  # the KB's host printed no "Maximum IO Size"
    assert (first.source.line, second.source.line) == (1, 17)


def test_config_string_helpers():
    assert esxcli.current_preferred("PSP VMW_PSP_RR does not support path configuration.") == (None, None)
    assert esxcli.path_ids("SATP VMW_SATP_SVC does not support path configuration.") == (None, None)
    assert esxcli.psp_options("Current Path=vmhba33:C0:T0:L0") == {"current": "vmhba33:C0:T0:L0"}
    assert esxcli.tpg_states("SATP VMW_SATP_EQL does not support device configuration.") == {}


# ---------------------------------------------------------------------------------------------
# The three layouts of one listing give the same records


@pytest.mark.parametrize("base, reader", [
    ("core-device-list.apple-ssd", esxcli.read_core_devices),
    ("nmp-device-list.omnios-rr", esxcli.read_nmp_devices),
    ("nmp-path-list.esx40-clariion", esxcli.read_nmp_paths),
    ("core-path-list.vnx-fc", esxcli.read_core_paths),
])
def test_three_layouts_agree(base, reader):
    from_text = reader(text(base + ".txt"), "f")
    from_csv = reader(text(base + ".derived.csv"), "f")
    from_keyvalue = reader(text(base + ".derived.keyvalue"), "f")
    assert from_text and unsourced(from_text) == unsourced(from_csv) == unsourced(from_keyvalue)
    assert esxcli.detect_layout(text(base + ".derived.csv")) == "csv"
    assert esxcli.detect_layout(text(base + ".derived.keyvalue")) == "keyvalue"


def test_read_listings_recognises_content_not_names(tmp_path):
    names = ["core-device-list.apple-ssd.txt", "nmp-device-list.omnios-rr.derived.csv",
             "nmp-path-list.esx40-clariion.derived.keyvalue", "core-path-list.vnx-fc.txt"]
    paths = []
    for i, name in enumerate(names):
        copy = tmp_path / f"capture{i}.out"
        copy.write_text(text(name))
        paths.append(copy)
    listings = read_listings(paths)
    assert [d.dsnro for d in listings.core_devices] == [32]
    assert listings.nmp_devices[0].psp_options["iops"] == "1000"
    assert [p.group_state for p in listings.nmp_paths] == ["active", "active unoptimized"]
    assert len(listings.core_paths) == 2
    assert listings.core_paths[0].source == esxcli.Source(str(paths[3]), 1)


def test_read_listings_keeps_one_copy_of_a_listing_given_twice():
    listings = read_listings([DATA / "nmp-path-list.esx40-clariion.txt",
                              DATA / "nmp-path-list.esx40-clariion.derived.csv"])
    assert len(listings.nmp_paths) == 2


# ---------------------------------------------------------------------------------------------
# Bad input: one clear error each


def write(tmp_path, body: str, name: str = "listing.txt") -> Path:
    path = tmp_path / name
    path.write_text(body)
    return path


def error_of(paths) -> str:
    with pytest.raises(ListingError) as caught:
        read_listings(paths)
    return str(caught.value)


def test_esxtop_capture_is_named(tmp_path):
    path = write(tmp_path, '"(PDH-CSV 4.0) (UTC)(0)","\\\\esx1\\Memory\\Free MBytes"\n"01/01/2024 00:00:00","1"\n')
    message = error_of([path])
    assert f"{path}:1" in message and "esxtop batch capture" in message and "--esxtop" in message


def test_another_tools_text_lists_the_understood_listings(tmp_path):
    path = write(tmp_path, "mpatha (3600508b400105e210000900000490000) dm-0 HP,HSV200\n"
                           "size=10G features='1 queue_if_no_path' hwhandler='0' wp=rw\n")
    message = error_of([path])
    assert f"{path}:1" in message and "not an esxcli storage listing" in message
    assert "esxcli storage core device list" in message and "esxcli storage core path list" in message


def test_esxcfg_mpath_text_is_refused_at_its_adapter_line(tmp_path):
    # esxcfg-mpath -l prints "Adapter: vmhba37 Channel: 1 Target: 0 LUN: 0" on one line.
    lines = text("core-path-list.vnx-fc.txt").splitlines()[:16]
    lines[5] = "Adapter: vmhba0 Channel: 0 Target: 0 LUN: 23"
    path = write(tmp_path, "\n".join(lines) + "\n")
    message = error_of([path])
    assert f"{path}:6" in message and "'Adapter'" in message and "'vmhba0'" in message


def test_truncated_text_record(tmp_path):
    lines = text("nmp-device-list.omnios-rr.txt").splitlines()[:5]
    path = write(tmp_path, "\n".join(lines) + "\n")
    message = error_of([path])
    assert f"{path}:1" in message and "'Path Selection Policy Device Config'" in message
    assert "cut short" in message


def test_truncated_csv_row(tmp_path):
    body = text("core-device-list.pi-control.csv")
    path = write(tmp_path, body[: body.index(",NMP,32", body.index("mpx.vmhba33"))] + "\n", "cut.csv")
    message = error_of([path])
    assert f"{path}:4" in message and "expected 28 columns" in message


def test_number_that_is_not_a_number(tmp_path):
    body = text("core-device-list.apple-ssd.txt").replace("Device Max Queue Depth: 31",
                                                          "Device Max Queue Depth: 3l")
    path = write(tmp_path, body)
    message = error_of([path])
    assert f"{path}:33" in message and "'Device Max Queue Depth'" in message
    assert "expected a whole number" in message and "nearest whole number is 3" in message


def test_group_state_not_known_names_the_nearest(tmp_path):
    body = text("nmp-path-list.esx40-clariion.txt").replace("active unoptimized", "active unoptimised")
    path = write(tmp_path, body)
    message = error_of([path])
    assert f"{path}:13" in message and "nearest: active unoptimized" in message


def test_missing_file_and_two_hosts(tmp_path):
    with pytest.raises(InputFileError, match=r"absent\.txt: no such file: expected an esxcli storage listing"):
        read_listings([tmp_path / "absent.txt"])
    other = text("nmp-path-list.esx40-clariion.txt").replace("Group State: active\n", "Group State: standby\n")
    message = error_of([DATA / "nmp-path-list.esx40-clariion.txt", write(tmp_path, other)])
    assert "'vmhba2:C0:T1:L1' is also in" in message and "one host" in message
