"""Values written as TOML text, for the scenarios sanlab writes (a calibrated scenario, an
imported host): one writer, so every string is escaped alike."""

from __future__ import annotations

import json
import math
import re
from typing import Any

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")
# Unicode's control characters (Cc): TOML allows none in a comment but tab, and a line break ends it.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_ESCAPES = {"\t": "\\t", "\r": "\\r", "\n": "\\n"}


def toml_key(name: str) -> str:
    """A TOML key: bare when it can be, else quoted."""
    return name if _BARE.match(name) else json.dumps(name, ensure_ascii=False)


def toml_value(value: Any) -> str:
    """A value as TOML writes it inline: a string quoted and escaped as JSON does (TOML reads
    the same escapes), a table inline."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        # JSON's escapes are TOML's, but JSON leaves DEL raw, which TOML refuses in a string.
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, dict):
        return (
            "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }" if value else "{}"
        )
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return str(value.isoformat()) if hasattr(value, "isoformat") else json.dumps(str(value))


def toml_comment(text: str) -> str:
    """`text` (a file name, a listing's config string) as the body of a TOML comment: one line,
    each control character escaped as `formatting.shown_name` escapes it (`\\n`, `\\u{1b}`), so
    a line break read from a listing cannot start a table of its own."""
    return _CONTROL.sub(lambda m: _ESCAPES.get(m.group()) or f"\\u{{{ord(m.group()):x}}}", text)
