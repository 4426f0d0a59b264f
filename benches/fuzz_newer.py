"""Fuzzing the newer commands in this process: `import esxi` (listings and esxtop captures),
`import linux` (`multipath -ll`, `nvme list-subsys`, sysfs values, `iostat -x`), `compare
--esxtop`'s reading, calibrate's measured points and fit-size checks, `lint` (fio job files,
vdbench parameter files, fio command lines), the command lines of the newer commands (advise's
options and objective among them) and `report`'s reading of a damaged run folder.

Each input is a file (or a command line) of the test data mutated as tests/python/test_fuzz.py
mutates them (a span replaced by a token that broke a parser once, cut, repeated; lines
swapped), handed to the command's own reader and what follows it up to the scenario or document
written (the engine is not run, too slow for a million inputs; `engine.validate` reads back one
scenario written in VALIDATE_EVERY). Every input must end in success or in one `UserError` (or
argparse's exit 2) with a one-line message, within MAX_SECONDS, writing nothing but its output
in its folder. Anything else is a finding: printed with its class (the exception and where it was
raised), the first few of each class saved under tests/data/fuzz_newer/ (a folder per input:
its files and `case.json`), which `tests/python/test_fuzz_newer.py` replays.

    .venv/bin/python benches/fuzz_newer.py --inputs 1000000 --seed 1
    .venv/bin/python benches/fuzz_newer.py --replay tests/data/fuzz_newer/CASE

It runs on one core (its affinity is set to one CPU). Input `i` of seed `s` is drawn from
`random.Random(f"{s}:{i}")`, so `--seed s --first i --inputs 1` repeats it.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import inspect
import io
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
import tomllib
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("RAYON_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
SAVED = DATA / "fuzz_newer"
MAX_SECONDS = 5.0
"""Longest one input may take (an alarm ends it): a reader's work on a file of kilobytes."""
VALIDATE_EVERY = 10
"""One scenario written in this many is read back by the engine (`engine.validate`)."""
SAVE_PER_CLASS = 3

TOKENS = [
    b"nan", b"inf", b"-1", b"0", b"1e400", b"1e308", b"18446744073709551616", b"9223372036854775808", b"\xff",
    b"\n", b"\r\n", b"\r", b"\x00", b"\x1b[31m", b"\x1b]0;t\x07", b"\x7f", b"null", b"[", b"]", b"{", b"}", b'"',
    b"'", b",", b";", b":", b"=", b"|", b"\\", b"/", b"..", b"%", b"$", b"!", b"#", b"*", b"(", b")", b"", b" ",
    b"\t", b"1ns", b"0s", b"-0", b"0x10", b"1_000", b"\xc2\xa0", b"\xe2\x80\xa8", b"\xef\xbb\xbf", b"9" * 40,
    b"[" * 2000, b"a" * 300, b"naa.600601604670290026cca5f7836fe111", b"vmhba1:C0:T0:L0", b"active", b"dead",
    b"standby", b"unavailable", b"transitioning", b"offline", b"VMW_PSP_RR", b"VMW_PSP_FIXED", b"VMW_SATP_ALUA",
    b"round-robin 0", b"service-time 0", b"queue-length 0", b"numa", b"round-robin", b"queue-depth", b"optimized",
    b"non-optimized", b"inaccessible", b"policy=", b"prio=", b"status=", b"failed", b"faulty", b"running",
    b"include ", b"include=", b"${X}", b"$x", b"rd=", b"wd=", b"sd=", b"--", b"-", b"=1", b"iodepth", b"bs=",
    b"4k", b"1m", b"100%", b"1e-300", b"true", b"false",
]  # fmt: skip


def mutate(rng: random.Random, data: bytes) -> bytes:
    """One to five edits: a span replaced by a token, cut, repeated, a line swapped or repeated,
    a byte flipped, a number changed."""
    for _ in range(rng.choices((1, 2, 3, 4, 5), (60, 20, 10, 5, 5))[0]):  # mostly one: deeper into the reader
        n = len(data)
        op = rng.random()
        pos = rng.randint(0, n)
        if op < 0.45:
            cut = rng.choice((0, 0, 1, 2, 4, 8, 16))
            data = data[:pos] + rng.choice(TOKENS) + data[pos + cut :]
        elif op < 0.55:
            data = data[:pos] + data[pos + rng.randint(1, 64) :]
        elif op < 0.62 and n:
            span = data[pos : pos + rng.randint(1, 32)]
            data = data[:pos] + span * rng.choice((2, 3, 100)) + data[pos:]
        elif op < 0.75:
            lines = data.split(b"\n")
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            if rng.random() < 0.5:
                lines[i], lines[j] = lines[j], lines[i]
            else:
                lines.insert(i, lines[j])
            data = b"\n".join(lines)
        elif op < 0.85 and n:
            at = min(pos, n - 1)
            data = data[:at] + bytes([rng.randrange(256)]) + data[at + 1 :]
        else:
            numbers = list(re.finditer(rb"\d+(\.\d+)?", data))
            if numbers:
                m = rng.choice(numbers)
                value = rng.choice((b"0", b"-1", b"1e400", b"nan", b"18446744073709551616", b"0.0001", b"65536", b"4294967296"))
                data = data[: m.start()] + value + data[m.end() :]
    return data


# --- the inputs -------------------------------------------------------------------------------


def _read(path: Path) -> bytes:
    return path.read_bytes()


ESXCLI = DATA / "esxi" / "esxcli"
LISTING_SETS = [
    ("nmp-device-list.esx40-clariion.txt", "nmp-path-list.esx40-clariion.txt"),
    ("nmp-device-list.esx40-clariion.txt", "nmp-path-list.esx40-clariion.derived.csv"),
    ("nmp-device-list.esx40-clariion.txt", "nmp-path-list.esx40-clariion.derived.keyvalue"),
    ("core-path-list.vnx-fc.txt",), ("core-path-list.vnx-fc.derived.csv",), ("core-path-list.vnx-fc.derived.keyvalue",),
    ("nmp-path-list.esx40-clariion.txt",),
]
"""Listings of one host each, which import as they are (a device list alone has no paths)."""
CLUSTER = DATA / "esxi" / "cluster"
NAA = "naa.600601604670290026cca5f7836fe111"
CAPTURE = ("\n".join([
    ",".join(['"(PDH-CSV 4.0) (UTC)(0)"', *(f'"\\\\esx1\\Physical Disk SCSI Device({NAA})\\{c}"' for c in (
        "Commands/sec", "Reads/sec", "Writes/sec", "MBytes Read/sec", "MBytes Written/sec", "Active Commands",
        "Queued Commands", "Average Driver MilliSec/Command", "Average Driver MilliSec/Read", "Average Driver MilliSec/Write")),
        '"\\\\esx1\\Physical Disk Path(vmhba1:C0:T0:L0)\\Commands/sec"']),
    *(f'"01/01/2026 00:00:{5 * k:02d}","1000","700","300","2.73","1.17","4","0","0.51","0.6","0.3","500"' for k in range(3)),
]) + "\n").encode()  # fmt: skip
CAPTURES = [CAPTURE, CAPTURE, *(_read(p) for p in sorted((DATA / "esxi" / "esxtop").glob("*.csv")))]
"""CAPTURE twice: it is the one the listings import with."""
LINUX = DATA / "linux"
MULTIPATH = [_read(p) for p in sorted((LINUX / "multipath").glob("*.txt"))]
NVME = [_read(p) for p in sorted((LINUX / "nvme").glob("*.txt")) + sorted((LINUX / "nvme").glob("*.json"))]
SYSFS = [_read(LINUX / "sysfs" / "constructed.ibm-ds8k.grep-H.txt")]
IOSTAT = [_read(p) for p in sorted((LINUX / "iostat").glob("*.txt")) if not p.name.startswith(("linux-raid", "sysstat.expected.iostat-no-x", "yeonghoey"))]
"""The captures that import on DS8K_MULTIPATH's topology (the others name other devices)."""
DS8K_MULTIPATH = LINUX / "multipath" / "linux-scsi.ibm-ds8k-create.txt"
POINTS = [
    b"# measured on the array\nvm[0].job[0].iodepth,label,weight,iops,lat_ms\n1,qd1,1,8000,0.125\n4,qd4,2,21000,0.19\n",
    b"vm[0].job[0].iodepth,vm[0].job[0].bs,iops,lat_ms,vm:vm:iops,vm:vm:lat_ms\n1,4KiB,8000,0.125,8000,0.125\n8,8KiB,30000,0.3,30000,0.3\n",
]
FREE = ["array[0].media.read_latency=50us..500us", "array[0].media.servers=1..16:int", "array[0].media.read_latency=10us..10ms:log"]
FIO = sorted(p for p in (DATA / "fio").glob("*.fio")) + sorted((DATA / "lint").glob("*.fio"))
VDBENCH = sorted(p for p in (DATA / "vdbench").glob("*.vdb")) + sorted((DATA / "lint").glob("*.vdb"))
CMDLINES = [
    b"fio --name=t --rw=randread --iodepth=32 --bs=4k --runtime=10 --time_based",
    b"fio --name=a --rw=randrw --rwmixread=70 --bs=8k --iodepth=16 --numjobs=4 --ioengine=libaio --direct=1 --name=b --rw=write --bs=1m",
    *(_read(p) for p in sorted((DATA / "fio" / "cmdlines").glob("*.sh"))),
]
WORDS = [
    "import", "esxi", "linux", "compare", "calibrate", "lint", "advise", "report", "--esxcli", "--esxtop", "--multipath",
    "--nvme", "--sysfs", "--iostat", "--workload", "--host", "--duration", "-o", "--output", "--json", "--variant",
    "--measured", "--free", "--popsize", "--generations", "--workers", "--scheduler", "--seed", "--seeds", "--max-runs",
    "--objective", "--keep", "--set", "--out", "--cmdline", "--scenario", "--rd", "--var", "--strict", "--jobs", "--bogus",
    "-1", "0", "1", "1e9", "nan", "9223372036854775807", "9223372036854775808", "18446744073709551616", "100000000", "x",
    "x=1", "\x1b[2J", "a[/]", "--", "-", "p99:vm", "worst-case", "iops", "30s", "0s", "-5s", "1e400s", "\n",
]  # fmt: skip


# --- running one input ------------------------------------------------------------------------


class Timeout(Exception):
    """An input ran past MAX_SECONDS."""


class Finding(Exception):
    """An input that ended otherwise than in success or one line of UserError."""


@dataclass
class Case:
    """One input: its files (name -> bytes), written into the input's folder, and its parameters."""

    family: str
    files: dict[str, bytes] = field(default_factory=dict)
    params: dict[str, object] = field(default_factory=dict)
    outputs: tuple[str, ...] = ()


def _one_line(message: str) -> bool:
    """Whether `message` is one line as the command prints it (`error: ` and the message, its
    control characters escaped by `shown_name`: a line break from the input shows as `\\n`)."""
    from sanlab.formatting import shown_name

    shown = shown_name(message.strip())
    return bool(shown) and not any(c in shown for c in LINE_BREAKS)


LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85"
"""What ends a line on a terminal or in a log (U+2028 and U+2029 end one for `str.splitlines`
only: a terminal shows them, as it shows any character that is not a control character)."""


# Each family: build(rng) -> Case; check(case, folder) runs it (raises UserError or returns).
FAMILIES: dict[str, tuple[float, Callable[[random.Random], Case], Callable[[Case, Path, int], None]]] = {}


def family(name: str, weight: float, build: Callable[[random.Random], Case]) -> Callable[[Callable[[Case, Path, int], None]], Callable[[Case, Path, int], None]]:
    def register(check: Callable[[Case, Path, int], None]) -> Callable[[Case, Path, int], None]:
        FAMILIES[name] = (weight, build, check)
        return check

    return register


def _validate(toml_text: str, folder: Path, index: int) -> None:
    """What sanlab writes is what it reads: TOML always, the engine's reading one in VALIDATE_EVERY."""
    from sanlab import engine

    tomllib.loads(toml_text)
    if index % VALIDATE_EVERY == 0:
        written = folder / "out.toml"
        written.write_text(toml_text, encoding="utf-8")
        try:
            engine.validate(written)
        except engine.ScenarioError as exc:
            raise Finding(f"an imported scenario does not validate: {exc}") from None
        finally:
            written.unlink(missing_ok=True)


def _build_esxcli(rng: random.Random) -> Case:
    if rng.random() < 0.25:  # a cluster of three hosts, each with its listings and capture
        files = {f"{host}-{p.name}": p.read_bytes() for host in ("esx1", "esx2", "esx3") for p in sorted((CLUSTER / host).iterdir())}
        files |= {f"{host}.csv": (CLUSTER / f"{host}.csv").read_bytes() for host in ("esx1", "esx2", "esx3")}
        target = rng.choice(sorted(files))
        files[target] = mutate(rng, files[target])
        return Case("esxcli", files, {"cluster": True})
    files = {f"{n}-{name}": _read(ESXCLI / name) for n, name in enumerate(rng.choice(LISTING_SETS))}
    target = rng.choice(sorted(files))
    files[target] = mutate(rng, files[target])
    capture = "clariion" in target and rng.random() < 0.3
    if capture:
        files["esxtop.csv"] = CAPTURE
    return Case("esxcli", files, {"capture": capture})


@family("esxcli", 3, _build_esxcli)
def _check_esxcli(case: Case, folder: Path, index: int) -> None:
    from sanlab.hostimport.esxcli import read_listings
    from sanlab.hostimport.esxtop import read_capture
    from sanlab.hostimport.scenario import build_cluster

    if case.params.get("cluster"):
        hosts = [
            (host, read_listings([folder / n for n in sorted(case.files) if n.startswith(f"{host}-")]), read_capture(folder / f"{host}.csv"))
            for host in ("esx1", "esx2", "esx3")
        ]
        imported = build_cluster(hosts, duration="60s")
    else:
        listings = read_listings([folder / name for name in sorted(case.files) if name != "esxtop.csv"])
        capture = read_capture(folder / "esxtop.csv") if case.params["capture"] else None
        imported = build_cluster([("esx1", listings, capture)], duration="60s")
    _validate(imported.toml, folder, index)


def _build_esxtop(rng: random.Random) -> Case:
    original = rng.randrange(len(CAPTURES))
    data = mutate(rng, CAPTURES[original])
    gz = rng.random() < 0.25
    # CAPTURE is the CLARiiON listings' host: imported with them, its figures reach the scenario.
    return Case("esxtop", {"esxtop.csv.gz" if gz else "esxtop.csv": gzip.compress(data, 1) if gz else data}, {"import": original <= 1 and rng.random() < 0.5})


@family("esxtop", 3, _build_esxtop)
def _check_esxtop(case: Case, folder: Path, index: int) -> None:
    from sanlab.hostimport.esxcli import read_listings
    from sanlab.hostimport.esxtop import read_capture
    from sanlab.hostimport.scenario import build_cluster

    (name,) = case.files
    capture = read_capture(folder / name)
    for group, instance in list(capture.series)[:4]:
        capture.instances(group)
    if case.params["import"]:
        listings = read_listings([ESXCLI / "nmp-device-list.esx40-clariion.txt", ESXCLI / "nmp-path-list.esx40-clariion.txt"])
        imported = build_cluster([(capture.host, listings, capture)], duration="60s")
        _validate(imported.toml, folder, index)


def _linux_case(name: str, corpus: list[bytes]) -> Callable[[random.Random], Case]:
    def build(rng: random.Random) -> Case:
        return Case(name, {f"{name}.txt": mutate(rng, rng.choice(corpus))})

    return build


def _import_linux(folder: Path, index: int, multipath: Path | None = None, nvme: Path | None = None, sysfs: Path | None = None, iostat: Path | None = None) -> None:
    """`import linux`'s reading and writing, up to the scenario's text: `import_linux` where the
    tree has it (hostimport/linux/scenario.py), else the route `commands/import_.py` took."""
    from sanlab.hostimport.scenario import DEFAULT_WORKLOAD

    try:
        from sanlab.hostimport.linux.scenario import import_linux
    except ImportError:
        import_linux = None
    if import_linux is not None:
        imported = import_linux(multipath, nvme, sysfs, iostat, host="linux1", workload=DEFAULT_WORKLOAD, duration="60s")
        _validate(imported.toml, folder, index)
        return
    from sanlab.hostimport.linux.multipath import read_multipath
    from sanlab.hostimport.linux.nvme import read_nvme
    from sanlab.hostimport.linux.scenario import build_scenario
    from sanlab.hostimport.linux.topology import from_multipath, from_nvme, merged

    scsi = subsystems = None
    if multipath is not None:
        scsi = from_multipath(read_multipath(multipath)[0])
    if nvme is not None:
        subsystems = from_nvme(read_nvme(nvme), first_array=len(scsi.arrays) + 1 if scsi else 1)
    top = merged(scsi, subsystems)
    keys = volume_loads = media = None
    if sysfs is not None:
        from sanlab.hostimport.linux.sysfs import read_sysfs, settings

        keys, _ = settings(read_sysfs(sysfs)[0], top, {v.name: v.active_disks for v in top.volumes})
    if iostat is not None:
        from sanlab.hostimport.linux.iostat import read_iostat
        from sanlab.hostimport.linux.load import loads

        volume_loads, media, _ = loads(top, read_iostat(iostat))
    imported = build_scenario(top, host="linux1", workload=DEFAULT_WORKLOAD, duration="60s", keys=keys, loads=volume_loads, media=media)
    _validate(imported.toml, folder, index)


@family("multipath", 3, _linux_case("multipath", MULTIPATH))
def _check_multipath(case: Case, folder: Path, index: int) -> None:
    _import_linux(folder, index, multipath=folder / "multipath.txt")


@family("nvme", 2, _linux_case("nvme", NVME))
def _check_nvme(case: Case, folder: Path, index: int) -> None:
    _import_linux(folder, index, nvme=folder / "nvme.txt")


@family("sysfs", 1.5, _linux_case("sysfs", SYSFS))
def _check_sysfs(case: Case, folder: Path, index: int) -> None:
    _import_linux(folder, index, multipath=DS8K_MULTIPATH, sysfs=folder / "sysfs.txt")


@family("iostat", 2, _linux_case("iostat", IOSTAT))
def _check_iostat(case: Case, folder: Path, index: int) -> None:
    _import_linux(folder, index, multipath=DS8K_MULTIPATH, iostat=folder / "iostat.txt")


def _build_points(rng: random.Random) -> Case:
    data = mutate(rng, rng.choice(POINTS))
    gz = rng.random() < 0.1
    free = [mutate(rng, f.encode()).decode("utf-8", "replace") if rng.random() < 0.3 else f for f in rng.sample(FREE, rng.randint(1, 2))]
    sizes = (-1, 0, 1, 2, 15, 100, 10**6, 10**8, 2**63) if rng.random() < 0.2 else (1, 2, 5, 15, 30)
    return Case("points", {"points.csv": gzip.compress(data) if gz else data},
                {"free": free, "generations": rng.choice(sizes), "popsize": rng.choice(sizes), "seeds": rng.choice((0, 1, 3, 10, 10**6))})  # fmt: skip


@family("points", 3, _build_points)
def _check_points(case: Case, folder: Path, index: int) -> None:
    from sanlab.calibration.inputs import check, parse_free, read_points
    from sanlab.commands.calibrate import _bounded

    points = read_points(folder / "points.csv")
    free = [parse_free(text) for text in case.params["free"]]  # type: ignore[union-attr]
    if "seeds" in inspect.signature(_bounded).parameters:  # with the ranges' seeds (--range-seeds)
        _bounded(len(free), points, case.params["generations"], case.params["popsize"], case.params.get("seeds", 3))  # type: ignore[arg-type]
    else:
        _bounded(len(free), len(points), case.params["generations"], case.params["popsize"])  # type: ignore[arg-type]
    if index % VALIDATE_EVERY == 0:
        check(str(DATA / "calibrate" / "flash4.toml"), free, points, (), None)


def _build_lint(kind: str) -> Callable[[random.Random], Case]:
    def build(rng: random.Random) -> Case:
        if kind == "cmdline":
            return Case("lint-cmdline", {}, {"cmdline": mutate(rng, rng.choice(CMDLINES)).decode("utf-8", "replace")})
        source = rng.choice(FIO if kind == "fio" else VDBENCH)
        return Case(f"lint-{kind}", {source.name: mutate(rng, source.read_bytes())}, {"rd": rng.choice((None, None, "rd1", "*"))})

    return build


def _check_lint(case: Case, folder: Path, index: int) -> None:
    from sanlab.lint import READING_SCENARIO, lint
    from sanlab.lint.source import read_benchmark

    names = list(case.files)
    rd = case.params.get("rd") if case.family == "lint-vdbench" else None
    benchmark = read_benchmark(str(folder / names[0]) if names else None, case.params.get("cmdline"), rd)  # type: ignore[arg-type]
    benchmark.run_lines()
    for option in ("iodepth", "bs", "rw", "xfersize", "threads"):
        benchmark.line_of(option)
        with_option = benchmark.with_option(option, "8")
        assert isinstance(with_option, str)
    tomllib.loads(READING_SCENARIO + f"job = [{benchmark.job_table()}]\n")
    if index % VALIDATE_EVERY == 0:
        lint(benchmark)


for _kind in ("fio", "vdbench", "cmdline"):
    family(f"lint-{_kind}", 2 if _kind != "cmdline" else 1.5, _build_lint(_kind))(_check_lint)


_PARSER = None


def _parser() -> argparse.ArgumentParser:
    global _PARSER
    if _PARSER is None:
        from sanlab.cli import build_parser

        _PARSER = build_parser(["import", "compare", "calibrate", "lint", "advise", "report"])
    return _PARSER


def _build_command_line(rng: random.Random) -> Case:
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 8))]
    if rng.random() < 0.7:
        words.insert(0, rng.choice(("advise", "calibrate", "lint", "import", "compare")))
    objective = rng.choice(("iops", "worst-case", "p99:vm", "p99:", "p99:nobody", "p99", "P99:vm", "iops\n", "p99:\x1b[2J", "", "p99:vm:vm"))
    return Case("command-line", {}, {"words": words, "objective": objective})


@family("command-line", 2, _build_command_line)
def _check_command_line(case: Case, folder: Path, index: int) -> None:
    """The parser of the newer commands (every option's type and bound), then advise's objective."""
    from sanlab.advise.objective import parse_objective

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            _parser().parse_args(case.params["words"])  # type: ignore[arg-type]
    except SystemExit as exit_:
        if exit_.code not in (0, 2) or (exit_.code == 2 and not (_one_line(err.getvalue()) and err.getvalue().startswith("error: "))):
            raise Finding(f"argparse exit {exit_.code}: {err.getvalue()!r}") from None
    parse_objective(case.params["objective"], ["vm", "db"], index % 2 == 0, "fuzz.toml (variant base)")  # type: ignore[arg-type]


_RUN: dict[str, Path] = {}


def _prepared_run() -> Path:
    """A run folder of the CLARiiON host imported with CAPTURE, run for 1 s, once."""
    if "run" not in _RUN:
        from sanlab import cli

        folder = Path(tempfile.mkdtemp(prefix="sanlab-fuzz-run-"))
        (folder / "esxtop.csv").write_bytes(CAPTURE)
        listings = [str(ESXCLI / "nmp-device-list.esx40-clariion.txt"), str(ESXCLI / "nmp-path-list.esx40-clariion.txt")]
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            assert cli.main(["import", "esxi", "--esxcli", *listings, "--esxtop", str(folder / "esxtop.csv"), "-o", str(folder / "host.toml")]) == 0
            assert cli.main(["run", str(folder / "host.toml"), "--duration", "1s", "--out", str(folder / "run"), "--quiet"]) == 0
            assert cli.main(["compare", str(folder / "run"), "--esxtop", str(folder / "esxtop.csv")]) == 0
        _RUN["run"] = folder / "run"
    return _RUN["run"]


RUN_FILES = ("manifest.json", "results.json", "timeseries.parquet", "esxtop-compare.json")


def _build_run_folder(name: str, targets: tuple[str, ...]) -> Callable[[random.Random], Case]:
    def build(rng: random.Random) -> Case:
        run = _prepared_run()
        target = rng.choice(targets)
        if target == "esxtop.csv":
            return Case(name, {"esxtop.csv": mutate(rng, CAPTURE)}, {"target": target}, ("run", "compare.json"))
        return Case(name, {target: mutate(rng, (run / target).read_bytes())}, {"target": target}, ("run", "compare.json"))

    return build


def _run_copy(case: Case, folder: Path) -> Path:
    """The prepared run folder with the case's damaged file in place of its own."""
    run = _prepared_run()
    copy = folder / "run"
    copy.mkdir()
    for name in RUN_FILES:
        shutil.copyfile(folder / name if name in case.files else run / name, copy / name)
    return copy


@family("compare", 1, _build_run_folder("compare", ("esxtop.csv", "results.json")))
def _check_compare(case: Case, folder: Path, index: int) -> None:
    from sanlab.export.runfolder import read_run_folder
    from sanlab.hostimport.compare import compare, read_comparison
    from sanlab.hostimport.esxtop import read_capture

    run = _run_copy(case, folder)
    document, _ = read_run_folder(run)
    capture = read_capture(folder / "esxtop.csv" if "esxtop.csv" in case.files else _prepared_run().parent / "esxtop.csv")
    variant = document["variants"][0]
    comparison = compare(capture, variant, run / "results.json", 0)
    text = json.dumps(comparison.document(capture, variant["name"]), allow_nan=False) + "\n"
    out = folder / "compare.json"
    out.write_text(text, encoding="utf-8")
    read_comparison(out)
    out.unlink()
    shutil.rmtree(run)


@family("report", 1, _build_run_folder("report", RUN_FILES))
def _check_report(case: Case, folder: Path, index: int) -> None:
    from sanlab.export.runfolder import read_run_folder
    from sanlab.hostimport.compare import measured_sections

    run = _run_copy(case, folder)
    document, _ = read_run_folder(run)
    if index % 4 == 0:
        measured_sections(run, document)
    shutil.rmtree(run)


# --- the loop ---------------------------------------------------------------------------------


def _alarm(_signum: int, _frame: object) -> None:
    raise Timeout(f"more than {MAX_SECONDS:g} s")


def classify(exc: BaseException) -> str:
    """A finding's class: its exception type and the innermost frame in sanlab."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/sanlab/" in f.filename]
    where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
    return f"{type(exc).__name__} at {where}"


ENVIRONMENT: Counter[str] = Counter()
"""Inputs that met an ImportError: sanlab's tree changing under the run, counted, not findings."""
ACCEPTED: Counter[str] = Counter()
"""Inputs of each family read without an error (the others were refused in one line, or found)."""


def run_case(case: Case, folder: Path, index: int) -> tuple[str, str] | None:
    """Runs `case` in `folder`; None when it ended well, else (class, message)."""
    from sanlab.errors import UserError

    for name, data in case.files.items():
        (folder / name).write_bytes(data)
    check = FAMILIES[case.family][2]
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, MAX_SECONDS)
    result: tuple[str, str] | None = None
    try:
        check(case, folder, index)
        ACCEPTED[case.family] += 1
    except UserError as exc:
        if not _one_line(str(exc)):
            result = (f"a message of several lines from {classify(exc)}", str(exc))
    except Finding as exc:
        result = (f"finding: {str(exc)[:60]}", str(exc))
    except Timeout as exc:
        result = ("a hang", str(exc))
    except ImportError as exc:  # the tree changed under the run (another change half made): not the input's
        ENVIRONMENT[f"{type(exc).__name__}: {exc}"] += 1
    except RecursionError as exc:
        result = (classify(exc), "RecursionError")
    except Exception as exc:  # noqa: BLE001 (any other exception is what this looks for)
        result = (classify(exc), f"{type(exc).__name__}: {exc}"[:2000])
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    left = sorted(set(os.listdir(folder)) - set(case.files) - set(case.outputs))
    if left and result is None:
        result = ("a file written outside the output", ", ".join(left))
    for name in os.listdir(folder):
        path = folder / name
        shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    return result


def save(case: Case, seed: int, index: int, kind: str, message: str) -> Path:
    digest = hashlib.sha256(json.dumps([case.family, sorted(case.files.items(), key=str), case.params], default=repr).encode()).hexdigest()[:12]
    folder = SAVED / f"{case.family}-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in case.files.items():
        (folder / name).write_bytes(data)
    meta = {"family": case.family, "params": case.params, "outputs": list(case.outputs), "seed": seed, "index": index, "class": kind, "message": message[:500]}
    (folder / "case.json").write_text(json.dumps(meta, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")
    return folder


def load(folder: Path) -> tuple[Case, int]:
    meta = json.loads((folder / "case.json").read_text(encoding="utf-8"))
    files = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != "case.json"}
    return Case(meta["family"], files, meta["params"], tuple(meta["outputs"])), int(meta["index"])


def draw(seed: int, index: int, names: list[str], weights: list[float]) -> Case:
    rng = random.Random(f"{seed}:{index}")
    return FAMILIES[rng.choices(names, weights)[0]][1](rng)


def fuzz(seed: int, first: int, count: int, only: list[str] | None, report_every: float) -> int:
    names = [name for name in FAMILIES if not only or name in only]
    weights = [FAMILIES[name][0] for name in names]
    work = Path(tempfile.mkdtemp(prefix="sanlab-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
    os.chdir(work)  # a relative write lands here, where it is seen
    folder = work / "input"
    folder.mkdir()
    per_family: Counter[str] = Counter()
    failed_family: Counter[str] = Counter()
    classes: Counter[str] = Counter()
    started = last = time.monotonic()
    try:
        for index in range(first, first + count):
            case = draw(seed, index, names, weights)
            per_family[case.family] += 1
            outcome = run_case(case, folder, index)
            if outcome is not None:
                kind, message = outcome
                kind = f"{case.family}: {kind}"
                classes[kind] += 1
                failed_family[case.family] += 1
                if classes[kind] <= SAVE_PER_CLASS:
                    saved = save(case, seed, index, kind, message)
                    print(f"FINDING {kind} (input {index}): {message[:300]!r} -> {saved.relative_to(REPO)}", flush=True)
            now = time.monotonic()
            if now - last >= report_every:
                last = now
                done = index - first + 1
                print(f"[{seed}] {done:,} inputs in {now - started:,.0f} s ({done / (now - started):,.0f}/s); findings {sum(classes.values())} in {len(classes)} classes", flush=True)
    finally:
        os.chdir(REPO)
        shutil.rmtree(work, ignore_errors=True)
        if "run" in _RUN:  # the prepared run folder's own
            shutil.rmtree(_RUN.pop("run").parent, ignore_errors=True)
    elapsed = time.monotonic() - started
    summary = {"seed": seed, "first": first, "inputs": sum(per_family.values()), "seconds": round(elapsed, 1),
               "per_family": dict(sorted(per_family.items())), "accepted_per_family": dict(sorted(ACCEPTED.items())),
               "findings": dict(classes), "failed_per_family": dict(failed_family), "environment": dict(ENVIRONMENT)}  # fmt: skip
    print("SUMMARY " + json.dumps(summary), flush=True)
    return 1 if classes else 0


def replay(folders: list[Path]) -> int:
    work = Path(tempfile.mkdtemp(prefix="sanlab-fuzz-replay-"))
    failed = 0
    try:
        for saved in folders:
            case, index = load(saved)
            folder = work / "input"
            folder.mkdir()
            outcome = run_case(case, folder, index)
            folder.rmdir()
            print(f"{saved.name}: {'ok' if outcome is None else outcome}")
            failed += outcome is not None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--first", type=int, default=0, help="the first input's index")
    parser.add_argument("--family", action="append", help="only these families (repeatable): " + ", ".join(FAMILIES))
    parser.add_argument("--every", type=float, default=60.0, help="seconds between progress lines")
    parser.add_argument("--cpu", type=int, help="the CPU to run on (default: the last this process may use)")
    parser.add_argument("--replay", nargs="+", type=Path, metavar="CASE", help="replay saved inputs instead")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        cpus = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {args.cpu if args.cpu is not None else cpus[-1]})
    if args.replay:
        return replay(args.replay)
    return fuzz(args.seed, args.first, args.inputs, args.family, args.every)


if __name__ == "__main__":
    sys.exit(main())
