"""Each pool's peak demand over a replay: the pre-pass of ``static-peak`` and ``standalone-sized``.

A pool's demand at a tick is ``Σ e × cost`` over its lanes with ``e = min(demand, limit)``, the
demand ``decide`` sees at ``t = 0, tick, 2 × tick, …`` (rows up to ``t``, :func:`.tracing.changes`);
its peak is the highest of those. A row between two ticks that a later row overrides before the
next tick is never seen, as in the replay itself. Each tick, the pools whose lanes changed are
summed again from their lanes, in lane order (no running sum to drift).
"""

from __future__ import annotations

from arklow_pulumi.core.allocating import compile_topology
from arklow_pulumi.core.topology import Topology
from arklow_pulumi.simulation.tracing import Trace, changes


def peak_demands(topo: Topology, trace: Trace, tick: float) -> dict[str, float]:
    """Pool name → its highest ``Σ e × cost`` at the replay's ticks (0 without demand)."""
    c = compile_topology(topo)
    m = len(c.pool_names)
    members: list[list[tuple[int, float]]] = [[] for _ in range(m)]  # per pool: (lane, cost)
    for i, incidences in enumerate(c.lane_pools):
        for p, cost in incidences:
            members[p].append((i, cost))
    index = c.lane_index
    e = [0.0] * len(c.lane_keys)
    limits = c.limits
    peak = [0.0] * m
    for batch in changes(trace, tick):
        touched: set[int] = set()
        for lane, value in batch:
            at = index.get(lane)
            if at is None:  # a lane of another topology (what-if traces name both sides')
                continue
            e[at] = value if value < limits[at] else limits[at]
            touched.update(p for p, _cost in c.lane_pools[at])
        for p in touched:
            total = sum([e[i] * cost for i, cost in members[p]])
            if total > peak[p]:
                peak[p] = total
    return dict(zip(c.pool_names, peak, strict=True))
