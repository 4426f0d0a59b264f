"""How path selectors cope with poor health, computed from a run's results.

Per variant and device, from the per-path time series (`path/<name>` `iops`), `paths[]`,
`devices[]` and the variant's resolved scenario (its `[[event]]` tables):

- **reaction**: seconds from the start of a `link_latency` event on one of the device's paths
  until the end of the first sample from which on that path carries under REACTED_SHARE (5 %)
  of the device's I/O until it recovers -- or under half an equal split when that is lower:
  with 20 paths an equal split is 5 % itself. None when it never does, or only in the last
  HOLD_S of the degradation (a rotation that skips the path for a sample is no reaction). The
  resolution is the run's `sample_interval`. Only meaningful when the path carried at least half
  an equal split over the EXPOSURE_S before the event (`used_before`): a selector that was not
  using it has nothing to react to.
- **degraded share**: the path's I/O over the device's I/O while degraded.
- **flaps per hour**: in each sample the paths *in use* are those that carry at least
  IN_USE_FRACTION of an equal split of the device's I/O (with 4 paths: 12.5 %); a flap is a sample
  whose set in use differs from the previous sample's (samples without I/O are skipped). Flaps
  are counted over the whole run and divided by its length in hours. This sees every selector
  alike, whether it announces decisions in `psp_events` or just shifts load.
- **balance**: across the controllers of the array that carried the device's I/O, the least
  loaded one's I/O over the most loaded one's (1: even, 0: one idle); across that array's paths
  when the results name no controllers.
- **windowed balance**: the same ratio over consecutive windows of a given length, for the
  question of how long one must sample before the shares look balanced.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from sanlab.document import DeviceReport, Document, PathReport, Variant
from sanlab.resolved import resolved_scenario

REACTED_SHARE = 0.05
"""A degraded path is left once it carries under this share of its device's I/O."""

HOLD_S = 10.0
"""A reaction must last this long: a path that a rotation skips for a sample has not been left."""

EXPOSURE_S = 30.0
"""A degraded path was in use when it carried its share over this long before the degradation."""

IN_USE_FRACTION = 0.5
"""A path is in use in a sample when it carries at least this fraction of an equal split."""

BALANCED = 0.8
"""Shares look balanced when the least loaded part carries at least this fraction of the most loaded's."""


@dataclass(frozen=True)
class Degradation:
    """A `link_latency` event: the `[[path]]` (link) name and when it starts and ends, in s."""

    link: str
    start_s: float
    end_s: float


@dataclass(frozen=True)
class Shares:
    """One device's per-path I/O per sample: sample end times (s) and, per path, I/Os per s."""

    times_s: list[float]
    iops: dict[str, list[float]]

    def totals(self) -> list[float]:
        return [sum(column) for column in zip(*self.iops.values(), strict=True)] if self.iops else []


@dataclass(frozen=True)
class DeviceHealth:
    """The health figures of one device in one variant (see the module's docstring)."""

    variant: str
    device: str
    selector: str
    iops: float
    p99_ms: float
    p999_ms: float
    degraded_path: str | None
    used_before: bool
    reaction_s: float | None
    degraded_share: float | None
    flaps_per_hour: float
    balance: float | None
    balance_over: str


_UNITS_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


def duration_s(text: str) -> float:
    """A resolved scenario's duration (`"60s"`, `"180000000000ns"`, `"1.5ms"`) in seconds."""
    number = text.rstrip("abcdefghijklmnopqrstuvwxyzµ")
    unit = text[len(number) :]
    if unit not in _UNITS_S or not number:
        raise ValueError(f"not a duration: {text!r}")
    return float(number) * _UNITS_S[unit]


def degradations(variant: Variant) -> list[Degradation]:
    """The variant's one-off `link_latency` events (repeating ones are flapping, not a degradation);
    empty when the document does not carry the resolved scenario."""
    found = []
    for event in resolved_scenario(variant).get("event", []):
        if event.get("kind") != "link_latency" or "every" in event:
            continue
        end = duration_s(event["until"]) if "until" in event else float(variant["sim_time_s"])
        found.append(Degradation(event["path"], duration_s(event["at"]), end))
    return found


def selector(variant: Variant, host: str) -> str:
    """The path selector kind of `host` in the variant's resolved scenario ("" when unknown)."""
    for entry in resolved_scenario(variant).get("host", []):
        if entry.get("name") == host:
            psp = entry.get("multipath", {}).get("psp", {})
            # A kind's name alone (`psp = "rr"`) stands for its table.
            return psp if isinstance(psp, str) else str(psp.get("kind", ""))
    return ""


def link_of(name: str, volume: str) -> str:
    """The `[[path]]` (link) name of a result path named `name`: without `:<volume>`."""
    suffix = f":{volume}"
    return name[: -len(suffix)] if name.endswith(suffix) else name


def device_shares(variant: Variant, device: DeviceReport) -> Shares:
    """The per-path IOPS series of a device's paths, aligned on the sample times."""
    return every_device_shares(variant)[device["host"], device["name"]]


def every_device_shares(variant: Variant) -> dict[tuple[str, str], Shares]:
    """`device_shares` of each of the variant's devices, by host and device name, from one pass
    over its series: a pass per device is quadratic (1,024 devices times millions of rows)."""
    paths: dict[tuple[str, str], list[str]] = {}
    for path in variant["paths"]:
        paths.setdefault((path["host"], path["device"]), []).append(path["name"])
    by_path: dict[str, dict[float, float]] = {name: {} for names in paths.values() for name in names}
    series = variant["timeseries"]
    for t_s, entity, metric, value in zip(
        series["t_s"], series["entity"], series["metric"], series["value"], strict=True
    ):
        if metric == "iops" and entity.startswith("path/") and entity[5:] in by_path:
            by_path[entity[5:]][t_s] = value
    found = {}
    for device in variant["devices"]:
        ordered = paths.get((device["host"], device["name"]), [])
        times = sorted({t for name in ordered for t in by_path[name]})
        found[device["host"], device["name"]] = Shares(
            times, {name: [by_path[name].get(t, 0.0) for t in times] for name in ordered}
        )
    return found


def left_below(shares: Shares) -> float:
    """The share under which a path counts as left: REACTED_SHARE, or half an equal split of the
    device's paths when that is lower (with 20 paths an equal split is 5 % itself)."""
    return min(REACTED_SHARE, IN_USE_FRACTION / len(shares.iops))


def reaction_s(shares: Shares, path: str, start_s: float, end_s: float) -> float | None:
    """Seconds from `start_s` to the end of the first sample in (start_s, end_s] from which on
    `path` carries under `left_below` of the I/O until `end_s`, at least HOLD_S long; None
    otherwise (a dip that does not last is not a reaction)."""
    threshold = left_below(shares)
    found = None
    for t_s, bad, total in zip(shares.times_s, shares.iops[path], shares.totals(), strict=True):
        if not start_s < t_s <= end_s or total <= 0:
            continue
        below = bad / total < threshold
        found = (t_s - start_s if found is None else found) if below else None
    # Samples end at start_s + found; the stretch below ends with the degradation.
    return found if found is not None and end_s - start_s - found + _interval_s(shares) >= HOLD_S else None


def _interval_s(shares: Shares) -> float:
    return shares.times_s[1] - shares.times_s[0] if len(shares.times_s) > 1 else 0.0


def used_before(shares: Shares, path: str, start_s: float) -> bool:
    """Whether `path` carried at least half an equal split of the I/O in the EXPOSURE_S before
    `start_s`: a selector that was not using a path has nothing to react to when it degrades."""
    share = share_between(shares, path, start_s - EXPOSURE_S, start_s)
    return share is not None and share >= IN_USE_FRACTION / len(shares.iops)


def share_between(shares: Shares, path: str, start_s: float, end_s: float) -> float | None:
    """`path`'s share of the I/O in the samples ending in (start_s, end_s]; None without I/O."""
    bad = total = 0.0
    for t_s, x, all_paths in zip(shares.times_s, shares.iops[path], shares.totals(), strict=True):
        if start_s < t_s <= end_s:
            bad += x
            total += all_paths
    return bad / total if total > 0 else None


def in_use(shares: Shares) -> list[frozenset[str]]:
    """Per sample with I/O, the paths carrying at least IN_USE_FRACTION of an equal split."""
    names = list(shares.iops)
    sets = []
    for index, total in enumerate(shares.totals()):
        if total <= 0:
            continue
        floor = IN_USE_FRACTION * total / len(names)
        sets.append(frozenset(name for name in names if shares.iops[name][index] >= floor))
    return sets


def flaps_per_hour(shares: Shares) -> float:
    """Changes of the set in use between consecutive samples with I/O, per hour of the run."""
    sets = in_use(shares)
    if len(shares.times_s) < 2:
        return 0.0
    interval_s = _interval_s(shares)
    hours = len(shares.times_s) * interval_s / 3600
    changes = sum(1 for before, after in itertools.pairwise(sets) if before != after)
    return changes / hours


def balance(loads: Sequence[float]) -> float | None:
    """min / max of `loads` (1: even, 0: one part idle); None with fewer than two parts or no load."""
    if len(loads) < 2 or max(loads) <= 0:
        return None
    return min(loads) / max(loads)


def _busiest_array(
    variant: Variant, device: DeviceReport
) -> tuple[str, list[PathReport]]:
    paths = [p for p in variant["paths"] if p["device"] == device["name"] and p["host"] == device["host"]]
    by_array: dict[str, list[PathReport]] = {}
    for path in paths:
        by_array.setdefault(path["array"], []).append(path)
    array = max(by_array, key=lambda name: sum(p["ios"] for p in by_array[name]))
    return array, by_array[array]


def controller_loads(paths: Sequence[PathReport]) -> tuple[str, dict[str, float]]:
    """I/Os per controller of `paths` ("controllers"), or per path when no path names its
    controller ("paths")."""
    if all("controller" in path for path in paths):
        loads: dict[str, float] = {}
        for path in paths:
            loads[path["controller"]] = loads.get(path["controller"], 0.0) + path["ios"]
        return "controllers", loads
    return "paths", {path["name"]: float(path["ios"]) for path in paths}


def windowed_balance(shares: Shares, paths: Sequence[str], window_s: float) -> list[float]:
    """balance() of `paths`' I/O in each whole window of `window_s` (a multiple of the sample
    interval), in time order; windows without I/O are left out."""
    if len(shares.times_s) < 2:
        return []
    interval_s = _interval_s(shares)
    per_window = max(1, round(window_s / interval_s))
    found = []
    for first in range(0, len(shares.times_s) - per_window + 1, per_window):
        loads = [sum(shares.iops[name][first : first + per_window]) for name in paths]
        ratio = balance(loads)
        if ratio is not None:
            found.append(ratio)
    return found


def device_health(variant: Variant, device: DeviceReport, shares: Shares | None = None) -> DeviceHealth:
    """The health figures of one device of one variant (its `device_shares` when known)."""
    if shares is None:
        shares = device_shares(variant, device)
    links = {link_of(name, device["volume"]): name for name in shares.iops}
    degraded = next((d for d in degradations(variant) if d.link in links), None)
    path = links[degraded.link] if degraded else None
    over, loads = controller_loads(_busiest_array(variant, device)[1])
    lat = device["lat_ms"]
    return DeviceHealth(
        variant=variant["name"],
        device=device["name"],
        selector=selector(variant, device["host"]),
        iops=float(device["iops"]),
        p99_ms=float(lat["p99"]),
        p999_ms=float(lat["p999"]),
        degraded_path=path,
        used_before=bool(degraded and path and used_before(shares, path, degraded.start_s)),
        reaction_s=reaction_s(shares, path, degraded.start_s, degraded.end_s) if degraded and path else None,
        degraded_share=share_between(shares, path, degraded.start_s, degraded.end_s)
        if degraded and path
        else None,
        flaps_per_hour=flaps_per_hour(shares),
        balance=balance(list(loads.values())),
        balance_over=over,
    )


def health(doc: Document) -> list[DeviceHealth]:
    """Every device of every variant, in run order."""
    found = []
    for variant in doc["variants"]:
        shares = every_device_shares(variant)
        found += [
            device_health(variant, device, shares[device["host"], device["name"]]) for device in variant["devices"]
        ]
    return found


def compares_selectors(doc: Document) -> bool:
    """Whether the run puts at least two path selector kinds side by side (then `sanlab run`
    prints the health table)."""
    kinds = {
        selector(variant, host["name"]) for variant in doc["variants"] for host in variant.get("hosts", [])
    }
    kinds.discard("")
    return len(kinds) >= 2
