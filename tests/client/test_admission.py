"""The client's pure parts: the grace period and floor, what answers renew, which reports are due."""

from __future__ import annotations

import pytest

import arklow_pulumi.client
from arklow_pulumi.client.admission import LaneAdmission
from arklow_pulumi.client.exchange import MAX_BATCH, Exchange
from tests.client.conftest import FakeClock


@pytest.mark.parametrize(
    ("events", "mode", "current"),
    [
        ([], "floor", 1.0),
        ([("ok", 0, 3.0)], "controller", 3.0),
        ([("ok", 0, 30.0)], "controller", 8.0),  # capped by the limit
        ([("ok", 0, 3.0), ("fail", 10, None)], "grace", 3.0),
        ([("ok", 0, 3.0), ("fail", 10, None), ("at", 60, None)], "grace", 3.0),
        ([("ok", 0, 3.0), ("fail", 10, None), ("at", 60.5, None)], "floor", 1.0),
        ([("ok", 0, 3.0), ("at", 61, None)], "floor", 1.0),  # no answer at all for too long
        ([("ok", 0, 3.0), ("fail", 1, None), ("ok", 70, 0.5)], "controller", 0.5),
        ([("ok", 0, 0.0)], "controller", 0.0),  # the controller's 0 holds, below the floor
    ],
)
def test_grace_then_floor(
    events: list[tuple[str, float, float | None]], mode: str, current: float
) -> None:
    admission = LaneAdmission(limit=8, floor=1, grace_s=60)
    now = 0.0
    for kind, at, value in events:
        now = at
        if kind == "ok":
            assert value is not None
            admission.answered(value, now)
        elif kind == "fail":
            admission.unanswered()
    assert admission.mode(now) == mode
    assert admission.current(now) == current


def test_the_floor_never_exceeds_the_limit() -> None:
    assert LaneAdmission(limit=2, floor=5).current(0.0) == 2.0


def exchange(clock: FakeClock) -> Exchange:
    return Exchange(grace_s=60, heartbeat_s=10, clock=clock)


def test_304_renews_only_lanes_listed_in_the_last_answer() -> None:
    clock = FakeClock()
    ex = exchange(clock)
    listed = ex.add_lane("a/x", 4, 0)
    missing = ex.add_lane("a/y", 4, 0)
    ex.admission_answered(200, '"e1"', {"stale": False, "lanes": {"a/x": {"admission": 2}}})
    assert ex.admission_headers() == {"If-None-Match": '"e1"'}
    clock.advance(50)
    ex.admission_answered(304, '"e1"', None)
    clock.advance(50)
    assert listed.admission.mode(clock()) == "controller"
    assert missing.admission.mode(clock()) == "floor"


def test_a_new_lane_drops_the_etag() -> None:
    ex = exchange(FakeClock())
    ex.add_lane("a/x", 4, 0)
    ex.admission_answered(200, '"e1"', {"stale": False, "lanes": {}})
    ex.add_lane("a/y", 4, 0)
    assert ex.admission_headers() == {}


@pytest.mark.parametrize(
    ("status", "doc"),
    [(503, None), (401, None), (200, {"tick": 1}), (200, None), (500, {"lanes": {}})],
)
def test_unusable_answers_count_as_unanswered(status: int, doc: object) -> None:
    clock = FakeClock()
    ex = exchange(clock)
    lane = ex.add_lane("a/x", 4, 1)
    ex.admission_answered(200, '"e"', {"stale": False, "lanes": {"a/x": {"admission": 3}}})
    ex.admission_answered(status, None, doc)
    assert lane.admission.mode(clock()) == "grace"
    assert ex.reachable is False


def test_reports_due_and_batched() -> None:
    clock = FakeClock()
    ex = exchange(clock)
    for i in range(2500):
        ex.add_lane(f"d/l{i}", 4, 0)
        ex.report(f"d/l{i}", i % 5)
    due = ex.due_reports()
    assert len(due) == 2500
    assert [len(b) for b in Exchange.batches(due)] == [MAX_BATCH, MAX_BATCH, 500]
    ex.stored(due)
    assert ex.due_reports() == []
    ex.report("d/l3", 4)
    assert ex.due_reports() == [("d/l3", 4.0)]


def test_refused_lane_is_set_aside_once() -> None:
    ex = exchange(FakeClock())
    ex.add_lane("d/a", 4, 0)
    ex.add_lane("d/b", 4, 0)
    ex.report("d/a", 1)
    ex.report("d/b", 1)
    batch = ex.due_reports()
    assert ex.refused(
        batch, 422, {"error": "reports[1]: lane 'd/b' is not in the topology", "lane": "d/b"}
    )
    assert ex.due_reports() == [("d/a", 1.0)]
    assert not ex.refused(batch, 413, {"error": "too large"})


def test_the_client_package_declares_its_public_api() -> None:
    expected = {"AsyncClient", "AsyncLane", "Client", "ClientError", "Lane", "Mode", "SlotTimeout"}
    assert set(arklow_pulumi.client.__all__) == expected
    for name in expected:
        assert getattr(arklow_pulumi.client, name) is not None
