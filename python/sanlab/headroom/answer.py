"""The answer of `sanlab headroom`: its JSON document (headroom.json, what `--json` prints), the
terminal's short answer, and the reader that checks headroom.json before the command succeeds."""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sanlab.errors import UserError
from sanlab.export.files import loads_bounded
from sanlab.formatting import format_count, format_ms
from sanlab.headroom.bottleneck import closed_at, closed_estimate, describe, throughput_bound
from sanlab.headroom.search import Limit, Point, Search, factor_text
from sanlab.headroom.slo import Slo
from sanlab.headroom.timeline import time_line
from sanlab.views.rows import STAGES

HEADROOM_FILE = "headroom.json"
BOUND_SLACK = 1.02
"""The search's limit may pass the operational-law bound by the noise of a measured utilisation."""
NEXT_SHOWN = 0.5
"""The answer names the next two resources after the bottleneck when they are at least this busy."""
REQUIRED = (
    "scenario",
    "variant",
    "slos",
    "factor",
    "factor_ci95",
    "limit_iops",
    "bottleneck",
    "curve",
    "today",
)


class HeadroomFileError(UserError):
    """A headroom.json that is not one."""


def _interval(point: Point, slo: Slo) -> dict[str, Any]:
    interval = point.interval(slo)
    half = interval.half if math.isfinite(interval.half) else None
    return {
        "mean": interval.mean,
        "ci95": None if half is None else [interval.low, interval.high],
        "n": interval.n,
    }


def curve_rows(search: Search) -> list[dict[str, Any]]:
    """Every point tried, by factor: its IOPS and each SLO figure with its 95 % interval."""
    rows = []
    for point in sorted((p for p in search.points if p.runs), key=lambda p: p.factor):
        iops = point.iops()
        rows.append({
            "factor": point.factor,
            "sets": list(point.sets),
            "seeds": point.seeds(),
            "iops": {"mean": iops.mean, "ci95": [iops.low, iops.high] if math.isfinite(iops.half) else None},
            "figures": {slo.text: _interval(point, slo) for slo in search.slos},
            "vms": point.setup.vms,
            "worst_vm": {slo.text: point.worst(slo) for slo in search.slos},
            "stages_ms": stages_of(point, [point.worst(slo) for slo in search.slos]),
            "verdicts": search.verdicts(point),
            "holds": search.holds(point),
        })  # fmt: skip
    return rows


OPTIONAL_STAGES = ("array_cache",)
"""Stages an older engine does not report (its media time holds the cache's): taken when every
run has them."""


def stages_of(point: Point, names: Sequence[str]) -> dict[str, dict[str, float]]:
    """Where the named VMs' mean latency goes at `point`: each stage's mean over the seeds, and
    the mean latency's (`mean`), so that vm_queues + kavg + davg = mean and fabric and the array's
    parts add up to davg as in each run; a VM some run reports no stages for (an older engine, no
    I/O) is left out."""
    found: dict[str, dict[str, float]] = {}
    seeds = point.seeds()
    for name in dict.fromkeys(names):
        runs = [point.runs[seed].get(name, {}) for seed in seeds]
        if not runs:
            continue
        stages = [
            stage for stage in STAGES if stage not in OPTIONAL_STAGES or _reported(runs, f"stage_{stage}")
        ]
        if not all(_reported(runs, key) for key in ["mean", *(f"stage_{stage}" for stage in stages)]):
            continue
        found[name] = {"mean": _mean(runs, "mean")} | {
            stage: _mean(runs, f"stage_{stage}") for stage in stages
        }
    return found


def _reported(runs: Sequence[Mapping[str, float]], key: str) -> bool:
    return all(key in run and math.isfinite(run[key]) for run in runs)


def _mean(runs: Sequence[Mapping[str, float]], key: str) -> float:
    return sum(run[key] for run in runs) / len(runs)


def _limit_iops(low: Point, high: Point | None, factor: float) -> float:
    """Total IOPS at `factor`, linearly between the bracket's points' means."""
    a = low.iops().mean
    if high is None or high.factor == low.factor:
        return a
    b = high.iops().mean
    return a + (b - a) * (factor - low.factor) / (high.factor - low.factor)


def _vm_iops(point: Point) -> dict[str, float]:
    """Each VM's IOPS at `point`, the mean over its seeds."""
    seeds = point.seeds()
    names = {name for seed in seeds for name in point.runs[seed]}
    return {
        name: sum(point.runs[seed].get(name, {}).get("iops", 0.0) for seed in seeds) / len(seeds)
        for name in names
    }


def headroom_document(
    header: Mapping[str, Any],
    search: Search,
    bracket: tuple[Point | None, Point | None],
    limit: Limit | None,
    utilisation: Mapping[str, list[dict[str, Any]]],
    response: Mapping[str, Any] | None = None,
    closed: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """headroom.json: `header` (scenario, variant, SLOs, growth ...), the search's answer and the
    operational-law bounds (`response`: `bottleneck.response_bound` of today's run; `closed`:
    `bottleneck.closed_loop_bounds`, for a growth of outstanding I/Os)."""
    low, high = bracket
    today = search.point(1.0)
    doc: dict[str, Any] = dict(header)
    doc["today"] = {
        "iops": today.iops().mean,
        "figures": {slo.text: _interval(today, slo) for slo in search.slos},
        "holds": search.holds(today),
    }
    doc["factor"] = limit.factor if limit else None
    doc["factor_ci95"] = [limit.low, limit.high] if limit else None
    doc["binding_slo"] = limit.slo.text if limit and limit.slo else None
    doc["bracket"] = [low.factor if low else None, high.factor if high else None]
    stalled = high is not None and search.stalled(high)
    doc["limited_by"] = (
        "stalled" if stalled else "slo" if limit else "nothing tried failed" if low else "fails today"
    )
    if limit and low and not stalled and not doc.get("whole_counts") and doc.get("vms_today") is None:
        doc["limit_iops"] = _limit_iops(low, high, limit.factor)
    else:  # whole counts' limit (VMs, depths) is the largest count that holds
        doc["limit_iops"] = low.iops().mean if low else None
    at_limit = utilisation.get("limit") or []
    doc["bottleneck"] = at_limit[0] if at_limit else None
    doc["utilisation"] = {key: list(value) for key, value in utilisation.items()}
    now = list(utilisation.get("today", []))
    bound = throughput_bound(now, at_limit, list(doc["grown_vms"]), _vm_iops(today), doc["today"]["iops"])
    if bound["iops"] is not None and doc["limit_iops"] is not None:
        bound["holds"] = doc["limit_iops"] <= bound["iops"] * BOUND_SLACK
    doc["bound"] = bound
    doc["curve"] = curve_rows(search)
    doc["response_bound"] = _response_check(response, doc["slos"], doc["curve"]) if response else None
    doc["closed_bound"] = _closed_check(closed, search, doc, low) if closed else None
    doc["runs"] = search.runs
    doc["stopped"] = search.stopped
    doc["undecided"] = sorted(set(search.undecided))
    doc["stalled"] = sorted(p.factor for p in search.points if p.runs and search.stalled(p))
    return doc


def _worst_mean(point: Point) -> float:
    """The judged VMs' highest mean latency at `point`, each the mean over its seeds (ms)."""
    seeds = point.seeds()
    return max(
        sum(point.runs[seed][name]["mean"] for seed in seeds) / len(seeds) for name in point.setup.judged
    )


def _closed_check(
    bounds: Mapping[str, Any], search: Search, doc: dict[str, Any], low: Point | None
) -> dict[str, Any]:
    """The closed-loop bounds at every point tried (`curve[].closed`), checked: each point's IOPS
    within X(N) and (the judged VMs being the grown ones, each I/O thinking at most once) the
    worst judged VM's mean at least R(N), within BOUND_SLACK; at the limit (the largest count
    that holds); and, for a mean's or a max's ceiling, the largest N the bound lets meet it, an
    instant estimate the limit cannot pass (`estimate`)."""
    found = dict(bounds)
    if "why_none" in found:
        return found
    check_response = bool(found["response_bound"] and found["judged_all"])
    below: list[float] = []
    for point, row in zip(
        sorted((p for p in search.points if p.runs), key=lambda p: p.factor), doc["curve"], strict=True
    ):
        at = closed_at(bounds, point.factor, point.setup.origins if point.setup.vms is not None else None)
        at["iops"] = point.iops().mean
        at["worst_mean_ms"] = _worst_mean(point)
        row["closed"] = at
        over = at["iops"] > at["iops_max"] * BOUND_SLACK
        under = check_response and at["worst_mean_ms"] * BOUND_SLACK < at["response_ms_min"]
        if over or under:
            below.append(point.factor)
    found["outside_on_curve"] = below
    found["holds_on_curve"] = not below
    found["knee_population"] = (found["demand_ms"] + max(c["think_ms"] for c in found["customers"])) / found[
        "bottleneck_demand_ms"
    ]
    found["at_limit"] = (
        next(row["closed"] for row in doc["curve"] if row["factor"] == low.factor)
        if low is not None
        else None
    )
    found["limit_outside"] = low is not None and low.factor in below
    found["estimate"] = {}
    for slo in search.slos:
        if slo.figure not in ("mean", "max"):
            continue
        population = closed_estimate(bounds, slo.limit)
        holds = None
        if population is not None and found["at_limit"] is not None:
            holds = found["at_limit"]["population"] <= population
        found["estimate"][slo.text] = {"population": population, "holds": holds}
    return found


def _response_check(
    response: Mapping[str, Any], slos: Sequence[Mapping[str, Any]], curve: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """R ≥ D checked: the worst judged VM's mean today is at least D (within BOUND_SLACK); so is
    a mean SLO's figure (the worst judged VM's mean) at every point the search tried
    (`holds_on_curve`, the factors where it is not in `below_on_curve`); and a mean SLO below D
    cannot hold at any load (`mean_slo_reachable`)."""
    found = dict(response)
    if found["ms"] is None:
        return found
    mean = found.get("today_mean_ms")
    found["holds"] = None if mean is None or not math.isfinite(mean) else mean * BOUND_SLACK >= found["ms"]
    means = [slo["text"] for slo in slos if slo["figure"] == "mean"]
    below = [
        row["factor"]
        for row in curve
        for text in means
        if row["figures"][text]["mean"] * BOUND_SLACK < found["ms"]
    ]
    found["holds_on_curve"] = None if not means else not below
    found["below_on_curve"] = sorted(set(below))
    found["mean_slo_reachable"] = {
        slo["text"]: found["ms"] <= slo["limit"] for slo in slos if slo["figure"] == "mean"
    }
    return found


def read_headroom(path: Path) -> dict[str, Any]:
    """headroom.json read back: a JSON object with the answer's keys."""
    try:
        doc = loads_bounded(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise HeadroomFileError(f"{path}: not a headroom.json: {exc}") from None
    if not isinstance(doc, dict):
        raise HeadroomFileError(f"{path}: not a headroom.json: expected a JSON object")
    missing = [key for key in REQUIRED if key not in doc]
    if missing:
        raise HeadroomFileError(f"{path}: not a headroom.json: missing {', '.join(missing)}")
    if not isinstance(doc["curve"], list) or not doc["curve"]:
        raise HeadroomFileError(f"{path}: not a headroom.json: `curve` lists no point")
    return doc


def to_json(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, indent=2, allow_nan=False, default=_no_nan) + "\n"


def _no_nan(value: object) -> object:
    raise TypeError(f"not JSON: {value!r}")


def _figure(slo_text: str, figures: Mapping[str, Any], slos: Sequence[Mapping[str, Any]]) -> str:
    slo = next(item for item in slos if item["text"] == slo_text)
    mean = figures[slo_text]["mean"]
    return (
        f"{slo['figure']} {format_ms(mean)} ms" if slo["figure"] != "iops" else f"{format_count(mean)} IOPS"
    )


def _worst_at_limit(doc: Mapping[str, Any]) -> str:
    """Which judged VM decides, at the bracket's top (where the SLO fails), when several are judged."""
    if len(doc["judged_vms"]) < 2 and doc.get("vms") is None:
        return ""
    top = doc["bracket"][1]
    point = next((row for row in doc["curve"] if row["factor"] == top), None)
    if point is None:
        return ""
    worst = ", ".join(f"{slo} worst on VM {name}" for slo, name in point["worst_vm"].items())
    many = f" of {point['vms']} VM{'s' if point['vms'] != 1 else ''}" if point.get("vms") else ""
    return f"judged on the worst VM{many}: at {factor_text(top)}, {worst}"


def _saturation_lines(doc: Mapping[str, Any]) -> list[str]:
    """What saturates first at the limit, and the next ones close behind it."""
    bottleneck = doc["bottleneck"]
    if not bottleneck:
        return []
    limit = f"; DQLEN set by {bottleneck['limit']}" if bottleneck.get("limit") else ""
    lines = [f"first to saturate: {describe(bottleneck)} (utilisation {bottleneck['utilisation']:.2f} at the limit{limit})"]
    following = [item for item in (doc["utilisation"].get("limit") or [])[1:3] if item["utilisation"] >= NEXT_SHOWN]
    if following:
        lines.append("next: " + ", ".join(f"{describe(item)} {item['utilisation']:.2f}" for item in following))
    return lines


def text_lines(doc: Mapping[str, Any]) -> list[str]:
    """The short answer (docs/headroom.md)."""
    slos = doc["slos"]
    today = doc["today"]
    shown = ", ".join(_figure(s["text"], today["figures"], slos) for s in slos if s["figure"] != "iops")
    grown, judged = doc["grown_vms"], doc["judged_vms"]
    judged_text = "" if judged == grown else f"; the SLOs judge VM {', '.join(judged)}"
    lines = [
        f"headroom {doc['scenario']} (variant {doc['variant']}), VMs {', '.join(grown)}{judged_text}: {doc['growth']}"
    ]
    for line in doc.get("scaled", []):
        lines.append(f"  grows: {line}")
    lines.append(f"today {format_count(today['iops'])} IOPS" + (f", {shown}" if shown else ""))
    labels = ("the SLO " if len(slos) == 1 else "the SLOs ") + " and ".join(s["label"] for s in slos)
    verb = "holds" if len(slos) == 1 else "hold"
    factor, span = doc["factor"], doc["factor_ci95"]
    low, high = doc["bracket"]
    if factor is None and low is None and doc.get("vms_today") is not None:
        fewest = min((row["vms"] for row in doc["curve"]), default=doc["vms_today"])
        lines.append(
            f"{labels} {'does' if len(slos) == 1 else 'do'} not hold even with {fewest} VM{'s' if fewest != 1 else ''} "
            f"(today's {doc['vms_today']})"
        )
    elif factor is None and low is None:
        lines.append(
            f"{labels} {'does' if len(slos) == 1 else 'do'} not hold at any load tried (down to {factor_text(high)} of today's)"
        )
    elif factor is None:
        lines.append(
            f"{labels} {verb} at every load tried, up to {factor_text(low)} ({format_count(doc['limit_iops'] or 0)} IOPS)"
        )
    elif doc.get("limited_by") == "stalled":
        lines.append(
            f"{labels} {verb} as far as the load grew: up to {factor_text(low)} ({format_count(doc['limit_iops'])} IOPS); "
            f"at {factor_text(high)} it did not grow (below)"
        )
    elif doc.get("vms") is not None:
        plus = max(factor - span[0], span[1] - factor)
        failing = next((row["vms"] for row in doc["curve"] if row["factor"] == high), None)
        more = doc["vms"] - doc["vms_today"]
        than = (
            f"today's {doc['vms_today']} and {more} more"
            if more >= 0
            else f"{-more} fewer than today's {doc['vms_today']}"
        )
        lines.append(
            f"{labels} {verb} up to {doc['vms']} VM{'s' if doc['vms'] != 1 else ''}, {format_count(doc['limit_iops'])} "
            f"IOPS ({than}); {failing} do not "
            f"(the figure reaches its limit at {factor:.2f} ± {plus:.2f} times today's count)"
        )
    else:
        plus = max(factor - span[0], span[1] - factor)
        lines.append(
            f"{labels} {verb} up to {format_count(doc['limit_iops'])} IOPS (×{factor:.2f} ± {plus:.2f}"
            + (f"; {doc['binding_slo']} binds first)" if len(slos) > 1 and doc["binding_slo"] else ")")
        )
    if doc.get("at_limit_scenario"):
        lines.append(f"at the limit: sanlab run {doc['at_limit_scenario']}")
    elif doc.get("at_limit"):
        lines.append("at the limit: " + " ".join(f"--set {shlex.quote(line)}" for line in doc["at_limit"]))
    elif low == 1.0 and high is not None and doc.get("whole_counts"):
        lines.append(f"at the limit: today's load, the scenario as given ({factor_text(high)} fails)")
    worst = _worst_at_limit(doc)
    if worst:
        lines.append(worst)
    stages = _stages_line(doc)
    if stages:
        lines.append(stages)
    if doc.get("time_to_limit"):
        lines.append(time_line(doc["time_to_limit"], labels, len(slos) == 1))
    lines.extend(_saturation_lines(doc))
    lines.extend(bound_lines(doc))
    lines.append(
        f"{doc['runs']} run{'s' if doc['runs'] != 1 else ''} of {doc['duration_s']:g} s, "
        f"{len(doc['curve'])} point{'s' if len(doc['curve']) != 1 else ''}"
    )
    if doc["stopped"]:
        lines.append(f"stopped: {doc['stopped']}")
    if doc["undecided"]:
        factors = ", ".join(factor_text(f) for f in doc["undecided"])
        lines.append(f"undecided at the seed cap, judged by their means: {factors}")
    if doc.get("stalled"):
        factors = ", ".join(factor_text(f) for f in doc["stalled"])
        lines.append(
            f"the load did not grow at {factors} (no I/O, or under 3/4 of the factor × today's IOPS), "
            "counted as failing: a trace replayed faster ends sooner (a --duration within the replay), "
            "a fio job's iodepth caps the I/Os outstanding (fio holds arrivals back), "
            "or the system cannot take the arrivals"
        )
    lines.extend(f"note: {note}" for note in doc.get("notes", []))
    return lines


STAGE_LABELS = (
    ("vm_queues", "VM queues"), ("kavg", "KAVG"), ("fabric", "fabric"), ("array_front_end", "array front end"),
    ("array_cores", "cores"), ("array_cache", "cache"), ("array_media", "media"),
)  # fmt: skip
"""The stages the terminal names, which add up to the mean (DAVG is fabric and the array's parts);
without `array_cache` (an older engine) the media's time holds the cache's: `cache/media`."""


def _stage_parts(stages: Mapping[str, float]) -> str:
    labels = [
        (key, "cache/media" if key == "array_media" and "array_cache" not in stages else label)
        for key, label in STAGE_LABELS
        if key in stages
    ]
    return ", ".join(f"{label} {format_ms(stages[key])}" for key, label in labels)


def _stages_line(doc: Mapping[str, Any]) -> str | None:
    """Where the worst judged VM's mean latency goes at the largest load that holds (the worst by
    the binding SLO, or the first), or None."""
    point = next((row for row in doc["curve"] if row["factor"] == doc["bracket"][0]), None)
    if point is None or not point.get("stages_ms"):
        return None
    worst = point.get("worst_vm") or {}
    slo = doc.get("binding_slo") or next(iter(worst), None)
    vm = worst.get(slo)
    if vm not in point["stages_ms"]:
        vm, slo = max(point["stages_ms"], key=lambda name: point["stages_ms"][name]["mean"]), None
    stages = point["stages_ms"][vm]
    which = f"the worst by {slo}; " if slo else ""
    parts = _stage_parts(stages)
    return f"where the latency goes at the limit (VM {vm}, {which}mean {format_ms(stages['mean'])} ms): {parts} ms"


def _population(n: float) -> str:
    return f"{n:.0f}" if abs(n - round(n)) < 1e-9 else f"{n:.1f}"


def closed_lines(closed: Mapping[str, Any] | None) -> list[str]:
    """The closed-loop bounds: today's demands, the estimate for a mean's or max's ceiling, and
    their check at the limit and on the curve; or why there are none."""
    if not closed:
        return []
    if "why_none" in closed:
        return [f"no closed-loop bounds: {closed['why_none']}"]
    d, dmax = closed["demand_ms"], closed["bottleneck_demand_ms"]
    thinks = sorted({c["think_ms"] for c in closed["customers"]})
    think = thinks[-1]
    minus = f" − {format_ms(think)} ms" if think else ""
    if len(thinks) > 1:  # several think times: each I/O's cycle apart, R with the largest
        each = f"Σ over the N I/Os of 1 / (D + Z_i), Z_i {format_ms(thinks[0])} to {format_ms(think)} ms"
        with_z, knee = "", ""
    else:
        each = f"N / {format_ms(d + think)} ms"
        with_z = f", Z = {format_ms(think)} ms" if think else ""
        knee = f"; knee N* = {closed['knee_population']:.1f}"
    lines = [
        f"closed-loop bounds, N the outstanding I/Os (today {_population(closed['population_today'])}): "
        f"X(N) ≤ min({each}, 1 / {format_ms(dmax)} ms = {format_count(1000 / dmax)} IOPS), "
        f"R(N) ≥ max({format_ms(d)} ms, N × {format_ms(dmax)} ms{minus}) (D = {format_ms(d)} ms{with_z}; "
        f"Dmax = {format_ms(dmax)} ms, {closed['bottleneck']}{knee})"
        + (f"; left out: {'; '.join(closed['skipped'])}" if closed.get("skipped") else "")
    ]
    for slo, estimate in closed["estimate"].items():
        if estimate["population"] is None:
            lines.append(f"{slo} cannot hold at any N: R(N) ≥ D = {format_ms(d)} ms")
            continue
        check = (
            ""
            if estimate["holds"] is None
            else "; the limit found is within it"
            if estimate["holds"]
            else "; the limit found passes it: check the utilisations"
        )
        lines.append(f"first estimate: {slo} holds at most up to N = {estimate['population']}{check}")
    at = closed.get("at_limit")
    if at:
        mean = (
            f", the worst judged mean {format_ms(at['worst_mean_ms'])} ms" if closed["response_bound"] else ""
        )
        inside = (
            "outside them"
            if closed["limit_outside"]
            else f"within them ({BOUND_SLACK - 1:.0%} allowed for the measured demands' noise)"
        )
        lines.append(
            f"at the limit N = {_population(at['population'])}: X ≤ {format_count(at['iops_max'])} IOPS "
            f"(found {format_count(at['iops'])}), R ≥ {format_ms(at['response_ms_min'])} ms{mean}: {inside}"
        )
    if closed["outside_on_curve"]:
        factors = ", ".join(factor_text(f) for f in closed["outside_on_curve"])
        lines.append(
            f"outside the closed-loop bounds at {factors}: the demands per I/O measured today changed as the "
            "load grew (a drive's reordering serves a deeper queue faster; another mix of the VMs' I/Os), "
            "which the bounds take as fixed"
        )
    if not closed["response_bound"]:
        lines.append(f"no response-time asymptote checked: {closed['why_no_response']}")
    elif not closed["judged_all"]:
        lines.append("R(N) bounds the grown VMs' mean, not the judged VMs' figures: not checked against them")
    return lines


def _drives(resource: Mapping[str, Any], table: Sequence[Mapping[str, Any]]) -> bool:
    """A disk group's drive, or its media (the drives' mean): an array with drives in the table."""
    array = str(resource["name"]).partition("/")[0]
    return resource["kind"] == "drive" or (
        resource["kind"] == "array media"
        and any(item["kind"] == "drive" and item["name"].partition("/")[0] == array for item in table)
    )


def bound_lines(doc: Mapping[str, Any]) -> list[str]:
    """The operational-law bounds, or why there is none (docs/headroom.md)."""
    lines = closed_lines(doc.get("closed_bound"))
    bound = doc.get("bound")
    if bound and bound.get("iops") is not None:
        passed = (
            "; the limit found passes it: the demand per I/O fell as the load grew (a drive's reordering "
            "serves a deeper queue faster), which the law takes as fixed"
            if _drives(bound["resource"], doc["utilisation"].get("today", []))
            else "; the limit found passes it: check the utilisations"
        )
        check = "" if "holds" not in bound else "; the limit found is within it" if bound["holds"] else passed
        lines.append(
            f"operational-law bound: {describe(bound['resource'])} busy {bound['resource']['utilisation']:.2f} "
            f"today, so at most {format_count(bound['iops'])} IOPS (×{bound['factor']:.2f} today's IOPS){check}"
        )
    elif bound:
        lines.append(f"no operational-law throughput bound: {bound['why_none']}")
    response = doc.get("response_bound")
    if response and response["ms"] is None:
        lines.append(f"no response-time bound, every server left out: {'; '.join(response['left_out'])}")
    elif response:
        parts = ", ".join(f"{name} {format_ms(ms)} ms" for name, ms in response["parts_ms"].items())
        check = (
            ""
            if response.get("holds") is None
            else f"; the worst judged VM's mean today ({response['vm']}), {format_ms(response['today_mean_ms'])} ms, "
            + ("is above it" if response["holds"] else "is below it: check the utilisations")
        )
        left = f"; left out: {'; '.join(response['left_out'])}" if response.get("left_out") else ""
        lines.append(f"response time ≥ the demand D = {format_ms(response['ms'])} ms ({parts}){check}{left}")
        if response.get("holds_on_curve") is False:
            factors = ", ".join(factor_text(f) for f in response["below_on_curve"])
            lines.append(f"the mean at {factors} is below D: check the utilisations")
        for slo, reachable in (response.get("mean_slo_reachable") or {}).items():
            if not reachable:
                lines.append(f"{slo} cannot hold at any load: the mean is at least D")
    return lines
