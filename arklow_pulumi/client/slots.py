"""The local limiter: at most ``capacity()`` units held at once (the lane's current admission,
never above its limit). A slot that is held when admission drops is not taken back; new slots wait
until the lane is under its admission again. Threads wait on a ``threading.Condition``, tasks on an
``asyncio.Condition``; both re-check at least every ``RECHECK_S`` because admission can also change
with time alone (the grace period ends)."""

from __future__ import annotations

import asyncio
import contextlib
import math
import threading
import time
from collections.abc import Callable

RECHECK_S = 0.5
EPSILON = 1e-9


class SlotTimeout(TimeoutError):
    """No slot came free within the timeout."""


def _check_units(units: float, limit: float) -> None:
    if not (math.isfinite(units) and units > 0):
        raise ValueError(f"units must be a finite number > 0 (got {units})")
    if units > limit + EPSILON:
        raise ValueError(f"a slot of {units} units can never fit the lane's limit of {limit}")


class _Slots:
    """The count both gates keep: units held and waited for, under ``capacity()`` and the
    lane's ``limit``."""

    def __init__(self, capacity: Callable[[], float], limit: float) -> None:
        self.capacity = capacity
        self.limit = limit
        self.in_use = 0.0
        self.waiting = 0.0

    def _full_for(self, units: float) -> bool:
        return self.in_use + units > self.capacity() + EPSILON

    @staticmethod
    def _next_wait(
        deadline: float | None, now: float, units: float, timeout: float | None
    ) -> float:
        """How long to wait before looking again; raises :class:`SlotTimeout` past ``deadline``."""
        if deadline is None:
            return RECHECK_S
        remaining = deadline - now
        if remaining <= 0:
            raise SlotTimeout(f"no slot of {units} units within {timeout} s")
        return min(RECHECK_S, remaining)


class SlotGate(_Slots):
    """Slots for threads."""

    def __init__(self, capacity: Callable[[], float], limit: float) -> None:
        super().__init__(capacity, limit)
        self._cond = threading.Condition()

    def acquire(self, units: float = 1.0, timeout: float | None = None) -> None:
        _check_units(units, self.limit)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            self.waiting += units
            try:
                while self._full_for(units):
                    self._cond.wait(self._next_wait(deadline, time.monotonic(), units, timeout))
            finally:
                self.waiting -= units
            self.in_use += units

    def release(self, units: float = 1.0) -> None:
        with self._cond:
            self.in_use = max(0.0, self.in_use - units)
            self._cond.notify_all()

    def changed(self) -> None:
        """Admission may have grown: let the waiters look again."""
        with self._cond:
            self._cond.notify_all()


class AsyncSlotGate(_Slots):
    """Slots for asyncio tasks (one event loop)."""

    def __init__(self, capacity: Callable[[], float], limit: float) -> None:
        super().__init__(capacity, limit)
        self._cond: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    async def acquire(self, units: float = 1.0, timeout: float | None = None) -> None:
        _check_units(units, self.limit)
        cond = self._condition()
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        async with cond:
            self.waiting += units
            try:
                while self._full_for(units):
                    wait = self._next_wait(deadline, loop.time(), units, timeout)
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(cond.wait(), wait)
            finally:
                self.waiting -= units
            self.in_use += units

    async def release(self, units: float = 1.0) -> None:
        cond = self._condition()
        async with cond:
            self.in_use = max(0.0, self.in_use - units)
            cond.notify_all()

    async def changed(self) -> None:
        cond = self._condition()
        async with cond:
            cond.notify_all()
