"""Units of one topology decided together (:class:`Batch`).

``decide`` on several independent units at once gives each the decision it would get alone (no
lane or pool is shared between them), and one call on a few hundred lanes costs much less than
many calls on a few lanes each. So units of one topology are grouped in batches: when many of a
batch's units changed, one ``decide`` serves them all; when few did, each is decided alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from arklow_pulumi.core.allocating import compile_topology
from arklow_pulumi.core.deciding import Observed, Recommendation, TargetId, decide
from arklow_pulumi.core.policy import Move
from arklow_pulumi.core.topology import Topology, frozen_map
from arklow_pulumi.simulation.columns import lane_columns, picker
from arklow_pulumi.simulation.policies import PROPORTIONAL, SINGLE_TICK
from arklow_pulumi.simulation.stepping import UnitRun


class Batch:
    """Units of one topology under the fair (or single-tick) rule, decided by one call when many
    changed; a unit under the proportional rule alone. ``start``: the first tick its units are
    stepped (all of a batch's units start together)."""

    def __init__(self, runs: Sequence[UnitRun], start: int = 0) -> None:
        self.runs = list(runs)
        self.start = start
        for r in runs:
            r.batch = self
        self.scaling = [r for r in runs if r.groups]
        self.lanes = sum(len(r.unit.lane_keys) for r in runs)
        # units without groups are decided again only when their demand changed (and at first)
        self.dirty: dict[UnitRun, None] = {r: None for r in runs if not r.groups}
        # settled units whose demand changed: their skipped ticks are caught up before the next
        self.woken: list[UnitRun] = []
        # every unit's histories (kept in place): a decision reads only the changed units' part
        self.history: dict[TargetId, Sequence[Recommendation]] = {}
        for r in runs:
            self.history.update(r.history)
        # and their last moves, in one mapping they all write to (their target ids differ)
        self.moves: dict[TargetId, Move] = {}
        for r in runs:
            self.moves.update(r.moves)
            r.moves = self.moves
        self.single_tick = any(r.unit.rule == SINGLE_TICK for r in runs)
        self.above: dict[TargetId, float] = {}
        for r in runs:
            self.above.update(r.above)
            r.above = self.above
        self.cloud = next((r.cloud for r in runs if r.cloud is not None), None)
        self.topology: Topology | None = None
        if len(runs) > 1:
            self.topology = Topology(
                destinations=frozen_map(
                    (n, d) for r in runs for n, d in r.unit.topology.destinations.items()
                ),
                pools=frozen_map((n, p) for r in runs for n, p in r.unit.topology.pools.items()),
                memberships=frozen_map(
                    kv for r in runs for kv in r.unit.topology.memberships.items()
                ),
            )
            index = compile_topology(self.topology).lane_index
            for r in runs:
                r.pick = picker([index[key] for key in r.unit.lane_keys])

    def step(self, k: int, now: float) -> list[UnitRun]:
        """Advance every unit one tick; the units whose decision was renewed."""
        if k < self.start:
            return []
        if self.woken:
            for r in self.woken:
                r.catch_up(k)
            self.woken.clear()
        awake = [r for r in self.scaling if not r.settled]
        changed = [r for r in awake if r.check(k, now)]
        if self.dirty:
            changed += [r for r in self.dirty if r.check(k, now)]
            self.dirty.clear()
        if changed:
            lanes = sum(len(r.unit.lane_keys) for r in changed)
            if self.topology is not None and len(changed) > 1 and 3 * lanes >= self.lanes:
                self._decide_together(changed, now)
            else:
                for r in changed:
                    r.decide_alone(now)
        for r in awake:
            r.settled = r.advance(k, now)
        return changed

    def activate(self, k: int) -> None:
        """Its first tick (``start``): its runs take over the groups they carry. Called before
        any batch steps tick ``k``, so that each source group is as tick ``k - 1`` left it."""
        for r in self.runs:
            if r.carry:
                r.activate(k)

    def demand_changed(self, run: UnitRun) -> None:
        if not run.groups:
            self.dirty[run] = None
        elif run.settled:
            run.settled = False
            self.woken.append(run)

    def _decide_together(self, changed: Sequence[UnitRun], now: float) -> None:
        """One ``decide`` for the changed units (the others get defaults; their part is unused)."""
        assert self.topology is not None
        demand: dict[str, float] = {}
        observed: dict[TargetId, Observed] = {}
        for r in changed:
            demand.update(zip(r.unit.lane_keys, r.values, strict=True))
            if r.groups:
                observed.update(zip(r.ids, [g.observed() for g in r.groups], strict=True))
        decision = decide(
            self.topology,
            demand,
            observed,
            self.history,
            now,
            admission=changed[0].admission,
            single_tick=self.single_tick,
            moves=self.moves,
            cloud=self.cloud,
            above=self.above,
        )
        caps, alloc, admit = lane_columns(decision.allocation)
        for r in changed:
            r.take(decision, caps, alloc, admit, r.pick)


def batches(runs: Sequence[UnitRun], lanes: int, start: int = 0) -> list[Batch]:
    """Fair (and single-tick) units in batches of about ``lanes`` lanes, in order; other units
    alone. The units given must come from one topology (their names do not clash)."""
    out: list[Batch] = []
    pending: list[UnitRun] = []
    size = 0
    for r in runs:
        if r.unit.rule == PROPORTIONAL:
            out.append(Batch([r], start))
            continue
        pending.append(r)
        size += len(r.unit.lane_keys)
        if size >= lanes:
            out.append(Batch(pending, start))
            pending, size = [], 0
    if pending:
        out.append(Batch(pending, start))
    return out
