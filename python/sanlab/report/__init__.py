"""The HTML report of a run folder: interactive plots (plotly, inlined so the page works offline) and tables.

`render_report` turns one run's document, or several runs side by side, into the page;
`docs/report.md` says what each figure shows.
"""

from __future__ import annotations

from sanlab.report.page import ReportRun, merge_runs, render_report

REPORT_FILE = "report.html"
"""The report's file name inside a run folder."""

__all__ = ["REPORT_FILE", "ReportRun", "merge_runs", "render_report"]
