"""The poor_health studies run and checked: no I/O lost under any selector through the
study's events, dead and unavailable paths carry nothing, and sanlab's selector
(`significant_latency`) leaves a degrading path at least 10x sooner than ESXi's latency PSP
(`rr_latency`) at its defaults and flaps no more often than it on near-equal paths, at light and
heavy load.

The whole degradation study runs once per session (19 variants, in threads: the engine releases
the GIL), the other runs only the two selectors compared.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

import sanlab
from sanlab.analysis import health
from sanlab.cli import main
from side_by_side import run_variants

pytestmark = pytest.mark.e2e

STUDIES = Path(__file__).resolve().parents[2] / "scenarios" / "studies"
STUDY = STUDIES / "poor_health.toml"
NEAR_EQUAL = STUDIES / "poor_health_near_equal.toml"
COMPARED = ("rr_latency", "significant_latency")


@pytest.fixture(scope="module")
def study() -> dict[str, dict[str, Any]]:
    return run_variants(STUDY)


def device(variant: dict[str, Any], volume: str) -> health.DeviceHealth:
    found = next(d for d in variant["devices"] if d["volume"] == volume)
    return health.device_health(variant, found)


def test_every_selector_is_a_variant_named_by_its_kind(study: dict[str, dict[str, Any]]) -> None:
    kinds = {kind["kind"] for kind in sanlab.kinds() if kind["extension_point"] == "psp"}
    assert set(study) == kinds
    for name, variant in study.items():
        assert health.selector(variant, "esx1") == name


def test_no_io_is_lost_under_any_selector(study: dict[str, dict[str, Any]]) -> None:
    for name, variant in study.items():
        for part in variant["conservation"]:
            assert part["issued"] == part["completed"] + part["failed"] + part["in_flight"], (name, part)
        assert all(vm["completed"] > 1000 for vm in variant["vms"]), name


def down_windows(variant: dict[str, Any]) -> list[tuple[str, float, float]]:
    """(link, from, to) of every down period of the variant's path_down events."""
    windows = []
    end_s = variant["sim_time_s"]
    for event in tomllib.loads(variant["resolved_toml"]).get("event", []):
        if event["kind"] != "path_down":
            continue
        at, until = health.duration_s(event["at"]), health.duration_s(event["until"])
        every = health.duration_s(event["every"]) if "every" in event else end_s
        start = at
        while start < end_s:
            windows.append((event["path"], start, start + until - at))
            start += every
    return windows


def test_dead_paths_carry_nothing(study: dict[str, dict[str, Any]]) -> None:
    checked = 0
    for name, variant in study.items():
        windows = down_windows(variant)
        assert len(windows) >= 9, "the study flaps a path every 30 s"
        # The replication link's failure: after the mediator's decision the loser's paths are
        # unavailable (ALUA) for good, whether or not the host has tried them since.
        decided = next(
            f for f in variant["faults"] if f["kind"] == "replication_down" and f["phase"] == "mediator"
        )
        winner = decided["detail"].split(" keeps the volumes")[0]
        unavailable = {path["name"] for path in variant["paths"] if path["array"] != winner}
        assert len(unavailable) == 2 * 10, f"{name}: {decided['detail']}"
        series = variant["timeseries"]
        for t_s, entity, metric, value in zip(
            series["t_s"], series["entity"], series["metric"], series["value"], strict=True
        ):
            if metric != "iops" or not entity.startswith("path/"):
                continue
            link = entity[5:].split(":")[0]
            # Samples (t - 1 s, t] wholly inside a down period, after the host's 10 ms notice.
            down = any(
                link == down and start + 0.5 <= t_s - 1 and t_s <= stop for down, start, stop in windows
            )
            if down or (entity[5:] in unavailable and t_s - 1 >= decided["t_s"] + 0.5):
                assert value == 0, f"{name}: {entity} carried {value} IOPS at {t_s} s while down"
                checked += 1
    assert checked >= len(study) * 2 * (9 * 2 + 10 * 14)


def exposed_link(variant: dict[str, Any], volume: str, start_s: float) -> str:
    """The link that carried most of a device's I/O in the EXPOSURE_S before `start_s`."""
    found = next(d for d in variant["devices"] if d["volume"] == volume)
    shares = health.device_shares(variant, found)
    before_s = start_s - health.EXPOSURE_S
    busiest = max(shares.iops, key=lambda path: health.share_between(shares, path, before_s, start_s) or 0)
    return health.link_of(busiest, volume)


def test_ours_leaves_a_degrading_path_ten_times_sooner_than_the_latency_psp(
    study: dict[str, dict[str, Any]],
) -> None:
    # At one I/O at a time the latency PSP sends everything to the path with the best figure of its
    # last sampling; the study's degrading path (local-0) may not be that one. Degrade the path it
    # uses instead: the case in which how soon it reacts matters.
    esxi = study["rr_latency"]
    start_s = health.degradations(esxi)[0].start_s
    link = exposed_link(esxi, "quiet_vol", start_s)
    runs = run_variants(STUDY, COMPARED, [f"event[0].path={link}"]) if link != "local-0" else study
    ours, theirs = (device(runs[name], "quiet_vol") for name in ("significant_latency", "rr_latency"))
    assert ours.used_before and theirs.used_before
    assert theirs.reaction_s is not None, "the latency PSP leaves the path at its next evaluation"
    assert ours.reaction_s is not None
    assert 10 * ours.reaction_s <= theirs.reaction_s, (ours, theirs)
    assert ours.degraded_share < theirs.degraded_share / 10


def test_at_the_seeds_load_both_leave_within_a_sample_and_ours_sends_less(
    study: dict[str, dict[str, Any]],
) -> None:
    # 32 outstanding: the latency PSP's (outstanding + 1) x latency steers around the slow path
    # without re-sampling it, so both react within the first 1 s sample (the 10x claim cannot be
    # seen at this resolution); the degraded path's share tells them apart.
    ours, theirs = (device(study[name], "busy_vol") for name in ("significant_latency", "rr_latency"))
    assert ours.reaction_s == theirs.reaction_s == 1.0
    assert ours.degraded_share < theirs.degraded_share / 10


def test_ours_flaps_no_more_than_the_latency_psp_on_near_equal_paths() -> None:
    runs = run_variants(NEAR_EQUAL, COMPARED)
    for host in ("quiet", "busy"):
        ours, theirs = (
            health.device_health(runs[name], next(d for d in runs[name]["devices"] if d["host"] == host))
            for name in ("significant_latency", "rr_latency")
        )
        assert ours.flaps_per_hour <= theirs.flaps_per_hour, (ours, theirs)
        # And ours uses all four paths, the 0.265 ms ones too: none under 20 % of the I/O.
        shares = [p["share"] for p in runs["significant_latency"]["paths"] if p["host"] == host]
        assert len(shares) == 4 and min(shares) > 0.2, shares
    assert not [e for e in runs["significant_latency"]["psp_events"] if e["event"].startswith("excluding")]


def test_linux_historical_service_time_rotates_near_equal_paths_at_one_io_at_a_time() -> None:
    # The kernel's hst_compare decides between idle paths by staleness alone: the next I/O goes to
    # the path whose last finish + 4 paths x average is earliest, which on near-equal paths is the
    # one used longest ago. Picking the fastest-looking idle path instead favoured the 0.260 ms
    # paths (about 63,000 I/Os each against 54,000).
    variant = run_variants(NEAR_EQUAL, ("dm_historical_service_time",))["dm_historical_service_time"]
    ios = [p["ios"] for p in variant["paths"] if p["host"] == "quiet"]
    assert len(ios) == 4 and max(ios) - min(ios) <= 0.01 * max(ios), ios


def test_sanlab_run_prints_the_health_table(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # A 20 s cut of the study: two selectors, the degradation from 5 s to 15 s.
    degrade = 'event=[{kind="link_latency", path="local-0", at="5s", until="15s", latency="2ms"}]'
    short = ["--duration", "20s", "--set", degrade]
    variants = ["--variant", "rr", "--variant", "significant_latency"]
    assert main(["run", str(STUDY), *variants, *short, "--verbose", "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert (
        out.index("poor_health: variants") < out.index("path selector health") < out.index("paths: I/O share")
    )
    table = out[out.index("path selector health") : out.index("paths: I/O share")]
    for header in ("react s", "bad %", "flaps/h", "balance"):
        assert header in table
    rows = [line.split() for line in table.splitlines() if "busy_vol" in line]
    assert [row[-4] for row in rows] == ["never", "1"]  # rr stays on it; ours leaves in the first second
