"""The topology rules T1–T7, enforced here and nowhere else.

Every function takes an immutable :class:`Topology` and returns a new one, or raises
:class:`TopologyRuleViolation` naming the objects involved; the input is never changed, so a
caller that stores the result only after the call returns can never store a broken topology.

- T1 a new destination begins in a standalone pool of its own for each resource it draws from;
- T2 one pool per (destination, resource): joining moves only that resource's membership;
- T3 joining a pool of a resource the destination does not draw from is refused;
- T4 leaving a pool gives the destination a new standalone pool for that resource;
- T5 a pool may lose its last member while targets are attached; it remains (targets settle to min);
- T6 a pool with scale targets cannot be deleted;
- T7 any destination's standalone pool can be joined, and is then shared.

Standalone pools are created and collected automatically: one that has no member and no scale
target left is removed. Declared pools stay until deleted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from arklow_pulumi.core.errors import Problem, TopologyRuleViolation
from arklow_pulumi.core.topology import (
    Destination,
    Pool,
    ScaleTarget,
    Topology,
    frozen_map,
    standalone_pool_name,
)
from arklow_pulumi.core.validating import destination_problems, pool_problems, target_problems


def _refuse(obj: str, field: str, message: str) -> TopologyRuleViolation:
    return TopologyRuleViolation([Problem(obj, field, message)])


def _check(problems: Iterable[Problem]) -> None:
    found = list(problems)
    if found:
        raise TopologyRuleViolation(found)


def _with(
    topo: Topology,
    destinations: dict[str, Destination] | None = None,
    pools: dict[str, Pool] | None = None,
    memberships: dict[tuple[str, str], str] | None = None,
) -> Topology:
    return Topology(
        destinations=frozen_map(topo.destinations if destinations is None else destinations),
        pools=frozen_map(topo.pools if pools is None else pools),
        memberships=frozen_map(topo.memberships if memberships is None else memberships),
    )


def free_pool_name(pools: Iterable[str], wanted: str) -> str:
    """``wanted``, or ``wanted.2``, ``wanted.3``… when a pool already holds the name."""
    taken = set(pools)
    if wanted not in taken:
        return wanted
    n = 2
    while f"{wanted}.{n}" in taken:
        n += 1
    return f"{wanted}.{n}"


def _require_destination(topo: Topology, name: str) -> Destination:
    if name not in topo.destinations:
        raise _refuse(f"destination {name!r}", "name", "no such destination")
    return topo.destinations[name]


def _require_pool(topo: Topology, name: str) -> Pool:
    if name not in topo.pools:
        raise _refuse(f"pool {name!r}", "name", "no such pool")
    return topo.pools[name]


def _give_standalone(
    pools: dict[str, Pool],
    memberships: dict[tuple[str, str], str],
    dest: Destination,
    resource: str,
) -> None:
    name = free_pool_name(pools, standalone_pool_name(dest.name, resource))
    capacity = dest.standalone_capacity.get(resource, 0.0)
    pools[name] = Pool(name=name, resource=resource, capacity=capacity, owner=dest.name)
    memberships[(dest.name, resource)] = name


def _collect(pools: dict[str, Pool], memberships: dict[tuple[str, str], str], name: str) -> None:
    pool = pools.get(name)
    if pool is None or pool.owner is None or pool.scale_targets:
        return
    if name not in memberships.values():
        del pools[name]


# -- destinations ----------------------------------------------------------------------------


def add_destination(topo: Topology, dest: Destination) -> Topology:
    """T1: the destination starts in a standalone pool of its own for each of its resources."""
    obj = f"destination {dest.name!r}"
    if dest.name in topo.destinations:
        raise _refuse(obj, "name", "a destination with this name already exists")
    _check(destination_problems(dest))
    pools, memberships = dict(topo.pools), dict(topo.memberships)
    for resource in dest.resources:
        _give_standalone(pools, memberships, dest, resource)
    return _with(topo, {**topo.destinations, dest.name: dest}, pools, memberships)


def update_destination(topo: Topology, dest: Destination) -> Topology:
    """Change lanes, resources or standalone capacities; new resources get standalone pools (T1)
    and dropped resources release their membership."""
    old = _require_destination(topo, dest.name)
    _check(destination_problems(dest))
    pools, memberships = dict(topo.pools), dict(topo.memberships)
    for resource in old.resources:
        if resource not in dest.resources:
            _collect(pools, memberships, memberships.pop((dest.name, resource)))
    for resource in dest.resources:
        if (dest.name, resource) not in memberships:
            _give_standalone(pools, memberships, dest, resource)
            continue
        current = pools[memberships[(dest.name, resource)]]
        if current.owner == dest.name:
            capacity = dest.standalone_capacity.get(resource, 0.0)
            pools[current.name] = replace(current, capacity=capacity)
    return _with(topo, {**topo.destinations, dest.name: dest}, pools, memberships)


def remove_destination(topo: Topology, name: str) -> Topology:
    """Drop a destination and its memberships; its empty standalone pools go with it."""
    dest = _require_destination(topo, name)
    pools, memberships = dict(topo.pools), dict(topo.memberships)
    for resource in dest.resources:
        _collect(pools, memberships, memberships.pop((name, resource)))
    # Its standalone pools that others joined (T7) or that keep scale targets (T5) stay, still
    # marked as automatic: they are collected once the last member and target are gone.
    destinations = {k: v for k, v in topo.destinations.items() if k != name}
    return _with(topo, destinations, pools, memberships)


# -- pools -----------------------------------------------------------------------------------


def add_pool(topo: Topology, pool: Pool) -> Topology:
    obj = f"pool {pool.name!r}"
    if pool.name in topo.pools:
        raise _refuse(obj, "name", "a pool with this name already exists")
    _check(pool_problems(pool))
    _check(p for t in pool.scale_targets for p in _target_conflicts(topo, pool.name, t))
    return _with(topo, pools={**topo.pools, pool.name: replace(pool, owner=None)})


def update_pool(topo: Topology, pool: Pool, adopt: bool = False) -> Topology:
    """Change a pool's static capacity, headroom or scale targets; its resource is its identity.

    ``adopt=True`` turns a standalone pool into a declared one (T7 taken over by a declared
    ``Pool``): it is then kept when it empties instead of being collected.
    """
    old = _require_pool(topo, pool.name)
    if pool.resource != old.resource:
        raise _refuse(
            f"pool {pool.name!r}",
            "resource",
            f"cannot change from {old.resource!r} to {pool.resource!r}; replace the pool instead",
        )
    _check(pool_problems(pool))
    others = _with(topo, pools={k: v for k, v in topo.pools.items() if k != pool.name})
    _check(p for t in pool.scale_targets for p in _target_conflicts(others, pool.name, t))
    owner = None if adopt else old.owner
    return _with(topo, pools={**topo.pools, pool.name: replace(pool, owner=owner)})


def remove_pool(topo: Topology, name: str) -> Topology:
    """T6: refused while scale targets are attached. Members fall back to standalone pools (T4)."""
    pool = _require_pool(topo, name)
    if pool.scale_targets:
        targets = ", ".join(repr(t.name) for t in pool.scale_targets)
        raise _refuse(
            f"pool {name!r}",
            "scale_targets",
            f"cannot delete a pool with scale targets attached ({targets}); detach them first",
        )
    pools = {k: v for k, v in topo.pools.items() if k != name}
    memberships = dict(topo.memberships)
    for destination in topo.members(name):
        dest = topo.destinations[destination]
        _give_standalone(pools, memberships, dest, pool.resource)
    return _with(topo, pools=pools, memberships=memberships)


# -- memberships -----------------------------------------------------------------------------


def join(topo: Topology, destination: str, pool: str) -> Topology:
    """T2, T3, T7: move the destination's membership for the pool's resource into ``pool``."""
    dest = _require_destination(topo, destination)
    target = _require_pool(topo, pool)
    if target.resource not in dest.resources:
        raise _refuse(
            f"membership of destination {destination!r} in pool {pool!r}",
            "pool",
            f"destination {destination!r} does not draw from resource {target.resource!r} "
            f"(it draws from {list(dest.resources)}); it would wait on an unrelated constraint",
        )
    current = topo.memberships[(destination, target.resource)]
    if current == pool:
        return topo
    pools, memberships = dict(topo.pools), dict(topo.memberships)
    memberships[(destination, target.resource)] = pool
    _collect(pools, memberships, current)
    return _with(topo, pools=pools, memberships=memberships)


def leave(topo: Topology, destination: str, pool: str) -> Topology:
    """T4, T5: remove only this membership; the destination gets a new standalone pool."""
    dest = _require_destination(topo, destination)
    left = _require_pool(topo, pool)
    if topo.memberships.get((destination, left.resource)) != pool:
        raise _refuse(
            f"membership of destination {destination!r} in pool {pool!r}",
            "pool",
            f"destination {destination!r} is not a member of pool {pool!r}",
        )
    pools, memberships = dict(topo.pools), dict(topo.memberships)
    del memberships[(destination, left.resource)]
    _collect(pools, memberships, pool)
    _give_standalone(pools, memberships, dest, left.resource)
    return _with(topo, pools=pools, memberships=memberships)


# -- scale targets ---------------------------------------------------------------------------


def _target_conflicts(topo: Topology, pool: str, target: ScaleTarget) -> Iterable[Problem]:
    obj = f"pool {pool!r}, scale target {target.name!r}"
    for other in topo.pools.values():
        for existing in other.scale_targets:
            if existing.name == target.name and other.name != pool:
                yield Problem(obj, "name", f"a scale target of this name is in pool {other.name!r}")
            elif existing.group == target.group and existing.name != target.name:
                yield Problem(
                    obj,
                    "group",
                    f"group {target.group} is already scale target {existing.name!r} "
                    f"of pool {other.name!r}; two targets would fight over one group",
                )


def attach_target(topo: Topology, pool: str, target: ScaleTarget) -> Topology:
    current = _require_pool(topo, pool)
    if any(t.name == target.name for t in current.scale_targets):
        raise _refuse(
            f"pool {pool!r}, scale target {target.name!r}", "name", "already attached to this pool"
        )
    _check(target_problems(pool, target))
    _check(_target_conflicts(topo, pool, target))
    updated = replace(current, scale_targets=(*current.scale_targets, target))
    return _with(topo, pools={**topo.pools, pool: updated})


def update_target(topo: Topology, pool: str, target: ScaleTarget) -> Topology:
    current = _require_pool(topo, pool)
    if all(t.name != target.name for t in current.scale_targets):
        raise _refuse(f"pool {pool!r}, scale target {target.name!r}", "name", "no such target")
    return attach_target(detach_target(topo, pool, target.name), pool, target)


def detach_target(topo: Topology, pool: str, name: str) -> Topology:
    current = _require_pool(topo, pool)
    kept = tuple(t for t in current.scale_targets if t.name != name)
    if len(kept) == len(current.scale_targets):
        raise _refuse(f"pool {pool!r}, scale target {name!r}", "name", "no such target")
    pools = {**topo.pools, pool: replace(current, scale_targets=kept)}
    memberships = dict(topo.memberships)
    _collect(pools, memberships, pool)
    return _with(topo, pools=pools)
