"""What the Linux and Windows imports share as plain records: the error their readers raise (each
platform's own a subclass), and a capture of each disk's load and latency per interval (`DiskRow`,
`DiskCapture`), which `iostat -x` (`linux/iostat.py`) and typeperf (`windows/typeperf.py`) are both
read into, so that one builder (`load.py`) makes each volume's load and its array's speed from
either, and `compare.py` puts either beside a run. Nothing here parses text."""

from __future__ import annotations

from dataclasses import dataclass, field

from sanlab.errors import UserError
from sanlab.hostimport.host import Source

__all__ = ["CaptureNames", "DiskCapture", "DiskRow", "HostInputError", "Source"]


class HostInputError(UserError, ValueError):
    """A host's listing or capture that cannot be read: the message names the file and line, what
    was expected and the nearest valid choice (`LinuxInputError`, `WindowsInputError`)."""


@dataclass(frozen=True)
class DiskRow:
    """One device's figures over one interval (a line of an `iostat -x` report, a typeperf sample of
    one PhysicalDisk), in sanlab's units whatever the tool or its generation."""

    device: str
    reads_per_s: float
    writes_per_s: float
    # Mean request size per direction in bytes (NaN without requests in that direction, or
    # where the generation gives one size for both directions: then `size_bytes` is that size).
    read_size_bytes: float
    write_size_bytes: float
    # Mean time in the device per request, ms (r_await, w_await; `await` for both in the oldest).
    read_await_ms: float
    write_await_ms: float
    # Requests in the device on average (avgqu-sz, aqu-sz).
    queue: float
    source: Source


@dataclass(frozen=True)
class CaptureNames:
    """How a capture names the figures of a `DiskRow`, for the comments and notes written
    from them: iostat's, or typeperf's for a Windows host (`hostimport/windows/typeperf.py`),
    whose samples are read into the same rows."""

    queue: str
    read_await: str
    write_await: str
    # One line of figures over an interval: iostat's report, typeperf's sample.
    report: str


@dataclass
class DiskCapture:
    """A capture of the disks' figures: its reports (each a list of rows; iostat's first one since
    boot left out), the tool's names for them, and what the reader wants the user to know."""

    path: str
    host: str | None
    generation: str
    names: CaptureNames
    reports: list[list[DiskRow]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Each report's time in seconds from the first report's, where the capture says (iostat -t,
    # typeperf's sample times); None where it does not.
    times_s: list[float] | None = None
