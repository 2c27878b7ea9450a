"""Each pool's peak demand over a replay: the pre-pass of ``static-peak`` and ``standalone-sized``.

A pool's demand at a tick is ``Σ e × cost`` over its lanes with ``e = min(demand, limit)``, the
demand ``decide`` sees at ``t = 0, tick, 2 × tick, …`` (rows up to ``t``, :func:`.tracing.changes`);
its peak is the highest of those. A row between two ticks that a later row overrides before the
next tick is never seen, as in the replay itself. Each tick, the pools whose lanes changed are
summed again from their lanes, in lane order (no running sum to drift), by the rules the
allocation's own figures follow (:func:`~arklow_pulumi.core.allocating.lane_caps`,
:func:`~arklow_pulumi.core.allocating.pool_sums`).
"""

from __future__ import annotations

from arklow_pulumi.core.allocating import compile_topology, lane_caps, pool_sums
from arklow_pulumi.core.topology import Topology
from arklow_pulumi.simulation.tracing import Trace, changes


def peak_demands(topo: Topology, trace: Trace, tick: float) -> dict[str, float]:
    """Pool name → its highest ``Σ e × cost`` at the replay's ticks (0 without demand)."""
    c = compile_topology(topo)
    m = len(c.pool_names)
    members: list[list[int]] = [[] for _ in range(m)]  # per pool: its lanes, in lane order
    for i, incidences in enumerate(c.lane_pools):
        for p, _cost in incidences:
            members[p].append(i)
    index = c.lane_index
    e = [0.0] * len(c.lane_keys)
    limits = c.limits
    peak = [0.0] * m
    for batch in changes(trace, tick):
        changed = [(at, value) for lane, value in batch if (at := index.get(lane)) is not None]
        if not changed:  # only lanes of another topology (what-if traces name both sides')
            continue
        positions = [at for at, _value in changed]
        capped = lane_caps([value for _at, value in changed], [limits[at] for at in positions])
        for at, value in zip(positions, capped, strict=True):
            e[at] = value
        touched = {p for at in positions for p, _cost in c.lane_pools[at]}
        lanes = sorted({i for p in touched for i in members[p]})
        sums = pool_sums(e, c.lane_pools, m, lanes)
        for p in touched:
            if sums[p] > peak[p]:
                peak[p] = sums[p]
    return dict(zip(c.pool_names, peak, strict=True))
