"""The `sanlab` command restarts itself with huge pages for malloc, once, keeping a user's setting."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sanlab._launch import with_huge_pages


def test_huge_pages_added_once_and_a_users_setting_kept() -> None:
    both = "glibc.malloc.hugetlb=1:glibc.malloc.arena_max=1"
    assert with_huge_pages(None) == both
    assert with_huge_pages("") == both
    assert with_huge_pages("glibc.malloc.arena_max=2") == "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1"
    assert with_huge_pages("glibc.malloc.hugetlb=0") is None
    assert with_huge_pages("glibc.malloc.arena_max=2:glibc.malloc.hugetlb=2") is None
    assert with_huge_pages("glibc.malloc.hugetlbx=1") == f"glibc.malloc.hugetlbx=1:{both}"


def test_the_installed_command_runs_through_the_restart(tmp_path: Path) -> None:
    command = Path(sys.executable).parent / "sanlab"
    scenario = Path(__file__).resolve().parents[2] / "scenarios" / "examples" / "noise.toml"
    done = subprocess.run([str(command), "validate", str(scenario)], capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "noise" in done.stdout
    # Arguments reach the command unchanged: a wrong one is still reported as sanlab's error.
    wrong = subprocess.run([str(command), "valdiate", str(scenario)], capture_output=True, text=True, check=False, timeout=60)
    assert wrong.returncode == 2
    assert "valdiate" in wrong.stderr
    # `run` goes through the restart with its arguments too.
    out = tmp_path / "out"
    ran = subprocess.run([str(command), "run", str(scenario), "--duration", "3s", "--out", str(out), "--quiet"], capture_output=True, text=True, check=False, timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert (out / "manifest.json").is_file()
