"""Readers for the esxcli storage listings, as ESXi prints them, into the records of `host.py`.

Four listings are understood, each in any of the three layouts esxcli writes:

- `esxcli storage core device list`
- `esxcli storage nmp device list` (older hosts: `esxcli nmp device list`)
- `esxcli storage nmp path list` (older hosts: `esxcli nmp path list`)
- `esxcli storage core path list`

Layouts: the default text (a record's name alone on a line, then `Key: value` lines, indented by
three spaces or not at all, as blogs often lose the indent), `--formatter=csv` (one header row of
the keys without spaces, a trailing comma; list values quoted, each element followed by a comma)
and `--formatter=keyvalue` (`Struct.Key.type=value`, one line per field).

Values are kept as the listing gives them (sizes in MB, depths as ints, config strings verbatim);
the PSP and SATP config strings are parsed only as far as the importer needs (TPG states, TPG and
RTP ids, current/preferred, the PSP's options). Anything else is refused with one `ListingError`
naming the file, the line, what was expected and the nearest valid choice.
"""

from __future__ import annotations

import difflib
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from sanlab.errors import UserError
from sanlab.hostimport.host import CoreDevice, CorePath, Listings, NmpDevice, NmpPath, Source
from sanlab.input_files import csv_rows, read_text


class ListingError(UserError, ValueError):
    """An esxcli listing that cannot be read; the message says where, what and what was expected."""


# The listings by the name the user knows, in the order they are tried.
CORE_DEVICE = "esxcli storage core device list"
NMP_DEVICE = "esxcli storage nmp device list"
NMP_PATH = "esxcli storage nmp path list"
CORE_PATH = "esxcli storage core path list"
LISTING = "an esxcli storage listing as esxcli prints it"
UNDERSTOOD = (
    f"{CORE_DEVICE}; {NMP_DEVICE} (or esxcli nmp device list); "
    f"{NMP_PATH} (or esxcli nmp path list); {CORE_PATH}"
)

GROUP_STATES = ("active", "active unoptimized", "standby", "unavailable", "dead", "transitioning", "offline")
PATH_STATES = ("active", "standby", "disabled", "dead", "unknown", "off")

_KEY_LINE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 /()_-]*?):(?:[ \t]+(.*?))?\s*$")
_KEYVALUE_LINE = re.compile(r"^([A-Za-z]\w*)\.([A-Za-z][\w/]*)(?:\.([a-z]+(?:\[\])?))?=(.*)$")
_CSV_HEADER = re.compile(r"^[A-Za-z][A-Za-z0-9/]*(,[A-Za-z][A-Za-z0-9/]*)*,?\s*$")


def _norm(key: str) -> str:
    """A field's name as the three layouts share it: no spaces, lower case."""
    return re.sub(r"[\s]", "", key).lower()


@dataclass
class _Field:
    value: str
    line: int


@dataclass
class _Record:
    """One record as read: normalised key -> value and the line it was on."""

    fields: dict[str, _Field]
    line: int
    header: str | None = None


# ----------------------------------------------------------------------------------------------
# Layouts


def detect_layout(text: str) -> str:
    """"text", "csv" or "keyvalue", from the first line that is not blank."""
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    if _KEYVALUE_LINE.match(first.strip()):
        return "keyvalue"
    if _CSV_HEADER.match(first.strip()) and "," in first:
        return "csv"
    return "text"


def _records_text(text: str, file: str) -> list[_Record]:
    records: list[_Record] = []
    current: _Record | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        match = _KEY_LINE.match(raw)
        if match is None:
            header = raw.strip()
            if header.endswith(":"):  # vm-support's localcli copies end the name with a colon
                header = header[:-1]
            current = _Record({}, number, header)
            records.append(current)
            continue
        if current is None:
            raise ListingError(
                f"{file}:{number}: expected a record's name (a device or path name alone on a line) "
                f"before the first 'Key: value' line, found {raw.strip()!r}"
            )
        key = _norm(match.group(1))
        current.fields.setdefault(key, _Field((match.group(2) or "").strip(), number))
    return records


def _split_list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _records_csv(text: str, file: str) -> list[_Record]:
    records: list[_Record] = []
    header: list[str] = []
    header_line = 0
    # Rows bounded (cells, line length) before they are split, as a capture's.
    for number, row in csv_rows(Path(file), io.StringIO(text)):
        if not any(cell.strip() for cell in row):
            continue
        if not header:
            header = [_norm(cell) for cell in row]
            header_line = number
            while header and header[-1] == "":
                header.pop()
            continue
        cells = list(row)
        while len(cells) > len(header) and cells[-1] == "":
            cells.pop()
        if len(cells) != len(header):
            raise ListingError(
                f"{file}:{number}: expected {len(header)} columns as in the header on line "
                f"{header_line}, found {len(cells)}: the row is cut short or not from this listing"
            )
        fields = {key: _Field(cell.strip(), number) for key, cell in zip(header, cells)}
        records.append(_Record(fields, number))
    if not header:
        raise ListingError(f"{file}:1: expected a csv header row, found nothing")
    return records


def _records_keyvalue(text: str, file: str) -> list[_Record]:
    records: list[_Record] = []
    current: _Record | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            current = None
            continue
        match = _KEYVALUE_LINE.match(line)
        if match is None:
            raise ListingError(
                f"{file}:{number}: expected 'Struct.Key.type=value' as --formatter=keyvalue writes, "
                f"found {line!r}"
            )
        key = _norm(match.group(2))
        if current is None or key in current.fields:
            current = _Record({}, number)
            records.append(current)
        current.fields[key] = _Field(match.group(4).strip(), number)
    return records


def _read_records(text: str, file: str) -> list[_Record]:
    layout = detect_layout(text)
    if layout == "csv":
        return _records_csv(text, file)
    if layout == "keyvalue":
        return _records_keyvalue(text, file)
    return _records_text(text, file)


# ----------------------------------------------------------------------------------------------
# Which listing


def _foreign(text: str, file: str) -> None:
    """Refuse, with a name, the other tools' texts users most often hand over by mistake."""
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if "PDH-CSV" in first:
        raise ListingError(
            f"{file}:1: this is an esxtop batch capture (PDH-CSV), not an esxcli listing; "
            f"expected one of: {UNDERSTOOD}. Give esxtop captures to --esxtop"
        )
    if not first:
        raise ListingError(f"{file}:1: the file is empty; expected one of: {UNDERSTOOD}")


# Keys that mark each listing, and the keys each of its records must have.
_MARKS = {
    NMP_PATH: ("groupstate", "storagearraytypepathconfig"),
    CORE_PATH: ("targetidentifier", "adapteridentifier"),
    NMP_DEVICE: ("storagearraytype", "pathselectionpolicy"),
    CORE_DEVICE: ("multipathplugin", "devfspath", "noofoutstandingioswithcompetingworlds"),
}
_NAME_KEY = {CORE_DEVICE: "device", NMP_DEVICE: "device", NMP_PATH: "path", CORE_PATH: "uid"}
_REQUIRED = {
    CORE_DEVICE: ("Display Name", "Size", "Device Type", "Multipath Plugin", "Vendor", "Model",
                  "Queue Full Sample Size", "Queue Full Threshold"),
    NMP_DEVICE: ("Storage Array Type", "Storage Array Type Device Config", "Path Selection Policy",
                 "Path Selection Policy Device Config", "Working Paths"),
    NMP_PATH: ("Runtime Name", "Device", "Group State", "Storage Array Type Path Config",
               "Path Selection Policy Path Config"),
    CORE_PATH: ("Runtime Name", "Device", "Adapter", "State", "Transport", "Target Identifier"),
}


def detect_kind(text: str, file: str = "<text>") -> str:
    """Which of the four listings `text` is, by the keys it uses (not by the file's name)."""
    _foreign(text, file)
    records = _read_records(text, file)
    keys = {key for record in records for key in record.fields}
    for kind, marks in _MARKS.items():
        if any(mark in keys for mark in marks):
            return kind
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    known = [key for kind in _REQUIRED for key in _REQUIRED[kind]]
    near = difflib.get_close_matches(first.split(":")[0], known, n=1, cutoff=0.5)
    hint = f"; the nearest key esxcli prints is {near[0]!r}" if near else ""
    raise ListingError(
        f"{file}:1: not an esxcli storage listing (first line {first[:80]!r}); "
        f"understood listings: {UNDERSTOOD}{hint}"
    )


# ----------------------------------------------------------------------------------------------
# Values


class _Values:
    """A record's fields with the conversions the records need, each failing with a clear error."""

    def __init__(self, record: _Record, kind: str, file: str):
        self.record, self.kind, self.file = record, kind, file
        self.name = self._name()
        for key in _REQUIRED[kind]:
            if _norm(key) not in record.fields:
                raise ListingError(
                    f"{file}:{record.line}: the {kind} record for {self.name!r} has no {key!r} "
                    f"field: expected all of {', '.join(_REQUIRED[kind])}; the listing looks cut short"
                )

    def _name(self) -> str:
        key = _NAME_KEY[self.kind]
        field = self.record.fields.get(key)
        if field is not None and field.value:
            return field.value
        if self.record.header:
            return self.record.header
        raise ListingError(
            f"{self.file}:{self.record.line}: expected the record's name ({key!r} column or a name "
            f"line before its fields) in this {self.kind}"
        )

    def where(self, key: str) -> str:
        field = self.record.fields.get(_norm(key))
        return f"{self.file}:{field.line if field else self.record.line}"

    def text(self, key: str) -> str | None:
        field = self.record.fields.get(_norm(key))
        return None if field is None else field.value

    def required(self, key: str) -> str:
        value = self.text(key)
        assert value is not None  # checked in __init__
        return value

    def integer(self, key: str, unit: str) -> int | None:
        value = self.text(key)
        if value is None or value == "":
            return None
        if not re.fullmatch(r"[0-9]+", value):
            digits = re.sub(r"[^0-9]", "", value)
            near = f"; the nearest whole number is {digits}" if digits else ""
            raise ListingError(
                f"{self.where(key)}: {key!r} of {self.name!r} is {value!r}: expected a whole "
                f"number ({unit}){near}"
            )
        return int(value)

    def boolean(self, key: str) -> bool | None:
        value = self.text(key)
        if value is None or value == "":
            return None
        if value.lower() not in ("true", "false"):
            near = difflib.get_close_matches(value.lower(), ["true", "false"], n=1, cutoff=0.0)
            raise ListingError(
                f"{self.where(key)}: {key!r} of {self.name!r} is {value!r}: expected true or false"
                f" (nearest: {near[0]})"
            )
        return value.lower() == "true"

    def choice(self, key: str, choices: Sequence[str]) -> str:
        value = self.required(key)
        if value.lower() not in choices:
            near = difflib.get_close_matches(value.lower(), choices, n=1, cutoff=0.0)
            raise ListingError(
                f"{self.where(key)}: {key!r} of {self.name!r} is {value!r}: expected one of "
                f"{', '.join(choices)} (nearest: {near[0]})"
            )
        return value.lower()

    def identifier(self, key: str, pattern: str, example: str) -> str:
        value = self.required(key)
        if not re.fullmatch(pattern, value):
            raise ListingError(
                f"{self.where(key)}: {key!r} of {self.name!r} is {value!r}: expected a single name "
                f"such as {example!r}; is this esxcfg-mpath or another tool's text rather than {self.kind}?"
            )
        return value


# ----------------------------------------------------------------------------------------------
# Config strings


def tpg_states(satp_config: str) -> dict[int, str]:
    """Target port group id -> state from an SATP device config (`{TPG_id=1,TPG_state=ANO}`...)."""
    return {int(tpg): state for tpg, state in re.findall(r"TPG_id=(\d+),\s*TPG_state=(\w+)", satp_config)}


def psp_options(psp_config: str) -> dict[str, str]:
    """The `key=value` options of a PSP device config: round robin's policy, iops, bytes, useANO,
    FIXED's preferred and current, MRU's `Current Path=` as `current`."""
    config = re.sub(r"Current Path\s*=", "current=", psp_config)
    options: dict[str, str] = {}
    for key, value in re.findall(r"(\w+)=\s*([^,;{}\s]+)", config):
        options.setdefault(key, value.rstrip(":"))
    return options


def path_ids(satp_path_config: str) -> tuple[int | None, int | None]:
    """(TPG id, RTP id) from an SATP path config `{TPG_id=2,TPG_state=AO,RTP_id=14,RTP_health=UP}`."""
    tpg = re.search(r"TPG_id=(\d+)", satp_path_config)
    rtp = re.search(r"RTP_id=(\d+)", satp_path_config)
    return (int(tpg.group(1)) if tpg else None, int(rtp.group(1)) if rtp else None)


def current_preferred(psp_path_config: str) -> tuple[bool | None, bool | None]:
    """(current, preferred) from a PSP path config `{current: yes; preferred: no}`; None where the
    PSP keeps no such thing (round robin: "does not support path configuration")."""
    current = re.search(r"current:\s*(yes|no)", psp_path_config)
    preferred = re.search(r"preferred:\s*(yes|no)", psp_path_config)
    return (
        None if current is None else current.group(1) == "yes",
        None if preferred is None else preferred.group(1) == "yes",
    )


# ----------------------------------------------------------------------------------------------
# The four listings

_RUNTIME = r"vmhba\d+:C\d+:T\d+:L\d+"
_PLUGIN_NAME = r"[A-Za-z][A-Za-z0-9_]*"


def _checked(text: str, file: str, kind: str) -> list[_Values]:
    found = detect_kind(text, file)
    if found != kind:
        raise ListingError(f"{file}:1: expected the {kind} listing, found the {found} listing")
    return [_Values(record, kind, file) for record in _read_records(text, file)]


def read_core_devices(text: str, file: str = "<text>") -> list[CoreDevice]:
    """Devices of `esxcli storage core device list`, in any of the three layouts."""
    out = []
    for v in _checked(text, file, CORE_DEVICE):
        out.append(CoreDevice(
            name=v.name,
            display_name=v.text("Display Name"),
            size_mb=v.integer("Size", "MB"),
            vendor=v.text("Vendor"),
            model=v.text("Model"),
            multipath_plugin=v.identifier("Multipath Plugin", _PLUGIN_NAME, "NMP"),
            is_vvol_pe=v.boolean("Is VVOL PE"),
            queue_full_sample_size=v.integer("Queue Full Sample Size", "commands"),
            queue_full_threshold=v.integer("Queue Full Threshold", "commands"),
            max_queue_depth=v.integer("Device Max Queue Depth", "commands"),
            dsnro=v.integer("No of outstanding IOs with competing worlds", "commands"),
            source=Source(file, v.record.line),
        ))
    return out


def read_nmp_devices(text: str, file: str = "<text>") -> list[NmpDevice]:
    """Devices of `esxcli storage nmp device list` (or `esxcli nmp device list`)."""
    out = []
    for v in _checked(text, file, NMP_DEVICE):
        satp_config = v.required("Storage Array Type Device Config")
        psp_config = v.required("Path Selection Policy Device Config")
        working = _split_list(v.required("Working Paths"))
        for path in working:
            if not re.fullmatch(_RUNTIME, path):
                raise ListingError(
                    f"{v.where('Working Paths')}: working path {path!r} of {v.name!r}: expected a "
                    f"runtime name vmhbaA:Cc:Tt:Ll such as 'vmhba2:C0:T1:L1'"
                )
        out.append(NmpDevice(
            name=v.name,
            satp=v.identifier("Storage Array Type", _PLUGIN_NAME, "VMW_SATP_ALUA"),
            satp_config=satp_config,
            tpg_states=tpg_states(satp_config),
            psp=v.identifier("Path Selection Policy", _PLUGIN_NAME, "VMW_PSP_RR"),
            psp_config=psp_config,
            working_paths=working,
            source=Source(file, v.record.line),
            psp_options=psp_options(psp_config),
        ))
    return out


def read_nmp_paths(text: str, file: str = "<text>") -> list[NmpPath]:
    """Paths of `esxcli storage nmp path list` (or `esxcli nmp path list`)."""
    out = []
    for v in _checked(text, file, NMP_PATH):
        tpg, rtp = path_ids(v.required("Storage Array Type Path Config"))
        current, preferred = current_preferred(v.required("Path Selection Policy Path Config"))
        out.append(NmpPath(
            runtime_name=v.identifier("Runtime Name", _RUNTIME, "vmhba2:C0:T1:L1"),
            device=v.required("Device"),
            group_state=v.choice("Group State", GROUP_STATES),
            tpg_id=tpg,
            rtp_id=rtp,
            current=current,
            preferred=preferred,
            source=Source(file, v.record.line),
        ))
    return out


def read_core_paths(text: str, file: str = "<text>") -> list[CorePath]:
    """Paths of `esxcli storage core path list`."""
    out = []
    for v in _checked(text, file, CORE_PATH):
        out.append(CorePath(
            runtime_name=v.identifier("Runtime Name", _RUNTIME, "vmhba0:C0:T0:L23"),
            device=v.required("Device"),
            adapter=v.identifier("Adapter", r"vmhba\d+", "vmhba0"),
            target=v.required("Target Identifier"),
            state=v.choice("State", PATH_STATES),
            transport=v.text("Transport"),
            max_io_size_bytes=v.integer("Maximum IO Size", "bytes"),
            source=Source(file, v.record.line),
        ))
    return out


_READERS: dict[str, tuple[Callable[[str, str], list], str, Callable[[object], str]]] = {
    CORE_DEVICE: (read_core_devices, "core_devices", lambda r: r.name),
    NMP_DEVICE: (read_nmp_devices, "nmp_devices", lambda r: r.name),
    NMP_PATH: (read_nmp_paths, "nmp_paths", lambda r: r.runtime_name),
    CORE_PATH: (read_core_paths, "core_paths", lambda r: r.runtime_name),
}


def _without_source(record: object) -> tuple:
    return tuple((k, str(v)) for k, v in vars(record).items() if k != "source")


def read_listings(paths: Sequence[Path]) -> Listings:
    """Read each file, recognise its listing by its content and merge them into one `Listings`.

    The same record read twice (e.g. the text and the csv of one listing) is kept once; the same
    device or path read twice with different values is an error (listings of two hosts?)."""
    listings = Listings()
    seen: dict[tuple[str, str], object] = {}
    for path in paths:
        file = str(path)
        text = read_text(Path(path), LISTING)
        kind = detect_kind(text, file)
        reader, attribute, key_of = _READERS[kind]
        for record in reader(text, file):
            key = (kind, key_of(record))
            earlier = seen.get(key)
            if earlier is None:
                seen[key] = record
                getattr(listings, attribute).append(record)
            elif _without_source(earlier) != _without_source(record):
                raise ListingError(
                    f"{record.source}: {key[1]!r} is also in {earlier.source} with other values: "
                    f"expected the listings of one host, taken at one time"
                )
    return listings
