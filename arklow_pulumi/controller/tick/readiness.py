"""Whether the controller is ready (``/readyz``), and why not, said once per change.

Readiness is one value: ready or not, the reason, and the object it concerns (the store, a scale
target, the lease). :class:`ReadinessLog` holds the current one and writes one log line when it
changes (and one for the first value, at start), so a process that stays unready says why on
stderr instead of only in ``/metrics``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from arklow_pulumi.core.deciding import TargetId
from arklow_pulumi.supply.errors import SupplyError

log = logging.getLogger("arklow.controller")


@dataclass(frozen=True, slots=True)
class Readiness:
    ready: bool
    reason: str  # a short cause: "missing credentials", "store unreachable", "no leadership", ...
    subject: str  # the object concerned: "store", "scale target 'pool/name'", "lease"
    detail: str = ""  # the error's own first line, when there is one

    def key(self) -> tuple[bool, str, str]:
        """What a change is judged by: the detail (an error's text) may vary from tick to tick."""
        return self.ready, self.reason, self.subject

    def line(self) -> str:
        if self.ready:
            return f"ready: {self.reason}"
        detail = f": {self.detail}" if self.detail else ""
        return f"not ready: {self.reason} ({self.subject}){detail}"


STARTING = Readiness(False, "no tick done yet", "controller")
NO_LEADERSHIP = Readiness(False, "no leadership", "lease", "waiting for the election")
TICKED = Readiness(True, "store and supply read on the last tick", "controller")
FOLLOWING = Readiness(True, "serving the leader's last tick", "controller")


def _first_line(error: BaseException) -> str:
    text = str(error).splitlines()
    return text[0] if text else type(error).__name__


def _reason(error: BaseException) -> str:
    """``MissingCredentials`` -> ``missing credentials``."""
    name = type(error).__name__
    words = "".join(f" {c.lower()}" if c.isupper() else c for c in name).strip()
    return words or "error"


def tick_failed(error: Exception) -> Readiness:
    """A tick that did not complete: the store (or the topology in it) could not be read."""
    if isinstance(error, SupplyError):
        return Readiness(False, _reason(error), "supply", _first_line(error))
    return Readiness(False, "store unreachable", "store", _first_line(error))


def supply_not_read(errors: Mapping[TargetId, SupplyError]) -> Readiness:
    """A tick that published without reading every group: the first error, by target."""
    if not errors:
        return Readiness(False, "supply not read", "supply")
    target, error = min(errors.items(), key=lambda item: str(item[0]))
    return Readiness(False, _reason(error), f"scale target '{target}'", _first_line(error))


class ReadinessLog:
    """The current readiness; a line on the controller's log at the first value (info) and at
    each change (a warning when it is not ready; a change of reason or subject counts, the same
    reason tick after tick does not)."""

    def __init__(self, initial: Readiness = STARTING) -> None:
        self._lock = threading.Lock()
        self._current: Readiness | None = None
        self.set(initial)

    @property
    def ready(self) -> bool:
        current = self._current
        return current is not None and current.ready

    @property
    def current(self) -> Readiness:
        return self._current or STARTING

    def set(self, value: Readiness) -> None:
        with self._lock:
            first = self._current is None
            if not first and value.key() == self.current.key():
                return
            self._current = value
        # at start, not ready yet is the expected state: said, not warned about
        (log.info if value.ready or first else log.warning)("%s", value.line())
