"""`sanlab import esxi`, `sanlab compare --esxtop` and the report's comparison section against
hostile files: each class of input that ended in a traceback, a hang, runaway memory or a wrong
scenario, on its own reproducer (docs/robustness.md, "Importing a host")."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from sanlab import cli as sanlab_cli
from sanlab import engine
from sanlab.toml_text import toml_comment

ROOT = Path(__file__).resolve().parents[2]
ESXCLI = ROOT / "tests/data/esxi/esxcli"
NMP_DEVICES = ESXCLI / "nmp-device-list.esx40-clariion.txt"
NMP_PATHS = ESXCLI / "nmp-path-list.esx40-clariion.txt"
LISTINGS = [str(NMP_DEVICES), str(NMP_PATHS)]
NAA = "naa.600601604670290026cca5f7836fe111"
COUNTERS = [
    "Commands/sec", "Reads/sec", "Writes/sec", "MBytes Read/sec", "MBytes Written/sec", "Active Commands", "Queued Commands",
    "Average Driver MilliSec/Command", "Average Driver MilliSec/Read", "Average Driver MilliSec/Write",
]  # fmt: skip
# 1,000 commands/s of 4 KiB, 70 % reads, 4 outstanding, DAVG 0.6 ms reading and 0.3 ms writing.
STEADY = {
    "Commands/sec": "1000", "Reads/sec": "700", "Writes/sec": "300", "MBytes Read/sec": "2.734375", "MBytes Written/sec": "1.171875",
    "Active Commands": "4", "Queued Commands": "0", "Average Driver MilliSec/Command": "0.51", "Average Driver MilliSec/Read": "0.6",
    "Average Driver MilliSec/Write": "0.3",
}  # fmt: skip


def _capture(path: Path, values: dict[str, str] | None = None, *, bias: str = "0", extra: tuple[str, str] | None = None) -> Path:
    """An esxtop batch capture of the CLARiiON host's one device: three samples of `values` over
    STEADY's; `extra` is one more column: its header cell and its value in every row."""
    cells = {**STEADY, **(values or {})}
    header = [f'"(PDH-CSV 4.0) (UTC)({bias})"', *(f'"\\\\esx1\\Physical Disk SCSI Device({NAA})\\{c}"' for c in COUNTERS)]
    rows = [[f'"01/01/2026 00:00:{5 * k:02d}"', *(f'"{cells[c]}"' for c in COUNTERS)] for k in range(3)]
    if extra:
        header.append(f'"{extra[0]}"')
        rows = [[*row, f'"{extra[1]}"'] for row in rows]
    path.write_text("\n".join(",".join(line) for line in [header, *rows]) + "\n", encoding="utf-8")
    return path


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        code = sanlab_cli.main(list(args))
    return code, out.getvalue(), err.getvalue()


def _refused(*args: str) -> str:
    """The one error line of a command that must refuse its input."""
    code, _, err = _cli(*args)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    return err


def _subprocess(*args: str) -> subprocess.CompletedProcess[str]:
    # In a process of its own with a timeout: a FIFO opened by mistake would block for ever.
    return subprocess.run([sys.executable, "-m", "sanlab.cli", *args], capture_output=True, text=True, timeout=120, check=False)


def _import(tmp_path: Path, *listings: str, capture: Path | None = None) -> tuple[Path, str]:
    """Imports and returns the scenario and the notes (stderr); the import must succeed."""
    out = tmp_path / "host.toml"
    code, _, err = _cli("import", "esxi", "--esxcli", *listings, *(["--esxtop", str(capture)] if capture else []), "-o", str(out))
    assert code == 0, err
    return out, err


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A run of the CLARiiON host imported with a steady capture, and that capture."""
    tmp = tmp_path_factory.mktemp("imported")
    capture = _capture(tmp / "esxtop.csv")
    scenario, _ = _import(tmp, *LISTINGS, capture=capture)
    code, _, err = _cli("run", str(scenario), "--duration", "1s", "--out", str(tmp / "run"), "--quiet")
    assert code == 0, err
    return tmp / "run", capture


def _copy(run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    return copy


# --- 1. Files that are not regular, too large, or bombs -------------------------------------------


def test_a_device_or_a_fifo_is_refused_before_it_is_opened(tmp_path: Path, run_folder: tuple[Path, Path]) -> None:
    """`/dev/zero` as a listing ended in MemoryError, a FIFO blocked for ever; a capture too."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    out = str(tmp_path / "host.toml")
    for args in (
        ["import", "esxi", "--esxcli", "/dev/zero", "-o", out],
        ["import", "esxi", "--esxcli", str(fifo), "-o", out],
        ["import", "esxi", "--esxcli", *LISTINGS, "--esxtop", "/dev/zero", "-o", out],
        ["import", "esxi", "--esxcli", *LISTINGS, "--esxtop", str(fifo), "-o", out],
        ["compare", str(run_folder[0]), "--esxtop", str(fifo), "--json", str(tmp_path / "c.json")],
    ):
        p = _subprocess(*args)
        assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
        assert "not a regular file (a device, a FIFO or a folder): expected " in p.stderr, p.stderr
    assert not (tmp_path / "host.toml").exists()


def test_a_folder_file_larger_than_any_listing_is_skipped_unread(tmp_path: Path) -> None:
    """A folder's files were read whole to recognise listings: a support bundle's 16 GiB log
    ended in MemoryError (here under a 2 GiB address space)."""
    folder = tmp_path / "bundle"
    folder.mkdir()
    for listing in LISTINGS:
        shutil.copy(listing, folder)
    with open(folder / "vmkernel.log", "wb") as log:  # sparse: nothing on disk
        log.truncate(16 << 30)

    def two_gib() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    p = subprocess.run([sys.executable, "-m", "sanlab.cli", "import", "esxi", "--esxcli", str(folder), "-o", str(tmp_path / "host.toml")],
                       capture_output=True, text=True, timeout=120, check=False, preexec_fn=two_gib)  # fmt: skip
    assert p.returncode == 0 and "note: not storage listings, skipped: vmkernel.log" in p.stderr, p.stderr


def test_a_capture_row_is_counted_before_it_is_split(tmp_path: Path) -> None:
    """A row of commas was split into millions of cells (420 M for 400 MiB: 3.7 GB) before its
    width was checked; its cells are now counted on the line first."""
    capture = _capture(tmp_path / "commas.csv")
    with open(capture, "a", encoding="utf-8") as file:
        file.write("," * (2 << 20) + "\n")
    err = _refused("import", "esxi", "--esxcli", *LISTINGS, "--esxtop", str(capture), "-o", str(tmp_path / "x.toml"))
    assert f"{capture}:5: more than 1,048,576 cells in a row" in err


def test_a_gzipped_capture_is_bounded_on_what_it_decompresses_to(tmp_path: Path) -> None:
    """A gzip bomb was decompressed without bound: 8 GiB of blank lines (8 MB) read for minutes.
    It ends once 16 MiB are out, at 676 times the bytes read (under a second)."""
    header = _capture(tmp_path / "plain.csv").read_bytes()
    member = gzip.compress((b" " * ((1 << 20) - 1) + b"\n") * 64)
    bomb = tmp_path / "bomb.csv.gz"
    bomb.write_bytes(gzip.compress(header) + member * 128)  # gzip reads the members one after another
    p = _subprocess("import", "esxi", "--esxcli", *LISTINGS, "--esxtop", str(bomb), "-o", str(tmp_path / "x.toml"))
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert f"{bomb}: decompressed, it passes 16,777,216 bytes" in p.stderr and "gzip bomb" in p.stderr


# --- 2. Numbers from a capture ---------------------------------------------------------------


def test_a_capture_value_that_is_not_a_finite_number_within_2_64_is_refused_at_its_cell(tmp_path: Path) -> None:
    """`nan`, `inf`, `1e400` and `1e308` reached the arithmetic: ValueError and OverflowError
    tracebacks from import, `Infinity` in compare's JSON."""
    out = str(tmp_path / "x.toml")
    for cell in ("nan", "inf", "1e400", "1e308", "-1e20"):
        capture = _capture(tmp_path / "bad.csv", {"MBytes Read/sec": cell})
        err = _refused("import", "esxi", "--esxcli", *LISTINGS, "--esxtop", str(capture), "-o", out)
        assert f"{capture}: line 2, column 5 (" in err and "MBytes Read/sec): expected a number of at most 2^64" in err, err
        assert f"found '{cell}'" in err
    capture = _capture(tmp_path / "zone.csv", bias="1440")
    err = _refused("import", "esxi", "--esxcli", *LISTINGS, "--esxtop", str(capture), "-o", out)
    assert f"{capture}: line 1, column 1: time zone bias 1440 minutes" in err and "(nearest: 720)" in err


def test_compare_writes_no_number_that_is_not_finite(tmp_path: Path, run_folder: tuple[Path, Path]) -> None:
    """A measured rate of 5e-324 made the relative error infinite: `Infinity` in the JSON."""
    capture = _capture(tmp_path / "tiny.csv", {"Commands/sec": "5e-324"})
    out = tmp_path / "comparison.json"
    code, _, err = _cli("compare", str(run_folder[0]), "--esxtop", str(capture), "--json", str(out))
    assert code == 0, err

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} written")

    document = json.loads(out.read_text(encoding="utf-8"), parse_constant=refuse)
    iops = next(f for f in document["devices"] if f["figure"] == "IOPS")
    assert iops["measured"] == 5e-324 and iops["simulated"] > 0 and iops["error"] is None


# --- 3. What the capture cannot give ----------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "note", "written"),
    [
        ({c: "" for c in COUNTERS if "Driver" in c}, "no DAVG of naa.600601604670290026cca5f7836fe111 gives a service time", 'read_latency = "150us"'),
        ({c: "0" for c in COUNTERS if "Driver" in c}, "0.0000 ms, below the 1 µs an array takes at least", 'read_latency = "150us"'),
        ({"Reads/sec": "-5"}, "a mean below zero (Reads/sec -5), which no count or rate has: it runs the default workload", "--name=probe"),
        ({"Active Commands": ""}, "no value in any sample of Active Commands: it runs the default workload", "--name=probe"),
        ({"Reads/sec": "0", "Writes/sec": "0"}, "no reads or writes (other SCSI commands only): no read share", "--name=probe"),
    ],
    ids=["empty-davg", "zero-davg", "negative-reads", "empty-actv", "no-reads-or-writes"],
)
def test_a_figure_the_capture_cannot_give_is_said_not_written(tmp_path: Path, values: dict[str, str], note: str, written: str) -> None:
    """Empty DAVG cells wrote `read_latency = "nanus"`, a DAVG of 0 `"0.0us"`, a negative
    Reads/sec a negative read share; an empty Active Commands was a ValueError."""
    scenario, notes = _import(tmp_path, *LISTINGS, capture=_capture(tmp_path / "esxtop.csv", values))
    assert note in notes and NAA in notes, notes
    text = scenario.read_text(encoding="utf-8")
    assert written in text and "nan" not in text.lower().replace("nanus", "") and "0.0us" not in text
    engine.validate(scenario)


def test_a_rate_below_one_command_a_second_is_not_rounded_to_no_limit(tmp_path: Path) -> None:
    """0.3 IOPS was written `--rate_iops=0`, which fio and sanlab read as no limit."""
    light = {"Commands/sec": "0.3", "Reads/sec": "0.3", "Writes/sec": "0", "MBytes Read/sec": "0.001171875", "MBytes Written/sec": "0", "Active Commands": "0.1"}
    scenario, _ = _import(tmp_path, *LISTINGS, capture=_capture(tmp_path / "esxtop.csv", light))
    [vm] = tomllib.loads(scenario.read_text(encoding="utf-8"))["vm"]
    assert "--rate_iops=0.3 " in vm["job"][0]["cmdline"] and "--bs=4096" in vm["job"][0]["cmdline"]


def test_an_adapter_queue_below_one_command_is_said_not_written(tmp_path: Path) -> None:
    """An HBA's Adapter Q Depth of -3 was written `queue_depth = -3`, refused by the read-back."""
    capture = _capture(tmp_path / "esxtop.csv", extra=("\\\\esx1\\Physical Disk(vmhba2)\\Adapter Q Depth", "-3"))
    scenario, notes = _import(tmp_path, *LISTINGS, capture=capture)
    assert f"note: {capture}: Physical Disk(vmhba2) Adapter Q Depth averages -3: no queue depth, left out of the host's" in notes
    [host] = tomllib.loads(scenario.read_text(encoding="utf-8"))["host"]
    assert host["adapter"] == {"kind": "fc"}
    engine.validate(scenario)


# --- 4. Listing text in comments ----------------------------------------------------------------


def test_every_control_character_is_escaped_in_a_comment() -> None:
    for code in [*range(0x20), 0x7F]:
        comment = toml_comment(f"a{chr(code)}b")
        assert chr(code) not in comment and comment.startswith("a\\") and comment.endswith("b"), (code, comment)
        assert tomllib.loads(f"x = 1  # {comment}\ny = 2\n") == {"x": 1, "y": 2}, code
    assert toml_comment("\n\t\r\x1b") == "\\n\\t\\r\\u{1b}"
    assert toml_comment("é, naa.1:L1 {a=b}") == "é, naa.1:L1 {a=b}"


def test_a_line_break_in_a_listing_cell_stays_in_its_comment(tmp_path: Path) -> None:
    """A newline in a CSV listing's PSP config cell wrote an `[[event]]` table of its own."""
    cell = '{policy=rr,iops=1000,useANO=0}\n[[event]]\nkind = ""path_down""\npath = ""vmhba2:C0:T1""\nat = ""1s""\n#'
    listing = tmp_path / "nmp-device-list.csv"
    listing.write_text(
        "Device,DeviceDisplayName,IsUSB,PathSelectionPolicy,PathSelectionPolicyDeviceConfig,PathSelectionPolicyDeviceCustomConfig,"
        "StorageArrayType,StorageArrayTypeDeviceConfig,WorkingPaths,\n"
        f'{NAA},DGC,false,VMW_PSP_RR,"{cell}",,VMW_SATP_ALUA,"{{TPG_id=1,TPG_state=AO}}","vmhba2:C0:T1:L1,vmhba2:C0:T0:L1,",\n',
        encoding="utf-8",
    )
    scenario, _ = _import(tmp_path, str(listing), str(NMP_PATHS))
    text = scenario.read_text(encoding="utf-8")
    assert "event" not in tomllib.loads(text)
    [line] = [line for line in text.splitlines() if line.startswith("multipath")]
    assert line.endswith('# VMW_PSP_RR {policy=rr,iops=1000,useANO=0}\\n[[event]]\\nkind = "path_down"\\npath = "vmhba2:C0:T1"\\nat = "1s"\\n#, ' f"{listing}:7")


# --- 5. An output that is an input ------------------------------------------------------------


def test_an_output_that_is_an_input_is_refused_and_left_alone(tmp_path: Path, run_folder: tuple[Path, Path]) -> None:
    listings = [Path(shutil.copy(listing, tmp_path)) for listing in LISTINGS]
    capture = _capture(tmp_path / "esxtop.csv")
    os.link(listings[1], tmp_path / "hard-link.txt")
    before = {p: p.read_bytes() for p in [*listings, capture]}
    for out in (listings[1], capture, tmp_path / "hard-link.txt"):
        err = _refused("import", "esxi", "--esxcli", *map(str, listings), "--esxtop", str(capture), "-o", str(out))
        assert f"-o {out}: it is an input" in err
    run = _copy(run_folder[0], tmp_path)
    for out in (capture, run / "results.json"):
        err = _refused("compare", str(run), "--esxtop", str(capture), "--json", str(out))
        assert f"--json {out}: it is an input" in err
    assert {p: p.read_bytes() for p in before} == before


# --- 6. Damaged files of a compared run -------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (b'{"variant": "base", "measured": ', "not valid JSON"),
        (b"[" * 100_000, "nested more than 64 deep"),
        (b'{"variant": "base", "measured": {"x": {}}}', "capture: expected a string"),
        (b"\xff", "not UTF-8 text"),
        (b'{"capture": "c.csv", "variant": "base", "notes": [], "devices": [{"entity": "d", "figure": "IOPS", "measured": NaN, "simulated": 1, "error": null}], "links": [], "measured": {}}', "devices[0]: expected measured, simulated and error numbers"),
        (b'{"capture": "c.csv", "variant": "base", "notes": [], "devices": [], "links": [], "measured": {"d": {"t_s": [0, 1], "iops": [1], "davg_ms": [1]}}}', "measured.d: expected t_s, iops and davg_ms of one length"),
        (b'{"capture": "c.csv", "variant": "gone", "notes": [], "devices": [], "links": [], "measured": {}}', "variant 'gone' is not in the run (it has base)"),
    ],
    ids=["cut", "deep", "no-series", "not-utf8", "nan", "lengths", "other-variant"],
)
def test_a_damaged_comparison_file_is_one_line_naming_it(tmp_path: Path, run_folder: tuple[Path, Path], body: bytes, said: str) -> None:
    """`sanlab report` read esxtop-compare.json with json.loads: JSONDecodeError, RecursionError
    and KeyError tracebacks."""
    run = _copy(run_folder[0], tmp_path)
    (run / "esxtop-compare.json").write_bytes(body)
    err = _refused("report", str(run))
    assert err.startswith(f"error: {run / 'esxtop-compare.json'}: ") and said in err and "damaged" in err, err


def test_compare_checks_the_runs_figures_and_the_captures_paths(tmp_path: Path, run_folder: tuple[Path, Path]) -> None:
    """A results.json without a device's davg_ms (KeyError) or with a path's iops a string
    (TypeError), and a capture path with Active Commands but no Commands/sec (KeyError)."""
    run, capture = _copy(run_folder[0], tmp_path), run_folder[1]
    results = run / "results.json"
    original = results.read_text(encoding="utf-8")
    for damage, where in (
        (lambda v: v["devices"][0].pop("davg_ms"), "variants[0].devices[0].davg_ms: expected a number of at most 2^64, or null"),
        (lambda v: v["paths"][0].update(iops="many"), "variants[0].paths[0].iops: expected a number of at most 2^64;"),
    ):
        document = json.loads(original)
        damage(document["variants"][0])
        results.write_text(json.dumps(document), encoding="utf-8")
        err = _refused("compare", str(run), "--esxtop", str(capture))
        assert f"{results}: {where}" in err and "damaged" in err, err
    results.write_text(original, encoding="utf-8")
    paths = _capture(tmp_path / "paths.csv", extra=("\\\\esx1\\Physical Disk Path(vmhba2:C0:T1:L1)\\Active Commands", "1"))
    err = _refused("compare", str(run), "--esxtop", str(paths))
    assert f"{paths}: Physical Disk Path(vmhba2:C0:T1:L1) has no counter 'Commands/sec'; it has Active Commands" in err
    # What compare writes, the report reads back: the section is on the page again.
    assert _cli("compare", str(run), "--esxtop", str(capture))[0] == 0
    (run / "report.html").unlink()
    code, _, err = _cli("report", str(run))
    assert code == 0, err
    assert 'id="section-measured"' in (run / "report.html").read_text(encoding="utf-8")


# --- 7. Listings of two hosts -----------------------------------------------------------------

OTHER_HOST_CORE_PATHS = """fc.20000000c96eb647:10000000c96eb647-fc.50060160bea038b6:5006016d3ea038b6-naa.6000000000000000000000000000beef
   UID: fc.20000000c96eb647:10000000c96eb647-fc.50060160bea038b6:5006016d3ea038b6-naa.6000000000000000000000000000beef
   Runtime Name: vmhba2:C0:T1:L1
   Device: naa.6000000000000000000000000000beef
   Adapter: vmhba2
   State: dead
   Transport: fc
   Adapter Identifier: fc.20000000c96eb647:10000000c96eb647
   Target Identifier: fc.50060160bea038b6:5006016d3ea038b6
"""


def test_one_runtime_name_given_to_two_devices_is_refused_naming_both(tmp_path: Path) -> None:
    """The CLARiiON host's path list beside another host's core path list with its runtime name:
    merged into a path_down the host never had (and, with another target, a replicated pair)."""
    other = tmp_path / "core-path-list.txt"
    other.write_text(OTHER_HOST_CORE_PATHS, encoding="utf-8")
    err = _refused("import", "esxi", "--esxcli", *LISTINGS, str(other), "-o", str(tmp_path / "x.toml"))
    assert f"{NMP_PATHS}:1: path vmhba2:C0:T1:L1 leads to device {NAA}, but {other}:1 gives path vmhba2:C0:T1:L1 to device naa.6000000000000000000000000000beef" in err
    assert not (tmp_path / "x.toml").exists()


# --- 8. ALUA states ESXi prints ---------------------------------------------------------------


def test_transitioning_and_offline_group_states_are_imported(tmp_path: Path) -> None:
    """Both were refused as "not one ESXi prints"."""
    listed = NMP_PATHS.read_text(encoding="utf-8")
    transitioning = tmp_path / "transitioning.txt"
    transitioning.write_text(listed.replace("Group State: active unoptimized", "Group State: transitioning"), encoding="utf-8")
    scenario, _ = _import(tmp_path, str(NMP_DEVICES), str(transitioning))
    doc = tomllib.loads(scenario.read_text(encoding="utf-8"))
    assert [(p["name"], p.get("alua")) for p in doc["path"]] == [("vmhba2:C0:T1", "AO"), ("vmhba2:C0:T0", "transitioning")]
    assert "event" not in doc
    engine.validate(scenario)
    offline = tmp_path / "offline.txt"
    offline.write_text(listed.replace("Group State: active unoptimized", "Group State: offline"), encoding="utf-8")
    scenario, _ = _import(tmp_path, str(NMP_DEVICES), str(offline))
    text = scenario.read_text(encoding="utf-8")
    doc = tomllib.loads(text)
    assert [(p["name"], p.get("alua")) for p in doc["path"]] == [("vmhba2:C0:T1", "AO"), ("vmhba2:C0:T0", None)]
    assert doc["event"] == [{"kind": "path_down", "path": "vmhba2:C0:T0", "at": "0s"}]
    assert f"# offline when listed ({offline}:9)" in text
    engine.validate(scenario)
