"""Assemble a :class:`Topology` from built destinations and declared pools, checking the rules
that span objects (the objects come from the schema's models, :mod:`arklow_pulumi.reading.spec`,
whose fields are checked there).

A declared pool lists its members; every (destination, resource) not listed by any pool is in the
destination's standalone pool ``<destination>/<resource>`` (T1), whose capacity is the
destination's ``standalone_capacity`` for that resource. A declared pool may carry a standalone
pool's name if that destination is one of its members (T7: the standalone pool, now shared).
All problems are collected and raised together; nothing is half built.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence

from arklow_pulumi.core.errors import InvalidInput, Problem
from arklow_pulumi.core.topology import (
    Destination,
    GroupRef,
    Pool,
    Topology,
    frozen_map,
    standalone_pool_name,
)
from arklow_pulumi.core.validating import destination_problems, pool_problems

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
                yield Problem(obj, "name", f"a scale target of this name is in pool {other_pool!r}")
            other = seen_groups.setdefault(target.group, (pool.name, target.name))
            if other != (pool.name, target.name):
                yield Problem(
                    obj,
                    "group",
                    f"group {target.group} is already scale target {other[1]!r} of pool "
                    f"{other[0]!r}; two targets would fight over one group",
                )


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
                yield Problem(
                    obj,
                    "members",
                    f"destination {member!r} does not draw from resource {pool.resource!r} "
                    f"(it draws from {list(dest.resources)}); it would wait on an unrelated "
                    "constraint",
                )
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
                name = standalone_pool_name(dest.name, resource)
                capacity = dest.standalone_capacity.get(resource, 0.0)
                pools[name] = Pool(name=name, resource=resource, capacity=capacity, owner=dest.name)
                memberships[(dest.name, resource)] = name
    return Topology(
        destinations=frozen_map(destinations),
        pools=frozen_map(pools),
        memberships=frozen_map(memberships),
    )
