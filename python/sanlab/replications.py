"""Replications of a run as one document: each variant's headline figures become the mean of its
replications with a 95 % interval beside them (`ci95`), every replication's figures kept.

The engine runs replication r of a variant with the variant's seed + r (replication 0 is the run
as written) and lists the runs replication by replication (each with its `replication`); the same
r on every variant is common random numbers. `combine` groups them:

- `variant["replications"]`: how many; `variant["replicas"]`: each one's seed, I/Os, entity
  reports (VMs, hosts, paths, devices) and time series (left out of the JSON with the variant's);
- each VM, host, path and device: its headline figures (`HEADLINE`, `LATENCY`) are the mean of
  the replications, and `ci95` mirrors them with `[low, high]` (Student's t over the replications,
  `sanlab.intervals`); a percentile whose tail holds too few I/Os in a replication to mean
  anything has `null` there and a note says so;
- everything else of the variant (its jobs' fio statistics, time series, events, queue figures,
  counts) is the first replication's, as the notes say.

With one replication nothing changes: the document is the engine's.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sanlab.document import Document, Variant, first_fault_s, series_by_entity, warmup_s
from sanlab.intervals import MSER_BATCH, Interval, batch_means, mser5

ENTITY_KEYS = ("vms", "hosts", "paths", "devices")
"""The entities whose figures get intervals, as the terminal tables show them."""
HEADLINE = ("iops", "mbps", "read_iops", "write_iops", "share")
"""Rates an entity may report (each where present)."""
LATENCY = ("mean", "p50", "p95", "p99", "p999")
"""The latency figures (`lat_ms`) with intervals; `max` has none (one I/O decides it)."""
TAIL_SHARE = {"p50": 0.5, "p95": 0.05, "p99": 0.01, "p999": 0.001}
"""The share of I/Os at or beyond each percentile."""
TAIL_LEAST_IOS = 10
"""A percentile needs this many I/Os beyond it in every replication to be estimated; fewer, and
one or two I/Os decide it (our choice: the usual rule of thumb for a tail's order statistics)."""
PRECISION_FIGURES = (("vms", "iops"), ("vms", "mean"), ("vms", "p99"))
"""What `--precision` watches: each VM's IOPS, mean and p99 latency."""


def value_of(entity: Mapping[str, Any], figure: str) -> float:
    """An entity's figure: a rate of HEADLINE, or a latency figure of its `lat_ms` (`p99`)."""
    return float(entity[figure] if figure in HEADLINE else entity["lat_ms"][figure])


def ci95_of(entity: Mapping[str, Any], figure: str) -> tuple[bool, list[float] | None]:
    """Whether the entity's intervals cover the figure, and its `[low, high]` (None where a tail
    held too few I/Os). Not covered: a single run, or a percentile under batch means."""
    ci95 = entity.get("ci95")
    if not isinstance(ci95, Mapping):
        return False, None
    bounds = ci95 if figure in HEADLINE else ci95.get("lat_ms") or {}
    if figure not in bounds:
        return False, None
    given = bounds[figure]
    return True, None if given is None else [float(given[0]), float(given[1])]


def combine(doc: Document) -> Document:
    """The engine's document of several replications as one document (see the module)."""
    groups: dict[str, list[Variant]] = {}
    for variant in doc["variants"]:
        groups.setdefault(variant["name"], []).append(variant)
    if all(len(runs) == 1 for runs in groups.values()):
        return doc
    combined = dict(doc)
    combined["variants"] = [_combined_variant(runs) for runs in groups.values()]
    return combined  # type: ignore[return-value]


def merge(first: Document, later: Document) -> Document:
    """Two engine documents of the same run, the second with later replications, as one."""
    merged = dict(first)
    merged["variants"] = [*first["variants"], *later["variants"]]
    merged["cancelled"] = first["cancelled"] or later["cancelled"]
    return merged  # type: ignore[return-value]


def _combined_variant(runs: Sequence[Variant]) -> Variant:
    runs = sorted(runs, key=lambda run: run.get("replication", 0))
    variant: dict[str, Any] = dict(runs[0])
    variant["replications"] = len(runs)
    variant["replicas"] = [
        {
            "replication": run.get("replication", 0),
            "seed": run["seed"],
            "ios": run["ios"],
            **{key: run.get(key, []) for key in ENTITY_KEYS},
            **({"timeseries": run["timeseries"]} if "timeseries" in run else {}),
        }
        for run in runs
    ]
    measured_s = [run["measured_s"] for run in runs]
    for key in ENTITY_KEYS:
        variant[key] = [
            _combined_entity([run[key][i] for run in runs], measured_s)  # type: ignore[literal-required]
            for i in range(len(runs[0].get(key, [])))  # type: ignore[misc]
        ]
    return variant  # type: ignore[return-value]


def _combined_entity(replicas: Sequence[Mapping[str, Any]], measured_s: Sequence[float]) -> dict[str, Any]:
    names = {replica["name"] for replica in replicas}
    if len(names) != 1:
        raise ValueError(f"replications list different entities in one place: {sorted(names)}")
    entity = dict(replicas[0])
    ci95: dict[str, Any] = {}
    for figure in HEADLINE:
        if figure in entity and _numbers(replica[figure] for replica in replicas):
            interval = Interval.of([float(replica[figure]) for replica in replicas])
            entity[figure] = interval.mean
            ci95[figure] = _bounds(interval)
    if isinstance(entity.get("lat_ms"), Mapping):
        latency = dict(entity["lat_ms"])
        latency_ci95: dict[str, list[float] | None] = {}
        for figure in LATENCY:
            values = [replica["lat_ms"].get(figure) for replica in replicas]
            if not _numbers(values):
                continue
            interval = Interval.of([float(value) for value in values])
            latency[figure] = interval.mean
            enough = all(
                _ios(replica, seconds) * TAIL_SHARE.get(figure, 1.0) >= TAIL_LEAST_IOS
                for replica, seconds in zip(replicas, measured_s, strict=True)
            )
            latency_ci95[figure] = _bounds(interval) if enough else None
        entity["lat_ms"] = latency
        ci95["lat_ms"] = latency_ci95
    if all(isinstance(replica.get("stages_ms"), Mapping) for replica in replicas):
        # Means of the stages, which add up to the mean latency as each replication's do.
        entity["stages_ms"] = {stage: statistics.fmean(replica["stages_ms"][stage] for replica in replicas) for stage in entity["stages_ms"]}
    entity["ci95"] = ci95
    return entity


def _numbers(values: Iterable[object]) -> bool:
    """Whether every value is a finite number (the engine writes a figure it has not as null)."""
    return all(isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) for value in values)


def _bounds(interval: Interval) -> list[float]:
    return [interval.low, interval.high]


def _ios(entity: Mapping[str, Any], measured_s: float) -> float:
    """The I/Os an entity completed in the measured time (counted where it reports them)."""
    for key in ("completed", "ios"):
        if isinstance(entity.get(key), int):
            return float(entity[key])
    return float(entity.get("iops") or 0.0) * measured_s


def tail_notes(doc: Document) -> list[str]:
    """One line per variant whose percentiles have too few I/Os beyond them to be estimated."""
    notes = []
    for variant in doc["variants"]:
        thin = sorted(
            {
                figure
                for key in ENTITY_KEYS
                for entity in variant.get(key, [])  # type: ignore[attr-defined]
                for figure, bounds in entity.get("ci95", {}).get("lat_ms", {}).items()
                if bounds is None
            },
            key=LATENCY.index,
        )
        if thin:
            shown = ", ".join(figure.replace("p999", "p99.9") for figure in thin)
            notes.append(
                f"variant {variant['name']}: {shown} of some entities rest on fewer than {TAIL_LEAST_IOS} I/Os "
                "beyond them in a replication: no interval (ci95 null); run longer to estimate them"
            )
    return notes


def replication_note(doc: Document) -> str | None:
    """What the figures of a replicated run are, or None for a run of one replication."""
    counts = sorted({variant.get("replications", 1) for variant in doc["variants"]})
    if counts == [1]:
        return None
    count = " to ".join(str(n) for n in (counts[0], counts[-1])) if len(counts) > 1 else str(counts[0])
    return (
        f"figures are means of {count} replications (seeds s, s+1, ... of each variant) with 95 % intervals "
        "(Student's t); jobs' fio statistics, time series and events are the first replication's"
    )


def relative_half_widths(doc: Document) -> list[tuple[str, float]]:
    """Each figure `--precision` watches, named, with its half-width as a share of its value
    (0 for an exact zero; infinite for a figure with no interval)."""
    shares = []
    for variant in doc["variants"]:
        for key, figure in PRECISION_FIGURES:
            for entity in variant.get(key, []):  # type: ignore[attr-defined]
                _, bounds = ci95_of(entity, figure)
                value = value_of(entity, figure)
                if bounds is None:
                    share = math.inf
                elif bounds[0] == bounds[1]:
                    share = 0.0
                else:
                    share = (bounds[1] - bounds[0]) / 2 / abs(value) if value else math.inf
                shares.append((f"{variant['name']}: {key[:-1]} {entity['name']} {figure}", share))
    return shares



WIDE_SHARE = 0.10
"""An interval whose half-width exceeds this share of its figure is wide: a note names it."""
WIDE_NAMED = 6
"""A wide-interval note names up to this many figures of a variant, the widest first, then counts the others."""
_FIGURE_NAMES = {"iops": "IOPS", "mbps": "MB/s", "read_iops": "read IOPS", "write_iops": "write IOPS",
                 "mean": "mean latency", "p999": "p99.9"}  # fmt: skip


def wide_notes(doc: Document) -> list[str]:
    """One line per variant with 95 % intervals wider than ±WIDE_SHARE of their figure, each
    entity and figure named with its half-width as a share of the figure (the widest WIDE_NAMED,
    then how many more). A percentile without an interval (`tail_notes`) is not counted here."""
    notes = []
    for variant in doc["variants"]:
        wide = sorted(_wide_figures(variant), key=lambda item: -item[0])
        if not wide:
            continue
        named = ", ".join(f"{text} ±{_percent(share)}" for share, text in wide[:WIDE_NAMED])
        more = f" and {len(wide) - WIDE_NAMED} more" if len(wide) > WIDE_NAMED else ""
        notes.append(
            f"variant {variant.get('name', '')}: 95 % intervals wider than ±{100 * WIDE_SHARE:g} % of their "
            f"figure: {named}{more}; more replications narrow them (--replications, --precision)"
        )
    return notes


def _wide_figures(variant: Mapping[str, Any]) -> list[tuple[float, str]]:
    """(half-width as a share of the figure, `vm db p99`) of each wide interval of a variant."""
    wide = []
    for key in ENTITY_KEYS:
        for entity in variant.get(key, []):
            ci95 = entity.get("ci95")
            if not isinstance(ci95, Mapping):
                continue
            latency, latency_ci95 = entity.get("lat_ms") or {}, ci95.get("lat_ms") or {}
            figures = [(figure, entity.get(figure), ci95.get(figure)) for figure in HEADLINE]
            figures += [(figure, latency.get(figure), latency_ci95.get(figure)) for figure in LATENCY]
            for figure, value, bounds in figures:
                if bounds is None or not _numbers([value, *bounds]):
                    continue
                half = (bounds[1] - bounds[0]) / 2
                share = half / abs(value) if value else (math.inf if half > 0 else 0.0)
                if share > WIDE_SHARE:
                    wide.append((share, f"{key[:-1]} {entity['name']} {_FIGURE_NAMES.get(figure, figure)}"))
    return wide


def _percent(share: float) -> str:
    """A half-width's share of its figure in per cent: `12 %` (`∞ %` around a figure of zero)."""
    return "∞ %" if math.isinf(share) else f"{100 * share:.0f} %"


BATCH_PREFIXES = {"vms": "vm", "hosts": "host", "devices": "device", "paths": "path"}
"""The time series' entity prefix of each entity list (`vm/db`)."""


def with_batch_means(doc: Document) -> Document:
    """A run of one replication with batch-means intervals (`sanlab.intervals.batch_means`) on each
    entity's IOPS and mean latency, from its time series: the series past the warm-up cut into
    non-overlapping batches, merged until their means' lag-1 autocorrelation is negligible; the
    latency's batches weighted by their I/Os. Percentiles get none (batch means estimate means).
    Each variant says how (`ci95_method`); where the series make no independent batches, the
    entity has no interval and a note says why."""
    combined = dict(doc)
    combined["variants"] = [_batch_variant(variant) for variant in doc["variants"]]
    return combined  # type: ignore[return-value]


def _per_entity_series(variant: Variant) -> dict[str, dict[str, list[float]]]:
    """Each entity's IOPS and mean-latency series past the warm-up (the samples the engine counts)."""
    found: dict[str, dict[str, list[float]]] = {}
    for (entity, metric), points in series_by_entity(variant, ("iops", "lat_ms_mean"), warmup_s(variant)).items():
        found.setdefault(entity, {})[metric] = [value for _, value in points]
    return found


def _batch_variant(variant: Variant) -> Variant:
    out: dict[str, Any] = dict(variant)
    series = _per_entity_series(variant)
    exact = not variant.get("seed_matters", True)
    batched: list[tuple[int, int]] = []
    without: list[str] = []
    for key, prefix in BATCH_PREFIXES.items():
        entities_out = []
        for entity in variant.get(key, []):  # type: ignore[attr-defined]
            entity = dict(entity)
            found = None if exact else batch_means(series.get(f"{prefix}/{entity['name']}", {}).get("iops", []))
            entity["ci95"] = _batch_ci95(entity, series.get(f"{prefix}/{entity['name']}", {}), found)
            if found is not None and found.interval is None:
                without.append(f"{prefix} {entity['name']}")
            elif found is not None:
                batched.append((found.batches, found.batch_size))
            entities_out.append(entity)
        out[key] = entities_out
    if exact:
        out["ci95_method"] = "exact: nothing random shaped the figures"
        return out  # type: ignore[return-value]
    counts = sorted({batches for batches, _ in batched})
    sizes = sorted({size for _, size in batched})
    span = lambda values: f"{values[0]}" if len(values) == 1 else f"{values[0]} to {values[-1]}"  # noqa: E731
    said = [f"batch means: {span(counts)} batches of {span(sizes)} samples, lag-1 autocorrelation negligible"] if batched else []
    if without:
        said.append(f"no interval for {', '.join(without[:4])}{' …' if len(without) > 4 else ''}: too few independent batches (run longer)")
    out["ci95_method"] = "; ".join(said)
    return out  # type: ignore[return-value]


def _batch_ci95(entity: Mapping[str, Any], series: Mapping[str, list[float]], found: Any) -> dict[str, Any]:
    """An entity's IOPS and mean-latency intervals from its series' batches, centred on its
    figures (`found` None: nothing random, an exact interval)."""
    if found is None:
        latency = {"mean": [entity["lat_ms"]["mean"]] * 2} if "lat_ms" in entity else {}
        return {"iops": [entity["iops"]] * 2, "lat_ms": latency}
    if found.interval is None:
        return {}
    ci95: dict[str, Any] = {"iops": [entity["iops"] - found.interval.half, entity["iops"] + found.interval.half]}
    iops, latency = series.get("iops", []), series.get("lat_ms_mean", [])
    if "lat_ms" in entity and len(latency) == len(iops):
        size = found.batch_size
        means = []
        for start in range(0, found.batches * size, size):
            weights = iops[start : start + size]
            total = sum(weights)
            if total > 0:
                means.append(sum(w * v for w, v in zip(weights, latency[start : start + size], strict=True)) / total)
        if len(means) >= 2:
            half = Interval.of(means).half
            ci95["lat_ms"] = {"mean": [entity["lat_ms"]["mean"] - half, entity["lat_ms"]["mean"] + half]}
    return ci95


def batch_notes(doc: Document) -> list[str]:
    """How a run of one replication got its intervals, one line per variant."""
    return [
        f"variant {variant['name']}: intervals of IOPS and mean latency from one run: {variant['ci95_method']} "
        "(percentiles: run --replications 2 or more)"
        for variant in doc["variants"]
        if "ci95_method" in variant
    ]


TRANSIENT_METRICS = ("iops", "lat_ms_mean")
"""The metrics of each VM's and device's time series MSER-5 reads for a transient."""
TRANSIENT_ENTITIES = ("vm/", "device/")
TRANSIENT_LEAST_SAMPLES = 10 * MSER_BATCH
"""Fewer samples than this and a series says too little to find a transient in (ten batches)."""
TRANSIENT_SHIFT = 0.01
"""A transient past the warm-up is said when cutting it moves the series' mean by more than this share."""


@dataclass(frozen=True)
class Transient:
    """Where MSER-5 ends a series' transient (never past the first fault), and by how much the
    mean past the configured warm-up differs from the mean past that point."""

    series: str
    end_s: float
    shift: float


def transients(variant: Variant) -> Iterator[tuple[str, list[float], list[float]]]:
    """Each VM's and device's TRANSIENT_METRICS series (name, sample times, values), zero where
    an interval had no I/O (nothing measured: no latency)."""
    for (entity, metric), points in series_by_entity(variant, TRANSIENT_METRICS).items():
        if entity.startswith(TRANSIENT_ENTITIES):
            yield f"{entity} {metric}", [t for t, _ in points], [v if math.isfinite(v) else 0.0 for _, v in points]


def transient_past_warmup(variant: Variant) -> Transient | None:
    """The series whose transient (MSER-5 over the run before its first fault: a fault is an event,
    not a transient) ends furthest past the variant's warm-up and moves the series' mean there by
    more than TRANSIENT_SHIFT, or None."""
    series = list(transients(variant))
    if not series:
        return None
    warmup, fault_s = warmup_s(variant), first_fault_s(variant)
    worst: Transient | None = None
    for name, times, values in series:
        if fault_s is not None:
            kept = sum(1 for t in times if t <= fault_s)
            times, values = times[:kept], values[:kept]
        if len(values) < TRANSIENT_LEAST_SAMPLES or not (cut := mser5(values)):
            continue
        end_s = times[cut - 1]
        measured = [v for t, v in zip(times, values, strict=True) if t > warmup]
        settled = values[cut:]
        if end_s <= warmup or not (settled_mean := statistics.fmean(settled)):
            continue
        shift = statistics.fmean(measured) / settled_mean - 1
        if abs(shift) > TRANSIENT_SHIFT and (worst is None or end_s > worst.end_s):
            worst = Transient(name, end_s, shift)
    return worst


def transient_notes(doc: Document) -> list[str]:
    """One line per variant whose configured warm-up is shorter than a transient in its data."""
    notes = []
    for variant in doc["variants"]:
        found = transient_past_warmup(variant)
        if found:
            notes.append(
                f"variant {variant['name']}: the warm-up ({warmup_s(variant):g} s) is shorter than the transient "
                f"MSER-5 finds in {found.series}, which settles at {found.end_s:g} s: its mean past the warm-up "
                f"is {100 * found.shift:+.1f} % off its settled mean; run with --warmup auto, or a warm-up of "
                f"at least {found.end_s:g} s"
            )
    return notes
