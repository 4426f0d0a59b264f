"""`sanlab kinds [FILTER]`: every kind of every extension point, with its parameters."""

from __future__ import annotations

import argparse

from sanlab import engine
from sanlab.commands.terminal import console
from sanlab.errors import UserError
from sanlab.formatting import did_you_mean
from sanlab.views.summary import print_tables
from sanlab.views.tables import kinds_tables


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "filter",
        nargs="?",
        metavar="FILTER",
        help="only an extension point (psp), a kind (rr), or the kinds whose name holds this text (latency)",
    )


def main(args: argparse.Namespace) -> int:
    kinds = engine.kinds()
    if args.filter is not None:
        wanted = args.filter.lower()
        points = {kind["extension_point"] for kind in kinds}
        names = {kind["kind"] for kind in kinds}
        if wanted in points:
            kinds = [kind for kind in kinds if kind["extension_point"] == wanted]
        elif wanted in names:
            kinds = [kind for kind in kinds if kind["kind"] == wanted]
        else:
            kinds = [kind for kind in kinds if wanted in kind["kind"]]
        if not kinds:
            hint = did_you_mean(wanted, points | names)
            raise UserError(
                f"kinds {args.filter}: no extension point or kind matches; expected one of the extension "
                f"points {', '.join(sorted(points))}, a kind, or part of a kind's name{hint}"
            )
    print_tables(console(), kinds_tables(kinds))
    return 0
