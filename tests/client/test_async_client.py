"""The asyncio lane client against a real uvicorn server of the controller's API (the server runs
in its own thread; each test runs its own event loop)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

from arklow_pulumi.client import AsyncClient, AsyncLane, SlotTimeout
from tests.client.conftest import Controller, FakeClock


async def until(condition: Callable[[], object], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        await asyncio.sleep(0.01)


def holders(
    lane: AsyncLane, n: int, release: asyncio.Event, peak: list[int]
) -> list[asyncio.Task[None]]:
    current = [0]

    async def work() -> None:
        async with lane.slot():
            current[0] += 1
            peak[0] = max(peak[0], current[0])
            await release.wait()
            current[0] -= 1

    return [asyncio.create_task(work()) for _ in range(n)]


def test_reports_admission_and_slots(controller: Controller, clock: FakeClock) -> None:
    controller.port.publish({"search/batch": 2.0})

    async def scenario() -> None:
        async with AsyncClient(controller.url, background=False, clock=clock) as client:
            lane = client.lane("search/batch", limit=3)
            other = client.lane("ads/serve", limit=3)
            lane.report(10)
            other.report(1)
            await client.sync()
            assert controller.port.sink.batches == 1
            assert controller.port.sink.reports == {"search/batch": 10.0, "ads/serve": 1.0}
            assert (lane.mode, lane.admission) == ("controller", 2.0)
            release, peak = asyncio.Event(), [0]
            tasks = holders(lane, 5, release, peak)
            await until(lambda: lane.in_use == 2 and lane._gate.waiting == 3, "2 held")
            with pytest.raises(SlotTimeout):
                async with lane.slot(timeout=0.05):
                    pass
            controller.port.publish({"search/batch": 9.0})
            await client.sync()
            await until(lambda: lane.in_use == 3, "the limit reached")
            assert peak[0] == 3 and lane._gate.waiting == 2
            release.set()
            await asyncio.gather(*tasks)
            assert peak[0] == 3 and lane.in_use == 0

    asyncio.run(scenario())


def test_killed_controller_grace_then_floor_in_the_background(
    controller: Controller, clock: FakeClock
) -> None:
    controller.port.publish({"search/interactive": 3.0})

    async def scenario() -> None:
        async with AsyncClient(controller.url, interval=0.02, grace_s=60, clock=clock) as client:
            lane = client.lane("search/interactive", limit=6, floor=1)
            lane.report(4)
            await until(lambda: lane.mode == "controller" and lane.admission == 3.0, "admitted")
            await until(
                lambda: controller.port.sink.reports.get("search/interactive") == 4.0, "reported"
            )
            await asyncio.to_thread(controller.stop)
            await until(lambda: client.reachable is False, "controller gone")
            assert (lane.mode, lane.admission) == ("grace", 3.0)
            clock.advance(61)
            await until(lambda: lane.mode == "floor", "floor")
            assert lane.admission == 1.0
            await asyncio.to_thread(controller.start)
            controller.port.publish({"search/interactive": 5.0})
            await until(lambda: lane.mode == "controller" and lane.admission == 5.0, "back")

    asyncio.run(scenario())


def test_aclose_sends_due_reports(controller: Controller, clock: FakeClock) -> None:
    async def scenario() -> None:
        client = AsyncClient(controller.url, background=False, clock=clock)
        client.lane("ads/serve", limit=1).report(2)
        await client.aclose()

    asyncio.run(scenario())
    assert controller.port.sink.reports == {"ads/serve": 2.0}
