"""The main job's pure parts: the built-in day's demand and the figures drawn from a recording."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from arklow_pulumi.controller.ports import LaneView, PoolView, Published, TargetView
from arklow_pulumi.scenario.day import HOUR, Day
from arklow_pulumi.scenario.recording import Recording, lane_figures, pool_figures

AT = datetime(2026, 1, 5, tzinfo=UTC)


def test_the_day_is_deterministic_and_has_its_burst() -> None:
    first, second = Day(tick_s=600), Day(tick_s=600)
    times = [i * 600.0 for i in range(first.ticks)]
    assert [first.demand(t) for t in times] == [second.demand(t) for t in times]
    burst = Day(noise=0).demand(11 * HOUR)["search/batch"]
    calm = Day(noise=0).demand(9 * HOUR)["search/batch"]
    assert burst == 90 and calm < 10
    assert all(v >= 0 for t in times for v in first.demand(t).values())


def published(tick: int, lanes: dict[str, LaneView], pools: dict[str, PoolView]) -> Published:
    return Published(tick, AT, lanes, pools)


def pool(desired: int, in_service: int, pressure: float | None = 0.5) -> PoolView:
    target = TargetView(desired, in_service, 0, 1, 10)
    return PoolView("gpu", 16.0, 8.0, pressure, "steady", desired, {"workers": target})


def test_figures_from_a_recording() -> None:
    rec = Recording(tick_s=1800)
    lane = LaneView(demand=12, allocation=6, held=2, admission=6)  # limit 8: e = 8
    rec.add(0, published(1, {"a/x": lane}, {"p": pool(2, 1), "a/gpu": pool(1, 1, None)}))
    rec.add(1800, published(2, {"a/x": lane}, {"p": pool(3, 2)}))  # a/gpu is gone
    rec.add(3600, published(3, {"a/x": lane}, {"p": pool(3, 3)}))
    figures = lane_figures(rec)["a/x"]
    assert (figures.demand, figures.served, figures.held) == (12.0, 9.0, 3.0)  # unit-hours
    assert figures.held_pct == pytest.approx(25.0)
    pools = pool_figures(rec)
    assert pools["p"].replicas == (1, 2.0, 3)
    assert pools["p"].scale_actions == 1  # 2 -> 3 once; unchanged desired is no action
    assert pools["a/gpu"].mean_pressure is None and pools["a/gpu"].scale_actions == 0
    assert rec.pools["a/gpu"][1:] == [None, None]
