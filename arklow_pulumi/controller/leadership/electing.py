"""The PostgreSQL elector: replicas on one store, one leader through the lease row (client-go's
shape, fenced).

Every replica runs a :class:`LeaseElector` (the :class:`~..ports.Elector` interface; SQLite's
degenerate one is :mod:`.leasing`). Each ``retry`` period it tries to take the lease row when it is
free or expired by the **database** clock (a take-over bumps the epoch, see
:func:`arklow_pulumi.store.runtime.acquire_lease`), or, while it holds it, renews it by
compare-and-set on holder and epoch.

The leader stops acting **at once** when it cannot renew before its renew deadline: a renewal is
counted from the moment its call *started* on this replica's monotonic clock, so the deadline
passes here before the lease can expire in the database (``renew < lease``) for any replica to take
it. Two threads watch it: the renewing loop, and a watchdog that says ``stopped`` even while a
renewal hangs on a dead connection. The callbacks (:class:`~..ports.LeaderCallbacks`) start and
cancel the tick loop (:mod:`.looping`); every write and resize is fenced by the epoch in the
database besides (a replica that missed the news still writes nothing, see
:mod:`arklow_pulumi.store.runtime`).

Nothing here uses the replicas' wall clocks or a session advisory lock, so any connection pooling
works, PgBouncer's transaction pooling included (each lease statement is one transaction).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from arklow_pulumi.controller import faults
from arklow_pulumi.controller.ports import LeaderCallbacks, LeaderView, TickObserver
from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.store.engine import Store, StoreError
from arklow_pulumi.store.runtime import (
    Lease,
    LeaseLost,
    acquire_lease,
    read_lease,
    release_lease,
    renew_lease,
)

log = logging.getLogger("arklow.controller")


@dataclass(frozen=True, slots=True)
class LeaseTiming:
    """client-go's defaults: lease 15 s, renew deadline 10 s, retry 2 s."""

    lease_s: float = 15.0
    renew_deadline_s: float = 10.0
    retry_s: float = 2.0

    def check(self) -> LeaseTiming:
        """Raises a one-line :class:`InvalidInput` unless lease > renew deadline > 1.2 × retry."""
        if not self.lease_s > self.renew_deadline_s:
            raise InvalidInput.one(
                "option --renew-deadline",
                "renew_deadline",
                f"{self.renew_deadline_s:g} s must be shorter than --lease-seconds "
                f"({self.lease_s:g} s)",
            )
        if not self.renew_deadline_s > 1.2 * self.retry_s:
            raise InvalidInput.one(
                "option --retry-period",
                "retry_period",
                f"{self.retry_s:g} s: --renew-deadline ({self.renew_deadline_s:g} s) must be "
                "longer than 1.2 x the retry period",
            )
        return self


class LeaseElector:
    """This replica's standing in the election (see the module doc)."""

    def __init__(
        self,
        store: Store,
        holder: str,
        timing: LeaseTiming,
        *,
        observer: TickObserver | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.holder = holder
        self.timing = timing
        self.observer = observer
        self.monotonic = monotonic
        # Who hears of leadership changes: set by :meth:`run` (tests driving rounds by hand set it).
        self.callbacks = LeaderCallbacks()
        self._lock = threading.Lock()
        # The callbacks hear of changes one at a time, in the order they happened (a step-down
        # seen by the watchdog is never told after the next take-over seen by the renewing loop).
        self._news = threading.RLock()
        self._lease: Lease | None = None
        self._renewed = 0.0  # monotonic start of the last successful acquisition or renewal
        self._seen = LeaderView(False, None, 0)
        self._told = False  # whether the callbacks heard of a leader yet
        self._report(False, 0, None)

    # -- what the rest of the process asks ---------------------------------------------------

    def leading(self) -> Lease | None:
        """The lease while it is ours and renewed within the renew deadline, else None (and the
        step-down callback has run)."""
        self._check_deadline()
        with self._lock:
            return self._lease

    def view(self) -> LeaderView:
        lease = self.leading()
        if lease is not None:
            return LeaderView(True, lease.holder, lease.epoch)
        return self._seen

    def lost(self, lease: Lease) -> None:
        """A fenced write found the lease taken over: step down now."""
        self._step_down(lease, "lease taken over")

    @property
    def fence_window_s(self) -> float:
        """Half the gap between the lease and the renew deadline: a renewal that fences a resize
        keeps every other replica out far longer than that."""
        return (self.timing.lease_s - self.timing.renew_deadline_s) / 2

    def release(self) -> None:
        lease = self._lease
        if lease is not None:
            self._step_down(lease, "stopping")
            with contextlib.suppress(StoreError):  # else it expires by itself
                release_lease(self.store, lease)

    # -- the loops ---------------------------------------------------------------------------

    def run(self, stop: threading.Event, callbacks: LeaderCallbacks) -> None:
        """Acquire or renew every retry period until ``stop``; give the lease up at the end."""
        self.callbacks = callbacks
        watchdog = threading.Thread(target=self._watch, args=(stop,), name="lease-watchdog")
        watchdog.daemon = True
        watchdog.start()
        try:
            while not stop.is_set():
                self._round()
                stop.wait(self.timing.retry_s)
        finally:
            self.release()

    def _round(self) -> None:
        started = self.monotonic()
        with self._lock:
            lease = self._lease
        try:
            if lease is None:
                taken = acquire_lease(self.store, self.holder, self.timing.lease_s)
                if taken is not None:
                    self._start(taken, started)
                else:
                    state = read_lease(self.store)
                    self._standing_by(LeaderView(False, state.holder, state.epoch))
                    self._report(False, state.epoch, state.age_s)
            else:
                faults.hit("renew")
                renew_lease(self.store, lease)
                with self._lock:
                    if self._lease == lease:
                        self._renewed = started
                self._report(True, lease.epoch, self.monotonic() - started)
        except LeaseLost:
            if lease is not None:
                self._step_down(lease, "lease taken over")
        except StoreError as exc:
            log.warning("lease: store unreachable: %s", str(exc).splitlines()[0])
        self._check_deadline()

    def _watch(self, stop: threading.Event) -> None:
        period = min(0.25, self.timing.retry_s / 4)
        while not stop.wait(period):
            self._check_deadline()

    # -- transitions -------------------------------------------------------------------------

    def _start(self, lease: Lease, started: float) -> None:
        with self._news:
            with self._lock:
                self._lease, self._renewed = lease, started
            self._seen = LeaderView(True, lease.holder, lease.epoch)
            log.info("leading: lease epoch %d", lease.epoch)
            self._report(True, lease.epoch, 0.0)
            self.callbacks.started(lease)

    def _standing_by(self, view: LeaderView) -> None:
        """Another replica leads (or none): told once per holder and epoch seen."""
        with self._news:
            seen, self._seen = self._seen, view
            if view != seen or not self._told:
                self._told = True
                self.callbacks.new_leader(view)

    def _check_deadline(self) -> None:
        with self._lock:
            lease = self._lease
            late = lease is not None and (
                self.monotonic() - self._renewed >= self.timing.renew_deadline_s
            )
        if late and lease is not None:
            self._step_down(lease, f"not renewed within {self.timing.renew_deadline_s:g} s")

    def _step_down(self, lease: Lease, why: str) -> None:
        with self._news:
            with self._lock:
                if self._lease != lease:
                    return
                self._lease = None
                # A new name: taking the lease again later is a take-over, with a new epoch.
                self.holder = self._rename(self.holder)
            self._seen = LeaderView(False, None, lease.epoch)
            log.warning("stopped leading (epoch %d): %s", lease.epoch, why)
            self._report(False, lease.epoch, None)
            self._told = True  # stopping is news enough: the loop stands by
            self.callbacks.stopped(lease)

    @staticmethod
    def _rename(holder: str) -> str:
        base, sep, _suffix = holder.rpartition(":")
        return f"{base}{sep}{uuid.uuid4().hex[:8]}" if sep else f"{holder}:{uuid.uuid4().hex[:8]}"

    def _report(self, leader: bool, epoch: int, age_s: float | None) -> None:
        if self.observer is not None:
            self.observer.leadership(leader, epoch, age_s)
