"""The reader of the files users hand sanlab: regular files only, bounded in size, in decompression,
in line length and in cells, each refusal one line naming the file."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest

from sanlab import input_files
from sanlab.export.files import OutputIsInputError, refuse_inputs
from sanlab.input_files import InputFileError, csv_rows, open_stream, read_text, regular_file


def test_a_fifo_a_device_and_a_folder_are_refused_before_opening(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero"), tmp_path):
        with pytest.raises(InputFileError, match="not a regular file"):
            read_text(path, "a listing")
    with pytest.raises(InputFileError, match="no such file: expected a listing"):
        regular_file(tmp_path / "missing", "a listing")


def test_a_file_over_the_limit_is_refused_with_its_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(input_files, "MAX_TEXT_BYTES", 10)
    big = tmp_path / "big.txt"
    big.write_text("x" * 11)
    with pytest.raises(InputFileError, match="11 bytes, above the limit of 10 bytes for a job file"):
        input_files.read_bytes(big, "a job file", input_files.MAX_TEXT_BYTES)


def test_text_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_bytes(b"ok\n\xff\n")
    with pytest.raises(InputFileError, match=r"a.txt:2: not utf-8 text"):
        read_text(path, "a listing")


def test_a_gzip_bomb_is_refused_by_its_ratio(tmp_path: Path) -> None:
    bomb = tmp_path / "capture.csv.gz"
    with gzip.open(bomb, "wb") as file:
        for _ in range(40):
            file.write(b"," * (1 << 20))  # 40 MiB of commas compress about 1,000 times
    with open_stream(bomb, "a capture") as stream, pytest.raises(InputFileError, match="gzip bomb"):
        while stream.read(1 << 20):
            pass


def test_a_gzipped_file_reads_back_as_written(tmp_path: Path) -> None:
    path = tmp_path / "points.csv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as file:
        file.write("a,b\n1,2\n")
    with open_stream(path, "points") as stream:
        assert list(csv_rows(path, stream)) == [(1, ["a", "b"]), (2, ["1", "2"])]


def test_a_row_of_too_many_cells_is_refused_before_it_is_split(tmp_path: Path) -> None:
    path = tmp_path / "wide.csv"
    path.write_text("a,b\n" + "," * 100 + "\n")
    with open_stream(path, "a capture") as stream, pytest.raises(InputFileError, match=r"wide.csv:2: more than 50 cells"):
        list(csv_rows(path, stream, max_cells=50))


def test_an_output_that_is_an_input_is_refused_by_identity(tmp_path: Path) -> None:
    given = tmp_path / "scenario.toml"
    given.write_text("x")
    os.link(given, tmp_path / "hard.toml")
    for out in (given, tmp_path / "." / "scenario.toml", tmp_path / "hard.toml"):
        with pytest.raises(OutputIsInputError, match="it is an input"):
            refuse_inputs(out, [given])
    refuse_inputs(tmp_path / "new.toml", [given])  # a new file is never an input


def test_a_long_line_is_refused_before_it_is_held_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(input_files, "MAX_LINE_BYTES", 1000)
    path = tmp_path / "long.csv"
    path.write_text("a,b\n" + "x" * 5000 + "\n")
    read: list[int] = []
    with open_stream(path, "a capture") as stream:
        original = stream.readline
        monkeypatch.setattr(stream, "readline", lambda limit=-1: read.append(limit) or original(limit))
        with pytest.raises(InputFileError, match=r"long.csv:2: a line of more than 1,000 characters"):
            list(csv_rows(path, stream))
    assert read and all(0 < limit <= 1001 for limit in read), "every read is bounded"


def test_compares_page_never_replaces_a_file_of_a_run_it_compares(tmp_path: Path) -> None:
    from sanlab.cli import main

    scenario = Path(__file__).resolve().parents[1] / "data" / "scenarios" / "one_vm.toml"
    runs = [tmp_path / "a", tmp_path / "b"]
    for run in runs:
        assert main(["run", str(scenario), "--duration", "0.2s", "--out", str(run), "--quiet"]) == 0
    results = runs[0] / "results.json"
    before = results.read_bytes()
    assert main(["compare", *map(str, runs), "--out", str(results)]) == 2
    assert results.read_bytes() == before


def test_a_file_this_user_may_not_read_is_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "listing.txt"
    path.write_text("x")

    def refused(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("builtins.open", refused)
    with pytest.raises(InputFileError, match=r"listing.txt: cannot be read \(Permission denied\): expected a listing"):
        read_text(path, "a listing")


def test_a_gzip_bomb_of_blank_lines_ends_at_the_first_thousand_in_a_row(tmp_path: Path) -> None:
    """16 MiB of blank lines (17 KB gzipped) were read line by line until the ratio stopped them,
    at 16 MiB: 16 M lines, 24 s. A capture's reader now stops after MAX_BLANK_LINES in a row."""
    from sanlab.hostimport.esxtop import read_capture

    header = '"(PDH-CSV 4.0) (UTC)(0)","\\\\esx1\\Physical Disk SCSI Device(naa.1)\\Commands/sec"\n'
    row = '"01/01/2026 00:00:00","1"\n'
    for blank in (b"\n", b"\r\n", b" \t\n"):
        bomb = tmp_path / "capture.csv.gz"
        bomb.write_bytes(gzip.compress((header + row).encode() + blank * ((17 << 20) // len(blank)) + row.encode()))
        with pytest.raises(InputFileError) as refused:
            read_capture(bomb)
        message = str(refused.value)
        assert message == (
            f"{bomb}:1003: more than 1,000 blank lines in a row (from line 3): expected CSV rows; is it a gzip bomb?"
        ), message
    # Fewer in a row are read as before: a tool's blank line between blocks, or at the end.
    plain = tmp_path / "capture.csv"
    plain.write_text(header + row + "\n" * 1000 + row.replace("00\"", "02\"") + "\n" * 1000)
    assert len(read_capture(plain).t_s) == 2


def test_a_file_read_whole_holds_at_most_a_million_lines(tmp_path: Path) -> None:
    """16 MiB of blank or comment lines, each skipped by its parser, took 6 to 30 s (a listing,
    measured points); a file read whole is refused past MAX_TEXT_LINES lines, counted as
    `str.splitlines` counts them."""
    limit = input_files.MAX_TEXT_LINES
    for lines, name in ((b"\n" * (limit + 1), "lf"), (b"\r" * (limit + 1), "cr"), (b"#\r\n" * (limit + 1), "crlf")):
        path = tmp_path / f"{name}.txt"
        path.write_bytes(b"x" + lines)
        with pytest.raises(InputFileError, match=rf"{name}.txt: 1,048,577 lines, above the limit of 1,048,576 lines for a listing$"):
            read_text(path, "a listing")
    ok = tmp_path / "ok.txt"
    ok.write_bytes(b"x\r\n" * limit)
    assert len(read_text(ok, "a listing").splitlines()) == limit
