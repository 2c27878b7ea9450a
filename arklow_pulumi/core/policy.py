"""The scale policy: how the controller moves a target from its current count to the single-tick
decision without flapping and without giving up its headroom (modelled on Kubernetes HPA
``behavior`` and AWS target tracking). The whole decision is :func:`decide_pool`; everything a
caller keeps for it (the recommendations' window, each target's last move) is declared here
(:func:`history_horizon`, :func:`guarding`).

For one pool, given this tick's figures (:class:`PoolFigures`) and per target its single-tick
recommendation (already within [min, max]), its **current** count (what Arklow last asked of its
group: in-service plus pending replicas, or an autoscaled group's minimum), the highest
recommendation within the window and its last move:

- **no members**: every target settles to its min at once;
- **held work first**: when the pool's own capacity holds work (its servable demand exceeds its
  in-service capacity), a target below its recommendation goes to it in one step, bounded only
  by its max, and no target scales down; nothing delays it;
- **the headroom is kept**: the pool scales up as soon as what its targets supply (in service
  and pending) falls below ``demand × (1 + headroom × headroom_kept) − static capacity``; with
  the default ``headroom_kept`` 1 that is the whole single-tick need, so no smoothing ever spends
  the headroom that absorbs the next rise while launches are pending;
- **tolerance, on the way down only**: while the need is at least ``(1 - tolerance)`` of the
  supply (and the supply is above that floor), nothing changes; below it the pool may scale
  down;
- **scale up at once**, at most ``max(max_step_up, max_step_up_percent % of current)`` per tick;
- **scale down** only to the *highest* recommendation seen within ``scale_down_window_s``
  (this tick's included), at most ``max(max_step_down, max_step_down_percent % of current)``
  per tick (100 % by default: in one step, as HPA's default ``behavior``);
- **no reversal inside the window**: a target whose last move (:class:`Move`) is at most
  ``scale_down_window_s`` old does not move the other way (:func:`reverses`), except a scale-up
  for held work, which never waits;
- the result is always within [min, max]: the bounds win over the step limits.

Every decision carries a :data:`Reason` from a closed set (:data:`REASONS`), as HPA's conditions
do: why the target is where it is.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple, get_args

from arklow_pulumi.core.fields import table_field
from arklow_pulumi.core.limits import fraction_problem, percent_problem, step_problem, units_problem

Reason = Literal[
    "no-members",
    "held-work",
    "scale-up",
    "step-limited",
    "no-reversal",
    "within-tolerance",
    "stabilized",
    "scale-down",
    "on-target",
    "at-max",
    "at-min",
]
# Every reason, in the order a report lists them (a closed label set for the metrics).
REASONS: tuple[Reason, ...] = get_args(Reason)

_EPS = 1e-9


@dataclass(frozen=True, slots=True, kw_only=True)
class ScalePolicy:
    """A pool's scale policy; the defaults are those of docs/scale-policy.md.

    Each step limit is the larger of an absolute count and a percentage of the current count
    (set the percentage to 0 for a fixed step); the percentage rounds up for scale-up and down
    for scale-down, as HPA does.
    """

    max_step_up: int = table_field("count", default=4, rule=step_problem)
    max_step_up_percent: float = table_field("number", default=100.0, rule=units_problem)
    scale_down_window_s: float = table_field("number", default=300.0, rule=units_problem)
    max_step_down: int = table_field("count", default=1, rule=step_problem)
    max_step_down_percent: float = table_field("number", default=100.0, rule=percent_problem)
    tolerance: float = table_field("number", default=0.1, rule=fraction_problem)
    headroom_kept: float = table_field("number", default=0.75, rule=fraction_problem)

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
    """The direction of ``last`` while it is at most ``window_s`` old (0 when there is none or
    it is older): all of a move that a decision at ``now`` reads. The window is closed, as the
    recommendations' (:func:`history_horizon`): at 5-minute ticks and a 300 s window, the move of
    the previous tick still guards."""
    if last is None or now - last.at > window_s:
        return 0
    return last.direction


def reverses(policy: ScalePolicy, last: Move | None, direction: int, now: float) -> bool:
    """True when a move in ``direction`` now would turn the target's last move around within
    the pool's ``scale_down_window_s``."""
    return guarding(last, policy.scale_down_window_s, now) == -direction


def history_horizon(policy: ScalePolicy, now: float) -> float:
    """The oldest recommendation time a decision at ``now`` reads (``at >= horizon``)."""
    return now - policy.scale_down_window_s


def retention_s(policies: Sequence[ScalePolicy]) -> float:
    """How long a caller must keep recommendations and moves for every decision of these
    pools: the longest window (the default's at least)."""
    return max([DEFAULT_POLICY.scale_down_window_s, *(p.scale_down_window_s for p in policies)])


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


# What the pool's figures allow this tick (:func:`pool_mode`).
Mode = Literal["settle", "held", "up", "hold", "down"]


class PoolFigures(NamedTuple):
    """A pool's figures for one decision, in units. ``demand``: its servable demand;
    ``capacity``: static plus in-service supply (allocation's); ``supplied``: what its targets
    supply in service and pending; ``static``: its static capacity; ``headroom``: its headroom;
    ``members``: whether it has any."""

    demand: float
    capacity: float
    supplied: float
    static: float
    headroom: float
    members: bool = True


def needed_units(demand: float, headroom: float, static: float) -> float:
    """What a pool's targets must supply for ``demand`` with ``headroom`` beyond its ``static``
    capacity: ``max(0, demand × (1 + headroom) − static)``, the single-tick rule's need (the
    kernel's sizing, :mod:`arklow_pulumi.core.scaling`, splits the same figure in Rust)."""
    return max(0.0, demand * (1.0 + headroom) - static)


def pool_mode(policy: ScalePolicy, pool: PoolFigures) -> Mode:
    """Which way the pool may move: ``settle`` (no members), ``held`` (its capacity holds work),
    ``up`` (its supply fell below the kept part of its headroom), ``hold`` (its need is within
    the tolerance below its supply), ``down`` (its need is below ``(1 - tolerance)`` of its
    supply)."""
    if not pool.members:
        return "settle"
    cap = pool.capacity
    if pool.demand > cap + _EPS * max(1.0, cap):
        return "held"
    need = needed_units(pool.demand, pool.headroom, pool.static)
    floor = needed_units(pool.demand, pool.headroom * policy.headroom_kept, pool.static)
    supplied = pool.supplied
    slack = _EPS * max(1.0, supplied)
    if supplied < floor - slack:
        return "up"
    if need >= supplied * (1.0 - policy.tolerance) - slack:
        return "hold"
    return "down"


class TargetFigures(NamedTuple):
    """One target's inputs: ``current`` (the count the decision moves from),
    ``recommended`` (this tick's single-tick count, within bounds), its bounds, ``window`` (the
    recommendations of earlier ticks within the window, :func:`history_horizon`; read only to
    scale down, so it may be a lazy iterable) and its last move."""

    current: int
    recommended: int
    low: int
    high: int
    window: Iterable[int] = ()
    last: Move | None = None


class TargetStep(NamedTuple):
    """A target's decision: the count to apply (within bounds), why, and its last move once
    applied."""

    desired: int
    reason: Reason
    move: Move | None


def decide_pool(
    policy: ScalePolicy,
    pool: PoolFigures,
    targets: Sequence[TargetFigures],
    now: float,
    mode: Mode | None = None,
) -> list[TargetStep]:
    """The scale policy's whole decision for one pool's targets (see the module doc).
    ``mode``: the pool's :func:`pool_mode`, when the caller has it already (a target's window
    is read only in mode ``down``, so a caller may leave it empty in the others)."""
    if mode is None:
        mode = pool_mode(policy, pool)
    if mode == "hold":  # the steady state: every target keeps its count (within its bounds)
        return [
            TargetStep(t.current, "within-tolerance", t.last)
            if t.low < t.current < t.high
            else bounded(t, t.current, "within-tolerance", now)
            for t in targets
        ]
    return [bounded(t, *_wanted(policy, mode, t, now), now) for t in targets]


def plain_step(target: TargetFigures, now: float) -> TargetStep:
    """The unsmoothed single-tick rule (the simulator's ``single-tick`` policy): the target goes
    to its recommendation."""
    t = target
    reason: Reason = "on-target"
    if t.recommended != t.current:
        reason = "scale-up" if t.recommended > t.current else "scale-down"
    return bounded(t, t.recommended, reason, now)


# reasons a bound explains better when the target rests on it at its recommendation
_BOUNDABLE = frozenset({"held-work", "scale-up", "scale-down", "on-target", "within-tolerance"})


def bounded(t: TargetFigures, wanted: int, reason: Reason, now: float) -> TargetStep:
    """The wanted count within the target's bounds, with the reason a bound gives (the one
    place a decision's count is bounded and its bound named: the policy's and the clouds'
    models')."""
    desired = clamp(wanted, t.low, t.high)
    if desired != wanted:
        reason = "at-max" if wanted > t.high else "at-min"
    elif desired == t.recommended and reason in _BOUNDABLE:
        if desired == t.high and reason != "scale-down":
            reason = "at-max"
        elif desired == t.low and reason != "scale-up" and reason != "held-work":
            reason = "at-min"
    return TargetStep(desired, reason, move_after(t.last, t.current, desired, now))


def _wanted(policy: ScalePolicy, mode: Mode, t: TargetFigures, now: float) -> tuple[int, Reason]:
    """The count the policy wants for one target before its bounds, and why."""
    current, rec = t.current, t.recommended
    if mode == "settle":
        return t.low, "no-members"
    if mode == "held":
        return (rec if rec > current else current), "held-work"
    if mode == "hold":
        return current, "within-tolerance"
    if rec > current and mode == "up":
        if reverses(policy, t.last, 1, now):
            return current, "no-reversal"
        step = current + policy.step_up_limit(current)
        return (step, "step-limited") if step < rec else (rec, "scale-up")
    if rec < current and mode == "down":
        if reverses(policy, t.last, -1, now):
            return current, "no-reversal"
        highest = max(t.window, default=rec)
        highest = rec if highest < rec else highest
        if highest >= current:
            return current, "stabilized"
        step = current - policy.step_down_limit(current)
        if step > highest:
            return step, "step-limited"
        return highest, ("stabilized" if highest > rec else "scale-down")
    return current, "on-target"
