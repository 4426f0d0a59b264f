"""The one class of a user's mistake: every feature's error derives from `UserError`, and the
`sanlab` command catches it once (one `error:` line on stderr, exit 2). A bug in sanlab is not a
`UserError`: it reaches the command as `sanlab.engine.InternalError` (exit 3) or a traceback.

This module is on the ground floor with `document.py`: it imports nothing from sanlab."""

from __future__ import annotations


class UserError(Exception):
    """Bad input (a file, a value, a command line): the message says which, where, what was
    expected and the nearest valid choice, on one line."""
