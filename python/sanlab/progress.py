"""Progress on stderr: simulated time of a run, points of a sweep; wall time and ETA.

On terminals (stdout and stderr both) rich bars, drawn once a run has taken longer than
`SHOW_AFTER_S`: one for the whole run over one per variant running (several run at once).
Elsewhere (a pipe, a file, CI) a run prints plain lines instead: one per variant done and one per
variant running every `LINE_EVERY_S`; a sweep prints nothing. `--quiet` turns both off.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Literal, Self, TextIO

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TaskID, TextColumn, TimeRemainingColumn
from rich.text import Text

from sanlab import engine as sanlab_engine
from sanlab.formatting import format_clock, format_wall_s, shown_name

SHOW_AFTER_S = 1.0
"""Runs that finish within this wall time show no progress."""
REFRESH_S = 0.1
"""How often the bar polls the engine's progress."""
LINE_EVERY_S = 10.0
"""How often a running variant gets a progress line when progress is printed as lines."""

Mode = Literal["bar", "lines", "off"]

State = tuple[str, str, float, float, float]
"""A variant of a run as the engine's `Progress.variants` gives it: name, state, simulated seconds
reached and to run, wall seconds."""


def progress_mode(quiet: bool) -> Mode:
    """A bar when stdout and stderr are terminals, lines when either is not, none with --quiet."""
    if quiet:
        return "off"
    return "bar" if sys.stdout.isatty() and sys.stderr.isatty() else "lines"


Clock = Callable[[], float]
"""Seconds on a monotonic clock: `time.perf_counter`, or a test's."""


class _WallColumn(ProgressColumn):
    """Wall time since `started` (a `clock` reading), or a task's own `wall_s` field, redrawn with
    every refresh."""

    def __init__(self, started: float, clock: Clock) -> None:
        super().__init__()
        self._started = started
        self._clock = clock

    def render(self, task: Task) -> Text:
        wall_s = task.fields.get("wall_s", self._clock() - self._started)
        return Text(f"wall {format_clock(wall_s)}")


class _BarOwner:
    """A context that may draw a bar and stops it on the way out. `stream` and `clock` are for
    tests: what is shown goes to `stream` (a bar as on a terminal) instead of stderr, and time is
    read from `clock`."""

    def __init__(self, show: bool, stream: TextIO | None = None, clock: Clock = time.perf_counter) -> None:
        self._show = show
        self._stream = stream
        self._clock = clock
        self._started = clock()
        self._bar: Progress | None = None
        self._task: TaskID | None = None

    def _new_bar(self, counter: str) -> Progress:
        """A transient bar on stderr: description, bar, `counter` (a task format), wall time, ETA."""
        columns: list[ProgressColumn] = [
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn(counter),
            _WallColumn(self._started, self._clock),
            TextColumn("ETA"),
            TimeRemainingColumn(),
        ]
        stream = self._stream
        console = Console(stderr=True) if stream is None else Console(file=stream, force_terminal=True)
        return Progress(*columns, console=console, transient=True, get_time=self._clock)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.stop()


class RunProgress(_BarOwner):
    """Shows a run's progress from the engine's `Progress`: as bars, one for the run (variants done
    of all, wall time, ETA) over one per variant running (`name (i/n)`, simulated seconds, its wall
    time, ETA), or as lines (`[3/30] silent-fixed done in 2.1 s`).

    The run's bar counts variants done plus each running variant's simulated fraction, so its ETA
    assumes the remaining variants take as long as the average so far.
    """

    def __init__(
        self,
        engine: sanlab_engine.Progress,
        mode: Mode,
        stream: TextIO | None = None,
        clock: Clock = time.perf_counter,
    ) -> None:
        super().__init__(mode == "bar", stream, clock)
        self._engine = engine
        self._mode = mode
        self._printed: set[int] = set()
        """Variants whose `done` line is printed."""
        self._last_line = self._started
        self._rows: dict[int, TaskID] = {}
        """The bar of each variant running."""

    def update(self) -> None:
        """Redraws the bars or prints the lines due; nothing until the run has lasted `SHOW_AFTER_S`."""
        now = self._clock()
        if self._mode == "off" or now - self._started < SHOW_AFTER_S:
            return
        # Names from the scenario, escaped; none until the engine has checked the scenario.
        states: list[State] = [
            (shown_name(name), state, sim_s, end_s, wall_s)
            for name, state, sim_s, end_s, wall_s in self._engine.variants()
        ]
        if not states:
            return
        if self._mode == "lines":
            self._print_lines(now, states)
        else:
            self._draw(states)

    def finish(self, next_step: str) -> None:
        """Shows the run's end: a last bar, or the lines of the last variants and then `next_step`,
        the work left after the engine (the bar has no room for it)."""
        self.update()
        if self._mode == "lines" and self._printed:
            count, wall_s = len(self._printed), self._clock() - self._started
            self._print(f"[{count}/{count}] all done in {format_wall_s(wall_s)}; {next_step}")

    def _draw(self, states: Sequence[State]) -> None:
        total = max(1, len(states))
        done = sum(state == "done" for _, state, *_ in states)
        running = {i: row for i, row in enumerate(states) if row[1] == "running"}
        if self._bar is None:
            self._bar = self._new_bar("{task.fields[counter]}")
            self._task = self._bar.add_task("", total=total, counter="")
            self._bar.start()
        assert self._task is not None
        fraction = sum(min(sim_s, end_s) / end_s for _, _, sim_s, end_s, _ in running.values() if end_s > 0)
        description = f"{done}/{total} variants" + (f", {len(running)} running" if running else "")
        self._bar.update(self._task, description=description, completed=done + fraction)
        for index in [i for i in self._rows if i not in running]:
            self._bar.remove_task(self._rows.pop(index))
        for index, (name, _, sim_s, end_s, wall_s) in running.items():
            reached_s = min(sim_s, end_s)
            sim = f"sim {reached_s:,.0f}/{end_s:,.0f} s"
            # The bar's description is rich markup ("[bold]{task.description}"): a name is text in it.
            fields = {"counter": sim, "wall_s": wall_s, "completed": reached_s, "total": end_s or None}
            if index not in self._rows:
                self._rows[index] = self._bar.add_task(escape(f"{name} ({index + 1}/{total})"), **fields)
            else:
                self._bar.update(self._rows[index], **fields)

    def _print(self, line: str) -> None:
        print(line, file=self._stream or sys.stderr, flush=True)
        self._last_line = self._clock()

    def _print_lines(self, now: float, states: Sequence[State]) -> None:
        total = max(1, len(states))
        finished = [i for i, (_, state, *_) in enumerate(states) if state == "done" and i not in self._printed]
        for index in finished:
            self._printed.add(index)
            name, *_, wall_s = states[index]
            self._print(f"[{len(self._printed)}/{total}] {name} done in {format_wall_s(wall_s)}")
        if finished or now - self._last_line < LINE_EVERY_S:
            return
        for index, (name, state, sim_s, end_s, wall_s) in enumerate(states):
            if state == "running":
                sim = f"{min(sim_s, end_s):,.0f}/{end_s:,.0f} s simulated"
                self._print(f"[{index + 1}/{total}] {name}: {sim} in {format_wall_s(wall_s)}")


class SweepProgress(_BarOwner):
    """Draws a sweep's progress: runs finished (done, failed) out of the grid, wall time, ETA."""

    def __init__(self, show: bool) -> None:
        super().__init__(show)
        self._failed = 0

    def begin(self, runs: int) -> None:
        """Shows the bar for the `runs` that are to run (those done before are not counted)."""
        if self._show and runs > 0:
            self._bar = self._new_bar("{task.completed}/{task.total} runs{task.fields[failed]}")
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
