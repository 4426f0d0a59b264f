"""Names read from a file, as the terminal shows them: the result document with every name (of
a variant, VM, host, path, device, volume, array, job, fault target...) escaped by one rule,
`formatting.shown_name`, before any table, summary or note is made from it.

Escaping the document once, not each cell, leaves no table that forgets a name. Lookups between
parts of the document (a VM's name in its time series, a path's host) still match, since every
string is escaped alike.
"""

from __future__ import annotations

from typing import Any, cast

from sanlab.document import Document
from sanlab.formatting import shown_name

_LEFT_AS_IS = frozenset({"timeseries", "resolved_toml"})
"""Keys not walked: the time series (large; their entity names are escaped only when some name
needed it) and the scenario's resolved TOML (never printed)."""


def _shown(node: Any, changed: list[bool]) -> Any:
    if isinstance(node, str):
        shown = shown_name(node)
        if shown is not node:
            changed[0] = True
        return shown
    if isinstance(node, list):
        return [_shown(item, changed) for item in node]
    if isinstance(node, dict):
        return {
            _shown(key, changed): value if key in _LEFT_AS_IS else _shown(value, changed)
            for key, value in node.items()
        }
    return node


def shown_document(doc: Document) -> Document:
    """A copy of `doc` whose strings have their control characters escaped (`shown_name`); `doc`
    itself when no string has any. The document nests a few levels (results.json's bound is 64)."""
    changed = [False]
    shown = cast(dict[str, Any], _shown(doc, changed))
    if not changed[0]:
        return doc
    for variant in shown.get("variants", []):
        series = variant.get("timeseries")
        if isinstance(series, dict):
            variant["timeseries"] = {
                key: [shown_name(item) if isinstance(item, str) else item for item in values]
                if key in ("entity", "metric") and isinstance(values, list)
                else values
                for key, values in series.items()
            }
    return cast(Document, shown)
