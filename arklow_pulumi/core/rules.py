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

A whole topology read from a document is checked here too, all at once
(:func:`assemble_topology`): a declared pool lists its members; every (destination, resource) not
listed by any pool is in the destination's standalone pool ``<destination>/<resource>`` (T1),
whose capacity is the destination's ``standalone_capacity`` for that resource; a member must draw
from the pool's resource (T3) and be in one pool per resource (T2); a declared pool may carry a
standalone pool's name if that destination is one of its members (T7). Every problem is collected
and raised together; nothing is half built. The incremental functions and the whole-topology
check share each message.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import replace

from arklow_pulumi.core.errors import InvalidInput, Problem, TopologyRuleViolation
from arklow_pulumi.core.topology import (
    Destination,
    GroupRef,
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


def free_pool_name(pools: Collection[str], wanted: str) -> str:
    """``wanted``, or ``wanted.2``, ``wanted.3``… when a pool already holds the name."""
    if wanted not in pools:
        return wanted
    n = 2
    while f"{wanted}.{n}" in pools:
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
            _not_drawn_from(dest, target.resource),
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


def _not_drawn_from(dest: Destination, resource: str) -> str:
    """T3's message."""
    return (
        f"destination {dest.name!r} does not draw from resource {resource!r} "
        f"(it draws from {list(dest.resources)}); it would wait on an unrelated constraint"
    )


def _name_taken(obj: str, pool: str) -> Problem:
    return Problem(obj, "name", f"a scale target of this name is in pool {pool!r}")


def _group_taken(obj: str, group: GroupRef, target: str, pool: str) -> Problem:
    return Problem(
        obj,
        "group",
        f"group {group} is already scale target {target!r} of pool {pool!r}; two targets "
        "would fight over one group",
    )


def _target_conflicts(topo: Topology, pool: str, target: ScaleTarget) -> Iterable[Problem]:
    obj = f"pool {pool!r}, scale target {target.name!r}"
    for other in topo.pools.values():
        for existing in other.scale_targets:
            if existing.name == target.name and other.name != pool:
                yield _name_taken(obj, other.name)
            elif existing.group == target.group and existing.name != target.name:
                yield _group_taken(obj, target.group, existing.name, other.name)


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


# -- a whole topology at once ------------------------------------------------------------

Declared = tuple[Pool, Sequence[str]]
"""A declared pool, built, with the members its spec lists (in order, duplicates kept)."""


def assemble_topology(
    destinations: Sequence[Destination],
    declared: Sequence[Declared],
) -> Topology:
    """The topology of built destinations and declared pools (each with the members its spec
    lists), once every rule that spans fields or objects holds; else :class:`InvalidInput`
    naming each problem. The objects' fields were checked by the schema."""
    by_name = {d.name: d for d in destinations}
    problems = list(_problems(destinations, by_name, declared))
    if problems:
        raise InvalidInput(problems)
    return _assemble(by_name, declared)


def owner_of(pool: str, resource: str, members: Sequence[str]) -> str | None:
    """The member whose standalone pool this declared pool is (T7), if any (the last listed)."""
    owner = None
    for member in members:
        if pool == standalone_pool_name(member, resource):
            owner = member
    return owner


def _problems(
    listed: Sequence[Destination],
    destinations: dict[str, Destination],
    declared: Sequence[Declared],
) -> Iterator[Problem]:
    for name, n in Counter(d.name for d in listed).items():
        if n > 1:
            yield Problem(f"destination {name!r}", "name", f"duplicate destination name ({n}×)")
    for name, n in Counter(p.name for p, _ in declared).items():
        if n > 1:
            yield Problem(f"pool {name!r}", "name", f"duplicate pool name ({n}×)")
    for dest in destinations.values():
        yield from destination_problems(dest, fields_checked=True)
    yield from _target_problems([p for p, _ in declared])
    yield from _membership_problems(declared, destinations)


def _target_problems(pools: list[Pool]) -> Iterator[Problem]:
    seen_names: dict[str, str] = {}
    seen_groups: dict[GroupRef, tuple[str, str]] = {}
    for pool in pools:
        yield from pool_problems(pool, fields_checked=True)
        for target in pool.scale_targets:
            obj = f"pool {pool.name!r}, scale target {target.name!r}"
            other_pool = seen_names.setdefault(target.name, pool.name)
            if other_pool != pool.name:
                yield _name_taken(obj, other_pool)
            other = seen_groups.setdefault(target.group, (pool.name, target.name))
            if other != (pool.name, target.name):
                yield _group_taken(obj, target.group, other[1], other[0])


def _membership_problems(
    declared: Sequence[Declared], destinations: dict[str, Destination]
) -> Iterator[Problem]:
    claimed: dict[tuple[str, str], str] = {}
    for pool, members in declared:
        obj = f"pool {pool.name!r}"
        unique = dict.fromkeys(members)
        if len(unique) != len(members):
            for member, n in Counter(members).items():
                if n > 1:
                    yield Problem(obj, "members", f"destination {member!r} is listed {n} times")
        for member in unique:
            dest = destinations.get(member)
            if dest is None:
                yield Problem(obj, "members", f"unknown destination {member!r}")
                continue
            if pool.resource not in dest.resources:
                yield Problem(obj, "members", _not_drawn_from(dest, pool.resource))
                continue
            first = claimed.setdefault((member, pool.resource), pool.name)
            if first != pool.name:
                yield Problem(
                    obj,
                    "members",
                    f"destination {member!r} is already in pool {first!r} for resource "
                    f"{pool.resource!r}; a destination belongs to one pool per resource",
                )
    yield from _reserved_name_problems(declared, destinations, claimed)


def _reserved_name_problems(
    declared: Sequence[Declared],
    destinations: dict[str, Destination],
    claimed: dict[tuple[str, str], str],
) -> Iterator[Problem]:
    if not any("/" in pool.name for pool, _ in declared):
        return  # a standalone pool's name is '<destination>/<resource>'
    standalone = {
        standalone_pool_name(d.name, r): (d.name, r)
        for d in destinations.values()
        for r in d.resources
    }
    for pool, _ in declared:
        owner = standalone.get(pool.name)
        if owner is not None and claimed.get(owner) != pool.name:
            yield Problem(
                f"pool {pool.name!r}",
                "name",
                f"the name is that of the standalone pool of destination {owner[0]!r} for "
                f"resource {owner[1]!r}, which is not a member of it",
            )


def _assemble(destinations: dict[str, Destination], declared: Sequence[Declared]) -> Topology:
    pools: dict[str, Pool] = {}
    memberships: dict[tuple[str, str], str] = {}
    for pool, members in declared:
        for member in members:
            memberships[(member, pool.resource)] = pool.name
        pools[pool.name] = pool
    for dest in destinations.values():
        for resource in dest.resources:
            if (dest.name, resource) not in memberships:
                _give_standalone(pools, memberships, dest, resource)  # T1
    return Topology(
        destinations=frozen_map(destinations),
        pools=frozen_map(pools),
        memberships=frozen_map(memberships),
    )
