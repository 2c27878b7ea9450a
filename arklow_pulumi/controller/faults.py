"""A test-only crash hook: ``ARKLOW_FAULT_POINT=<point>:<n>`` makes the process ``SIGKILL`` itself
the ``n``-th time it reaches ``<point>`` (a kill -9 at a chosen place inside a tick, which a test
cannot aim from outside). Unset (always, outside the fault tests), :func:`hit` costs one dict
lookup. Points: ``describe`` (before the tick's describe), ``resize`` (after the epoch check,
before the call), ``resized`` (after the call returned), ``publish`` (before the tick's write),
``renew`` (before a lease renewal).
"""

from __future__ import annotations

import os
import signal
import threading

from arklow_pulumi import settings

ENV = settings.FAULT_POINT_ENV.name
POINTS = frozenset({"describe", "resize", "resized", "publish", "renew"})

_lock = threading.Lock()
_hits: dict[str, int] = {}


def _armed() -> tuple[str, int] | None:
    value = os.environ.get(ENV)
    if not value:
        return None
    point, _, count = value.partition(":")
    return (point, int(count)) if point in POINTS and count.isdigit() else None


_ARMED = _armed()


def hit(point: str) -> None:
    if _ARMED is None or _ARMED[0] != point:
        return
    with _lock:
        _hits[point] = _hits.get(point, 0) + 1
        if _hits[point] >= _ARMED[1]:
            os.kill(os.getpid(), signal.SIGKILL)
