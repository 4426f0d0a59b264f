"""The report's degraded-share figure in headless Chromium: a short cut of the poor_health study
(two selectors, the degradation from 5 s to 15 s of a 20 s run) renders it with a line per
selector and the degradation shaded, next to the other figures, without a JavaScript error."""

from __future__ import annotations

from pathlib import Path

import pytest

from sanlab.cli import main
from test_report_browser import ARTIFACTS, Chromium, chromium, load_report

__all__ = ["chromium"]  # the fixture, used by the test below

STUDY = Path(__file__).resolve().parents[2] / "scenarios" / "studies" / "poor_health.toml"
SHORT = (
    "--duration", "20s",
    "--set", 'event=[{kind="link_latency", path="local-0", at="5s", until="15s", latency="2ms"}]',
)  # fmt: skip


@pytest.mark.e2e
def test_each_selectors_share_of_the_degraded_path_is_drawn(chromium: Chromium, tmp_path: Path) -> None:
    out = tmp_path / "run"
    variants = ("--variant", "rr_latency", "--variant", "significant_latency", "--variant", "rr")
    assert main(["run", str(STUDY), *variants, *SHORT, "--quiet", "--out", str(out)]) == 0
    figures = load_report(chromium, out / "report.html", ARTIFACTS / "report-poor-health.png")
    found = next(figure for figure in figures if figure["key"] == "degraded-share")
    assert found["rendered"]
    # Two devices (busy, quiet): one panel each, a line per selector in each.
    assert found["traces"] == 2 * 3
    assert "degrad" in found["caption"]
    plot = "document.getElementById('plot-degraded-share')"
    shaded = chromium.evaluate(
        f"{plot}._fullLayout.shapes.filter(s => s.type === 'rect').map(s => [s.x0, s.x1])"
    )
    assert shaded == [[5, 15], [5, 15]]
    names = chromium.evaluate(f"{plot}._fullData.filter(t => t.showlegend).map(t => t.name)")
    assert names == ["rr_latency", "significant_latency", "rr"]  # in the order asked for
    # `sanlab report` writes it again from the run folder alone: the figure is still there.
    (out / "report.html").unlink()
    assert main(["report", str(out)]) == 0
    figures = load_report(chromium, out / "report.html", ARTIFACTS / "report-poor-health-again.png")
    again = next(figure for figure in figures if figure["key"] == "degraded-share")
    assert again["rendered"] and again["traces"] == found["traces"]
