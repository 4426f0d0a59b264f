"""A grid of subplots as plain data: the axes plotly's `make_subplots` lays out, each panel's
place computed as it computes it (the same floating-point steps, so the same numbers), without
building and checking plotly's objects (tests/python/test_report_plain_data.py compares the two)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sanlab.report.figures.common import Spec, new_figure

SUBPLOT_TITLE_FONT = {"size": 16}
"""plotly's font of a subplot title."""


@dataclass
class Subplots:
    """`rows` by `cols` panels from the top left, numbered row by row (`x`, `y` for the first,
    `x2`, `y2` … after it), with the layout plotly gives them: domains, anchors, shared axes and
    the panels' titles."""

    rows: int
    cols: int
    layout: dict[str, Any] = field(default_factory=dict)

    def number(self, row: int, col: int) -> str:
        """The suffix of a panel's axes: `` for the first, `2`, `3` … after it."""
        if not (1 <= row <= self.rows and 1 <= col <= self.cols):
            raise IndexError(f"no panel at row {row}, column {col} of {self.rows} by {self.cols}")
        index = (row - 1) * self.cols + col
        return "" if index == 1 else str(index)

    def axes(self, row: int, col: int) -> tuple[str, str]:
        """The layout's keys of a panel's axes: (`xaxis2`, `yaxis2`)."""
        number = self.number(row, col)
        return f"xaxis{number}", f"yaxis{number}"

    def refs(self, row: int, col: int) -> tuple[str, str]:
        """How traces, shapes and annotations name a panel's axes: (`x2`, `y2`)."""
        number = self.number(row, col)
        return f"x{number}", f"y{number}"

    def place(self, trace: Spec, row: int, col: int) -> Spec:
        """`trace` drawn on the panel (plotly's add_trace with row and col)."""
        xref, yref = self.refs(row, col)
        trace["xaxis"], trace["yaxis"] = xref, yref
        return trace

    def figure(self) -> Spec:
        """A figure of these panels, no trace yet."""
        fig = new_figure()
        fig["layout"].update(self.layout)
        return fig


def _check_spacing(count: int, spacing: float, name: str) -> None:
    # plotly refuses these; so does this, rather than draw overlapping panels.
    if spacing < 0 or spacing > 1:
        raise ValueError(f"{name} spacing must be between 0 and 1.")
    if count > 1 and spacing > 1.0 / float(count - 1):
        most = 1.0 / float(count - 1)
        raise ValueError(f"{name} spacing cannot be greater than (1 / ({count} - 1)) = {most:f}.")


def subplots(
    rows: int = 1,
    cols: int = 1,
    *,
    shared_xaxes: bool = False,
    shared_yaxes: bool = False,
    horizontal_spacing: float | None = None,
    vertical_spacing: float | None = None,
    subplot_titles: Sequence[str] = (),
) -> Subplots:
    """plotly's `make_subplots` with these arguments (every other one at its default), as data:
    x axes shared within a column, y axes within a row, the titles over their panels."""
    if horizontal_spacing is None:
        horizontal_spacing = 0.2 / cols
    if vertical_spacing is None:
        vertical_spacing = (0.5 if subplot_titles else 0.3) / rows
    _check_spacing(cols, horizontal_spacing, "Horizontal")
    _check_spacing(rows, vertical_spacing, "Vertical")
    widths = [(1.0 - horizontal_spacing * (cols - 1)) / cols] * cols
    heights = [(1.0 - vertical_spacing * (rows - 1)) / rows] * rows
    # From the top left: the grid's first row is the highest.
    grid = [
        [
            (sum(widths[:c]) + c * horizontal_spacing, sum(heights[:r]) + r * vertical_spacing)
            for c in range(cols)
        ]
        for r in range(rows)[::-1]
    ]
    grid_of = Subplots(rows, cols)
    layout = grid_of.layout
    domains = []
    for r in range(rows):
        for c in range(cols):
            x_domain = [grid[r][c][0] + 0.0, grid[r][c][0] + widths[c] - 0.0]
            y_domain = [_rounded(grid[r][c][1] + 0.0), _rounded(grid[r][c][1] + heights[-1 - r] - 0.0)]
            domains.append((x_domain, y_domain))
            x_name, y_name = grid_of.axes(r + 1, c + 1)
            x_ref, y_ref = grid_of.refs(r + 1, c + 1)
            layout[x_name] = {"domain": [max(0.0, x_domain[0]), min(1.0, x_domain[1])], "anchor": y_ref}
            layout[y_name] = {"domain": [max(0.0, y_domain[0]), min(1.0, y_domain[1])], "anchor": x_ref}
    # A panel's title over its middle, from its domain before the clamping to 0-1, as plotly does.
    titles = [
        {
            "y": y_domain[1],
            "xref": "paper",
            "x": sum(x_domain) / 2.0,
            "yref": "paper",
            "text": title,
            "showarrow": False,
            "font": dict(SUBPLOT_TITLE_FONT),
            "xanchor": "center",
            "yanchor": "bottom",
        }
        # Titles past the last panel are left out, as plotly does.
        for title, (x_domain, y_domain) in zip(subplot_titles, domains, strict=False)
        if title
    ]
    if shared_xaxes:
        # Each column's x axes match its lowest panel's, whose tick labels alone are shown.
        for c in range(cols):
            first = grid_of.refs(rows, c + 1)[0]
            for r in range(rows - 2, -1, -1):
                axis = layout[grid_of.axes(r + 1, c + 1)[0]]
                axis["matches"], axis["showticklabels"] = first, False
    if shared_yaxes:
        # Each row's y axes match its first panel's, whose tick labels alone are shown.
        for r in range(rows - 1, -1, -1):
            first = grid_of.refs(r + 1, 1)[1]
            for c in range(1, cols):
                axis = layout[grid_of.axes(r + 1, c + 1)[1]]
                axis["matches"], axis["showticklabels"] = first, False
    if titles:
        layout["annotations"] = titles
    return grid_of


def _rounded(y: float) -> float:
    """A panel's vertical end a rounding error outside 0-1 brought to it, as plotly does."""
    if -0.01 < y < 0.0:
        return 0.0
    if 1.0 < y < 1.01:
        return 1.0
    return y
