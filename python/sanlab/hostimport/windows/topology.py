"""A Windows host's storage as sanlab models it, from its `mpclaim` listings, in the records the
Linux import builds (`linux/topology.py`: `Topology`, `Array`, `Volume`, `Link`), so that one
scenario writer serves both. Our rules, each said in the scenario beside the value it gives:

- **volumes**: each MPIO disk the Microsoft DSM controls is a `[[volume]]`, named by its system
  disk (`disk2`, Disk Management's and typeperf's number) when the summary gives it, else
  `mpio-disk0`; a disk without its `mpclaim -s -d N` listing is left out (no paths), said;
- **links**: a path `005|000|007|001` (port, bus, target, LUN) runs over the link `005|000|007`
  (the adapter `port5` to one target port), which carries every LUN of that target, as ESXi's
  `vmhbaA:Cc:Tt` and Linux's `H:C:T` do;
- **ALUA states**: the path's `TPG_State` where mpclaim prints one (an ALUA disk), else its state:
  Active/Optimized → AO, Active/Unoptimized → ANO, Unavailable → unavailable; `Standby` without a
  TPG state is the DSM's own standby (Fail Over Only, Round Robin with Subset), not the array's:
  the path stays AO and the policy keeps it out (the subset). A link's state is the most common
  over its disks, the others said;
- **arrays**: disks of one NAA serial prefix (the maker's OUI and the nine digits it assigns, the
  Linux rule on the serial) are one array, and so are disks reached through a common link;
- **controllers**: each target port group (`TPG_Id`) of an array is a controller; an array whose
  paths print none keeps sanlab's two;
- **policies**: mpclaim's codes to sanlab's `mpio_*` kinds (`POLICY_KINDS`); Round Robin with
  Subset's subset is the paths mpclaim lists Active/Optimized, Weighted Paths' weights the Weight
  column; a vendor DSM (LB policy `VS`, or a controlling DSM other than Microsoft's) is refused,
  naming it: its policy is its own.
"""

from __future__ import annotations

from collections import Counter

from sanlab.hostimport.topology import Array, Link, Topology, Volume, wwid_prefix
from sanlab.hostimport.windows.mpclaim import MICROSOFT_DSM, POLICIES, POLICY_CODES, VENDOR
from sanlab.hostimport.windows.records import (
    MpclaimListing,
    MpioDisk,
    MpioPath,
    MpioSummary,
    WindowsInputError,
)

POLICY_KINDS = {
    "FOO": "mpio_failover_only",
    "RR": "mpio_round_robin",
    "RRWS": "mpio_round_robin_subset",
    "LQD": "mpio_least_queue_depth",
    "WP": "mpio_weighted_paths",
    "LB": "mpio_least_blocks",
}
ALUA = {"Active/Optimized": "AO", "Active/Unoptimized": "ANO", "Standby": "standby", "Unavailable": "unavailable"}
NOT_ALUA = ("Symmetric Access", "ALUA Not Supported")


def link_name(p: MpioPath) -> str:
    return f"{p.port:03d}|{p.bus:03d}|{p.target:03d}"


def _alua(disk: MpioDisk, p: MpioPath) -> tuple[str, str]:
    """A path's ALUA state by our rule (module docstring), and why."""
    if p.tpg_state is not None:
        return ALUA[p.tpg_state], f"TPG_State {p.tpg_state}, TPG_Id {p.tpg_id}, {p.source}"
    if p.state == "Standby":
        return "AO", f"Standby without a TPG state ({disk.access or 'no access printed'}): the DSM's standby, kept out by the policy, {p.source}"
    return ALUA[p.state], f"state {p.state}, {p.source}"


def _refuse_vendor(disk: int, summary: MpioSummary | None, listed: MpioDisk | None) -> None:
    if summary is not None and (summary.policy == VENDOR or summary.dsm != MICROSOFT_DSM):
        raise WindowsInputError(f"{summary.source}: MPIO Disk{disk} is controlled by {summary.dsm} (LB Policy {summary.policy}): a vendor DSM's policies are its own; sanlab models the Microsoft DSM's ({' '.join(POLICIES)})")
    if listed is not None and listed.dsm is not None and listed.dsm != MICROSOFT_DSM:
        raise WindowsInputError(f"{listed.source}: MPIO Disk{disk} is controlled by {listed.dsm}: a vendor DSM's policies are its own; sanlab models the Microsoft DSM's ({' '.join(POLICIES)})")
    if listed is not None and POLICY_CODES[listed.policy.lower()] == VENDOR:
        raise WindowsInputError(f"{listed.source}: MPIO Disk{disk}'s policy is {listed.policy}, a vendor DSM's own: sanlab models the Microsoft DSM's ({' '.join(POLICIES)})")


def _volume_name(disk: int, summary: MpioSummary | None) -> str:
    return f"disk{summary.system_disk}" if summary is not None else f"mpio-disk{disk}"


def _arrays(disks: list[tuple[str, MpioDisk]], top: Topology) -> dict[str, str]:
    """volume -> array: one per serial prefix, joined through shared links; fills `top.arrays`."""
    groups: list[tuple[set[str], set[str], set[str]]] = []  # volumes, prefixes, links
    for name, disk in disks:
        prefix = wwid_prefix("3" + (disk.serial or "").lower())
        group = ({name}, {prefix} if prefix else set(), {link_name(p) for p in disk.paths})
        for other in [g for g in groups if g[1] & group[1] or g[2] & group[2]]:
            groups.remove(other)
            group = (group[0] | other[0], group[1] | other[1], group[2] | other[2])
        groups.append(group)
    out: dict[str, str] = {}
    order = [name for name, _ in disks]
    groups.sort(key=lambda g: min(order.index(v) for v in g[0]))
    by_name = dict(disks)
    for k, (volumes, prefixes, _) in enumerate(groups):
        array = f"array{k + 1}"
        members = [v for v in order if v in volumes]
        said = f"serial prefix {', '.join(sorted(p.upper()[1:] for p in prefixes))}…" if prefixes else "no NAA serial prefix"
        top.arrays.append(Array(array, f"{said}: {', '.join(members)} from {by_name[members[0]].source}"))
        out.update(dict.fromkeys(members, array))
    return out


def _links(disks: list[tuple[str, MpioDisk]], array_of: dict[str, str], top: Topology) -> None:
    """The links, their ALUA states and controllers (target port groups)."""
    states: dict[str, Counter[str]] = {}
    why: dict[str, str] = {}
    tpgs: dict[str, Counter[int]] = {}
    for name, disk in disks:
        for p in disk.paths:
            link = link_name(p)
            if link not in states:
                top.links.append(Link(link, f"port{p.port}", array_of[name], p.source))
                states[link], tpgs[link] = Counter(), Counter()
            state, reason = _alua(disk, p)
            states[link][state] += 1
            why.setdefault(f"{link} {state}", reason)
            if p.tpg_id is not None:
                tpgs[link][p.tpg_id] += 1
    for link in top.links:
        link.alua = states[link.name].most_common(1)[0][0]
        link.alua_why = why[f"{link.name} {link.alua}"]
        if len(states[link.name]) > 1:
            top.notes.append(f"link {link.name}: its disks' paths are {dict(states[link.name])}; sanlab gives a link one ALUA state: used {link.alua}")
    for array in top.arrays:
        ids = list(dict.fromkeys(tpgs[link.name].most_common(1)[0][0] for link in top.links if link.array == array.name and tpgs[link.name]))
        if not ids:
            array.controllers_why = "sanlab's default: mpclaim printed no target port group (TPG_Id) for this array's paths"
            continue
        array.controllers = len(ids)
        array.controllers_why = f"one per target port group (TPG_Id {', '.join(map(str, ids))})"
        for link in (x for x in top.links if x.array == array.name and tpgs[x.name]):
            tpg = tpgs[link.name].most_common(1)[0][0]
            link.controller, link.controller_why = ids.index(tpg) + 1, f"its target port group, TPG_Id {tpg}"


def _psp(code: str, disk: MpioDisk, said: str, path_name: dict[str, str]) -> tuple[dict[str, object], str]:
    """The volume's psp table and its comment: the kind, and RRWS's subset or WP's weights."""
    psp: dict[str, object] = {"kind": POLICY_KINDS[code]}
    why = said
    if code == "RRWS":
        psp["subset"] = [path_name[link_name(p)] for p in disk.paths if p.state == "Active/Optimized"]
        why += "; the subset: the paths listed Active/Optimized, the others stand by"
    elif code == "WP":
        psp["weights"] = {path_name[link_name(p)]: p.weight for p in disk.paths}
        why += "; each path's Weight column"
    elif code == "FOO":
        active = [link_name(p) for p in disk.paths if p.state == "Active/Optimized"]
        why += f"; sanlab's mpio_failover_only keeps the first usable path, mpclaim's active one is {active[0] if active else 'none'}"
    return psp, why


def from_mpclaim(listing: MpclaimListing) -> Topology:
    """The host's arrays, links and volumes from its `mpclaim` listings."""
    top = Topology(adapter=("fc", "Fibre Channel assumed: mpclaim does not say the transport (FC, iSCSI or SAS)"))
    top.notes += listing.notes
    disks: list[tuple[str, MpioDisk]] = []
    for number in sorted(set(listing.summary) | set(listing.disks)):
        summary, disk = listing.summary.get(number), listing.disks.get(number)
        _refuse_vendor(number, summary, disk)
        if disk is None:
            assert summary is not None
            top.notes.append(f"{summary.source}: MPIO Disk{number} (Disk {summary.system_disk}) has no `mpclaim -s -d {number}` listing: left out (its paths are not known)")
            continue
        disks.append((_volume_name(number, summary), disk))
    if not disks:
        first = next(iter(listing.summary.values()), None)
        raise WindowsInputError(f"{first.source if first else '<mpclaim>:1'}: no MPIO disk with its paths: give each disk's `mpclaim -s -d N` (N the MPIO disk number) beside `mpclaim -s -d`")
    array_of = _arrays(disks, top)
    _links(disks, array_of, top)
    # A link carrying several volumes names each one's path `<link>:<volume>` (sanlab's rule).
    users = Counter(link for _, disk in disks for link in {link_name(p) for p in disk.paths})
    for name, disk in disks:
        number = disk.mpio_disk
        summary = listing.summary.get(number)
        by_name = POLICY_CODES[disk.policy.lower()]
        code = summary.policy if summary is not None else by_name
        if summary is not None and summary.policy != by_name:
            top.notes.append(f"MPIO Disk{number}: the summary's LB Policy {summary.policy} ({summary.source}) and the listing's {disk.policy} ({disk.source}) differ: used {summary.policy}")
        said = f"LB Policy {code} ({POLICIES[code]}), {summary.source}" if summary is not None else f"{disk.policy} ({code}), {disk.source}"
        if summary is None:
            top.notes.append(f"MPIO Disk{number} ({disk.source}) is in no `mpclaim -s -d` summary: its system disk is not known, so it is `{name}` and no typeperf disk is its")
        path_name = {link: link if users[link] == 1 else f"{link}:{name}" for link in {link_name(p) for p in disk.paths}}
        psp, why = _psp(code, disk, said, path_name)
        volume = Volume(name, array_of[name], psp, why, summary.source if summary is not None else disk.source)
        top.volumes.append(volume)
    return top
