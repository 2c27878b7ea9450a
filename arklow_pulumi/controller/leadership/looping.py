"""The tick loop, and leadership owning it (client-go's ``OnStartedLeading`` /
``OnStoppedLeading``).

:func:`run_loop` is the one tick loop: tick, do the store's upkeep in the time it waits anyway,
wait out the rest of the interval; an overrun tick is followed at once by the next one, never by a
burst of catch-up ticks. A tick that fails (store or supply unreachable) is logged, the process is
not ready until one succeeds, and the loop goes on; a fenced write that finds the lease taken over
(:class:`~arklow_pulumi.store.runtime.LeaseLost`) ends it.

:class:`Loop` is the process's loop task, driven by the elector's callbacks
(:class:`~..ports.LeaderCallbacks`), which only hand it news and return: ``started(lease)`` starts
the tick loop under that lease (after reloading what the previous leader stored; the lease is
adopted only if no other news came meanwhile); ``stopped(lease)`` cancels it at once (no write or
resize under that lease from then on, :meth:`~..tick.ticking.Controller.step_down`; the tick in
progress stops at its next fence) and the process stands by; a late word about an older lease
changes nothing; ``new_leader`` tells a process that starts
behind another leader to stand by. Standing by (PostgreSQL replicas only: SQLite's elector leads
from start to end) is serving the leader's last published tick, read from the store every interval
(:meth:`~..tick.ticking.Controller.follow`). A lease lost in a tick goes back to the elector
(``lost``), whose ``stopped`` then arrives like any other.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Literal

from arklow_pulumi.controller.ports import LeaderCallbacks, LeaderView
from arklow_pulumi.controller.tick.ticking import Controller
from arklow_pulumi.core.errors import ArklowError
from arklow_pulumi.store.runtime import Lease, LeaseLost

Wait = Callable[[float], bool]
"""``wait(delay)``: wait up to ``delay`` seconds; True when the loop must stop."""

STANDBY: Literal["standby"] = "standby"


def run_loop(controller: Controller, wait: Wait) -> None:
    """Tick until ``wait(delay)`` says stop (see the module doc)."""
    while True:
        try:
            delay = controller.after_tick(controller.tick().next_delay_s)
        except LeaseLost:
            raise
        except ArklowError as exc:
            controller.failed(exc)
            delay = controller.interval_s
        if wait(delay):
            return


class Loop:
    """The loop task of a controller process (see the module doc)."""

    def __init__(self, controller: Controller, lost: Callable[[Lease], None]) -> None:
        self.controller = controller
        self._lost = lost
        self._changed = threading.Condition()
        self._job: Lease | Literal["standby"] | None = None  # None: no news yet
        self._turn = 0  # raised on every new job: the running one stops at its next wait
        self._stopping = False
        self.callbacks = LeaderCallbacks(
            started=self._started, stopped=self._stopped, new_leader=self._new_leader
        )

    def run(self) -> None:
        """Until :meth:`stop`: the job the last news asked for."""
        turn = 0
        while True:
            with self._changed:
                self._changed.wait_for(self._news(turn))
                if self._stopping:
                    return
                job, turn = self._job, self._turn
            wait = self._waiter(turn)
            if job == STANDBY:
                self._follow(wait)
            elif job is not None:
                self._lead(job, turn, wait)

    def stop(self) -> None:
        """End the loop after the tick in progress (graceful stop)."""
        with self._changed:
            self._stopping = True
            self._changed.notify_all()

    # -- the elector's news (its threads) ----------------------------------------------------

    def _started(self, lease: Lease) -> None:
        self._set(lease)

    def _stopped(self, lease: Lease) -> None:
        with self._changed:  # the loop adopts a lease under this lock too (_lead)
            self.controller.step_down(lease)
            if self._job == lease:
                self._set(STANDBY)

    def _new_leader(self, _view: LeaderView) -> None:
        with self._changed:
            if self._job is None:
                self._set(STANDBY)

    def _set(self, job: Lease | Literal["standby"]) -> None:
        with self._changed:
            self._job = job
            self._turn += 1
            self._changed.notify_all()

    def _news(self, turn: int) -> Callable[[], bool]:
        """Whether anything happened since ``turn``: a new job, or the stop."""
        return lambda: self._stopping or self._turn != turn

    def _waiter(self, turn: int) -> Wait:
        news = self._news(turn)

        def wait(delay: float) -> bool:
            with self._changed:
                return self._changed.wait_for(news, timeout=delay)

        return wait

    # -- the jobs ----------------------------------------------------------------------------

    def _lead(self, lease: Lease, turn: int, wait: Wait) -> None:
        controller = self.controller
        while True:
            try:
                controller.restore()  # what the previous leader stored
                break
            except ArklowError as exc:  # the store, at the moment of taking over
                controller.failed(exc)
                if wait(controller.interval_s):
                    return
        with self._changed:
            if self._turn != turn:
                return  # stopped (or a newer lease) while reloading: never adopted
            controller.lead(lease)
        try:
            run_loop(controller, wait)
        except LeaseLost:
            controller.step_down(lease)
            self._lost(lease)

    def _follow(self, wait: Wait) -> None:
        controller = self.controller
        while True:
            try:
                controller.follow()
            except ArklowError as exc:
                controller.failed(exc)
            if wait(controller.interval_s):
                return
