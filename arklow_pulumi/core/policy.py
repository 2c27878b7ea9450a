"""The scale policy: how the controller moves a target from its current count to the single-tick
decision without flapping (modelled on Kubernetes HPA ``behavior`` and AWS target tracking).

For one target, given this tick's single-tick recommendation (already within [min, max]) and the
target's current count (in-service plus pending replicas):

- **held work first**: when the pool's own capacity holds work (its servable demand exceeds its
  in-service capacity), a target below its recommendation goes to it in one step, bounded only by
  its max, and no target scales down; neither the tolerance nor the step limit delays it;
- **tolerance**: otherwise, while the pool's needed units are within ``tolerance`` of what its
  targets supply (in-service and pending), nothing changes (:func:`within_tolerance`, checked
  per pool);
- **scale up at once**, at most ``max(max_step_up, max_step_up_percent % of current)`` per tick;
- **scale down** only to the *highest* recommendation seen within ``scale_down_window_s``
  (this tick's included), at most ``max(max_step_down, max_step_down_percent % of current)``
  per tick;
- **no reversal churn**: a target whose last move (:class:`Move`) is younger than
  ``scale_down_window_s`` does not move the other way (:func:`reverses`): no scale-down within
  the window after a scale-up, no scale-up within it after a scale-down, except for held work,
  which is never kept waiting;
- the result is always within [min, max], whatever the current count is: the bounds win over the
  step limits (a target above a lowered max goes to max at once).

Pending replicas count as current supply, so replicas still warming up are never requested twice:
the policy returns an absolute count, and a count already requested is already ``current``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class ScalePolicy:
    """A pool's scale policy; the defaults are those of docs/scale-policy.md.

    Each step limit is the larger of an absolute count and a percentage of the current count
    (set the percentage to 0 for a fixed step); the percentage rounds up for scale-up and down
    for scale-down, as HPA does.
    """

    max_step_up: int = 4
    max_step_up_percent: float = 100.0
    scale_down_window_s: float = 300.0
    max_step_down: int = 1
    max_step_down_percent: float = 10.0
    tolerance: float = 0.1

    def step_up_limit(self, current: int) -> int:
        return max(self.max_step_up, math.ceil(current * self.max_step_up_percent / 100.0))

    def step_down_limit(self, current: int) -> int:
        # As HPA: the lowest count allowed is ceil(current × (1 - percent)): the step rounds down.
        return max(self.max_step_down, math.floor(current * self.max_step_down_percent / 100.0))


DEFAULT_POLICY = ScalePolicy()


@dataclass(frozen=True, slots=True)
class Move:
    """A target's last scale action: when its desired count last differed from its current
    count, and which way (``+1`` up, ``-1`` down)."""

    at: float
    direction: int


def move_after(last: Move | None, current: int, desired: int, now: float) -> Move | None:
    """The target's last move once ``desired`` is applied: a new one when it differs from
    ``current``, else ``last`` unchanged. The one place a move is recorded (the controller
    stores it, the simulator keeps it)."""
    if desired == current:
        return last
    return Move(now, 1 if desired > current else -1)


def guarding(last: Move | None, window_s: float, now: float) -> int:
    """The direction of ``last`` while it is younger than ``window_s`` (0 when there is none or
    it is older): all of a move that a decision at ``now`` reads."""
    if last is None or now - last.at >= window_s:
        return 0
    return last.direction


def reverses(policy: ScalePolicy, last: Move | None, direction: int, now: float) -> bool:
    """True when a move in ``direction`` now would turn the target's last move around within
    the pool's ``scale_down_window_s``."""
    return guarding(last, policy.scale_down_window_s, now) == -direction


def policy_document(policy: ScalePolicy) -> dict[str, float] | None:
    """The fields that differ from the defaults (``None`` when none do): what is stored and
    shown; read back with :func:`arklow_pulumi.reading.spec.policy_from_document`."""
    changed = {
        name: getattr(policy, name)
        for name in ScalePolicy.__dataclass_fields__
        if getattr(policy, name) != getattr(DEFAULT_POLICY, name)
    }
    return changed or None


def clamp(value: int, low: int, high: int) -> int:
    """A replica count within a target's ``[low, high]``: ``max(low, min(high, value))``, spelt
    out (the same choices, without two calls). The one replica clamp: every scale decision
    (single tick, scale policy, the tick's decide) bounds its counts with it."""
    v = value if value < high else high
    return v if v > low else low


def within_tolerance(needed: float, supplied: float, tolerance: float) -> bool:
    """True when ``|needed - supplied| <= tolerance × supplied`` (both in units): no change."""
    return abs(needed - supplied) <= tolerance * supplied + 1e-9 * max(1.0, supplied)


def next_replicas(
    policy: ScalePolicy,
    *,
    current: int,
    recommended: int,
    window: Iterable[int],
    low: int,
    high: int,
    held: bool = False,
    last: Move | None = None,
    now: float = 0.0,
) -> int:
    """The count to apply now, within ``[low, high]``.

    ``window`` holds the single-tick recommendations of earlier ticks still inside
    ``scale_down_window_s``; ``recommended`` is this tick's. ``held``: the pool's own capacity
    holds work, so a target below the recommendation goes to it in one step (no step limit) and
    none scales down. ``last``: the target's last move; a move that would reverse it within the
    window waits (:func:`reverses`), unless it takes held work up.
    """
    if recommended > current and (held or not reverses(policy, last, 1, now)):
        step = recommended if held else current + policy.step_up_limit(current)
        wanted = min(recommended, step)
    elif recommended < current and not held and not reverses(policy, last, -1, now):
        highest = max(recommended, max(window, default=recommended))
        wanted = max(min(current, highest), current - policy.step_down_limit(current))
    else:
        wanted = current
    return clamp(wanted, low, high)
