"""Simulated supply: one scale target's group on the simulated clock.

Launched replicas are *pending* until ``launch delay`` has passed since their launch, then in
service (seen by the first tick at or after that time: launched at t with delay d, a replica
serves from the first tick >= t + d, and never on the tick that launched it). Scaling down cancels
pending replicas first, newest first, then stops in-service ones at once. Like a cloud API that
refuses a size outside the group's bounds, a resize never leaves [min, max]. (A group taken over
under new bounds, :meth:`SimulatedGroup.take_over`, keeps its count until its next resize.)
"""

from __future__ import annotations

from collections import deque

from arklow_pulumi.core.deciding import Observed
from arklow_pulumi.core.policy import clamp
from arklow_pulumi.core.topology import ScaleTarget


class SimulatedGroup:
    """In-service replicas, and launches warming up as ``(ready_at, count)`` in launch order."""

    __slots__ = ("_seen", "high", "in_service", "low", "pending", "pending_total")

    def __init__(self, target: ScaleTarget) -> None:
        self.low, self.high = target.min_replicas, target.max_replicas
        self.in_service = max(self.low, min(self.high, target.replicas))
        self.pending: deque[tuple[float, int]] = deque()
        self.pending_total = 0  # Σ count over ``pending``
        self._seen: Observed | None = None  # :meth:`observed`, made again after a change

    @property
    def pending_count(self) -> int:
        return self.pending_total

    @property
    def current(self) -> int:
        return self.in_service + self.pending_count

    def observe(self, now: float) -> tuple[int, int]:
        """Bring launches whose delay has passed into service; (in service, pending) now."""
        pending = self.pending
        if not pending:
            return self.in_service, 0
        while pending and pending[0][0] <= now + 1e-9 * max(1.0, now):
            count = pending.popleft()[1]
            self.in_service += count
            self.pending_total -= count
            self._seen = None
        return self.in_service, self.pending_total

    def observed(self) -> Observed:
        seen = self._seen
        if seen is None:
            seen = self._seen = Observed(self.in_service, self.pending_total)
        return seen

    def take_over(self, other: SimulatedGroup) -> None:
        """The same group under another target's bounds (what-if's ``--change-at``): its
        in-service count and pending launches, kept as they are even outside this group's
        [min, max], until the next :meth:`resize` (a count outside them is the next decision's
        to clamp)."""
        self.in_service = other.in_service
        self.pending = deque(other.pending)
        self.pending_total = other.pending_total
        self._seen = None

    def resize(self, desired: int, now: float, launch_delay: float) -> None:
        """Set the group's size (clamped to [min, max]), launching or stopping the difference."""
        desired = clamp(desired, self.low, self.high)
        change = desired - self.current
        self._seen = None
        if change > 0:
            self.pending.append((now + launch_delay, change))
            self.pending_total += change
            return
        drop = -change
        while drop and self.pending:
            at, count = self.pending.pop()
            if count > drop:
                self.pending.append((at, count - drop))
                self.pending_total -= drop
                return
            self.pending_total -= count
            drop -= count
        self.in_service -= drop
