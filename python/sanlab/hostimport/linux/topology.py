"""A Linux host's storage as sanlab models it, from its `multipath -ll` maps and `nvme list-subsys`
subsystems: the arrays, the links (sanlab's `[[path]]`) with their ALUA states, the volumes with
their path selectors, and the host's queueing when no path is left. Our rules, each said in the
scenario beside the value it gives:

- **links**: a SCSI path `H:C:T:L` runs over the link `H:C:T` (the adapter `hostH` to one target
  port), which carries every LUN of that target; an NVMe controller is a link of its own.
- **arrays**: maps of one vendor, product and WWID prefix are one array, and so are maps reached
  through a common target port. The prefix is the NAA name up to the end of its vendor-specific
  identifier: 17 characters of an NAA-6 WWID (`3` `6`, the maker's OUI, nine digits the vendor
  assigns, which arrays use for the array), 8 of an NAA-5 one (the maker's OUI); other
  identifiers (T10, EUI, SCSI names) group by vendor and product alone. One array per NVM
  subsystem (its NQN).
- **controllers**: target ports that share a path group in any map grouped by priority (several
  groups, not one path each) are one controller's ports (an ALUA target port group); other maps
  say nothing, and an array without such a map keeps sanlab's default of two.
- **ALUA states**: the group dm sends I/O to (`status=active`; without one, the highest `prio`)
  is active/optimized, and so is every group of the same priority above 0; every other group is
  active/non-optimized (dm takes it when the first has no usable path, its hardware handler
  activating it). A link's state is the most common over the maps it carries; a note names the
  maps that differ.
- **down**: a path dm has failed, whose checker finds it faulty or whose device is offline; its
  link is taken down at the start when every map's path over it is down.
- **path grouping**: one group holding several paths is `multibus`, one path per group
  `failover`, else `group_by_prio` (sanlab's default, which groups by ALUA state).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter

from sanlab.hostimport.linux.records import LinuxInputError, MultipathMap, NvmeSubsystem, ScsiPath, Source
from sanlab.hostimport.text import nearest
from sanlab.hostimport.topology import Array, Link, Topology, Volume, wwid_prefix

# dm path selectors (the name `multipath -ll` prints in `policy='…'`) -> sanlab's kinds.
SELECTORS = {"round-robin": "dm_round_robin", "queue-length": "dm_queue_length", "service-time": "dm_service_time", "historical-service-time": "dm_historical_service_time"}
# Hardware handlers whose non-active groups are passive paths the handler activates on a switch.
PASSIVE_HANDLERS = ("emc", "rdac", "hp_sw")


class _Union:
    """Union-find over hashable keys (arrays from prefixes and shared ports; controllers)."""

    def __init__(self) -> None:
        self.parent: dict[object, object] = {}

    def find(self, key: object) -> object:
        self.parent.setdefault(key, key)
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def union(self, a: object, b: object) -> None:
        self.parent[self.find(a)] = self.find(b)


def _selector(m: MultipathMap) -> tuple[str, str]:
    """sanlab's kind for the map's path selector, and the selector as printed."""
    printed = m.groups[0].selector
    words = printed.split()
    name = words[0]
    if name not in SELECTORS:
        raise LinuxInputError(f"{m.groups[0].source}: map {m.name}: path selector `{printed}` is not one sanlab models (known: {', '.join(SELECTORS)}; nearest: {nearest(name, list(SELECTORS))})")
    if len(words) < 2 or not words[1].isdigit() or int(words[1]) != len(words) - 2:
        raise LinuxInputError(f"{m.groups[0].source}: map {m.name}: policy='{printed}': expected the selector and the count of its arguments, as `service-time 0`")
    return SELECTORS[name], printed


def _grouping(m: MultipathMap) -> str | None:
    """The path grouping policy the map's groups show, None for group_by_prio (the default)."""
    paths = [p for g in m.groups for p in g.paths]
    if len(m.groups) == 1 and len(paths) > 1:
        return "multibus"
    if len(m.groups) > 1 and all(len(g.paths) == 1 for g in m.groups):
        return "failover"
    return None


def group_states(m: MultipathMap) -> list[str]:
    """Each group's ALUA state by our rule (module docstring)."""
    active = [g for g in m.groups if g.status == "active"]
    chosen = active[0] if active else max(m.groups, key=lambda g: -1 if g.prio is None else g.prio)
    top = chosen.prio if chosen.prio is not None else -1
    return ["AO" if g is chosen or (top > 0 and g.prio == top) else "ANO" for g in m.groups]


def _arrays(maps: list[MultipathMap], links_of: dict[str, list[str]], top: Topology) -> dict[str, str]:
    """map name -> array name; fills `top.arrays`."""
    union = _Union()
    keys = {m.name: ("key", m.vendor or "", m.product or "", wwid_prefix(m.wwid)) for m in maps}
    for m in maps:
        union.find(keys[m.name])
        for link in links_of[m.name]:
            union.union(keys[m.name], ("port", link))
    roots = list(dict.fromkeys(union.find(keys[m.name]) for m in maps))
    names = {root: f"array{k + 1}" for k, root in enumerate(roots)}
    out = {m.name: names[union.find(keys[m.name])] for m in maps}
    for root in roots:
        members = [m for m in maps if union.find(keys[m.name]) == root]
        kinds = sorted({(m.vendor or "?", m.product or "?", wwid_prefix(m.wwid)) for m in members})
        said = "; ".join(f"{v},{p}" + (f" WWID {pre}…" if pre else "") for v, p, pre in kinds)
        why = f"{said}: {len(members)} map(s) from {members[0].source}"
        if len(kinds) > 1:
            top.notes.append(f"{names[root]}: maps of {len(kinds)} vendor/product/WWID prefixes share target ports ({said}): one array")
        top.arrays.append(Array(names[root], why))
    return out


def _controllers(maps: list[MultipathMap], array_of: dict[str, str], top: Topology) -> dict[str, int]:
    """link -> controller (1-based) on its array, for arrays with a map of several groups."""
    union = _Union()
    constrained: set[str] = set()
    for m in maps:
        if len(m.groups) < 2 or _grouping(m) is not None:
            continue  # one group, or one path per group: no target port group to see
        constrained.add(array_of[m.name])
        for g in m.groups:
            ports = [_link_name(p) for p in g.paths if p.hctl is not None]
            for a, b in itertools.pairwise(ports):
                union.union(a, b)
            for port in ports:
                union.find(port)
    out: dict[str, int] = {}
    for array in top.arrays:
        if array.name not in constrained:
            array.controllers_why = "sanlab's default: no map of this array groups its paths by priority to tell controllers apart"
            continue
        ports = [link.name for link in top.links if link.array == array.name and link.name in union.parent]
        roots = list(dict.fromkeys(union.find(p) for p in ports))
        for port in ports:
            out[port] = roots.index(union.find(port)) + 1
        array.controllers = max(1, len(roots))
        array.controllers_why = "target ports sharing a path group are one controller's (a target port group)"
    return out


def _link_name(p: ScsiPath) -> str:
    assert p.hctl is not None
    return f"{p.hctl[0]}:{p.hctl[1]}:{p.hctl[2]}"


def _link_states(maps: list[MultipathMap], top: Topology) -> None:
    """Each link's ALUA state (the most common over its maps) and whether it is down."""
    states: dict[str, Counter[str]] = {}
    first: dict[str, Source] = {}
    paths: dict[str, list[tuple[str, ScsiPath]]] = {}
    for m in maps:
        for g, state in zip(m.groups, group_states(m), strict=True):
            for p in g.paths:
                if p.hctl is None:
                    continue
                name = _link_name(p)
                states.setdefault(name, Counter())[state] += 1
                first.setdefault(name, g.source)
                paths.setdefault(name, []).append((m.name, p))
    for link in top.links:
        counts = states[link.name]
        link.alua = counts.most_common(1)[0][0]
        said = "the group dm uses" if link.alua == "AO" else "a group dm takes when the first has no usable path"
        link.alua_why = f"{said}, {first[link.name]}"
        if len(counts) > 1:
            top.notes.append(f"link {link.name}: its maps' groups make it {dict(counts)}; sanlab gives a link one ALUA state: used {link.alua}")
        down = [(name, p) for name, p in paths[link.name] if p.down]
        if down and len(down) == len(paths[link.name]):
            link.down = " or ".join(sorted({p.down for _, p in down if p.down}))
            link.down_why = str(down[0][1].source)
        elif down:
            top.notes.append(f"link {link.name}: {', '.join(f'{n} ({p.down}, {p.source})' for n, p in down)} down, its other maps' paths up; sanlab's link carries every LUN of its target: left up")


def _queueing(m: MultipathMap) -> tuple[str, str]:
    if "queue_if_no_path" in m.features:
        return "never", f"features queue_if_no_path, {m.features_source}: I/O waits while no path is left (no_path_retry queue, or N checker intervals: -ll does not say which)"
    return "0s", f"features without queue_if_no_path, {m.features_source}: I/O fails at once when no path is left (no_path_retry fail)"


def from_multipath(maps: list[MultipathMap]) -> Topology:
    """The host's arrays, links and volumes from its `multipath -ll` maps."""
    top = Topology(adapter=("fc", "Fibre Channel assumed: `multipath -ll` does not say the transport"))
    kept = []
    for m in maps:
        orphans = [p for g in m.groups for p in g.paths if p.hctl is None]
        if orphans:
            top.notes.append(f"map {m.name}: {len(orphans)} path(s) without a SCSI address (`#:#:#:#`, {orphans[0].source}): left out")
        if not any(p.hctl is not None for g in m.groups for p in g.paths):
            top.notes.append(f"map {m.name} ({m.source}) lists no path with a SCSI address: left out")
            continue
        kept.append(m)
    if not kept:
        raise LinuxInputError(f"{maps[0].source}: no map has a path with a SCSI address (H:C:T:L), only orphans (`#:#:#:# - #:#`) or none: nothing to model; expected paths such as `| |- 2:0:0:0 sdb 8:16 active ready running`")
    links_of = {m.name: list(dict.fromkeys(_link_name(p) for g in m.groups for p in g.paths if p.hctl is not None)) for m in kept}
    seen_disks: dict[str, str] = {}
    for m in kept:
        for p in (p for g in m.groups for p in g.paths if p.devnode):
            if p.devnode in seen_disks and seen_disks[p.devnode] != m.name:
                raise LinuxInputError(f"{p.source}: {p.devnode} is a path of {m.name} and of {seen_disks[p.devnode]}: expected the maps of one host, listed once")
            seen_disks[p.devnode] = m.name  # type: ignore[index]
    array_of = _arrays(kept, links_of, top)
    for m in kept:
        for name in links_of[m.name]:
            if name not in {link.name for link in top.links}:
                first = next(p for g in m.groups for p in g.paths if p.hctl is not None and _link_name(p) == name)
                top.links.append(Link(name, f"host{name.split(':')[0]}", array_of[m.name], first.source))
    for link, controller in _controllers(kept, array_of, top).items():
        next(x for x in top.links if x.name == link).controller = controller
    _link_states(kept, top)
    _volumes(kept, array_of, top)
    return top


def _volumes(maps: list[MultipathMap], array_of: dict[str, str], top: Topology) -> None:
    unmodelled: dict[str, list[str]] = {}
    for m in maps:
        kind, printed = _selector(m)
        psp: dict[str, object] = {"kind": kind}
        grouping = _grouping(m)
        if grouping:
            psp["path_grouping_policy"] = grouping
        others = {g.selector for g in m.groups} - {printed}
        if others:
            top.notes.append(f"map {m.name}: its groups' selectors differ ({printed}, {', '.join(sorted(others))}): used {printed}")
        queueing, queueing_why = _queueing(m)
        features = [w for w in m.features if w != "queue_if_no_path"]
        if features:
            unmodelled.setdefault(" ".join(features), []).append(m.name)
        if m.hwhandler in PASSIVE_HANDLERS and len(m.groups) > 1:
            top.notes.append(f"map {m.name}: hardware handler {m.hwhandler}: its other groups are passive paths the handler activates when dm switches to them, taken as ANO; the switch's own delay is not modelled")
        why = f"policy='{printed}', {m.groups[0].source}" + (f"; {len(m.groups)} groups of one path each: failover grouping" if grouping == "failover" else "; one group of all paths: multibus" if grouping == "multibus" else "")
        disks = [p.devnode for g in m.groups for p in g.paths if p.devnode]
        active = [p.devnode for g, state in zip(m.groups, group_states(m), strict=True) if state == "AO" for p in g.paths if p.devnode and not p.down]
        top.volumes.append(Volume(m.name, array_of[m.name], psp, why, m.source, m.dm, disks, queueing, queueing_why, None, active))  # type: ignore[arg-type]
    for words, names in unmodelled.items():
        top.notes.append(f"features {words} ({', '.join(names)}): not modelled by sanlab")


# NVMe iopolicy -> sanlab's kind.
IOPOLICIES = {"numa": "nvme_numa", "round-robin": "nvme_round_robin", "queue-depth": "nvme_queue_depth"}
# ANA state -> sanlab's ALUA state name (drivers/nvme/host/multipath.c: only optimized and
# non-optimized paths carry I/O; change is a transition).
ANA = {"optimized": "AO", "non-optimized": "ANO", "inaccessible": "unavailable", "persistent-loss": "unavailable", "change": "transitioning"}
UP_CONTROLLER_STATES = ("live", "marginal")


def _host_side(address: str, transport: str) -> str:
    """The adapter an NVMe controller leaves from: its host_traddr, host_iface or src_addr, else
    the transport's name."""
    for key in ("host_traddr", "host_iface", "src_addr"):
        m = re.search(rf"(?:^|[ ,]){key}=([^ ,]+)", address)
        if m:
            return m.group(1)
    return transport or "nvme"


def from_nvme(subsystems: list[NvmeSubsystem], *, first_array: int = 1) -> Topology:
    """The host's arrays, links and volumes from `nvme list-subsys`: one array and one volume per
    NVM subsystem, one link per controller."""
    top = Topology()
    transports: Counter[str] = Counter()
    unlisted_ana = []
    for k, s in enumerate(subsystems):
        array = f"array{first_array + k}"
        top.arrays.append(Array(array, f"NVM subsystem {s.nqn}, {s.source}", None, "sanlab's default: `nvme list-subsys` names no controllers' ports"))
        for c in s.controllers:
            transports[c.transport] += 1
            link = Link(c.name, _host_side(c.address, c.transport), array, c.source)
            if c.ana_state is not None:
                link.alua, link.alua_why = ANA[c.ana_state], f"ANA state {c.ana_state}, {c.source}"
            else:
                unlisted_ana.append(c.name)
            if c.state is not None and c.state not in UP_CONTROLLER_STATES:
                link.down, link.down_why = c.state, str(c.source)
            if c.state == "marginal":
                top.notes.append(f"controller {c.name} ({c.source}) is marginal (FC-NVMe FPIN): kept up; the kernel's policies avoid it while another path is usable, sanlab's do not")
            if c.ana_state == "persistent-loss":
                top.notes.append(f"controller {c.name} ({c.source}): ANA persistent-loss taken as unavailable (no I/O)")
            top.links.append(link)
        if s.iopolicy is not None:
            psp, why = {"kind": IOPOLICIES[s.iopolicy]}, f"iopolicy={s.iopolicy}, {s.iopolicy_source}"
        else:
            psp, why = {"kind": "nvme_numa"}, f"the kernel's default iopolicy (numa): {s.source.file} does not print one (nvme-cli before 2.x, or -o json without -v)"
        number = s.name.removeprefix("nvme-subsys")
        top.volumes.append(Volume(s.name, array, psp, why, s.source, None, [], None, "", rf"nvme{number}n\d+"))
    if unlisted_ana:
        top.notes.append(f"no ANA state for {', '.join(unlisted_ana)}: sanlab's default (optimized) used; `nvme list-subsys /dev/nvmeXnY` prints them")
    kinds = {t: ("fc" if t == "fc" else "ideal") for t in transports}
    transport = transports.most_common(1)[0][0] if transports else "fc"
    if len(transports) > 1:
        top.notes.append(f"controllers over several transports ({dict(transports)}): sanlab gives a host one adapter kind: used {transport}'s")
    if kinds.get(transport) == "ideal":
        top.notes.append(f"transport {transport}: sanlab models no NVMe over {transport} adapter: an ideal adapter (no queue limit of its own) stands in")
    first = next(c.source for s in subsystems for c in s.controllers if c.transport == transport) if subsystems else None
    top.adapter = (kinds.get(transport, "fc"), f"transport {transport} of the NVMe controllers, {first}")
    return top


def merged(scsi: Topology | None, nvme: Topology | None) -> Topology:
    """One host of both: its SCSI maps' topology and its NVMe subsystems' (arrays numbered on)."""
    if scsi is None or nvme is None:
        found = scsi or nvme
        assert found is not None
        return found
    out = Topology(scsi.arrays + nvme.arrays, scsi.volumes + nvme.volumes, scsi.links + nvme.links, scsi.notes + nvme.notes, scsi.adapter)
    if nvme.adapter[0] != scsi.adapter[0]:
        out.notes.append(f"the NVMe controllers' adapter ({nvme.adapter[1]}) is not the SCSI paths' ({scsi.adapter[1]}): sanlab gives a host one adapter kind: used {scsi.adapter[0]}")
    clash = {v.name for v in scsi.volumes} & {v.name for v in nvme.volumes} or {link.name for link in scsi.links} & {link.name for link in nvme.links}
    if clash:
        raise LinuxInputError(f"a map and an NVMe subsystem or controller share the name {sorted(clash)[0]}: expected listings of one host")
    return out
