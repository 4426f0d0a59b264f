"""Variants grouped by the prefix of their names: `notice-fixed`, `notice-mru`, `silent-fixed` … are
the groups `notice` and `silent` of the suffixes (the compared settings) `fixed` and `mru`.

The report draws each group in its own small panel and colours each suffix alike in every panel;
a scenario whose names have no such structure keeps one plot for all variants.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

SEPARATORS = ("/", "-")
"""Tried in order: `sanlab compare` and vdbench runs join names with `/`, studies with `-`. Not `_`,
which joins the words of one name (`rr_iops1`, `shared_pe_esxi`)."""


@dataclass(frozen=True)
class Groups:
    """Variants by name prefix (`group`) and suffix, both in run order."""

    separator: str
    members: dict[str, list[str]]
    """Each group's variants."""
    suffixes: list[str]
    """Every suffix, in order of first appearance."""

    def suffix(self, variant: str) -> str:
        return variant.rpartition(self.separator)[2]

    def group(self, variant: str) -> str:
        return variant.rpartition(self.separator)[0]


def variant_groups(names: Sequence[str], max_suffixes: int) -> Groups | None:
    """The grouping of `names` by the first of SEPARATORS that gives one, or None.

    A name splits at its last separator. A grouping needs every name split, two groups or more, a
    group of two variants or more, a suffix found in two groups or more (the settings are compared
    across groups) and at most `max_suffixes` suffixes (the palette's colours: no two suffixes share
    one).
    """
    for separator in SEPARATORS:
        if not names or not all(separator in name for name in names):
            continue
        members: dict[str, list[str]] = {}
        for name in names:
            members.setdefault(name.rpartition(separator)[0], []).append(name)
        suffixes: dict[str, set[str]] = {}
        for group, variants in members.items():
            for name in variants:
                suffixes.setdefault(name.rpartition(separator)[2], set()).add(group)
        if (
            len(members) >= 2
            and any(len(variants) >= 2 for variants in members.values())
            and any(len(groups) >= 2 for groups in suffixes.values())
            and len(suffixes) <= max_suffixes
        ):
            return Groups(separator, members, list(suffixes))
    return None
