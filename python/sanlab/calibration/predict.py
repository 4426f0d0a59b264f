"""A prediction that carries the spread of its fitted values: `sanlab calibrate SCENARIO --predict`
(docs/cli.md, "A prediction with the fitted ranges").

The fitted values and their ranges are read back from the header `sanlab calibrate -o` writes
(`#   KEY = VALUE (LOW–HIGH)` under `# ranges: …`), in SCENARIO or the first of its bases that
has one. The scenario then runs as written (at the fitted values) and at each end of each range
with the other values at their fit (2 settings per value), each with the same replications
(replication r at the variant's seed + r, common random numbers across the settings), combined by
the run's own rule (`sanlab.replications.combine`). Each figure `--precision` watches (every VM's
IOPS, mean and p99 latency) is given as the fit's mean with its 95 % interval over the seeds, and
beside it the lowest and highest mean over the fit and the ends: how far the fitted values'
spread moves the prediction. A VM that did no I/O at the fit (one that starts later) is left out.

The ends one at a time, not the corners of the ranges: a range is found with the other values at
their fit, so each end is a setting that fits the measurement within noise, and a corner need not
be (two values that trade off fit along a ridge: two of the NVMe study's four corners fit its
points, two do not). Values moved together along such a ridge can move a prediction further than
either end alone; a figure that peaks inside a range is not bounded by its ends either.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from sanlab import engine
from sanlab.calibration.inputs import CalibrationError
from sanlab.calibration.toml_out import MAX_BASES
from sanlab.replications import PRECISION_FIGURES, ci95_of, combine, value_of

RANGES_HEADER = "# ranges: "
RANGE_LINE = re.compile(
    r"^#   (?P<key>\S+) = (?P<value>\S+) \((?P<low>[^\s–]+)(?: bound)?–(?P<high>[^\s)]+)(?: bound)?\)$"
)
"""A fitted value's line in the header: `#   array[0].media.reorder_window = 14 (13–17)`."""


@dataclass(frozen=True)
class FittedRange:
    """A fitted value and its range, as the calibrated file's header writes them."""

    key: str
    value: str
    low: str
    high: str


@dataclass(frozen=True)
class Predicted:
    """One figure of one VM in one variant: the mean over the seeds at the fitted values, its 95 %
    interval (None: the tail held too few I/Os), and the lowest and highest mean over the fit and
    the ends of the ranges."""

    variant: str
    vm: str
    figure: str
    value: float
    ci95: list[float] | None
    spread: tuple[float, float]


@dataclass(frozen=True)
class Prediction:
    source: Path
    """The calibrated file the ranges were read from."""
    ranges: tuple[FittedRange, ...]
    settings: tuple[str, ...]
    """The ends run besides the fit, each as its override (`KEY=END`)."""
    replications: int
    figures: tuple[Predicted, ...]


def fitted_ranges(scenario: Path) -> tuple[Path, tuple[FittedRange, ...]]:
    """The file with the ranges header (`scenario` or one of its bases) and its fitted ranges."""
    path = scenario
    for _ in range(MAX_BASES + 1):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CalibrationError(f"{path}: cannot read it: {exc}") from None
        lines = text.splitlines()
        starts = [at for at, line in enumerate(lines) if line.startswith(RANGES_HEADER)]
        if starts:
            found = []
            for line in lines[starts[0] + 1 :]:
                match = RANGE_LINE.match(line)
                if not match:
                    break
                found.append(FittedRange(match["key"], match["value"], match["low"], match["high"]))
            if not found:
                raise CalibrationError(
                    f"{path}: its `{RANGES_HEADER.strip()}` line is followed by no `#   KEY = VALUE (LOW–HIGH)` line"
                )
            return path, tuple(found)
        try:
            base = tomllib.loads(text).get("base")
        except tomllib.TOMLDecodeError as exc:
            raise CalibrationError(f"{path}: not TOML: {exc}") from None
        if not isinstance(base, str):
            break
        path = path.parent / base
    raise CalibrationError(
        f"{scenario}: no fitted ranges in it or its bases: --predict runs a scenario `sanlab calibrate -o` "
        "wrote (with its ranges: without --no-range) or one based on it"
    )


def ends(ranges: Sequence[FittedRange]) -> tuple[str, ...]:
    """Each range's ends other than its fitted value, as overrides."""
    return tuple(
        f"{span.key}={end}"
        for span in ranges
        for end in dict.fromkeys((span.low, span.high))
        if end != span.value
    )


def _run(
    scenario: Path,
    variants: Sequence[str] | None,
    sets: Sequence[str],
    seed: int | None,
    duration: str | None,
    replications: int,
    jobs: int,
) -> dict[tuple[str, str, str], tuple[float, list[float] | None]]:
    """One setting's runs, combined: (variant, VM, figure) → (mean, 95 % interval)."""
    try:
        doc = combine(
            engine.run(scenario, variants, sets, seed, duration, jobs=jobs, replications=replications)
        )
    except engine.ScenarioError as exc:
        raise CalibrationError(f"{scenario}: {exc}") from None
    out = {}
    for variant in doc["variants"]:
        for key, figure in PRECISION_FIGURES:
            for entity in variant[key]:  # type: ignore[literal-required]
                out[variant["name"], entity["name"], figure] = (
                    value_of(entity, figure),
                    ci95_of(entity, figure)[1],
                )
    return out


def predict(
    scenario: Path,
    variants: Sequence[str] | None,
    sets: Sequence[str],
    seed: int | None,
    duration: str | None,
    replications: int,
    jobs: int,
    on_setting: Callable[[int, int], None] = lambda done, total: None,
) -> Prediction:
    """Runs `scenario` at its fitted values and at the ends of their ranges (see the module);
    `on_setting` hears each setting done, of how many."""
    source, ranges = fitted_ranges(scenario)
    settings = ends(ranges)
    total = 1 + len(settings)
    runs = [_run(scenario, variants, sets, seed, duration, replications, jobs)]
    on_setting(1, total)
    for done, end in enumerate(settings, start=2):
        runs.append(_run(scenario, variants, [*sets, end], seed, duration, replications, jobs))
        on_setting(done, total)
    figures = []
    for (variant, vm, figure), (value, ci95) in runs[0].items():
        if runs[0][variant, vm, "iops"][0] == 0:
            continue  # a VM that did no I/O at the fit (one not started yet) predicts nothing
        means = [run[variant, vm, figure][0] for run in runs]
        figures.append(Predicted(variant, vm, figure, value, ci95, (min(means), max(means))))
    return Prediction(source, ranges, settings, replications, tuple(figures))
