"""docs/validation.md's table of claims is what docs/validation_table.py prints from
tests/data/claims.toml, the file the Rust tests read their targets and tolerances from; every
claim names a test that exists and calls `claim` with that claim's id, and gives its 95 % interval
over seeds or says it is exact."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "crates" / "sanlab-scenario" / "tests" / "all"
TABLE = runpy.run_path(str(ROOT / "docs" / "validation_table.py"))


def test_the_page_prints_the_claims_file() -> None:
    page = (ROOT / "docs" / "validation.md").read_text(encoding="utf-8")
    assert TABLE["page_section"](page) == TABLE["section"](TABLE["claims"]()), (
        "docs/validation.md differs from tests/data/claims.toml: run `.venv/bin/python docs/validation_table.py --write`"
    )


def _function(source: str, name: str) -> str:
    start = re.search(rf"(?m)^fn {re.escape(name)}\(", source)
    assert start, name
    end = source.find("\n}\n", start.end())
    return source[start.start() : end]


def _claimed(body: str) -> list[re.Pattern[str]]:
    """The ids a test body can pass to `claim`: its string literals, a `format!` pattern's `{}`
    parts matching any text (a body that never calls `claim` claims nothing)."""
    if "claim(" not in body:
        return []
    patterns = []
    for literal in re.findall(r'"([^"\\]*)"', body):
        parts = re.split(r"\{[^}]*\}", literal)
        if "." not in literal or not all(parts):
            continue  # not an id: ids are dotted and a placeholder never stands alone or at an end
        patterns.append(re.compile("^" + ".+".join(re.escape(part) for part in parts) + "$"))
    return patterns


def test_every_claim_is_checked_by_the_test_it_names() -> None:
    claims = TABLE["claims"]()
    ids = [claim["id"] for claim in claims]
    assert len(ids) == len(set(ids)), "claim ids repeat"
    for claim in claims:
        file, _, function = claim["test"].partition("::")
        body = _function((TESTS / file).read_text(encoding="utf-8"), function)
        assert any(p.match(claim["id"]) for p in _claimed(body)), f"{claim['test']} does not call claim({claim['id']!r})"
        assert ("band" in claim) != ("tolerance" in claim), f"{claim['id']}: a tolerance or a band, one of them"


def test_every_claim_gives_its_interval_over_seeds_or_is_exact() -> None:
    for claim in TABLE["claims"]():
        where = f"tests/data/claims.toml, claim {claim['id']}"
        assert claim.get("replications", 0) >= 2, f"{where}: no `replications` (record them: docs/validation.md, how to read the intervals)"
        assert claim.get("exact", False) != ("ci95" in claim), f"{where}: `ci95 = [low, high]` or `exact = true`, one of them"
        if "ci95" in claim:
            low, high = claim["ci95"]
            assert low <= high, f"{where}: ci95 {claim['ci95']} is not low to high"
