"""How sanlab writes numbers for people: the terminal's tables, the HTML report and its figures'
captions and ticks, the progress lines and the cost estimate all take their text from here, so
that one figure reads alike wherever it is shown.

Formats fixed by a foreign tool (fio's JSON, vdbench's summary lines, esxtop's CSV) stay with
their exporters in `sanlab.export`: they follow that tool, not this module.

A floor of the package: it imports nothing from sanlab.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Sequence


def format_ms(latency_ms: float) -> str:
    """Latency with three significant digits up to 100 ms, whole milliseconds above."""
    if latency_ms <= 0 or not math.isfinite(latency_ms):
        return f"{latency_ms:g}"
    decimals = max(0, min(3, 2 - math.floor(math.log10(latency_ms))))
    return f"{latency_ms:,.{decimals}f}"


def format_count(value: float) -> str:
    """IOPS and similar rates: whole numbers with thousands separators, one decimal below 100."""
    return f"{value:,.1f}" if 0 < abs(value) < 100 and value != int(value) else f"{value:,.0f}"


def format_tenths(value: float) -> str:
    """A figure to one decimal with thousands separators: MB/s, esxtop's queue means (`1,234.5`)."""
    return f"{value:,.1f}"


def format_time_s(seconds: float) -> str:
    """A time in seconds to the millisecond, with thousands separators: `1,234.567`."""
    return f"{seconds:,.3f}"


def format_seconds(value: float | None) -> str:
    """A reaction time: whole seconds, two significant digits under one second, `never` for None."""
    if value is None:
        return "never"
    return f"{value:,.0f}" if value >= 1 or value == 0 else f"{value:.2g}"


def format_fraction(value: float | None, percent: bool = False) -> str:
    """A share (as a percentage with `percent`) or a ratio; `-` for None or NaN."""
    if value is None or math.isnan(value):
        return "-"
    if percent:
        # Shares under 1 % keep two significant digits: 0.016 % and 1.1 % differ 70-fold.
        return f"{100 * value:.2g}" if 0 < value < 0.01 else f"{100 * value:.1f}"
    return f"{value:.2f}"


def format_pct_span(shares: Sequence[float]) -> str:
    """`51 %`, or `4–56 %` for shares (fractions) that print differently."""
    texts = list(dict.fromkeys(f"{100 * share:.0f}" for share in sorted(shares)))
    return f"{texts[0]} %" if len(texts) == 1 else f"{texts[0]}–{texts[-1]} %"


def format_ms_span(values: Iterable[float]) -> str:
    """`30.0 ms` when the latencies print alike, `29.8–31.2 ms` when not."""
    texts = list(dict.fromkeys(format_ms(value) for value in sorted(values)))
    return f"{texts[0]} ms" if len(texts) == 1 else f"{texts[0]}–{texts[-1]} ms"


def format_tick(value: float) -> str:
    """A log axis's tick: `0.05`, `2`, `10,000`, a 1-2-3-5 step written out to its one
    significant digit."""
    if value >= 1:
        return f"{value:,.0f}"
    return f"{value:.{-math.floor(math.log10(value) + 1e-9)}f}"


def format_clock(seconds: float) -> str:
    """Wall time as a clock, `H:MM:SS`."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def format_wall_s(wall_s: float) -> str:
    """A wall time in seconds, to the tenth: `2.1 s`."""
    return f"{wall_s:,.1f} s"


def format_bytes(size_bytes: int) -> str:
    """A memory size: "230 MB", "4.2 GB" (powers of 1000)."""
    return f"{size_bytes / 1e9:,.1f} GB" if size_bytes >= 1e9 else f"{size_bytes / 1e6:,.0f} MB"


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
"""Unicode's control characters (category Cc), as Rust's `char::is_control`."""

_ESCAPES = {"\t": "\\t", "\r": "\\r", "\n": "\\n"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _ESCAPES.get(char) or f"\\u{{{ord(char):x}}}"


def shown_name(name: str) -> str:
    """`name` (of a VM, host, path, variant, job, file...) as the terminal shows it: each control
    character escaped as Rust's `escape_default` writes it (`\\n`, `\\t`, `\\r`, `\\u{1b}`),
    so that an ESC sequence in a name read from a file cannot drive the terminal and a name stays
    on one line. The engine's messages escape names by the same rule
    (`crates/sanlab-spec/src/names.rs`, `escaped`)."""
    return _CONTROL.sub(_escape, name) if _CONTROL.search(name) else name


def few_names(names: Sequence[str], shown: int = 8) -> str:
    """Names for a line a person reads: the first `shown`, escaped, then how many more (an error
    line stays short whatever a scenario holds: 4,096 variants are 8 names and "and 4,088 more")."""
    head = ", ".join(shown_name(name) for name in names[:shown])
    return head if len(names) <= shown else f"{head} and {len(names) - shown:,} more"


def did_you_mean(wanted: str, choices: Iterable[str]) -> str:
    """`; did you mean `x`?` for the nearest of `choices`, or nothing when none is near."""
    nearest = difflib.get_close_matches(wanted, sorted(choices), n=1, cutoff=0.5)
    return f"; did you mean `{nearest[0]}`?" if nearest else ""
