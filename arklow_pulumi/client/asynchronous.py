"""The asyncio lane client: one background task per :class:`AsyncClient` reports demand in batches
and polls admission; each :class:`AsyncLane` limits its own work with ``async with lane.slot():``.
Everything runs on the event loop the client was first used on."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx

from arklow_pulumi.client.exchange import (
    ADMISSION_PATH,
    DEMAND_PATH,
    Exchange,
    LaneFace,
    LaneState,
    auth_headers,
    response_json,
)
from arklow_pulumi.client.slots import AsyncSlotGate


class AsyncLane(LaneFace[AsyncSlotGate]):
    """One lane of an :class:`AsyncClient`: ``report(demand)`` and ``async with lane.slot():``."""

    def __init__(self, client: AsyncClient, state: LaneState) -> None:
        super().__init__(state, lambda: client.clock(), AsyncSlotGate)
        self._client = client

    def report(self, demand: float) -> None:
        """Record the lane's demand; sent by the background task."""
        self._client._exchange.report(self._state.name, demand)

    @contextlib.asynccontextmanager
    async def slot(self, units: float = 1.0, timeout: float | None = None) -> AsyncIterator[None]:
        await self._gate.acquire(units, timeout)
        try:
            yield
        finally:
            await self._gate.release(units)


class AsyncClient:
    """The asyncio twin of :class:`arklow_pulumi.client.Client` (same arguments)."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        interval: float = 1.0,
        heartbeat_s: float = 10.0,
        grace_s: float = 60.0,
        timeout: float = 5.0,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        background: bool = True,
    ) -> None:
        self._http = httpx.AsyncClient(
            base_url=url, headers=auth_headers(token), timeout=timeout, transport=transport
        )
        self.interval = interval
        self.clock = clock
        self._exchange = Exchange(grace_s, heartbeat_s, clock)
        self._lanes: dict[str, AsyncLane] = {}
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._closed = False
        self.background = background
        self.cycles = 0

    def lane(self, name: str, limit: float, floor: float = 0.0) -> AsyncLane:
        """Open a lane (see :meth:`Client.lane`); call it from the event loop."""
        state = self._exchange.add_lane(name, limit, floor)
        lane = self._lanes.get(name)
        if lane is None:
            lane = self._lanes[name] = AsyncLane(self, state)
        self._start()
        return lane

    @property
    def reachable(self) -> bool | None:
        return self._exchange.reachable

    async def sync(self) -> None:
        """One cycle now: send due reports, poll admission."""
        for batch in Exchange.batches(self._exchange.due_reports()):
            await self._send_batch(batch)
        await self._poll_admission()
        for lane in list(self._lanes.values()):
            await lane._gate.changed()
        self.cycles += 1

    async def aclose(self) -> None:
        self._closed = True
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if not self._http.is_closed:
            for batch in Exchange.batches(self._exchange.due_reports()):
                await self._send_batch(batch)
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- internals ------------------------------------------------------------------------------

    def _start(self) -> None:
        if not self.background:
            return
        if self._task is None and not self._closed:
            self._wake = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name="arklow-lane-client"
            )
        elif self._wake is not None:
            self._wake.set()

    async def _run(self) -> None:
        wake = self._wake
        assert wake is not None
        while True:
            await self.sync()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wake.wait(), self.interval)
            wake.clear()

    async def _send_batch(self, batch: list[tuple[str, float]]) -> None:
        for _ in range(Exchange.sends(batch)):
            try:
                response = await self._http.post(DEMAND_PATH, json=Exchange.body(batch))
            except httpx.HTTPError:
                return
            batch = self._exchange.answered(batch, response.status_code, response_json(response))
            if not batch:
                return

    async def _poll_admission(self) -> None:
        headers = self._exchange.admission_headers()
        try:
            response = await self._http.get(ADMISSION_PATH, headers=headers)
        except httpx.HTTPError as exc:
            self._exchange.admission_failed(type(exc).__name__)
            return
        doc: Any = response_json(response) if response.status_code == 200 else None
        self._exchange.admission_answered(response.status_code, response.headers.get("etag"), doc)
