"""The `sanlab` command: the dispatcher. Each subcommand is a module of `sanlab.commands`,
imported only when it runs (see that package for how to add one).

Exit codes: 0 success, 1 a file could not be written or some sweep runs failed, 2 invalid input
(scenario, override, command line, run folder, or a non-empty --out folder), 3 an internal error
(a bug in sanlab: please report it), 130 interrupted (Ctrl-C; what finished is kept). Every
error is one line on stderr.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from collections.abc import Iterable, Sequence

from sanlab import commands, engine
from sanlab.commands.options import Parser
from sanlab.commands.terminal import error
from sanlab.errors import UserError

__all__ = ["build_parser", "main"]


def _version() -> str:
    """`sanlab 0.1.0 (engine 0.1.0)`: the installed package's version and the native engine's."""
    try:
        package = importlib.metadata.version("sanlab")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree that was not installed
        package = "not installed"
    return f"sanlab {package} (engine {engine.VERSION})"


def build_parser(registered: Iterable[str] | None = None) -> Parser:
    """The argument parser of the `sanlab` command, with the arguments of the commands named in
    `registered` (default: every command; the others are listed, with no arguments)."""
    wanted = set(commands.COMMANDS if registered is None else registered)
    parser = Parser(
        prog="sanlab", description="Simulate the storage I/O path: VM, host queues, multipath, fabric, array."
    )
    parser.add_argument("--version", action="version", version=_version())
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (_, summary) in commands.COMMANDS.items():
        subparser = subparsers.add_parser(name, help=summary)
        if name in wanted:
            commands.load(name).register(subparser)
    return parser


def _named(argv: Sequence[str]) -> list[str]:
    """The command a command line names (its first word that is not an option), if any: the one
    module to import."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return [first] if first in commands.COMMANDS else []


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `sanlab` command; returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser(_named(args_list)).parse_args(args_list)
        args.argv = ["sanlab", *args_list]
        return int(commands.load(args.command).main(args))
    except UserError as exc:
        error(str(exc))
        return 2
    except engine.InternalError as exc:
        error(f"internal error in sanlab, please report: {exc}")
        return 3
    except BrokenPipeError:
        # stdout was closed early (e.g. `| head`): silence the failing final flush.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except FileExistsError as exc:
        error(str(exc))
        return 2
    except OSError as exc:
        error(str(exc))
        return 1
    except KeyboardInterrupt:
        error("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
