"""Prints the table of claims in docs/validation.md from tests/data/claims.toml, the file the tests
read their targets and tolerances from.

Usage, from the repository root:
       .venv/bin/python docs/validation_table.py            # print the table
       .venv/bin/python docs/validation_table.py --write    # put it into docs/validation.md
       .venv/bin/python docs/validation_table.py --update FILE --write
       .venv/bin/python docs/validation_table.py --tests    # the tests that make the claims
       .venv/bin/python docs/validation_table.py --intervals FILE... --write

`--update FILE` takes the `id measured` lines the Rust tests append to FILE when run with
SANLAB_CLAIMS_RECORD=FILE (after a change meant to move the figures) and writes each as the
claim's `ours`, to five significant figures.

`--intervals FILE...` takes one such recording per seed, made with SANLAB_CLAIMS_SEED_OFFSET=R for
R = 0 .. N-1 (replication R: each scenario's seed + R; R = 0 is the page's "ours"), and writes each
claim's `replications = N` and either `exact = true` (every run behind it had nothing random:
the tests mark such a line ` exact`) or `ci95 = [low, high]`, the 95 % interval of the claim's
mean over the N seeds (`sanlab.intervals.Interval.of`).
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

from sanlab.intervals import Interval

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = ROOT / "tests" / "data" / "claims.toml"
PAGE = ROOT / "docs" / "validation.md"
BEGIN = "<!-- claims: printed by docs/validation_table.py from tests/data/claims.toml -->"
END = "<!-- end of claims -->"
HEADER = (
    "| figure | source | published | target | tolerance | ours | error | 95 % interval over seeds | test | our choice |\n"
    "|---|---|---|---|---|---|---|---|---|---|"
)


def claims(path: Path = CLAIMS) -> list[dict[str, Any]]:
    return list(tomllib.loads(path.read_text(encoding="utf-8"))["claim"])


def _number(x: float) -> str:
    """A figure as the page shows it: thousands separated, five significant figures at most."""
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{float(f'{x:.5g}'):g}"


def _tolerance(claim: dict[str, Any]) -> str:
    if "band" in claim:
        low, high = claim["band"]
        return f"{_number(low)}–{_number(high)}"
    return f"±{100 * claim['tolerance']:g} %"


def _interval(claim: dict[str, Any], unit: str) -> str:
    if claim.get("exact"):
        return "exact: nothing random"
    if "ci95" not in claim:
        return "not recorded"
    low, high = claim["ci95"]
    outside = "; target outside" if not low <= claim["target"] <= high else ""
    return f"{_number(low)}–{_number(high)}{unit} over {claim['replications']} seeds{outside}"


def row(claim: dict[str, Any]) -> str:
    unit = f" {claim['unit']}" if claim.get("unit") else ""
    target = _number(claim["target"]) + unit
    if claim.get("derived"):
        target += f" ({claim['derived']})"
    error = 100 * (claim["ours"] / claim["target"] - 1)
    file, _, function = claim["test"].partition("::")
    cells = [
        claim["figure"],
        claim["source"],
        claim["published"],
        target,
        _tolerance(claim),
        _number(claim["ours"]) + unit,
        f"{error:+.1f} %",
        _interval(claim, unit),
        f"`{file}` `{function}`",
        claim.get("choice", "") or "none",
    ]
    return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"


def table(entries: list[dict[str, Any]]) -> str:
    return "\n".join([HEADER, *(row(claim) for claim in entries)])


def section(entries: list[dict[str, Any]]) -> str:
    return f"{BEGIN}\n\n{table(entries)}\n\n{END}"


def page_section(text: str) -> str:
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[start:end]


class RecordingError(Exception):
    """A recording that cannot be read as the tests write it."""


def recorded(path: Path) -> dict[str, tuple[float, bool]]:
    """A recording's figures: claim id to (measured, exact)."""
    figures: dict[str, tuple[float, bool]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fields = line.split()
        if not fields:
            continue
        try:
            if len(fields) not in (2, 3) or fields[2:] not in ([], ["exact"]):
                raise ValueError
            figure = float(fields[1])
        except ValueError:
            raise RecordingError(f"{path}:{number}: expected `id measured` or `id measured exact`, found {line!r}") from None
        if fields[0] in figures:
            raise RecordingError(f"{path}:{number}: claim {fields[0]} recorded twice (one recording per seed)")
        figures[fields[0]] = (figure, fields[2:] == ["exact"])
    return figures


def _with_fields(block: str, fields: dict[str, str | None]) -> str:
    """A claim's block with each field set to its TOML text (in place, or after `ours` when new),
    or removed (None)."""
    for key, value in fields.items():
        line = re.compile(rf"(?m)^{key} = .*$")
        if value is None:
            block = re.sub(rf"(?m)^{key} = .*\n", "", block)
        elif line.search(block):
            block = line.sub(lambda _: f"{key} = {value}", block, count=1)
        else:
            block = re.sub(r"(?m)^(ours = .*\n)", lambda found: f"{found.group(1)}{key} = {value}\n", block, count=1)
    return block


def _rewrite(fields_of: dict[str, dict[str, str | None]], path: Path) -> int:
    """Sets fields of the claims named; returns how many claims changed."""
    blocks = re.split(r"(?m)^(?=\[\[claim\]\])", path.read_text(encoding="utf-8"))
    changed = 0
    for index, block in enumerate(blocks):
        found = re.search(r'(?m)^id = "([^"]+)"', block)
        if not found or found.group(1) not in fields_of:
            continue
        new = _with_fields(block, fields_of[found.group(1)])
        changed += new != block
        blocks[index] = new
    path.write_text("".join(blocks), encoding="utf-8")
    return changed


def _figure(x: float, digits: int) -> str:
    return repr(float(f"{x:.{digits}g}"))


def update(recording: Path, path: Path = CLAIMS) -> int:
    """Writes each recorded figure as its claim's `ours`; returns how many changed."""
    return _rewrite({id: {"ours": _figure(figure, 5)} for id, (figure, _) in recorded(recording).items()}, path)


def intervals(recordings: list[Path], path: Path = CLAIMS) -> int:
    """Writes each claim's interval over the seeds recorded (one file per seed), or `exact`;
    returns how many changed. Every claim must be in every file."""
    seeds = [recorded(recording) for recording in recordings]
    if len(seeds) < 2:
        raise RecordingError(f"--intervals: {len(seeds)} recording given, an interval needs two seeds at least")
    fields_of: dict[str, dict[str, str | None]] = {}
    for claim in claims(path):
        missing = [str(file) for file, seed in zip(recordings, seeds, strict=True) if claim["id"] not in seed]
        if missing:
            raise RecordingError(f"{', '.join(missing)}: no figure for claim {claim['id']} (did its test fail at that seed?)")
        values = [seed[claim["id"]][0] for seed in seeds]
        fields: dict[str, str | None] = {"replications": str(len(values))}
        if all(seed[claim["id"]][1] for seed in seeds):
            if len(set(values)) > 1:
                raise RecordingError(f"claim {claim['id']}: nothing random in its runs, yet the seeds give {min(values)!r} to {max(values)!r}")
            fields |= {"exact": "true", "ci95": None}
        else:
            interval = Interval.of(values)
            fields |= {"exact": None, "ci95": f"[{_figure(interval.low, 6)}, {_figure(interval.high, 6)}]"}
            beyond = [value for value in values if not _within(claim, value)]
            if beyond:
                print(f"{claim['id']}: {len(beyond)} of {len(values)} seeds outside its tolerance ({', '.join(map(_number, beyond))})", file=sys.stderr)
        fields_of[claim["id"]] = fields
    return _rewrite(fields_of, path)


def _within(claim: dict[str, Any], value: float) -> bool:
    if "band" in claim:
        low, high = claim["band"]
        return bool(low <= value <= high)
    return bool(abs(value / claim["target"] - 1) <= claim["tolerance"])


def tests() -> str:
    """The tests that make the claims, as `cargo test` filters (module::function)."""
    named = {claim["test"].replace(".rs::", "::") for claim in claims()}
    return " ".join(sorted(named))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", type=Path, metavar="FILE", help="write recorded figures as `ours`")
    parser.add_argument("--intervals", type=Path, nargs="+", metavar="FILE", help="write intervals from one recording per seed")
    parser.add_argument("--tests", action="store_true", help="print the tests that make the claims, as cargo test filters")
    parser.add_argument("--write", action="store_true", help="put the table into docs/validation.md")
    args = parser.parse_args()
    if args.tests:
        print(tests())
        return 0
    try:
        if args.update:
            print(f"{update(args.update)} claims updated", file=sys.stderr)
        if args.intervals:
            print(f"{intervals(args.intervals)} claims' intervals updated", file=sys.stderr)
    except (OSError, RecordingError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    entries = claims()
    if args.write:
        text = PAGE.read_text(encoding="utf-8")
        PAGE.write_text(text.replace(page_section(text), section(entries)), encoding="utf-8")
    else:
        print(table(entries))
    return 0


if __name__ == "__main__":
    sys.exit(main())
