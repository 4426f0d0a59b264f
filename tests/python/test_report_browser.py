"""The report in a real browser: headless Chromium loads report.html from disk with the network off.

Chromium is driven through the DevTools protocol over a pipe (`--remote-debugging-pipe`: commands on
file descriptor 3, replies on 4, NUL-terminated JSON), so no driver or WebSocket package is needed.
The tests assert that no JavaScript error or failed request occurred, that every figure rendered
its plot, and save full-page screenshots under test-artifacts/.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from conftest import with_cores
from sanlab.cli import main
from sanlab.export.runfolder import write_run_folder

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
METRO_STUDY = ROOT / "scenarios" / "studies" / "metro_cluster_psp.toml"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)
TIMEOUT_S = 60.0
VIEWPORT = {"width": 1400, "height": 900, "deviceScaleFactor": 1, "mobile": False}

# Per figure: rendered plot, its title text and the number of drawn traces.
FIGURES_JS = """
Array.from(document.querySelectorAll('figure.plot')).map(f => {
  const gd = f.querySelector('.js-plotly-plot');
  return {
    key: f.dataset.figure,
    rendered: !!(gd && gd._fullLayout && f.querySelector('svg.main-svg')),
    traces: gd && gd._fullData ? gd._fullData.length : 0,
    title: gd && gd._fullLayout ? gd._fullLayout.title.text : '',
    caption: (f.querySelector('figcaption') || {}).textContent || '',
    height: f.getBoundingClientRect().height,
  };
})
"""


class Chromium:
    """A headless Chromium with one page, driven by DevTools protocol messages over a pipe."""

    def __init__(self, profile: Path) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        # bash (unlike dash, it takes fds above 9) puts the pipe ends on fd 3 (commands) and 4 (replies),
        # then becomes Chromium; unlike preexec_fn, this is safe with threads running.
        wiring = f'exec "$0" "$@" 3<&{to_browser_r} 4>&{from_browser_w}'
        self.process = subprocess.Popen(
            [
                "/bin/bash",
                "-c",
                wiring,
                CHROMIUM,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(to_browser_r, from_browser_w),
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._next_id = 0
        self._replies: dict[int, queue.Queue[dict[str, Any]]] = {}
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, name="cdp-reader", daemon=True).start()
        try:
            target = self.call("Target.createTarget", url="about:blank")["targetId"]
            self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        except BaseException:
            self.process.kill()
            self.process.wait(timeout=TIMEOUT_S)
            raise

    def _read(self) -> None:
        buffer = b""
        with os.fdopen(self._from_browser, "rb", buffering=0) as pipe:
            while chunk := pipe.read(65536):
                buffer += chunk
                while b"\0" in buffer:
                    raw, buffer = buffer.split(b"\0", 1)
                    message = json.loads(raw)
                    if "id" in message:
                        with self._lock:
                            self._replies[message["id"]].put(message)
                    else:
                        self.events.put(message)

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        """Sends one command and waits for its reply; a protocol error fails the test."""
        with self._lock:
            self._next_id += 1
            ident = self._next_id
            self._replies[ident] = queue.Queue()
        message: dict[str, Any] = {"id": ident, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        reply = self._replies[ident].get(timeout=TIMEOUT_S)
        if "error" in reply:
            raise AssertionError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply["result"]
        return result

    def page(self, method: str, **params: Any) -> dict[str, Any]:
        """A command to the page's session."""
        return self.call(method, self.session, **params)

    def evaluate(self, expression: str) -> Any:
        reply = self.page("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in reply:
            raise AssertionError(f"evaluating {expression!r}: {reply['exceptionDetails']}")
        return reply["result"].get("value")

    def close(self) -> None:
        try:
            self.call("Browser.close")
        except (AssertionError, OSError, queue.Empty):
            self.process.kill()
        self.process.wait(timeout=TIMEOUT_S)
        os.close(self._to_browser)


@pytest.fixture
def chromium() -> Iterator[Chromium]:
    """Headless Chromium with a fresh profile; fails with the fix when Chromium is missing."""
    if not Path(CHROMIUM).is_file():
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's chromium (`make test` does: apt-get install chromium)"
        )
    profile = Path(tempfile.mkdtemp(prefix="sanlab-chromium-"))
    browser = Chromium(profile)
    try:
        yield browser
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)


def _problems(events: queue.Queue[dict[str, Any]]) -> list[str]:
    """JavaScript exceptions, console errors and failed loads among the page's events so far."""
    problems = []
    while not events.empty():
        event = events.get()
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            problems.append(f"exception: {params['exceptionDetails']}")
        elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "assert"):
            problems.append(f"console.{params['type']}: {params['args']}")
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            problems.append(f"log: {params['entry']['text']}")
        elif method == "Network.loadingFailed":
            problems.append(f"failed request: {params}")
    return problems


def load_report(browser: Chromium, report: Path, screenshot: Path) -> list[dict[str, Any]]:
    """Opens `report` offline, waits for every figure to render, saves a full-page screenshot.

    Returns the per-figure facts of FIGURES_JS; fails on any JavaScript error or network request.
    """
    for domain in ("Page", "Runtime", "Log", "Network"):
        browser.page(f"{domain}.enable")
    browser.page("Network.emulateNetworkConditions", offline=True, latency=0, downloadThroughput=-1,
                 uploadThroughput=-1)  # fmt: skip
    browser.page("Emulation.setDeviceMetricsOverride", **VIEWPORT)
    browser.page("Page.navigate", url=report.resolve().as_uri())
    ready = "document.readyState === 'complete' && " + (
        "Array.from(document.querySelectorAll('figure.plot')).every(f => f.querySelector('svg.main-svg'))"
    )
    waited_s = 0.0
    while not browser.evaluate(ready):
        waited_s += 0.2
        assert waited_s < TIMEOUT_S, "the report's plots did not render in time"
        threading.Event().wait(0.2)
    figures: list[dict[str, Any]] = browser.evaluate(FIGURES_JS)
    problems = _problems(browser.events)
    assert not problems, "\n".join(problems)
    size = browser.page("Page.getLayoutMetrics")["cssContentSize"]
    shot = browser.page(
        "Page.captureScreenshot",
        format="png",
        captureBeyondViewport=True,
        clip={"x": 0, "y": 0, "width": VIEWPORT["width"], "height": size["height"], "scale": 1},
    )
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    screenshot.write_bytes(base64.b64decode(shot["data"]))
    return figures


def _sanlab(*args: str) -> None:
    assert main(list(args)) == 0


def _assert_rendered(figures: list[dict[str, Any]], expected: set[str]) -> None:
    assert {figure["key"] for figure in figures} == expected
    for figure in figures:
        assert figure["rendered"], figure
        assert figure["traces"] >= 1, figure
        assert figure["title"], figure
        assert len(figure["caption"]) > 40, figure
        assert figure["height"] > 200, figure


def _click(browser: Chromium, element_js: str) -> None:
    """Sends a click event to the element that the expression `element_js` finds."""
    browser.evaluate(f"({element_js}).dispatchEvent(new MouseEvent('click', {{bubbles: true}}))")


@pytest.fixture(scope="module")
def metro_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A short run of the metro study (all five variants) with its report."""
    out = tmp_path_factory.mktemp("metro") / "run"
    _sanlab("run", str(METRO_STUDY), "--duration", "6s", "--quiet", "--out", str(out))
    return out


@pytest.mark.e2e
def test_metro_report_renders_every_figure(chromium: Chromium, metro_run: Path) -> None:
    figures = load_report(chromium, metro_run / "report.html", ARTIFACTS / "report-metro.png")
    _assert_rendered(
        figures,
        {"overview", "paths", "path-timeline", "vm-iops", "vm-latency", "latency-cdf", "device-queues"},
    )
    assert (ARTIFACTS / "report-metro.png").stat().st_size > 50_000


@pytest.mark.e2e
def test_variant_drop_down_switches_the_heatmap(chromium: Chromium, metro_run: Path) -> None:
    load_report(chromium, metro_run / "report.html", ARTIFACTS / "report-metro-top.png")
    plot = "document.getElementById('plot-path-timeline')"
    visible = f"{plot}._fullData.filter(t => t.visible === true).map(t => t.name)"
    assert chromium.evaluate(visible) == ["latency"]  # the variant with path selection events
    _click(chromium, f"{plot}.querySelector('.updatemenu-header')")
    buttons = f"Array.from({plot}.querySelectorAll('.updatemenu-dropdown-button'))"
    item = f"{buttons}.find(b => b.textContent === 'rr_iops1')"
    _click(chromium, item)
    assert chromium.evaluate(visible) == ["rr_iops1"]
    assert "rr_iops1" in chromium.evaluate(f"{plot}._fullLayout.title.text")
    assert not _problems(chromium.events)


def test_core_utilisation_and_compare_render(chromium: Chromium, doc: dict[str, Any], tmp_path: Path) -> None:
    with_cores(doc)
    started = datetime(2026, 11, 21, 20, 9, 5, tzinfo=UTC)
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        write_run_folder(copy.deepcopy(doc), tmp_path / name, argv=["sanlab"], started=started, wall_s=0.1)
    keys = {"overview", "paths", "path-timeline", "vm-iops", "latency-cdf", "core-util"}
    _assert_rendered(
        load_report(chromium, tmp_path / "one" / "report.html", ARTIFACTS / "report-cores.png"), keys
    )
    _sanlab("compare", str(tmp_path / "one"), str(tmp_path / "two"), "--out", str(tmp_path / "compare.html"))
    figures = load_report(chromium, tmp_path / "compare.html", ARTIFACTS / "report-compare.png")
    _assert_rendered(figures, keys)
    overview = next(figure for figure in figures if figure["key"] == "overview")
    assert overview["traces"] >= 3


@pytest.mark.e2e
def test_flow_control_and_injector_render(chromium: Chromium, tmp_path: Path) -> None:
    out = tmp_path / "run"
    study = METRO_STUDY.parent / "sioc_vs_parda.toml"
    _sanlab(
        "run", str(study), "--variant", "sioc_manual", "--variant", "sioc_automatic",
        "--duration", "30s", "--set", "run.warmup=10s", "--quiet", "--out", str(out),
    )  # fmt: skip
    figures = load_report(chromium, out / "report.html", ARTIFACTS / "report-sioc.png")
    wanted = {"host-flow-control", "sioc-injector"}
    _assert_rendered([figure for figure in figures if figure["key"] in wanted], wanted)


def test_measured_against_simulated_renders(chromium: Chromium, tmp_path: Path) -> None:
    """`sanlab compare RUN --esxtop CAPTURE` adds its section to the run's report; it renders offline."""
    from test_import_roundtrip import ORIGINAL, _esxcli_listings

    from sanlab.hostimport.esxcli import read_listings
    from sanlab.hostimport.esxtop import read_capture
    from sanlab.hostimport.scenario import build

    (tmp_path / "original.toml").write_text(ORIGINAL, encoding="utf-8")
    _sanlab("run", str(tmp_path / "original.toml"), "--esxtop-csv", "--quiet", "--out", str(tmp_path / "original"))
    capture = tmp_path / "original/base/esxtop.csv"
    imported = build(read_listings(_esxcli_listings(tmp_path)), duration="6s", capture=read_capture(capture))
    (tmp_path / "imported.toml").write_text(imported.toml, encoding="utf-8")
    _sanlab("run", str(tmp_path / "imported.toml"), "--quiet", "--out", str(tmp_path / "imported"))
    _sanlab("compare", str(tmp_path / "imported"), "--esxtop", str(capture))
    figures = load_report(chromium, tmp_path / "imported/report.html", ARTIFACTS / "report-measured.png")
    measured = [figure for figure in figures if figure["key"] == "esxtop-compare"]
    assert len(measured) == 1 and measured[0]["rendered"] and measured[0]["traces"] == 8, measured


# Per figure of a replicated run: its whisker traces (error bars with bounds), its band traces
# (filled polygons) and the error bar and fill paths plotly drew.
INTERVALS_JS = """
Object.fromEntries(['overview', 'vm-iops', 'vm-latency'].map(key => {
  const gd = document.getElementById('plot-' + key);
  return [key, {
    whiskers: gd._fullData.filter(t => t.error_x && t.error_x.visible && t.error_x.type === 'data')
      .map(t => ({n: t.x.length, up: Array.from(t.error_x.array), down: Array.from(t.error_x.arrayminus)})),
    bands: gd._fullData.filter(t => t.fill === 'toself' && t.x.length > 1).length,
    bandLegends: gd._fullData.filter(t => t.fill === 'toself' && t.showlegend).map(t => t.name),
    lines: gd._fullData.filter(t => t.fill !== 'toself').length,
    drawnErrorBars: gd.querySelectorAll('path.xerror').length,
    drawnFills: Array.from(gd.querySelectorAll('.cartesianlayer path.js-fill'))
      .filter(p => p.getBBox().height > 0).length,
  }];
}))
"""


@pytest.mark.e2e
def test_replicated_report_draws_error_bars_and_bands(chromium: Chromium, tmp_path: Path) -> None:
    """`--replications 3`: the overview's whiskers, the time lines' bands, rendered without error."""
    out = tmp_path / "run"
    noise = ROOT / "scenarios" / "examples" / "noise.toml"
    _sanlab("run", str(noise), "--duration", "5s", "--replications", "3", "--quiet", "--out", str(out))
    figures = load_report(chromium, out / "report.html", ARTIFACTS / "report-replicated.png")
    keys = {"overview", "paths", "path-timeline", "vm-iops", "vm-latency", "latency-cdf", "device-queues"}
    _assert_rendered(figures, keys)
    drawn = chromium.evaluate(INTERVALS_JS)
    overview = drawn["overview"]
    assert [whisker["n"] for whisker in overview["whiskers"]] == [1, 1, 1], overview  # IOPS, mean, p99
    assert all(width > 0 for whisker in overview["whiskers"] for width in whisker["up"] + whisker["down"])
    assert overview["drawnErrorBars"] == 3 and overview["bands"] == 0, overview
    for key in ("vm-iops", "vm-latency"):
        assert drawn[key]["bands"] == drawn[key]["lines"] == 1, drawn[key]
        assert drawn[key]["drawnFills"] == 1 and not drawn[key]["whiskers"], drawn[key]
        assert drawn[key]["bandLegends"] == ["min–max of 3 replications"], drawn[key]
    notes = chromium.evaluate("document.getElementById('notes').textContent")
    assert "means of 3 replications" in notes
    assert " ±" in chromium.evaluate("document.getElementById('comparison').textContent")
    assert not _problems(chromium.events)
