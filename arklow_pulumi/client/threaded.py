"""The synchronous lane client: one background thread per :class:`Client` reports demand in
batches and polls admission; each :class:`Lane` limits its own work with ``with lane.slot():``."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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
from arklow_pulumi.client.slots import SlotGate


class Lane(LaneFace[SlotGate]):
    """One lane of a :class:`Client`: ``report(demand)`` and ``with lane.slot():``."""

    def __init__(self, client: Client, state: LaneState) -> None:
        super().__init__(state, lambda: client.clock(), SlotGate)
        self._client = client

    def report(self, demand: float) -> None:
        """Record the lane's demand (in-flight plus queued units); sent in the background."""
        self._client._report(self._state.name, demand)

    @contextmanager
    def slot(self, units: float = 1.0, timeout: float | None = None) -> Iterator[None]:
        """Hold ``units`` of the lane's admission for the block; waits while the lane is full
        (``SlotTimeout`` after ``timeout`` seconds)."""
        self._gate.acquire(units, timeout)
        try:
            yield
        finally:
            self._gate.release(units)

    def _changed(self) -> None:
        self._gate.changed()


class Client:
    """A client of the controller's API. ``interval`` paces the background thread (reports and
    admission polls); unchanged demand is re-sent every ``heartbeat_s``. ``clock`` (monotonic
    seconds) judges the grace period. With ``background=False`` no thread is started: the caller
    runs :meth:`sync` when it wants a cycle."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        interval: float = 1.0,
        heartbeat_s: float = 10.0,
        grace_s: float = 60.0,
        timeout: float = 5.0,
        transport: httpx.BaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        background: bool = True,
    ) -> None:
        self._http = httpx.Client(
            base_url=url, headers=auth_headers(token), timeout=timeout, transport=transport
        )
        self.interval = interval
        self.clock = clock
        self._exchange = Exchange(grace_s, heartbeat_s, clock)
        self._lanes: dict[str, Lane] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self.background = background
        self.cycles = 0  # completed background cycles (for tests and diagnostics)

    def lane(self, name: str, limit: float, floor: float = 0.0) -> Lane:
        """The lane ``"<destination>/<lane>"``, opened once with its local ``limit`` and the
        ``floor`` it falls back to when the controller stays unreachable past the grace period."""
        with self._lock:
            state = self._exchange.add_lane(name, limit, floor)
            lane = self._lanes.get(name)
            if lane is None:
                lane = self._lanes[name] = Lane(self, state)
        self._start()
        self._wake.set()
        return lane

    @property
    def reachable(self) -> bool | None:
        """Whether the last admission poll reached the controller (None before the first)."""
        return self._exchange.reachable

    def sync(self) -> None:
        """One cycle now, in the calling thread: send due reports, poll admission."""
        self._send_reports()
        self._poll_admission()
        for lane in list(self._lanes.values()):
            lane._changed()
        self.cycles += 1

    def close(self) -> None:
        """Stop the background thread (after a last attempt to send due reports)."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()  # its last act sends the due reports
            self._thread = None
        elif not self._http.is_closed:
            self._send_reports()
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ------------------------------------------------------------------------------

    def _report(self, name: str, demand: float) -> None:
        with self._lock:
            self._exchange.report(name, demand)

    def _start(self) -> None:
        with self._lock:
            if self.background and self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(
                    target=self._run, name="arklow-lane-client", daemon=True
                )
                self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sync()
            self._wake.wait(self.interval)
            self._wake.clear()
        self._send_reports()

    def _send_reports(self) -> None:
        with self._lock:
            due = self._exchange.due_reports()
        for batch in Exchange.batches(due):
            self._send_batch(batch)

    def _send_batch(self, batch: list[tuple[str, float]]) -> None:
        for _ in range(Exchange.sends(batch)):
            try:
                response = self._http.post(DEMAND_PATH, json=Exchange.body(batch))
            except httpx.HTTPError:
                return  # unreachable: the reports stay due
            with self._lock:
                doc = response_json(response)
                batch = self._exchange.answered(batch, response.status_code, doc)
            if not batch:
                return

    def _poll_admission(self) -> None:
        with self._lock:
            headers = self._exchange.admission_headers()
        try:
            response = self._http.get(ADMISSION_PATH, headers=headers)
        except httpx.HTTPError as exc:
            with self._lock:
                self._exchange.admission_failed(type(exc).__name__)
            return
        doc: Any = response_json(response) if response.status_code == 200 else None
        with self._lock:
            self._exchange.admission_answered(
                response.status_code, response.headers.get("etag"), doc
            )
