"""Fuzzing the CLI with Hypothesis: mutated scenarios (`sanlab validate`), damaged run folders
(`sanlab report`: huge numbers, deep nesting, control characters among the edits) and run folders
with a symbolic link planted at any output's name give exit 0, or exit 2 with one `error:` line;
never a traceback, and never a write through the link.

`FUZZ_EXAMPLES` sets the inputs per test (25 by default; `make fuzz` raises it)."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sanlab import cli as sanlab_cli

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "scenarios" / "examples").glob("*.toml"))
TOKENS = [
    b"nan", b"inf", b"-1", b"1e400", b"18446744073709551616", b"\xff", b"\n", b"null", b"[", b"{", b'"', b"", b"1ns",
    b"9" * 401, b"[" * 5000, b"\x1b]0;title\x07", b"\x1b[31m",
]  # fmt: skip
FUZZ = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

edits = st.lists(
    st.tuples(st.floats(0, 1), st.integers(0, 12), st.sampled_from(TOKENS)), min_size=1, max_size=5
)


def _mutate(data: bytes, changes: list[tuple[float, int, bytes]]) -> bytes:
    for at, cut, token in changes:
        pos = int(at * len(data))
        data = data[:pos] + token + data[pos + cut :]
    return data


def _cli(*args: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = sanlab_cli.main(list(args))
    return code, err.getvalue()


def _assert_clean(code: int, err: str) -> None:
    assert code in (0, 2), err
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("error: "), err


@FUZZ
@given(example=st.sampled_from(EXAMPLES), changes=edits)
def test_mutated_scenarios_validate_or_fail_in_one_line(example: Path, changes: list[tuple[float, int, bytes]]) -> None:
    # Beside the original, so the job files and traces it names resolve.
    mutated = example.with_name(f".fuzz-{os.getpid()}-{example.name}")
    try:
        mutated.write_bytes(_mutate(example.read_bytes(), changes))
        _assert_clean(*_cli("validate", str(mutated)))
    finally:
        mutated.unlink(missing_ok=True)


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fuzz") / "run"
    assert _cli("run", str(REPO / "scenarios/examples/ioping.toml"), "--duration", "2s", "--out", str(out), "--quiet")[0] == 0
    return out


@FUZZ
@given(file=st.sampled_from(["manifest.json", "results.json", "timeseries.parquet"]), changes=edits)
def test_damaged_run_folders_report_or_fail_in_one_line(
    run_folder: Path, tmp_path: Path, file: str, changes: list[tuple[float, int, bytes]]
) -> None:
    damaged = tmp_path / f"damaged-{abs(hash((file, tuple(changes))))}"
    shutil.copytree(run_folder, damaged)
    (damaged / file).write_bytes(_mutate((damaged / file).read_bytes(), changes))
    _assert_clean(*_cli("report", str(damaged)))
    shutil.rmtree(damaged)


OUTPUTS = ["report.html", "results.json", "manifest.json", "summary.parquet", "timeseries.parquet"]


@FUZZ
@given(name=st.sampled_from(OUTPUTS))
def test_a_link_planted_in_a_run_folder_is_never_written_through(run_folder: Path, tmp_path: Path, name: str) -> None:
    planted = tmp_path / f"planted-{name}"
    shutil.copytree(run_folder, planted)
    victim = tmp_path / f"victim-{name}"
    victim.write_text("the user's file\n", encoding="utf-8")
    (planted / name).unlink(missing_ok=True)
    (planted / name).symlink_to(victim)
    _assert_clean(*_cli("report", str(planted)))
    assert victim.read_text(encoding="utf-8") == "the user's file\n", f"{name}: written through the link"
    shutil.rmtree(planted)


WORDS = [
    "run", "sweep", "validate", "report", "kinds", "calibrate", "--seed", "--seeds", "--duration", "--set", "--variant",
    "--bogus", "--quiet", "--verbose", "-1", "0", "9223372036854775808", "18446744073709551616", "100000000", "x", "\x1b[2J",
    "advise", "lint", "import", "esxi", "compare", "--jobs", "--workers", "--scheduler", "--max-runs", "--popsize",
    "--generations", "--measured", "--free", "-o",
]  # fmt: skip


@FUZZ
@given(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))
def test_command_lines_of_stray_words_answer_in_one_line(words: list[str]) -> None:
    """Argument errors (seeds past their limit, unknown options, missing values, escape
    sequences): exit 0 or 2 with one `error:` line, never argparse's usage block or a traceback.
    No scenario path is among the words, so nothing long runs."""
    code, err = _cli(*words)
    _assert_clean(code, err)
    assert "\x1b" not in err, err


POINTS = b"# measured on the array\nvm[0].job[0].iodepth,label,weight,iops,lat_ms\n1,qd1,1,8000,0.125\n4,qd4,2,21000,0.19\n"


@FUZZ
@given(changes=edits, gzipped=st.booleans())
def test_mutated_measured_points_are_read_or_refused_in_one_error(tmp_path: Path, changes: list[tuple[float, int, bytes]], gzipped: bool) -> None:
    """calibrate's points (huge numbers, control characters, cut lines, a gzipped file read as
    text): points, or one UserError; never another exception."""
    import gzip

    from sanlab.calibration.inputs import read_points
    from sanlab.errors import UserError

    path = tmp_path / "points.csv"
    data = _mutate(POINTS, changes)
    path.write_bytes(gzip.compress(data) if gzipped else data)
    try:
        points = read_points(path)
    except UserError as exc:
        assert "\n" not in str(exc).strip(), str(exc)
    else:
        assert points and all(point.figures for point in points)


ESXCLI = REPO / "tests" / "data" / "esxi" / "esxcli"
NAA = "naa.600601604670290026cca5f7836fe111"
CAPTURE = "\n".join(
    [
        ",".join(['"(PDH-CSV 4.0) (UTC)(0)"', *(f'"\\\\esx1\\Physical Disk SCSI Device({NAA})\\{c}"' for c in (
            "Commands/sec", "Reads/sec", "Writes/sec", "MBytes Read/sec", "MBytes Written/sec", "Active Commands",
            "Queued Commands", "Average Driver MilliSec/Command", "Average Driver MilliSec/Read", "Average Driver MilliSec/Write"))]),
        *(f'"01/01/2026 00:00:{5 * k:02d}","1000","700","300","2.73","1.17","4","0","0.51","0.6","0.3"' for k in range(3)),
    ]
) + "\n"  # fmt: skip
"""A capture of the CLARiiON listings' one device, so that a mutated one reaches the load's figures."""


@FUZZ
@given(target=st.sampled_from(["nmp-device-list.txt", "nmp-path-list.txt", "esxtop.csv"]), changes=edits)
def test_mutated_listings_and_captures_import_or_fail_in_one_line(tmp_path: Path, target: str, changes: list[tuple[float, int, bytes]]) -> None:
    """`sanlab import esxi` of a host's listings and capture, one of them mutated (numbers, line
    breaks, brackets, bytes that are not UTF-8): a scenario, or one line. A scenario written
    was read back by the engine before it was."""
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    files = {
        "nmp-device-list.txt": (ESXCLI / "nmp-device-list.esx40-clariion.txt").read_bytes(),
        "nmp-path-list.txt": (ESXCLI / "nmp-path-list.esx40-clariion.txt").read_bytes(),
        "esxtop.csv": CAPTURE.encode(),
    }
    files[target] = _mutate(files[target], changes)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    listings = [str(folder / "nmp-device-list.txt"), str(folder / "nmp-path-list.txt")]
    code, err = _cli("import", "esxi", "--esxcli", *listings, "--esxtop", str(folder / "esxtop.csv"), "-o", str(folder / "host.toml"))
    _assert_clean(code, err)
    assert (folder / "host.toml").exists() == (code == 0)
    shutil.rmtree(folder)
