"""The synchronous lane client against a real uvicorn server of the controller's API: batched
reports, admission with ETag, the local limiter, and the controller killed and restarted."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from arklow_pulumi.client import Client, ClientError, SlotTimeout
from arklow_pulumi.controller.api.app import build_app
from arklow_pulumi.controller.api.auth import TokenSet
from arklow_pulumi.controller.api.metrics import Metrics
from tests.client.conftest import Controller, FakeClock, eventually, hold_slots
from tests.memory_controller import MemoryPort
from tests.tokens import token_digest
from tests.uvicorn_server import UvicornThread


def manual(controller: Controller, clock: FakeClock, **kwargs: object) -> Client:
    return Client(controller.url, background=False, clock=clock, **kwargs)  # type: ignore[arg-type]


def test_reports_go_in_one_batch_and_are_resent_as_heartbeat(
    controller: Controller, clock: FakeClock
) -> None:
    with manual(controller, clock, heartbeat_s=10.0) as client:
        for name, demand in (("search/interactive", 3), ("search/batch", 40), ("ads/serve", 0)):
            client.lane(name, limit=8).report(demand)
        client.sync()
        assert controller.port.sink.batches == 1
        assert controller.port.sink.reports == {
            "search/interactive": 3.0,
            "search/batch": 40.0,
            "ads/serve": 0.0,
        }
        client.sync()  # nothing changed, heartbeat not due
        assert controller.port.sink.batches == 1
        client.lane("search/batch", limit=8).report(41)
        client.sync()  # only the change
        assert controller.port.sink.batches == 2
        clock.advance(10)
        client.sync()  # heartbeat: every lane again
        assert controller.port.sink.batches == 3


def test_a_lane_the_controller_refuses_is_set_aside(
    controller: Controller, clock: FakeClock
) -> None:
    with manual(controller, clock) as client:
        good = client.lane("search/batch", limit=4)
        bad = client.lane("search/unknown", limit=4)
        good.report(2)
        bad.report(5)
        client.sync()
        assert bad.refused is not None and "not in the topology" in bad.refused
        assert good.refused is None
        assert controller.port.sink.reports == {"search/batch": 2.0}


def test_bad_lane_arguments(controller: Controller, clock: FakeClock) -> None:
    with manual(controller, clock) as client:
        for name in ("nolane", "a/b/c", "/x", "a/"):
            with pytest.raises(ClientError, match="destination"):
                client.lane(name, limit=1)
        with pytest.raises(ClientError, match="limit"):
            client.lane("a/b", limit=-1)
        with pytest.raises(ClientError, match="floor"):
            client.lane("a/b", limit=1, floor=float("nan"))
        lane = client.lane("a/b", limit=2)
        with pytest.raises(ClientError, match="another limit"):
            client.lane("a/b", limit=3)
        for demand in (-1, float("inf"), float("nan"), "3", True):
            with pytest.raises(ClientError, match="demand"):
                lane.report(demand)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="never fit"):
            lane.slot(units=3).__enter__()


def test_admission_is_polled_with_etag(controller: Controller, clock: FakeClock) -> None:
    controller.port.publish({"search/batch": 3.0})
    with manual(controller, clock) as client:
        lane = client.lane("search/batch", limit=8)
        assert lane.admission == 0.0 and lane.mode == "floor"
        client.sync()
        assert lane.admission == 3.0 and lane.mode == "controller"
        etag = client._exchange.etag
        assert etag is not None
        client.sync()  # 304
        assert client._exchange.etag == etag and lane.admission == 3.0
        controller.port.publish({"search/batch": 12.0})
        client.sync()
        assert lane.admission == 8.0  # capped by the local limit


def test_a_stale_or_missing_answer_keeps_the_admission_in_grace(
    controller: Controller, clock: FakeClock
) -> None:
    controller.port.publish({"search/batch": 3.0})
    with manual(controller, clock, grace_s=60) as client:
        listed = client.lane("search/batch", limit=8, floor=1)
        missing = client.lane("ads/serve", limit=8, floor=2)
        client.sync()
        assert (listed.mode, missing.mode, missing.admission) == ("controller", "floor", 2.0)
        old = datetime.now(UTC) - timedelta(seconds=25)
        controller.port.publish({"search/batch": 3.0}, time=old)
        client.sync()
        assert listed.mode == "grace" and listed.admission == 3.0
        clock.advance(61)
        client.sync()
        assert listed.mode == "floor" and listed.admission == 1.0


def test_slots_never_exceed_admission_nor_limit(controller: Controller, clock: FakeClock) -> None:
    controller.port.publish({"search/batch": 3.0})
    with manual(controller, clock) as client:
        lane = client.lane("search/batch", limit=5)
        client.sync()
        release = threading.Event()
        peak = [0.0]
        threads = hold_slots(lane, 9, release, peak)
        eventually(lambda: lane.in_use == 3 and lane._gate.waiting == 6, "3 held, 6 waiting")
        with pytest.raises(SlotTimeout), lane.slot(timeout=0.05):
            pass
        controller.port.publish({"search/batch": 50.0})
        client.sync()  # admission 50, limit 5
        eventually(lambda: lane.in_use == 5 and lane._gate.waiting == 4, "5 held, 4 waiting")
        assert peak[0] == 5
        release.set()
        for t in threads:
            t.join()
        assert peak[0] == 5 and lane.in_use == 0


def test_controller_killed_then_grace_then_floor_then_back(
    controller: Controller, clock: FakeClock
) -> None:
    controller.port.publish({"search/batch": 4.0})
    with manual(controller, clock, grace_s=60) as client:
        lane = client.lane("search/batch", limit=8, floor=1)
        lane.report(6)
        client.sync()
        assert (lane.mode, lane.admission, client.reachable) == ("controller", 4.0, True)

        controller.stop()
        lane.report(7)
        client.sync()
        assert client.reachable is False
        assert (lane.mode, lane.admission) == ("grace", 4.0)
        clock.advance(59)
        client.sync()
        assert (lane.mode, lane.admission) == ("grace", 4.0)
        clock.advance(2)
        client.sync()
        assert (lane.mode, lane.admission) == ("floor", 1.0)

        controller.port.sink.reports.clear()
        controller.port.published = None  # a restarted controller before its first tick: 503
        controller.start()
        client.sync()
        assert controller.port.sink.reports == {"search/batch": 7.0}  # the pending report went
        assert (lane.mode, lane.admission) == ("floor", 1.0)
        controller.port.publish({"search/batch": 5.0}, tick=1)
        client.sync()
        assert (lane.mode, lane.admission, client.reachable) == ("controller", 5.0, True)


def test_background_thread_follows_the_controller(controller: Controller, clock: FakeClock) -> None:
    controller.port.publish({"search/interactive": 2.0})
    with Client(controller.url, interval=0.02, grace_s=60, clock=clock) as client:
        lane = client.lane("search/interactive", limit=4, floor=1)
        lane.report(9)
        eventually(lambda: lane.mode == "controller" and lane.admission == 2.0, "admitted")
        eventually(
            lambda: controller.port.sink.reports.get("search/interactive") == 9.0, "reported"
        )
        release = threading.Event()
        peak = [0.0]
        threads = hold_slots(lane, 4, release, peak)
        eventually(lambda: lane.in_use == 2 and lane._gate.waiting == 2, "2 held")
        controller.stop()
        eventually(lambda: client.reachable is False, "controller gone")
        assert lane.admission == 2.0 and lane.mode == "grace"
        clock.advance(61)
        eventually(lambda: lane.mode == "floor", "floor")
        assert lane.admission == 1.0
        controller.start()
        controller.port.publish({"search/interactive": 4.0})
        eventually(lambda: lane.in_use == 4, "all four admitted after the restart")
        assert peak[0] == 4
        release.set()
        for t in threads:
            t.join()


def test_tokens_are_sent_and_scope_is_respected(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "tokens.yaml"
    path.write_text(
        "tokens:\n"
        f"  - {{name: s, scope: 'destination:search', sha256: {token_digest('tok-search')}}}\n"
    )
    port = MemoryPort(["search/batch", "ads/serve"])
    port.publish({"search/batch": 2.0, "ads/serve": 3.0})
    with UvicornThread(build_app(port, TokenSet.load(path), Metrics()), access_log=False) as server:
        with Client(server.url, "tok-search", background=False, clock=clock) as client:
            mine = client.lane("search/batch", limit=4)
            other = client.lane("ads/serve", limit=4, floor=1)
            mine.report(1)
            other.report(1)
            client.sync()
            assert port.sink.reports == {"search/batch": 1.0}
            assert other.refused is not None and "scope" in other.refused
            assert (mine.admission, other.admission, other.mode) == (2.0, 1.0, "floor")
        with Client(server.url, "wrong", background=False, clock=clock) as client:
            lane = client.lane("search/batch", limit=4)
            client.sync()
            assert client.reachable is False and lane.mode == "floor"


def test_close_sends_due_reports(controller: Controller, clock: FakeClock) -> None:
    client = manual(controller, clock)
    client.lane("ads/serve", limit=1).report(1)
    client.close()
    assert controller.port.sink.reports == {"ads/serve": 1.0}


def test_an_unreachable_url_is_not_an_error(clock: FakeClock) -> None:
    with Client("http://127.0.0.1:9", background=False, clock=clock, timeout=1) as client:
        lane = client.lane("a/b", limit=2, floor=1)
        lane.report(1)
        client.sync()
        assert client.reachable is False and lane.admission == 1.0
        with lane.slot():
            assert lane.in_use == 1


def test_a_transport_can_be_injected(clock: FakeClock) -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        if request.method == "GET":
            return httpx.Response(
                200, json={"tick": 1, "stale": False, "lanes": {"a/b": {"admission": 2}}}
            )
        return httpx.Response(200, json={"accepted": 1})

    transport = httpx.MockTransport(handler)
    with Client("http://controller", transport=transport, background=False, clock=clock) as client:
        lane = client.lane("a/b", limit=3)
        lane.report(1)
        client.sync()
    assert seen == ["POST /v1/demand", "GET /v1/admission"]
    assert lane.admission == 2.0
