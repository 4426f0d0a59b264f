"""Every option more than one command takes, defined once: its name, its check and its help.
A command's module calls `add_seed(parser)` and the like; what differs between commands (the
default, a sentence of help) is a parameter, not a copy."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from sanlab.errors import UserError

SEED_LIMIT = 2**63
"""Seeds are whole numbers from 0 to SEED_LIMIT - 1: `--seed` is set as the scenario's `[run] seed`,
a TOML integer (signed 64-bit), which the engine checks too; every command that takes a seed
checks it here, so each says so in one message."""

SEED_HELP = f"0 to 2**63-1 ({SEED_LIMIT - 1})"

DEFAULT_RUNS_DIR = Path("runs")
"""Parent of the default run, sweep and advice folders, relative to the working directory."""


class CommandLineError(UserError):
    """A command line that argparse refused: one `error:` line and exit 2, not usage and error."""


class Parser(argparse.ArgumentParser):
    """argparse with its errors raised as CommandLineError (argparse prints the usage, then the
    error, two lines or more); --help and --version print as argparse does."""

    def error(self, message: str) -> NoReturn:
        raise CommandLineError(f"{self.prog}: {message}; `{self.prog} --help` lists the arguments")


def whole_number(
    least: int, most: int | None = None, noun: str | None = None, span: str | None = None
) -> Callable[[str], int]:
    """A parser of whole numbers from `least` to `most` (no bound when None) that names the
    nearest valid value when one is out of range; `noun` (`a seed`) names the range's values,
    `span` says the range when its figures alone would not (default `least to most`)."""
    span = span or (f"at least {least}" if most is None else f"{least} to {most}")

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            bounds = f" {span}" if most is not None else ""
            raise argparse.ArgumentTypeError(f"expected a whole number{bounds}, got {text!r}") from None
        if value < least or (most is not None and value > most):
            nearest = least if value < least else most
            expected = f"{noun} {span}" if noun else span
            raise argparse.ArgumentTypeError(f"expected {expected}, got {value}; the nearest is {nearest}")
        return value

    return parse


seed = whole_number(0, SEED_LIMIT - 1, "a seed", SEED_HELP)
positive = whole_number(1)

MAX_PARALLEL = 1024
"""Variants at once (`--jobs`) or worker processes (`--workers`): far past any machine's cores, and
below what the engine's thread count and the operating system can hold (2**64 overflowed)."""
parallel = whole_number(1, MAX_PARALLEL)


def override(text: str) -> str:
    key, sep, _ = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return text


def add_scenario(parser: argparse.ArgumentParser, metavar: str = "SCENARIO") -> None:
    parser.add_argument("scenario", metavar=metavar, help="scenario TOML file")


def add_seed(parser: argparse.ArgumentParser, what: str = "base seed", default: str = "the scenario's") -> None:
    parser.add_argument("--seed", type=seed, metavar="N", help=f"{what}, {SEED_HELP} (default: {default})")


def add_set(
    parser: argparse.ArgumentParser,
    what: str = "override a scenario value, e.g. host[0].multipath.psp=rr (repeatable)",
) -> None:
    parser.add_argument(
        "--set",
        dest="sets",
        metavar="KEY=VALUE",
        action="append",
        type=override,
        default=[],
        help=what,
    )


def add_variants(parser: argparse.ArgumentParser) -> None:
    """`--variant NAME`, repeatable: the variants to run (default: all)."""
    parser.add_argument(
        "--variant",
        dest="variants",
        metavar="NAME",
        action="append",
        help="run only this variant (repeatable; default: all)",
    )


def add_variant(parser: argparse.ArgumentParser, what: str) -> None:
    """`--variant NAME` once: the one variant a command works on; `what` is its help."""
    parser.add_argument("--variant", metavar="NAME", help=what)


def add_duration(parser: argparse.ArgumentParser, default: str = "the scenario's", value: str | None = None) -> None:
    """`--duration D`; `value` is the default value when the command has one of its own."""
    parser.add_argument(
        "--duration", metavar="D", default=value, help=f"simulated time of each run (default: {default})"
    )


def add_cluster(
    parser: argparse.ArgumentParser, workers: str = "worker processes of the local cluster (default: one per CPU)"
) -> None:
    """`--workers N | --scheduler ADDRESS`: where the runs of a many-runs command go; `workers` is
    the help of --workers, which says what happens without it."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=parallel, metavar="N", help=workers)
    where.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="address of a running Dask scheduler, as tcp://HOST:8786 (default: a local cluster)",
    )


def add_out(parser: argparse.ArgumentParser, what: str, metavar: str = "DIR", **kwargs: object) -> None:
    """`--out`: the folder or file a command writes; `what` is its help."""
    parser.add_argument("--out", type=Path, metavar=metavar, help=what, **kwargs)  # type: ignore[arg-type]


def add_json(parser: argparse.ArgumentParser, what: str = "print the results as one JSON document and nothing else on stdout") -> None:
    parser.add_argument("--json", action="store_true", help=what)


def add_quiet(parser: argparse.ArgumentParser | argparse._MutuallyExclusiveGroup, what: str) -> None:
    parser.add_argument("--quiet", action="store_true", help=what)
