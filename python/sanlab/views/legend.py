"""A table's legend (its caption) that wraps between its items only.

rich wraps a caption at any space (a no-break space too) within the table's width, so on an
80-column pipe `u unavailable` became `u` at a line's end and `unavailable` at the next one's
start, and a narrow table squeezed its legend into a column of broken phrases. A `Legend` lays
out its items itself: as many whole items a line as the console's width takes (the table's width
when that is wider), separated by `; `; an item longer than a line starts a line of its own and
only it wraps, at its words.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Sequence

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

SEPARATOR = "; "
NBSP = "\u00a0"


class Legend(Text):
    """The items of a table's legend, each whole on a line when it fits one.

    A `Text` (what a rich table takes as its caption) whose plain text is the items joined by `; `,
    rendered at the console's width rather than the table's, so a narrow table's legend is not
    squeezed into a column.
    """

    def __init__(self, items: Iterable[str]) -> None:
        self.items: Sequence[str] = [item for item in items if item]
        super().__init__(SEPARATOR.join(self.items), style="table.caption", justify="left")

    def lines(self, width: int) -> list[str]:
        """The legend's lines at `width` columns: items packed greedily, none split unless it is
        longer than `width` (then it alone wraps, at its words, from the start of a line)."""
        width = max(width, 1)
        lines: list[str] = []
        current = ""
        for index, item in enumerate(self.items):
            piece = item + (SEPARATOR.rstrip() if index < len(self.items) - 1 else "")
            if current and len(current) + 1 + len(piece) <= width:
                current = f"{current} {piece}"
                continue
            if current:
                lines.append(current)
            if len(piece) <= width:
                current = piece
                continue
            # A number stays with its unit (`5 %`, `2 s`): textwrap breaks at ASCII spaces only.
            kept = re.sub(r"(?<=\d) (?=\S{1,3}(?:\s|$))", NBSP, piece)
            parts = [part.replace(NBSP, " ") for part in textwrap.wrap(kept, width, break_on_hyphens=False)]
            lines.extend(parts[:-1])
            current = parts[-1]
        if current:
            lines.append(current)
        return lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(options.max_width, console.width)
        text = Text("\n".join(self.lines(width)), style=self.style, justify="default", no_wrap=True)
        yield from text.__rich_console__(console, options.update(width=width, no_wrap=True, overflow="ignore"))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        longest = max((len(item) for item in self.items), default=0)
        return Measurement(min(longest, options.max_width), len(self.plain))


def legend(text: str | Sequence[str]) -> Legend:
    """A `Legend` of `text`'s items: given as a list, or one text whose items are separated by `; `
    (the captions the HTML report shows too)."""
    return Legend(text.split(SEPARATOR) if isinstance(text, str) else text)
