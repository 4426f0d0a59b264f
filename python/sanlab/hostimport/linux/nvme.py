"""Reader for `nvme list-subsys` (nvme-cli), text and `-o json`, of every generation, into
`NvmeSubsystem` records.

Text (nvme-cli's `nvme-print-stdout.c`; 1.6 prints no state, 1.12 adds the controller's state
and ANA state, 2.x the `hostnqn=` and `iopolicy=` lines, 3.x `iopolicy=` with `-v` only):

    nvme-subsys0 - NQN=nqn.1992-08.com.netapp:sn.…:subsystem.ubuntu_24.04_tcp_211
                   hostnqn=nqn.2014-08.org.nvmexpress:uuid:…
                   iopolicy=round-robin
    \\
     +- nvme0 tcp traddr=192.168.166.155,trsvcid=4420,host_traddr=…,src_addr=… live optimized

The ANA state is printed when a namespace is named (`nvme list-subsys /dev/nvme0n1`). JSON: 1.x
`{"Subsystems": [{"Name", "NQN", "Paths": [{"Name", "Transport", "Address", "State",
"ANAState"}]}]}` (1.6 puts each subsystem's `Paths` in an object of its own after it), 2.x and
3.x a list of hosts `[{"HostNQN", "Subsystems": [...]}]` with `IOPolicy` under `-v`.

Anything else is one `LinuxInputError` naming the file, the line, what was expected and the
nearest valid choice.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sanlab.export.files import JsonBoundError, loads_bounded
from sanlab.hostimport.linux.records import LinuxInputError, NvmeController, NvmeSubsystem, Source
from sanlab.hostimport.text import nearest, plain_lines, refuse_foreign
from sanlab.input_files import read_text

NVME = "`nvme list-subsys` output (nvme-cli), text or -o json"
# drivers/nvme/host/core.c (nvme_sysfs_show_state), and `marginal` of the FC-NVMe FPIN patches.
CONTROLLER_STATES = ("new", "live", "resetting", "connecting", "deleting (no IO)", "deleting", "dead", "marginal", "unknown")
# drivers/nvme/host/multipath.c (nvme_ana_state_names).
ANA_STATES = ("optimized", "non-optimized", "inaccessible", "persistent-loss", "change")
IOPOLICIES = ("numa", "round-robin", "queue-depth")

_SUBSYS = re.compile(r"^(?P<name>nvme-subsys\d+) - NQN=(?P<nqn>\S+)(?P<rest>.*?)\s*\\?\s*$")
_SETTING = re.compile(r"(hostnqn|iopolicy|model|serial|firmware|type)=(\S*)")
_CTRL = re.compile(r"^\s*\+- (?P<name>nvme\d+) +(?P<transport>\S+)(?: +(?P<rest>.*?))?\s*$")


def _iopolicy(value: str, where: Source, name: str) -> str:
    if value not in IOPOLICIES:
        raise LinuxInputError(f"{where}: {name}: iopolicy `{value}` is not one the kernel has: expected one of {', '.join(IOPOLICIES)} (nearest: {nearest(value, IOPOLICIES)})")
    return value


def _controller_tail(rest: str, where: Source, name: str) -> tuple[str, str | None, str | None]:
    """(address, state, ANA state) of the text after a controller's transport."""
    words = rest.split()
    ana = words.pop() if words and words[-1] in ANA_STATES else None
    state = None
    tail = " ".join(words)
    for candidate in CONTROLLER_STATES:
        if tail == candidate or tail.endswith(" " + candidate):
            state, tail = candidate, tail[: len(tail) - len(candidate)].strip()
            break
    if state is None and words and "=" not in words[-1] and not re.fullmatch(r"[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d", words[-1]):
        raise LinuxInputError(f"{where}: controller {name}: state `{words[-1]}` is not one the kernel prints: expected one of {', '.join(CONTROLLER_STATES)} (nearest: {nearest(words[-1], CONTROLLER_STATES)}), then optionally an ANA state ({', '.join(ANA_STATES)})")
    return tail, state, ana


def _text(lines: list[str], file: str) -> list[NvmeSubsystem]:
    out: list[NvmeSubsystem] = []
    current: dict[str, Any] | None = None

    def finish() -> None:
        if current is None:
            return
        if not current["controllers"]:
            raise LinuxInputError(f"{current['source']}: {current['name']} lists no controller (` +- nvme0 tcp traddr=… live`): the output is cut short")
        out.append(NvmeSubsystem(current["name"], current["nqn"], current["iopolicy"], current["iopolicy_source"], current["controllers"], current["source"]))

    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped or stripped == "\\":
            continue
        where = Source(file, number)
        m = _SUBSYS.match(stripped)
        if m:
            finish()
            current = {"name": m.group("name"), "nqn": m.group("nqn"), "iopolicy": None, "iopolicy_source": None, "controllers": [], "source": where}
            line = m.group("rest")
            stripped = line.strip().rstrip("\\").strip()
            if not stripped:
                continue
        settings = _SETTING.findall(stripped)
        if settings and _SETTING.sub("", stripped).strip(" \\") == "":
            if current is None:
                raise LinuxInputError(f"{where}: `{stripped}` before any subsystem: expected `nvme-subsys0 - NQN=…` first")
            for key, value in settings:
                if key == "iopolicy":
                    current["iopolicy"], current["iopolicy_source"] = _iopolicy(value, where, current["name"]), where
            continue
        c = _CTRL.match(line)
        if c:
            if current is None:
                raise LinuxInputError(f"{where}: controller {c.group('name')} before any subsystem: expected `nvme-subsys0 - NQN=…` first")
            address, state, ana = _controller_tail(c.group("rest") or "", where, c.group("name"))
            current["controllers"].append(NvmeController(c.group("name"), c.group("transport"), address, state, ana, where))
            continue
        if re.match(r"^\+- ns \d+$", stripped):
            raise LinuxInputError(f"{where}: `{stripped}`: this is `nvme show-topology` output (namespaces between subsystem and controllers); give `nvme list-subsys /dev/nvmeXnY` to --nvme")
        raise LinuxInputError(f"{where}: `{stripped[:80]}` is not a line of {NVME}: expected `nvme-subsys0 - NQN=…`, `hostnqn=…`, `iopolicy=…`, `\\` or ` +- nvme0 tcp traddr=…,trsvcid=4420 live optimized`")
    finish()
    return out


def _json_line(text: str, needle: str) -> int:
    at = text.find(needle)
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def _json_subsystems(doc: Any, file: str) -> list[dict[str, Any]]:
    """The subsystem objects of any generation's JSON, each with its `Paths`."""
    if isinstance(doc, list):  # 2.x, 3.x: one object per host
        found = [s for host in doc if isinstance(host, dict) for s in host.get("Subsystems", []) or []]
    elif isinstance(doc, dict) and isinstance(doc.get("Subsystems"), list):
        found = []
        for item in doc["Subsystems"]:
            if isinstance(item, dict) and "Name" not in item and "Paths" in item and found:
                found[-1] = {**found[-1], "Paths": item["Paths"]}  # 1.6: the paths follow in their own object
            else:
                found.append(item)
    else:
        raise LinuxInputError(f"{file}:1: JSON without `Subsystems`: expected {NVME}")
    for s in found:
        if not isinstance(s, dict) or not isinstance(s.get("Name"), str) or not isinstance(s.get("NQN"), str):
            raise LinuxInputError(f"{file}:1: a subsystem without its `Name` and `NQN` strings: expected {NVME}")
    return found


def _json(text: str, file: str) -> list[NvmeSubsystem]:
    try:
        doc = loads_bounded(text)
    except (ValueError, JsonBoundError) as exc:
        raise LinuxInputError(f"{file}: not JSON ({exc}): expected {NVME}") from None
    out = []
    for s in _json_subsystems(doc, file):
        where = Source(file, _json_line(text, f'"{s["Name"]}"'))
        paths = s.get("Paths")
        if not isinstance(paths, list) or not paths:
            raise LinuxInputError(f"{where}: {s['Name']} has no `Paths`: the output is cut short, or a subsystem without controllers")
        controllers = []
        for p in paths:
            if not isinstance(p, dict) or not isinstance(p.get("Name"), str):
                raise LinuxInputError(f"{where}: {s['Name']}: a path without its `Name`: expected {{\"Name\": \"nvme0\", \"Transport\": …, \"Address\": …}}")
            at = Source(file, _json_line(text, f'"{p["Name"]}"'))
            state, ana = p.get("State"), p.get("ANAState")
            if state is not None and state not in CONTROLLER_STATES:
                raise LinuxInputError(f"{at}: controller {p['Name']}: State `{state}` is not one the kernel prints (nearest: {nearest(str(state), CONTROLLER_STATES)})")
            if ana is not None and ana not in ANA_STATES:
                raise LinuxInputError(f"{at}: controller {p['Name']}: ANAState `{ana}` is not one the kernel prints (nearest: {nearest(str(ana), ANA_STATES)})")
            controllers.append(NvmeController(p["Name"], str(p.get("Transport", "")), str(p.get("Address", "")), state, ana, at))
        policy = s.get("IOPolicy")
        policy_at = Source(file, _json_line(text, '"IOPolicy"')) if policy is not None else None
        out.append(NvmeSubsystem(s["Name"], s["NQN"], _iopolicy(str(policy), where, s["Name"]) if policy is not None else None, policy_at, controllers, where))
    return out


def parse_nvme(text: str, file: str = "<text>") -> list[NvmeSubsystem]:
    """The subsystems of `nvme list-subsys` output, text or JSON."""
    lines = plain_lines(text)
    refuse_foreign(lines, file, NVME, "--nvme", LinuxInputError)
    first = next((line.strip() for line in lines if line.strip()), "")
    subsystems = _json(text, file) if first[:1] in "{[" else _text(lines, file)
    if not subsystems:
        raise LinuxInputError(f"{file}:1: no subsystem in the file: expected {NVME}")
    named: dict[str, Source] = {}
    for s in subsystems:
        if s.name in named:
            raise LinuxInputError(f"{s.source}: subsystem {s.name} is also at {named[s.name]}: expected each subsystem once (one `nvme list-subsys`)")
        named[s.name] = s.source
    seen: dict[str, Source] = {}
    for s in subsystems:
        for c in s.controllers:
            if c.name in seen:
                raise LinuxInputError(f"{c.source}: controller {c.name} is also at {seen[c.name]}: expected each controller once (one `nvme list-subsys`)")
            seen[c.name] = c.source
    return subsystems


def read_nvme(path: Path) -> list[NvmeSubsystem]:
    """The subsystems of the `nvme list-subsys` output in `path`."""
    return parse_nvme(read_text(path, NVME), str(path))
