"""`sanlab import esxi` of an ESXi cluster: `--esxcli` once per host, devices of the same identity one
volume, each host its own paths and policy; every PSP ESXi 4.x-8.x prints mapped or refused."""

from __future__ import annotations

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
