"""What a lane may run now, as the client judges it: the controller's last admission while it is
fresh, kept for a grace period while the controller cannot be reached, then a configured floor.

Pure state with the time passed in (monotonic seconds), so the grace logic is tested with a fake
clock. The lane's local ``limit`` caps everything: admission never exceeds it, nor does the floor.
"""

from __future__ import annotations

import math
from typing import Literal

Mode = Literal["controller", "grace", "floor"]


class LaneAdmission:
    """``controller``: the last answer was good. ``grace``: the controller is unreachable (or
    its answers are stale) and the last admission is kept. ``floor``: no admission yet, or the
    last one is older than ``grace_s``."""

    def __init__(self, limit: float, floor: float = 0.0, grace_s: float = 60.0) -> None:
        for name, value in (("limit", limit), ("floor", floor), ("grace_s", grace_s)):
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0 (got {value})")
        self.limit = float(limit)
        self.floor = min(float(floor), self.limit)
        self.grace_s = float(grace_s)
        self.value: float | None = None
        self.fresh_at: float | None = None
        self.failing = False

    def answered(self, admission: float, now: float) -> None:
        """A fresh admission from the controller."""
        self.value = max(0.0, float(admission))
        self.fresh_at = now
        self.failing = False

    def unanswered(self) -> None:
        """The controller could not be reached, or had no fresh admission for this lane."""
        self.failing = True

    def mode(self, now: float) -> Mode:
        if self.value is None or self.fresh_at is None or now - self.fresh_at > self.grace_s:
            return "floor"
        return "grace" if self.failing else "controller"

    def current(self, now: float) -> float:
        """Units the lane may run now: never above the local limit."""
        if self.mode(now) == "floor" or self.value is None:
            return self.floor
        return min(self.value, self.limit)
