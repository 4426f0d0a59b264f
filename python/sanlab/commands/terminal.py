"""What the commands print on: a console for tables, and the one-line error."""

from __future__ import annotations

import sys

from rich.console import Console

from sanlab.formatting import shown_name


def console() -> Console:
    """A terminal console; output that is not a terminal (a file, a pipe) gets 120 columns, not 80."""
    # No markup: a name such as `[red]vm` or `[/]` is text, not a style (`[/]` raised MarkupError).
    return Console(markup=False) if sys.stdout.isatty() else Console(width=120, markup=False)


def error(message: str) -> None:
    """`error: message` on stderr, its control characters (a newline in a name) escaped as names
    are everywhere (`shown_name`): one line."""
    print(f"error: {shown_name(message)}", file=sys.stderr, flush=True)


def warning(message: str) -> None:
    """`warning: message` on stderr, on one line."""
    print(f"warning: {shown_name(message)}", file=sys.stderr, flush=True)
