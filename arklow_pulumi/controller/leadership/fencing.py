"""The controller's side of fencing: every resize is made under the lease, checked right before
the call and carried by it.

Fencing, part by part (the README's job table names every module):

- the store (:mod:`arklow_pulumi.store.runtime`) keeps the lease row; its epoch only grows, a
  compare-and-set renewal (:func:`~arklow_pulumi.store.runtime.renew_lease`) and every tick's
  write (:func:`~arklow_pulumi.store.runtime.write_tick`) compare holder and epoch first and
  refuse with :class:`~arklow_pulumi.store.runtime.LeaseLost` once another replica took it;
- this module: :func:`fence_for` is the check made right before each resize of a tick's act
  step (still leading by the elector's renew deadline, then by the epoch in the database,
  then the deadline once more), and :class:`Fence` wraps the call in it;
- the supply runs each write inside the fence (the guard of
  :func:`~arklow_pulumi.supply.reconciling.reconcile_pass`) and carries the epoch and the tick
  with the call (:mod:`arklow_pulumi.supply.fencing`: GCP's ``requestId``, AWS's User-Agent), so
  a cloud's request log shows who sent it;
- the electors (:mod:`.electing`, :mod:`.leasing`) give the renew deadline and the window one
  renewal may fence (``fence_window_s``); the loop (:mod:`.looping`) stops the tick at once when
  the lease is lost, and the tick (:mod:`..tick.ticking`, its act step :mod:`..tick.acting`)
  resizes and writes only under the lease it holds (:func:`held`).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from arklow_pulumi.controller import faults
from arklow_pulumi.controller.ports import Elector
from arklow_pulumi.store.engine import Store
from arklow_pulumi.store.runtime import Lease, LeaseLost, renew_lease
from arklow_pulumi.supply import fencing


@dataclass(frozen=True, slots=True)
class Fence:
    """What each resize is made under: ``check`` re-checks the lease epoch right before the call
    (raises :class:`~arklow_pulumi.store.runtime.LeaseLost` or a store error, and then nothing is
    sent), and the call carries ``epoch`` and ``tick`` (:mod:`arklow_pulumi.supply.fencing`)."""

    check: Callable[[], None]
    epoch: int
    tick: int

    @contextmanager
    def around_resize(self) -> Iterator[None]:
        self.check()
        faults.hit("resize")
        with fencing.acting_under(self.epoch, self.tick):
            yield
        faults.hit("resized")


@dataclass(slots=True)
class Renewal:
    """The act step's last successful lease renewal: when it started (monotonic), if any."""

    reuse_s: float
    started: float | None = None

    def covers(self, now: float) -> bool:
        return self.started is not None and now - self.started < self.reuse_s


def held(lease: Lease | None) -> Lease:
    """The lease a write or a resize is made under; none held: :class:`LeaseLost`."""
    if lease is None:
        raise LeaseLost("this replica does not lead; nothing written or resized")
    return lease


def fence_for(
    store: Store,
    lease: Lease,
    tick: int,
    *,
    elector: Elector | None,
    monotonic: Callable[[], float],
    turns: threading.Lock,
    reuse_s: float,
) -> Fence:
    """The fence of one act step's resizes under ``lease``. Right before each one: still leading
    by the renew deadline (this replica's monotonic clock) and by the epoch in the database,
    then the deadline once more (the renewal may have taken long). The epoch is checked by a
    compare-and-set renewal, made by the first resize of the act step and again whenever the
    last one started longer ago than the reuse window (``reuse_s``, never more than the
    elector's ``fence_window_s``): a renewal that succeeded at (database) time D keeps any other
    replica out until D + lease, far beyond the window. The resizes run in parallel; their
    renewals take ``turns`` rather than waiting in the database's lock (SQLite's busy handler
    sleeps)."""
    window = math.inf if elector is None else elector.fence_window_s
    renewal = Renewal(min(reuse_s, window))

    def leading() -> None:
        if elector is not None and elector.leading() != lease:
            raise LeaseLost(f"lease epoch {lease.epoch} no longer held; resize not sent")

    def check() -> None:
        leading()
        with turns:
            started = monotonic()
            if not renewal.covers(started):
                renew_lease(store, lease)  # fenced: a replica that lost it stops here
                renewal.started = started
        leading()

    return Fence(check, lease.epoch, tick)
