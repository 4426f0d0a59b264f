"""What `mpclaim` says about a Windows host's MPIO disks, as plain records, each naming the file
and line it was read from (`Source`, shared with the other imports). `mpclaim.py` fills them;
nothing here parses text."""

from __future__ import annotations

from dataclasses import dataclass, field

from sanlab.hostimport.records import HostInputError, Source

__all__ = ["MpclaimListing", "MpioDisk", "MpioPath", "MpioSummary", "Source", "WindowsInputError"]


class WindowsInputError(HostInputError):
    """A Windows listing or capture that cannot be read: the message names the file and line, what
    was expected and the nearest valid choice."""


@dataclass(frozen=True)
class MpioSummary:
    """One row of `mpclaim -s -d`: `MPIO Disk0   Disk 2       RR           Microsoft DSM`."""

    mpio_disk: int
    # The system disk number (Disk Management's `Disk 2`, typeperf's `PhysicalDisk(2 E:)`).
    system_disk: int
    # FOO, RR, RRWS, LQD, WP, LB; VS for a vendor DSM's own policy.
    policy: str
    dsm: str
    source: Source


@dataclass(frozen=True)
class MpioPath:
    """One path of `mpclaim -s -d N`: `0000000077050007 Active/Optimized   005|000|007|001   0`,
    and its `TPG_State : Active/Optimized  , TPG_Id: 61498, : 58` line when mpclaim prints one."""

    path_id: str
    # Active/Optimized, Active/Unoptimized, Standby, Unavailable.
    state: str
    # The SCSI address: port (the adapter), bus, target, LUN.
    port: int
    bus: int
    target: int
    lun: int
    weight: int
    source: Source
    tpg_state: str | None = None
    tpg_id: int | None = None


@dataclass
class MpioDisk:
    """One disk of `mpclaim -s -d N`: its header (`MPIO Disk0: 04 Paths, Round Robin, Symmetric
    Access`), controlling DSM, serial number and paths."""

    mpio_disk: int
    path_count: int
    # The policy's name as printed (`Round Robin with Subset`) and the access (`Symmetric Access`,
    # `ALUA Not Supported`, `Implicit Only`, ...; None where the header has none).
    policy: str
    access: str | None
    source: Source
    dsm: str | None = None
    serial: str | None = None
    paths: list[MpioPath] = field(default_factory=list)


@dataclass
class MpclaimListing:
    """Everything read from the `mpclaim` outputs given: the summary's rows and each disk's paths,
    by MPIO disk number, and what the reader wants the user to know."""

    summary: dict[int, MpioSummary] = field(default_factory=dict)
    disks: dict[int, MpioDisk] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
