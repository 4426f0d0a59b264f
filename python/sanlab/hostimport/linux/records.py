"""What a Linux host's listings say about its storage, as plain records, each naming the file and
line it was read from (`Source`, shared with the ESXi import), so that the scenario built from it
can say where every value came from. The readers (`multipath.py`, `nvme.py`, `sysfs.py`,
`iostat.py`) fill these (iostat's rows are `hostimport/records.DiskRow`s); nothing here parses
text."""

from __future__ import annotations

from dataclasses import dataclass

from sanlab.hostimport.records import HostInputError, Source

__all__ = ["LinuxInputError", "MultipathMap", "NvmeController", "NvmeSubsystem", "PathGroup", "ScsiPath", "Source", "SysfsValue"]


class LinuxInputError(HostInputError):
    """A Linux listing or capture that cannot be read: the message names the file and line, what
    was expected and the nearest valid choice."""


@dataclass(frozen=True)
class ScsiPath:
    """One path of a map: `2:0:0:0 sdb 8:16 active ready running`."""

    # host:channel:target:lun, None for an orphan (`#:#:#:#`).
    hctl: tuple[int, int, int, int] | None
    # The SCSI disk's name (`sdb`), None when multipath prints `-`.
    devnode: str | None
    # The device-mapper state (active, failed, undef), the path checker's (ready, faulty, ghost,
    # shaky, i/o pending, ...) and the SCSI device's (running, offline, ...); None where the
    # listing's generation does not print it.
    dm_state: str
    checker: str | None
    device_state: str | None
    source: Source

    @property
    def down(self) -> str | None:
        """Why the path carries no I/O (`failed faulty offline` ...), else None."""
        said = [s for s in (self.dm_state, self.checker, self.device_state) if s in DOWN_PATH_STATES]
        return " ".join(dict.fromkeys(said)) or None


DOWN_PATH_STATES = ("failed", "faulty", "offline", "transport-offline", "deleted", "disconnected")
"""States of a path that carries no I/O: dm has failed it, its checker finds it faulty, or the
SCSI device is offline. Every other state (ready, ghost, shaky, i/o pending, undef, running) keeps
it up."""


@dataclass(frozen=True)
class PathGroup:
    """One path group: `|-+- policy='service-time 0' prio=50 status=active`."""

    # The path selector and its arguments as dm prints them (`service-time 0`).
    selector: str
    # The group's priority (None where the generation does not print it; -1 is multipath's undef).
    prio: int | None
    # active (the group dm sends I/O to), enabled, disabled, undef; None where not printed.
    status: str | None
    paths: list[ScsiPath]
    source: Source


@dataclass(frozen=True)
class MultipathMap:
    """One map of `multipath -ll`: a dm-multipath device and its path groups."""

    # The alias (`mpatha`) or, without friendly names, the WWID.
    name: str
    wwid: str
    dm: str | None
    vendor: str | None
    product: str | None
    size: str | None
    # The feature words after their count (`queue_if_no_path`, `pg_init_retries`, `50`).
    features: list[str]
    # The hardware handler (`alua`, `emc`, `rdac`), None for `0`.
    hwhandler: str | None
    groups: list[PathGroup]
    source: Source
    # Where the features field is (its own line).
    features_source: Source


@dataclass(frozen=True)
class NvmeController:
    """One controller of `nvme list-subsys`: a path to the subsystem."""

    name: str
    transport: str
    address: str
    # live, connecting, resetting, deleting, dead, new, marginal; None where not printed (nvme-cli 1.6).
    state: str | None
    # optimized, non-optimized, inaccessible, persistent-loss, change; None where not printed.
    ana_state: str | None
    source: Source


@dataclass(frozen=True)
class NvmeSubsystem:
    """One NVM subsystem of `nvme list-subsys`."""

    name: str
    nqn: str
    # numa, round-robin, queue-depth; None where not printed (nvme-cli before 2.x, or -o json without -v).
    iopolicy: str | None
    iopolicy_source: Source | None
    controllers: list[NvmeController]
    source: Source


@dataclass(frozen=True)
class SysfsValue:
    """One line of `grep -H . /sys/block/*/queue/... /sys/block/*/device/queue_depth`."""

    device: str
    # The attribute's path below the device (`queue/nr_requests`, `device/queue_depth`).
    attribute: str
    value: str
    source: Source
