"""The `sanlab` command's subcommands: one module each, imported only when the command is used
(`sanlab run` does not import advise, import, lint or sweep).

A command's module has `register(parser)`, which adds its arguments to the subparser the table
made for it, and `main(args) -> int`, which runs it and returns the exit code (`args.argv` is
the command line as typed, for what the command writes down). A mistake in the user's input
raises a `sanlab.errors.UserError`; `sanlab.cli.main` prints it on one line and exits 2.
Adding a command: copy a module, and add a line to COMMANDS (docs/architecture.md).
"""

from __future__ import annotations

import argparse
import importlib
from typing import Protocol


class Command(Protocol):
    """What the table's modules provide."""

    def register(self, parser: argparse.ArgumentParser) -> None: ...

    def main(self, args: argparse.Namespace) -> int: ...


COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("run", "run a scenario and write a run folder with its report"),
    "report": ("report", "write a run folder's report.html again"),
    "compare": (
        "compare",
        "put several runs side by side in one HTML page, or one run beside a host's esxtop capture",
    ),
    "sweep": ("sweep", "run a scenario over a grid of values and seeds on Dask"),
    "validate": ("validate", "check a scenario without running it"),
    "kinds": ("kinds", "list component kinds and their parameters"),
    "calibrate": ("calibrate", "fit scenario values to measured IOPS and latency"),
    "import": ("import_", "build a scenario from a real host's listings"),
    "advise": (
        "advise",
        "search the settings a user can change (path selection, queue depths, ...) for an objective",
    ),
    "lint": ("lint", "flag what makes a fio or vdbench benchmark measure something else than meant"),
    "headroom": ("headroom", "how much more load a scenario takes before an SLO (p99<=5ms ...) fails"),
}
"""Each command's name, as typed: its module in this package, and its line in `sanlab --help`."""


def load(name: str) -> Command:
    """The module of the command `name` (one of COMMANDS)."""
    module: Command = importlib.import_module(f"{__name__}.{COMMANDS[name][0]}")  # type: ignore[assignment]
    return module
