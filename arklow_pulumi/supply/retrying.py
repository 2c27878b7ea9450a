"""Retrying temporary supply errors with jittered exponential backoff, within a deadline.

Only :class:`~arklow_pulumi.supply.errors.TemporarySupplyError` is retried; anything else
propagates at once. The delay before attempt ``k`` is uniform in ``[0, min(cap, base × 2^k)]``
("full jitter"), raised to the server's ``retry_after`` when it gave one, and never sleeps past
the deadline: when the next attempt would start after it, the last error is raised.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from arklow_pulumi.supply.errors import TemporarySupplyError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    deadline: float = 60.0
    base: float = 0.2
    cap: float = 5.0
    max_attempts: int = 20

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None) -> float:
        jittered = rng.uniform(0.0, min(self.cap, self.base * (2**attempt)))
        return max(jittered, retry_after or 0.0)


@dataclass(slots=True)
class Retrier:
    """Runs a call under a :class:`RetryPolicy`; the clock and sleep are injectable for tests."""

    policy: RetryPolicy = field(default_factory=RetryPolicy)
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random)

    def call(self, fn: Callable[[], T]) -> T:
        start = self.clock()
        attempt = 0
        while True:
            try:
                return fn()
            except TemporarySupplyError as exc:
                attempt += 1
                delay = self.policy.delay(attempt - 1, self.rng, exc.retry_after)
                spent = self.clock() - start
                if attempt >= self.policy.max_attempts or spent + delay > self.policy.deadline:
                    raise
                self.sleep(delay)
