"""A plain replay of docs/simulate.md's clock, for the tests to hold the simulator to.

No components, no reuse of decisions, no settling, no shards: every tick decides the whole
topology with ``decide`` and counts every figure, and groups are kept as the contract describes
them. With ``then`` and ``at`` it switches topology at tick ``at`` as ``what-if --change-at``
does: a target of the same name keeps its group (in service, pending, history, last desired,
last move);
figures of a lane or pool are added over both topologies.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from arklow_pulumi.core.allocating import compile_topology
from arklow_pulumi.core.deciding import Observed, Recommendation, TargetId, decide
from arklow_pulumi.core.policy import Move
from arklow_pulumi.core.topology import ScaleTarget, Topology


@dataclass
class Group:
    low: int
    high: int
    in_service: int
    pending: list[tuple[float, int]] = field(default_factory=list)  # (ready at, count)
    history: list[Recommendation] = field(default_factory=list)
    desired: int = 0
    move: Move | None = None

    @classmethod
    def of(cls, target: ScaleTarget) -> Group:
        count = max(target.min_replicas, min(target.max_replicas, target.replicas))
        return cls(target.min_replicas, target.max_replicas, count, desired=count)

    def observe(self, now: float) -> Observed:
        ready = [(at, n) for at, n in self.pending if at <= now + 1e-9 * max(1.0, now)]
        self.pending = [(at, n) for at, n in self.pending if (at, n) not in ready]
        self.in_service += sum(n for _at, n in ready)
        return Observed(self.in_service, sum(n for _at, n in self.pending))

    def resize(self, desired: int, now: float, delay: float) -> None:
        desired = max(self.low, min(self.high, desired))
        change = desired - self.in_service - sum(n for _at, n in self.pending)
        if change > 0:
            self.pending.append((now + delay, change))
            return
        drop = -change
        while drop and self.pending:
            at, n = self.pending.pop()
            if n > drop:
                self.pending.append((at, n - drop))
                return
            drop -= n
        self.in_service -= drop


@dataclass
class Figures:
    """Sums over ticks (unit-ticks, replica-ticks, ticks)."""

    lanes: dict[str, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0.0] * 3))
    pools: dict[str, list[float]] = field(default_factory=lambda: defaultdict(lambda: [0.0] * 8))
    resources: dict[str, list[float]] = field(
        default_factory=lambda: defaultdict(lambda: [0.0] * 3)
    )
    actions: int = 0


def replay(
    topo: Topology,
    rows: list[tuple[float, str, float]],
    tick: float,
    delay: float,
    *,
    single_tick: bool = False,
    then: Topology | None = None,
    at: int = 0,
) -> Figures:
    """Lanes: [e, allocation, admission]; pools: [capacity, demand, served, admitted,
    in-service replicas, ticks at max, ticks constrained, peak]; resources: [ticks when every
    pool of it is at max, ticks when any is constrained, peak of its pools' replicas]."""
    end = rows[-1][0]
    ticks = int(end / tick + 1e-9) + 1
    demand: dict[str, float] = {}
    groups = {t.name: Group.of(t) for p in topo.pools.values() for t in p.scale_targets}
    out = Figures()
    row = 0
    current = topo
    for k in range(ticks):
        now = k * tick
        if then is not None and k == at:
            current, groups = then, _carried(then, groups)
        while row < len(rows) and rows[row][0] <= now + 1e-9 * max(1.0, now):
            demand[rows[row][1]] = rows[row][2]
            row += 1
        lanes = current.lanes_by_key
        ids = {
            t.name: TargetId(p.name, t.name)
            for p in current.pools.values()
            for t in p.scale_targets
        }
        observed = {ids[name]: g.observe(now) for name, g in groups.items()}
        history = {ids[name]: g.history for name, g in groups.items()}
        moves = {ids[name]: g.move for name, g in groups.items() if g.move is not None}
        known = {key: d for key, d in demand.items() if key in lanes}
        decision = decide(
            current, known, observed, history, now, single_tick=single_tick, moves=moves
        )
        _count(current, decision, groups, out)
        for name, g in groups.items():
            target = decision.targets[ids[name]]
            g.history.append(Recommendation(now, target.recommended))
            g.move = target.move
            if target.desired != g.desired:
                out.actions += 1
                g.desired = target.desired
            g.resize(target.desired, now, delay)
    return out


def _carried(then: Topology, groups: dict[str, Group]) -> dict[str, Group]:
    out = {}
    for pool in then.pools.values():
        for t in pool.scale_targets:
            old = groups.get(t.name)
            if old is None:
                out[t.name] = Group.of(t)
            else:
                out[t.name] = Group(
                    t.min_replicas,
                    t.max_replicas,
                    old.in_service,
                    old.pending,
                    old.history,
                    old.desired,
                    old.move,
                )
    return out


def _count(topo: Topology, decision: object, groups: dict[str, Group], out: Figures) -> None:
    allocation = decision.allocation  # type: ignore[attr-defined]
    c = compile_topology(topo)
    lanes = allocation.lanes
    served: dict[str, float] = defaultdict(float)
    admitted: dict[str, float] = defaultdict(float)
    for key, incidences in zip(c.lane_keys, c.lane_pools, strict=True):
        lane = lanes[key]
        e = min(lane.demand, topo.lanes_by_key[key].limit)
        figures = out.lanes[key]
        figures[0] += e
        figures[1] += lane.allocation
        figures[2] += lane.admission
        for p, cost in incidences:
            served[c.pool_names[p]] += lane.allocation * cost
            admitted[c.pool_names[p]] += lane.admission * cost
    per_resource: dict[str, list[int]] = defaultdict(lambda: [1, 0, 0])
    for name, pool in topo.pools.items():
        result = allocation.pools[name]
        replicas = sum(groups[t.name].in_service for t in pool.scale_targets)
        at_max = all(groups[t.name].in_service >= groups[t.name].high for t in pool.scale_targets)
        figures = out.pools[name]
        figures[0] += result.capacity
        figures[1] += result.demand
        figures[2] += served[name]
        figures[3] += admitted[name]
        figures[4] += replicas
        figures[5] += 1 if at_max else 0
        figures[6] += 1 if result.state == "constrained" else 0
        figures[7] = max(figures[7], replicas)
        tally = per_resource[pool.resource]
        tally[0] &= 1 if at_max else 0
        tally[1] |= 1 if result.state == "constrained" else 0
        tally[2] += replicas
    for resource, (at_max, constrained, replicas) in per_resource.items():
        figures = out.resources[resource]
        figures[0] += at_max
        figures[1] += constrained
        figures[2] = max(figures[2], replicas)
