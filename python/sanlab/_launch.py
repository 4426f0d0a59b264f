"""The `sanlab` command's entry point. On Linux it first restarts the interpreter with glibc's
malloc asked to back its heap with transparent huge pages (`glibc.malloc.hugetlb=1`), before
anything is imported: at data-centre scale most of an I/O's time is spent on TLB and cache misses
over hundreds of MiB of histograms, and huge pages take about a fifth of the engine's CPU time off
a 10,000-VM run (docs/performance.md). The engine runs on a thread of its own (the progress line
is drawn by the main one), and glibc gives such a thread an arena that the tunable leaves in small
pages (22 of 294 MiB in huge pages, measured), so all threads share the main arena
(`glibc.malloc.arena_max=1`; the event loop does not allocate, so no thread waits on it). A user's
own setting of either tunable is left as it is. Only the commands that simulate at length restart:
huge pages make first touches dearer (the kernel zeroes 2 MiB at a time), and a first touch of
every histogram is all that `validate`'s one-second pilot sees of 10,000 VMs (65,536 events
instead of 287,000)."""

from __future__ import annotations

import os
import sys

ADDED = {"glibc.malloc.hugetlb": "1", "glibc.malloc.arena_max": "1"}
COMMANDS = ("run", "sweep", "advise")
_RUN = "import sys; from sanlab.cli import main; sys.exit(main())"


def with_huge_pages(tunables: str | None) -> str | None:
    """`GLIBC_TUNABLES` with huge pages for malloc added, or None when it sets them already."""
    items = [item for item in (tunables or "").split(":") if item]
    named = {item.split("=", 1)[0] for item in items}
    if "glibc.malloc.hugetlb" in named:
        return None
    return ":".join(items + [f"{name}={value}" for name, value in ADDED.items() if name not in named])


def main() -> None:
    tunables = with_huge_pages(os.environ.get("GLIBC_TUNABLES"))
    if sys.platform == "linux" and sys.argv[1:2] and sys.argv[1] in COMMANDS and tunables is not None and sys.executable:
        try:
            # Does not return; `sys.argv[1:]` reaches `main` unchanged (`-c` takes argv[0]).
            os.execve(sys.executable, [sys.executable, "-c", _RUN, *sys.argv[1:]], {**os.environ, "GLIBC_TUNABLES": tunables})
        except OSError:
            pass  # the interpreter cannot be started again: run as we are, without huge pages
    from sanlab.cli import main as cli_main

    sys.exit(cli_main())
