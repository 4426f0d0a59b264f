"""sanlab.analysis.health on small hand-made results: each figure's definition, edge by edge."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from rich.console import Console

from sanlab.analysis import health
from sanlab.views.tables import health_table

PATHS = ("p-0", "p-1", "p-2", "p-3")
DEGRADE = '[[event]]\nkind = "link_latency"\npath = "p-0"\nat = "10s"\nuntil = "40s"\nlatency = "2ms"\n'


def variant(
    iops: Callable[[float, str], float],
    *,
    kind: str = "rr",
    events: str = DEGRADE,
    seconds: int = 60,
    controllers: Sequence[str] | None = None,
) -> dict[str, Any]:
    """One host, one device `vol` over PATHS (`p-0:vol` ... since names carry the volume); each
    path's IOPS in the sample ending at t is iops(t, link)."""
    times = [float(t) for t in range(1, seconds + 1)]
    series: dict[str, list[Any]] = {"t_s": [], "entity": [], "metric": [], "value": []}
    ios = dict.fromkeys(PATHS, 0.0)
    for t_s in times:
        for link in PATHS:
            value = iops(t_s, link)
            ios[link] += value
            for key, item in zip(series, (t_s, f"path/{link}:vol", "iops", value), strict=True):
                series[key].append(item)
    paths = [
        {"name": f"{link}:vol", "host": "esx1", "array": "a", "device": "vol", "ios": ios[link]}
        | ({"controller": controllers[index]} if controllers else {})
        for index, link in enumerate(PATHS)
    ]
    resolved = f'[[host]]\nname = "esx1"\nmultipath = {{ psp = {{ kind = "{kind}" }} }}\n{events}'
    return {
        "name": kind,
        "sim_time_s": float(seconds),
        "resolved_toml": resolved,
        "hosts": [{"name": "esx1"}],
        "paths": paths,
        "devices": [
            {
                "name": "vol",
                "host": "esx1",
                "volume": "vol",
                "iops": 100.0,
                "lat_ms": {"p99": 2.0, "p999": 3.0},
            }
        ],
        "timeseries": series,
    }


def only(found: dict[str, Any]) -> health.DeviceHealth:
    return health.device_health(found, found["devices"][0])


def even(t_s: float, link: str) -> float:
    return 100.0


def test_a_selector_that_leaves_the_path_reacts_when_its_share_falls_for_good() -> None:
    # p-0 carries its quarter until 13 s, 3 % at 14 s (a dip), its quarter again, then 1 % from 21 s.
    def shares(t_s: float, link: str) -> float:
        if link != "p-0":
            return 100.0
        return 100.0 if t_s <= 13 or 15 <= t_s <= 20 else (3.0 if t_s == 14 else 1.0)

    found = only(variant(shares))
    assert found.degraded_path == "p-0:vol"
    assert found.used_before
    assert found.reaction_s == 11.0  # the sample ending at 21 s, 10 s after the start
    # Samples ending at 11..40 s: 9 at 100 (11-13, 15-20), 1 at 3, 20 at 1; the others 3 x 100 each.
    bad = 9 * 100 + 3 + 20 * 1
    assert found.degraded_share == pytest.approx(bad / (bad + 3 * 100 * 30))


def test_a_path_never_left_or_left_only_at_the_end_gets_no_reaction() -> None:
    assert only(variant(even)).reaction_s is None
    # Under 5 % only in the last 5 s of the degradation: shorter than HOLD_S.
    late = only(variant(lambda t, link: 1.0 if link == "p-0" and t > 35 else 100.0))
    assert late.reaction_s is None
    assert health.HOLD_S > 5


def test_a_path_the_selector_was_not_using_is_reported_unused() -> None:
    found = only(variant(lambda t, link: 0.0 if link == "p-0" else 100.0))
    assert not found.used_before
    assert found.reaction_s == 1.0  # the figure exists, the table says `unused`
    assert "unused" in text(health_table(two_selectors(lambda t, link: 0.0 if link == "p-0" else 1.0)))


def test_with_twenty_paths_leaving_means_under_half_an_equal_share() -> None:
    shares = health.Shares([1.0], {f"p-{i}": [1.0] for i in range(20)})
    assert health.left_below(shares) == pytest.approx(0.025)
    shares = health.Shares([1.0], {f"p-{i}": [1.0] for i in range(4)})
    assert health.left_below(shares) == pytest.approx(health.REACTED_SHARE)


def test_flaps_count_changes_of_the_set_in_use_per_hour() -> None:
    # Two paths at a time, the pair changing every 10 s: 5 changes in 60 s = 300 per hour.
    def pairs(t_s: float, link: str) -> float:
        first = PATHS[:2] if int((t_s - 1) // 10) % 2 == 0 else PATHS[2:]
        return 100.0 if link in first else 0.0

    assert only(variant(pairs, events="")).flaps_per_hour == pytest.approx(300.0)
    # Uneven but steady shares are no flaps; a path just under half an equal share is not in use.
    steady = only(variant(lambda t, link: 11.0 if link == "p-0" else 100.0, events=""))
    assert steady.flaps_per_hour == 0.0
    assert health.in_use(
        health.device_shares(*two(variant(lambda t, link: 11.0 if link == "p-0" else 100.0)))
    )[0] == frozenset({"p-1:vol", "p-2:vol", "p-3:vol"})


def test_samples_without_io_are_skipped_not_counted_as_flaps() -> None:
    idle_half = only(variant(lambda t, link: 0.0 if t % 2 == 0 else 100.0, events=""))
    assert idle_half.flaps_per_hour == 0.0


def test_balance_is_least_over_most_loaded_controller_or_path() -> None:
    uneven = lambda t, link: 300.0 if link == "p-0" else 100.0  # noqa: E731
    by_path = only(variant(uneven, events=""))
    assert by_path.balance_over == "paths"
    assert by_path.balance == pytest.approx(1 / 3)
    by_controller = only(variant(uneven, events="", controllers=("ct0", "ct1", "ct0", "ct1")))
    assert by_controller.balance_over == "controllers"
    assert by_controller.balance == pytest.approx(200 / 400)
    assert health.balance([0.0, 0.0]) is None
    assert health.balance([5.0]) is None


def test_windowed_balance_shows_how_long_one_must_sample() -> None:
    # A rotation that puts one path in use per 1 s sample: balanced only over 4 s windows.
    turn = lambda t, link: 100.0 if PATHS[int(t) % 4] == link else 0.0  # noqa: E731
    shares = health.device_shares(*two(variant(turn, events="")))
    names = list(shares.iops)
    assert health.windowed_balance(shares, names, 1.0) == [0.0] * 60
    assert health.windowed_balance(shares, names, 4.0) == [1.0] * 15
    assert health.windowed_balance(shares, names, 2.0) == [0.0] * 30


def test_durations_of_the_resolved_scenario() -> None:
    assert health.duration_s("60s") == 60.0
    assert health.duration_s("180000000000ns") == 180.0
    assert health.duration_s("1.5ms") == pytest.approx(0.0015)
    with pytest.raises(ValueError, match="not a duration"):
        health.duration_s("10 parsecs")


def test_repeating_latency_events_are_flapping_not_a_degradation() -> None:
    repeating = DEGRADE.replace('until = "40s"', 'until = "12s"\nevery = "20s"')
    assert health.degradations(variant(even, events=repeating)) == []
    assert health.degradations(variant(even)) == [health.Degradation("p-0", 10.0, 40.0)]
    no_until = DEGRADE.replace('until = "40s"\n', "")
    assert health.degradations(variant(even, events=no_until))[0].end_s == 60.0


def test_the_table_appears_only_when_selectors_are_compared() -> None:
    one = {"scenario": "s", "variants": [variant(even)]}
    assert health_table(one) is None
    table = text(health_table(two_selectors(even)))
    for header in ("IOPS", "p99 ms", "react s", "bad %", "flaps/h", "balance", "significant_latency"):
        assert header in table
    without_event = two_selectors(even, events="")
    assert "react s" not in text(health_table(without_event))


def two(found: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    return found, found["devices"][0]


def two_selectors(iops: Callable[[float, str], float], events: str = DEGRADE) -> dict[str, Any]:
    """A run comparing `rr` and `significant_latency` on the same shares."""
    return {
        "scenario": "s",
        "variants": [variant(iops, events=events), variant(iops, kind="significant_latency", events=events)],
    }


def text(table: Any) -> str:
    console = Console(width=160, record=True)
    console.print(table)
    return console.export_text()


def test_the_selector_is_read_from_a_table_or_a_kind_name_alone() -> None:
    table = variant(even)
    assert health.selector(table, "esx1") == table["name"]
    short = table | {"resolved_toml": '[[host]]\nname = "esx1"\nmultipath = { psp = "rr" }\n'}
    assert (health.selector(short, "esx1"), health.selector(short, "esx2")) == ("rr", "")


def test_every_device_shares_gives_each_device_its_own_paths_from_one_pass() -> None:
    found = variant(lambda t, link: 10.0 * (PATHS.index(link) + 1), seconds=3)
    # The same host's second device on two paths of its own, its rows out of time order and one
    # path without a sample at 1 s.
    found["devices"].append(dict(found["devices"][0], name="vol2", volume="vol2"))
    found["paths"] += [{"name": f"q-{i}:vol2", "host": "esx1", "array": "a", "device": "vol2", "ios": 1.0} for i in (0, 1)]
    series = found["timeseries"]
    for t_s, name, value in ((2.0, "q-1:vol2", 7.0), (1.0, "q-0:vol2", 5.0), (2.0, "q-0:vol2", 6.0)):
        for key, item in zip(series, (t_s, f"path/{name}", "iops", value), strict=True):
            series[key].append(item)
    every = health.every_device_shares(found)
    assert set(every) == {("esx1", "vol"), ("esx1", "vol2")}
    assert every["esx1", "vol"] == health.device_shares(found, found["devices"][0])
    assert every["esx1", "vol"].iops == {f"{link}:vol": [10.0 * (i + 1)] * 3 for i, link in enumerate(PATHS)}
    second = every["esx1", "vol2"]
    assert second.times_s == [1.0, 2.0]
    assert second.iops == {"q-0:vol2": [5.0, 6.0], "q-1:vol2": [0.0, 7.0]}, "no sample: no I/O in it"
