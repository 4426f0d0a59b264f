"""Progress bars on stderr (rich): simulated time of a run, points of a sweep; wall time and ETA.

A bar appears only when both stdout and stderr are terminals, and for a run only once it has
taken longer than `SHOW_AFTER_S`; `--quiet` turns it off.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from types import TracebackType
from typing import Self

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TaskID, TextColumn, TimeRemainingColumn
from rich.text import Text

from sanlab import _core

SHOW_AFTER_S = 1.0
"""Runs that finish within this wall time never show a bar."""
REFRESH_S = 0.1
"""How often the bar polls the engine's progress."""


def wanted(quiet: bool) -> bool:
    """Whether to draw progress: not with --quiet, and only when stdout and stderr are terminals."""
    return not quiet and sys.stdout.isatty() and sys.stderr.isatty()


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


class _WallColumn(ProgressColumn):
    """Wall time since `started` (a `time.perf_counter()` reading), redrawn with every refresh."""

    def __init__(self, started: float) -> None:
        super().__init__()
        self._started = started

    def render(self, task: Task) -> Text:
        return Text(f"wall {_clock(time.perf_counter() - self._started)}")


def _bar(counter: str, started: float) -> Progress:
    """A transient bar on stderr: description, bar, `counter` (a task format), wall time, ETA."""
    columns: list[ProgressColumn] = [
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn(counter),
        _WallColumn(started),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    ]
    return Progress(*columns, console=Console(stderr=True), transient=True)


class _BarOwner:
    """A context that may draw a bar and stops it on the way out."""

    def __init__(self, show: bool) -> None:
        self._show = show
        self._started = time.perf_counter()
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.stop()


class RunProgress(_BarOwner):
    """Draws a run's progress from the engine's `Progress`: variant i/n, simulated seconds, wall time, ETA.

    The bar's completed fraction is variants done plus the running variant's simulated fraction,
    so the ETA assumes the remaining variants take as long as the average so far.
    """

    def __init__(self, engine: _core.Progress, variants: Sequence[str], show: bool) -> None:
        super().__init__(show)
        self._engine = engine
        self._variants = list(variants)

    def update(self) -> None:
        """Redraws the bar; creates it once the run has lasted `SHOW_AFTER_S`."""
        if not self._show or time.perf_counter() - self._started < SHOW_AFTER_S:
            return
        total = max(1, len(self._variants))
        done = min(int(self._engine.variants_done), total)
        end_s = self._engine.end_s
        sim_s = min(self._engine.sim_s, end_s)
        fraction = sim_s / end_s if end_s > 0 and done < total else 0.0
        name = self._variants[done] if done < len(self._variants) else ""
        description = f"{name} ({done + 1}/{total})" if done < total else f"{total}/{total} variants"
        sim = f"{sim_s:,.0f}/{end_s:,.0f} s"
        if self._bar is None:
            self._bar = _bar("sim {task.fields[sim]}", self._started)
            self._task = self._bar.add_task(description, total=total, sim=sim)
            self._bar.start()
        assert self._task is not None
        self._bar.update(self._task, description=description, completed=done + fraction, sim=sim)


class SweepProgress(_BarOwner):
    """Draws a sweep's progress: runs finished (done, failed) out of the grid, wall time, ETA."""

    def __init__(self, show: bool) -> None:
        super().__init__(show)
        self._failed = 0

    def begin(self, runs: int) -> None:
        """Shows the bar for the `runs` that are to run (those done before are not counted)."""
        if self._show and runs > 0:
            self._bar = _bar("{task.completed}/{task.total} runs{task.fields[failed]}", self._started)
            self._task = self._bar.add_task("sweep", total=runs, failed="")
            self._bar.start()

    def advance(self, finished: int, failed: int) -> None:
        """Counts runs (points × seeds) that finished, `failed` of them with an error."""
        if self._bar is None or self._task is None:
            return
        self._failed += failed
        self._bar.update(
            self._task, advance=finished, failed=f", [red]{self._failed} failed[/]" if self._failed else ""
        )
