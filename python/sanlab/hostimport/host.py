"""What the esxcli storage listings say about a host, as plain records. Each record names the file
and line it was read from (`Source`), so a scenario built from it can say where every value came
from. The readers (`esxcli.py`) fill these; nothing here parses text."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Source:
    """Where a record was read: the file and the line its first field is on (1-based)."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class CoreDevice:
    """One device of `esxcli storage core device list`."""

    name: str
    display_name: str | None
    size_mb: int | None
    vendor: str | None
    model: str | None
    # "NMP" or "HPP".
    multipath_plugin: str | None
    is_vvol_pe: bool | None
    queue_full_sample_size: int | None
    queue_full_threshold: int | None
    # "Device Max Queue Depth".
    max_queue_depth: int | None
    # "No of outstanding IOs with competing worlds" (DSNRO).
    dsnro: int | None
    source: Source


@dataclass(frozen=True)
class NmpDevice:
    """One device of `esxcli storage nmp device list`."""

    name: str
    # "Storage Array Type", e.g. VMW_SATP_ALUA, and its config as printed.
    satp: str
    satp_config: str
    # Target port group id -> its state as the SATP prints it (AO, ANO, STBY, UNAV, ...).
    tpg_states: dict[int, str]
    # "Path Selection Policy", e.g. VMW_PSP_RR, and its device config as printed.
    psp: str
    psp_config: str
    working_paths: list[str]
    source: Source
    # The PSP device config's `key=value` options: round robin's policy, iops, bytes, useANO;
    # FIXED's preferred and current; MRU's "Current Path=" as current.
    psp_options: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class NmpPath:
    """One path of `esxcli storage nmp path list`."""

    runtime_name: str
    device: str
    # "Group State": active, active unoptimized, standby, unavailable, dead.
    group_state: str
    tpg_id: int | None
    rtp_id: int | None
    # From "Path Selection Policy Path Config": {current: yes; preferred: yes}.
    current: bool | None
    preferred: bool | None
    source: Source


@dataclass(frozen=True)
class CorePath:
    """One path of `esxcli storage core path list`."""

    runtime_name: str
    device: str
    adapter: str
    # "Target Identifier" (fc.<wwnn>:<wwpn>, an iSCSI name, ...).
    target: str
    # active, standby, dead, ...
    state: str
    transport: str | None
    max_io_size_bytes: int | None
    source: Source


@dataclass
class Listings:
    """Everything read from one host's esxcli listings; any of them may be missing."""

    core_devices: list[CoreDevice] = field(default_factory=list)
    nmp_devices: list[NmpDevice] = field(default_factory=list)
    nmp_paths: list[NmpPath] = field(default_factory=list)
    core_paths: list[CorePath] = field(default_factory=list)
