"""Reader for `multipath -ll` (multipath-tools), both generations, into `MultipathMap` records.

The current generation (RHEL 6 and later; libmultipath/print.c, `snprint_multipath_topology__`):

    mpatha (3600507680282874fc400000000000002) dm-0 NETAPP,LUN
    size=500G features='3 queue_if_no_path pg_init_retries 50' hwhandler='1 alua' wp=rw
    |-+- policy='service-time 0' prio=50 status=active
    | |- 2:0:0:0 sdb 8:16 active ready running
    `-+- policy='service-time 0' prio=10 status=enabled
      `- 5:0:0:0 sdd 8:48 failed faulty offline

and the RHEL 5 one (multipath-tools 0.4.7/0.4.8; RHEL 4's has no `prio=` and one path state):

    mpath1 (36006016035303900df9eaf55ec5bec11) dm-0 DGC,VRAID
    [size=1.0T][features=1 queue_if_no_path][hwhandler=1 emc][rw]
    \\_ round-robin 0 [prio=1][active]
     \\_ 7:0:2:0 sdd 8:48  [active][ready]

Also read: maps without friendly names (the WWID alone, or glued to `dm-N` by old versions), the
`create:`/`reload:`/`switchpg:`/`rename:`/`reject:` prefix of `multipath -v2` and `multipathd show
topology`, vendor fields padded with spaces (`PURE    ,FlashArray`), orphan paths (`#:#:#:# -
#:#`), and multipath's own log lines (`Oct 13 10:24:01 | ...`), which are counted and skipped.
Anything else is one `LinuxInputError` naming the file, the line, what was expected and the
nearest valid choice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from sanlab.hostimport.linux.records import LinuxInputError, MultipathMap, PathGroup, ScsiPath, Source
from sanlab.hostimport.text import nearest, plain_lines, refuse_foreign
from sanlab.input_files import read_text

MULTIPATH = "`multipath -ll` output (multipath-tools)"
ACTIONS = ("create", "reload", "switchpg", "rename", "reject")
DM_STATES = ("active", "failed", "undef")
# libmultipath/print.c snprint_chk_state; `ready`/`faulty` are what PATH_UP/PATH_DOWN print;
# `failed` in that place is in a Dell MD32xx listing (tests/data/linux/multipath/SOURCES.md).
CHECKER_STATES = ("ready", "faulty", "shaky", "ghost", "i/o pending", "i/o timeout", "delayed", "disconnected", "undef", "failed")
# snprint_offline prints running/offline/unknown; older versions print the SCSI device's state.
DEVICE_STATES = ("running", "offline", "unknown", "blocked", "quiesce", "transport-offline", "created", "cancel", "deleted")
GROUP_STATES = ("active", "enabled", "disabled", "undef")

_LOG = re.compile(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \| ")
_ACTION = re.compile(r"^(?P<action>[a-z]+): +(?=\S)")
# `multipath -d` and `-v2` print `undef` where the map has no dm device yet; a WWID of T10 form
# holds spaces (`1ATA     ST3120026AS   …`).
_MAP = re.compile(r"^(?P<id>[A-Za-z0-9_][^\s()]*?)\s*(?:\((?P<wwid>[^()]+)\))?\s*(?P<dm>dm-\d+|(?<=\s)undef)?(?:\s+(?P<vp>\S.*?))?\s*$")
_PROPS = re.compile(r"(\w+)=(?:'([^']*)'|(\S+))")
_OLD_PROPS = re.compile(r"\[([^\]]*)\]")
_GROUP = re.compile(r"^[|`]-\+- policy='(?P<selector>[^']*)' prio=(?P<prio>-?\d+) status=(?P<status>\S+)\s*$")
_OLD_GROUP = re.compile(r"^\s*\\_ (?P<selector>[a-z][\w-]* \d+(?: \S+)*?) (?P<tags>(?:\[[^\]]*\])+)\s*$")
_HCTL = r"(?P<hctl>\d+:\d+:\d+:\d+|#:#:#:#)\s+(?P<dev>\S+)\s+(?P<devt>\d+:\d+|#:#)"
_PATH = re.compile(r"^[ |]\s*[|`]- " + _HCTL + r"(?:\s+(?P<states>.*?))?\s*$")
_OLD_PATH = re.compile(r"^\s*\\_ " + _HCTL + r"(?:\s+(?P<tags>.*?))?\s*$")


@dataclass
class _Map:
    """A map while it is read."""

    name: str
    wwid: str
    dm: str | None
    vendor: str | None
    product: str | None
    source: Source
    props: dict[str, str] | None = None
    props_source: Source | None = None
    groups: list[PathGroup] = field(default_factory=list)


def _header(line: str, where: Source) -> _Map | None:
    """The map a header line names, or None when the line is no map header."""
    body = line
    action = _ACTION.match(line)
    if action:
        if action.group("action") not in ACTIONS:
            return None
        body = line[action.end():]
    m = _MAP.match(body)
    if not m or not (m.group("wwid") or m.group("dm")):
        return None
    vendor = product = None
    if m.group("vp"):
        if "," not in m.group("vp"):
            raise LinuxInputError(f"{where}: map {m.group('id')}: `{m.group('vp')}` after {m.group('dm') or 'its WWID'}: expected VENDOR,PRODUCT (as `NETAPP,LUN`)")
        vendor, product = (part.strip() for part in m.group("vp").split(",", 1))
    dm = m.group("dm") if m.group("dm") != "undef" else None
    return _Map(m.group("id"), (m.group("wwid") or m.group("id")).strip(), dm, vendor or None, product or None, where)


def _props(line: str, where: Source) -> dict[str, str] | None:
    """The map's properties line: `size=… features='…' hwhandler='…' wp=rw`, or the RHEL 5/4
    `[size=…][features=…][hwhandler=…][rw]`; None when the line is neither."""
    stripped = line.strip()
    if stripped.startswith("size="):
        return {m.group(1): m.group(2) if m.group(2) is not None else m.group(3) for m in _PROPS.finditer(stripped)}
    if stripped.startswith("[size="):
        out: dict[str, str] = {}
        for tag in _OLD_PROPS.findall(stripped):
            key, eq, value = tag.partition("=")
            out[key.strip() if eq else "wp"] = value.strip().strip('"') if eq else key.strip()
        return out
    return None


def _counted(value: str, what: str, where: Source, name: str) -> list[str]:
    """The words of a dm table field that starts with their count (`3 queue_if_no_path
    pg_init_retries 50`, `1 alua`, `0`); a count that does not match is a cut or mangled line."""
    words = value.split()
    if not words or not words[0].isdigit():
        raise LinuxInputError(f"{where}: map {name}: {what}='{value}': expected the number of words first, as dm prints it ('1 queue_if_no_path', '0')")
    if int(words[0]) != len(words) - 1:
        raise LinuxInputError(f"{where}: map {name}: {what}='{value}' counts {words[0]} words and has {len(words) - 1}: the line is cut short or edited")
    return words[1:]


def _path_states(text: str, old: bool, where: Source, hctl: str) -> tuple[str, str | None, str | None]:
    """(dm state, checker state, device state) of a path line's end."""
    if old:
        tags = _OLD_PROPS.findall(text)
        if not tags or _OLD_PROPS.sub("", text).strip():
            raise LinuxInputError(f"{where}: path {hctl}: `{text}`: expected its states in brackets, as `[active][ready]`")
        dm, checker = tags[0].strip(), (tags[1].strip() if len(tags) > 1 else None)
        device = tags[2].strip() if len(tags) > 2 else None
    else:
        joined = re.sub(r"\bi/o (pending|timeout)\b", r"i/o_\1", text)
        words = joined.split()
        if len(words) != 3:
            raise LinuxInputError(f"{where}: path {hctl}: `{text}`: expected three states (dm, checker, device) as `active ready running`: the line is cut short")
        dm, checker, device = words[0], words[1].replace("_", " "), words[2]
    for state, choices, what in ((dm, DM_STATES, "dm state"), (checker, CHECKER_STATES, "path checker state"), (device, DEVICE_STATES, "device state")):
        if state is not None and state not in choices:
            raise LinuxInputError(f"{where}: path {hctl}: {what} `{state}` is not one multipath prints: expected one of {', '.join(choices)} (nearest: {nearest(state, choices)})")
    return dm, checker, device


def _path(line: str, where: Source) -> ScsiPath | None:
    m = _PATH.match(line)
    old = False
    if m is None:
        m = _OLD_PATH.match(line)
        old = True
    if m is None:
        return None
    hctl = None if m.group("hctl") == "#:#:#:#" else tuple(int(x) for x in m.group("hctl").split(":"))
    dm, checker, device = _path_states(m.group("tags" if old else "states") or "", old, where, m.group("hctl"))
    dev = None if m.group("dev") == "-" else m.group("dev")
    return ScsiPath(hctl, dev, dm, checker, device, where)  # type: ignore[arg-type]


def _group(line: str, where: Source) -> PathGroup | None:
    m = _GROUP.match(line)
    if m:
        status = m.group("status")
        if status not in GROUP_STATES:
            raise LinuxInputError(f"{where}: path group status `{status}` is not one multipath prints: expected one of {', '.join(GROUP_STATES)} (nearest: {nearest(status, GROUP_STATES)})")
        return PathGroup(m.group("selector"), int(m.group("prio")), status, [], where)
    m = _OLD_GROUP.match(line)
    if m is None:
        return None
    prio: int | None = None
    status: str | None = None
    for tag in _OLD_PROPS.findall(m.group("tags")):
        if tag.startswith("prio="):
            try:
                prio = int(tag[5:])
            except ValueError:
                raise LinuxInputError(f"{where}: path group [{tag}]: expected a whole number after prio=") from None
        elif tag in GROUP_STATES:
            status = tag
    return PathGroup(m.group("selector"), prio, status, [], where)


def _finish(current: _Map | None, maps: list[MultipathMap], seen: dict[str, Source]) -> None:
    if current is None:
        return
    if current.props is None or current.props_source is None:
        raise LinuxInputError(f"{current.source}: map {current.name} has no `size=… features=… hwhandler=…` line after it: the listing is cut short")
    if current.name in seen:
        raise LinuxInputError(f"{current.source}: map {current.name} is also at {seen[current.name]}: expected each map once (one `multipath -ll`, not two pasted together)")
    seen[current.name] = current.source
    where = current.props_source
    for key in ("features", "hwhandler"):
        if key not in current.props:
            raise LinuxInputError(f"{where}: map {current.name}: no {key}= field: expected size=…, features='…' and hwhandler='…' as multipath prints them")
    handler = _counted(current.props["hwhandler"], "hwhandler", where, current.name)
    for group in current.groups:
        if not group.paths:
            raise LinuxInputError(f"{group.source}: map {current.name}: its path group lists no path: the listing is cut short")
    maps.append(MultipathMap(
        name=current.name, wwid=current.wwid, dm=current.dm, vendor=current.vendor, product=current.product,
        size=current.props.get("size"), features=_counted(current.props["features"], "features", where, current.name),
        hwhandler=" ".join(handler) or None, groups=current.groups, source=current.source, features_source=where,
    ))


def parse_multipath(text: str, file: str = "<text>") -> tuple[list[MultipathMap], list[str]]:
    """The maps of a `multipath -ll` listing, and notes (log lines skipped)."""
    lines = plain_lines(text)
    refuse_foreign(lines, file, MULTIPATH, "--multipath", LinuxInputError)
    maps: list[MultipathMap] = []
    seen: dict[str, Source] = {}
    current: _Map | None = None
    logs = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = Source(file, number)
        if _LOG.match(line):
            logs += 1
            continue
        path = _path(line, where)
        if path is not None:
            if current is None or not current.groups:
                raise LinuxInputError(f"{where}: a path before any {'map' if current is None else 'path group'}: expected a map line (`mpatha (3600…) dm-0 VENDOR,PRODUCT`) and a path group first")
            current.groups[-1].paths.append(path)
            continue
        group = _group(line, where)
        if group is not None:
            if current is None or current.props is None:
                raise LinuxInputError(f"{where}: a path group before {'any map' if current is None else 'the size= features= line of its map'}: the listing is cut or reordered")
            current.groups.append(group)
            continue
        props = _props(line, where)
        if props is not None:
            if current is None or current.props is not None:
                raise LinuxInputError(f"{where}: a `size=… features=…` line without its map line before it: expected `mpatha (3600…) dm-0 VENDOR,PRODUCT`")
            current.props, current.props_source = props, where
            continue
        header = _header(line, where)
        if header is None:
            hint = "a map (`mpatha (3600…) dm-0 VENDOR,PRODUCT`), its `size=… features=…` line, a path group (`|-+- policy='service-time 0' prio=50 status=active`) or a path (`| |- 2:0:0:0 sdb 8:16 active ready running`)"
            raise LinuxInputError(f"{where}: `{line.strip()[:80]}` is not a line of {MULTIPATH}: expected {hint}")
        _finish(current, maps, seen)
        current = header
    _finish(current, maps, seen)
    if not maps:
        raise LinuxInputError(f"{file}:1: no multipath map in the file: expected {MULTIPATH}")
    notes = [f"{file}: {logs} of multipath's log lines (`Mon dd hh:mm:ss | …`) skipped"] if logs else []
    return maps, notes


def read_multipath(path: Path) -> tuple[list[MultipathMap], list[str]]:
    """The maps of the `multipath -ll` listing in `path` (read through `input_files`)."""
    return parse_multipath(read_text(path, MULTIPATH), str(path))
