"""Prints the table of claims in docs/validation.md from tests/data/claims.toml, the file the tests
read their targets and tolerances from.

Usage, from the repository root:
       .venv/bin/python docs/validation_table.py            # print the table
       .venv/bin/python docs/validation_table.py --write    # put it into docs/validation.md
       .venv/bin/python docs/validation_table.py --update FILE --write

`--update FILE` takes the `id measured` lines the Rust tests append to FILE when run with
SANLAB_CLAIMS_RECORD=FILE (after a change meant to move the figures) and writes each as the
claim's `ours`, to five significant figures.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = ROOT / "tests" / "data" / "claims.toml"
PAGE = ROOT / "docs" / "validation.md"
BEGIN = "<!-- claims: printed by docs/validation_table.py from tests/data/claims.toml -->"
END = "<!-- end of claims -->"
HEADER = (
    "| figure | source | published | target | tolerance | ours | error | test | our choice |\n"
    "|---|---|---|---|---|---|---|---|---|"
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


def update(recorded: Path, path: Path = CLAIMS) -> int:
    """Writes each recorded figure as its claim's `ours`; returns how many changed."""
    figures = dict(line.split() for line in recorded.read_text(encoding="utf-8").splitlines() if line.strip())
    text = path.read_text(encoding="utf-8")
    blocks = re.split(r"(?m)^(?=\[\[claim\]\])", text)
    changed = 0
    for index, block in enumerate(blocks):
        found = re.search(r'(?m)^id = "([^"]+)"', block)
        if not found or found.group(1) not in figures:
            continue
        ours = f"{float(figures[found.group(1)]):.5g}"
        new = re.sub(r"(?m)^ours = .*$", f"ours = {float(ours)!r}", block)
        changed += new != block
        blocks[index] = new
    path.write_text("".join(blocks), encoding="utf-8")
    return changed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update", type=Path, metavar="FILE", help="write recorded figures as `ours`")
    parser.add_argument("--write", action="store_true", help="put the table into docs/validation.md")
    args = parser.parse_args()
    if args.update:
        print(f"{update(args.update)} claims updated", file=sys.stderr)
    entries = claims()
    if args.write:
        text = PAGE.read_text(encoding="utf-8")
        PAGE.write_text(text.replace(page_section(text), section(entries)), encoding="utf-8")
    else:
        print(table(entries))
    return 0


if __name__ == "__main__":
    sys.exit(main())
