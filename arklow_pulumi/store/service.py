"""The one service layer over the store: every change applies a rule from
:mod:`arklow_pulumi.core.rules` to a snapshot read inside the same write transaction.

Each operation: take the writer lock (see :mod:`.engine`), load the snapshot the change needs
(:class:`~.snapshots.Scope`), let the rule function decide (it raises
:class:`~arklow_pulumi.core.errors.TopologyRuleViolation` and nothing is written), write back only
what changed, stamp the identity of the row the operation is about, commit. Deletions are
idempotent (deleting what is already gone is not an error), so Pulumi can retry them.

The Pulumi providers pass identities (:mod:`.identity`): a create its :class:`~.identity.Claim`
(adopting its own stack's row, refusing another stack's), an update and a delete their create id
(acting only on the row with that id, so a replacement's delete never removes its replacement).
Without them (the CLI, the tests of the rules) an operation acts by name, as it always has.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeVar

from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError, IntegrityError

from arklow_pulumi.core import rules
from arklow_pulumi.core.policy import clamp
from arklow_pulumi.core.topology import (
    Destination,
    Pool,
    ScaleTarget,
    Topology,
    standalone_pool_name,
)
from arklow_pulumi.store.engine import Store, StoreError, reading, writing
from arklow_pulumi.store.identity import (
    NONE,
    Claim,
    Identity,
    may_adopt,
    owns,
    require_own,
)
from arklow_pulumi.store.snapshots import (
    DESTINATIONS,
    MEMBERSHIPS,
    POOLS,
    TARGETS,
    Scope,
    load_all,
    load_scope,
    write_changes,
)
from arklow_pulumi.store.stamps import read_identity, read_membership, stamp, stamp_membership

# A change that also reads identities: returns the new topology and what to stamp after writing.
Stamp = Callable[[Connection], None]
IdentityChange = Callable[[Connection, Topology], tuple[Topology, Stamp | None]]
T = TypeVar("T")


def _apply(
    store: Store,
    scope: Scope,
    change: IdentityChange,
    identities: dict[tuple[str, str], Identity] | None = None,
    claims: dict[tuple[str, str], Claim] | None = None,
) -> Topology:
    """``identities``: filled with those of the scope's destinations' memberships before
    ``change`` runs; ``claims``: what ``change`` put there is stamped on the memberships it moved
    (see :func:`~.snapshots.write_changes`)."""
    try:
        with writing(store) as conn:
            before = load_scope(conn, scope, identities)
            after, stamp_row = change(conn, before)
            if after is not before:
                write_changes(conn, before, after, claims)
            if stamp_row is not None:
                stamp_row(conn)
            return after
    except IntegrityError as exc:
        raise StoreError(
            f"store {store.display_url} refused the change (a constraint caught what the "
            f"rules did not): {exc.orig}"
        ) from exc
    except DBAPIError as exc:
        raise StoreError(f"store {store.display_url}: {exc.orig}") from exc


def query(store: Store, read: Callable[[Connection], T]) -> T:
    """``read(conn)`` in a read transaction; a driver error as a :class:`StoreError`."""
    try:
        with reading(store) as conn:
            return read(conn)
    except DBAPIError as exc:
        raise StoreError(f"store {store.display_url}: {exc.orig}") from exc


def _read(store: Store, scope: Scope | None) -> Topology:
    return query(store, lambda conn: load_all(conn) if scope is None else load_scope(conn, scope))


def _d(*names: str) -> frozenset[str]:
    return frozenset(names)


def _stamper(claim: Claim | None, table: object, *where: object) -> Stamp | None:
    if claim is None:
        return None
    return lambda conn: stamp(conn, table, claim, *where)  # type: ignore[arg-type]


# -- whole topology --------------------------------------------------------------------------


def stored_topology(store: Store) -> Topology:
    return _read(store, None)


# -- destinations ----------------------------------------------------------------------------


def create_destination(store: Store, dest: Destination, claim: Claim | None = None) -> Topology:
    """T1. With a ``claim``: adopt the stack's own row of this name, refuse another stack's."""
    where = (DESTINATIONS.c.name == dest.name,)

    def change(conn: Connection, topo: Topology) -> tuple[Topology, Stamp | None]:
        if claim is not None:
            found = read_identity(conn, DESTINATIONS, *where)
            if may_adopt(f"destination {dest.name!r}", found, claim):
                return rules.update_destination(topo, dest), _stamper(claim, DESTINATIONS, *where)
        return rules.add_destination(topo, dest), _stamper(claim, DESTINATIONS, *where)

    return _apply(store, _destination_scope(dest), change)


def _destination_scope(dest: Destination) -> Scope:
    """A destination and, for each of its resources, the pools whose names its standalone pool
    could take (for a destination not stored yet, or a resource it did not have)."""
    bases = frozenset(standalone_pool_name(dest.name, r) for r in dest.resources)
    return Scope(destinations=_d(dest.name), standalone_names=bases)


def update_destination(store: Store, dest: Destination, claim: Claim | None = None) -> Topology:
    where = (DESTINATIONS.c.name == dest.name,)

    def change(conn: Connection, topo: Topology) -> tuple[Topology, Stamp | None]:
        if claim is not None:
            found = read_identity(conn, DESTINATIONS, *where)
            require_own(f"destination {dest.name!r}", found, claim.create_id)
        return rules.update_destination(topo, dest), _stamper(claim, DESTINATIONS, *where)

    return _apply(store, _destination_scope(dest), change)


def delete_destination(store: Store, name: str, create_id: str | None = None) -> None:
    def change(conn: Connection, topo: Topology) -> tuple[Topology, Stamp | None]:
        found = read_identity(conn, DESTINATIONS, DESTINATIONS.c.name == name)
        if name not in topo.destinations or not owns(found, create_id):
            return topo, None
        return rules.remove_destination(topo, name), None

    _apply(store, Scope(destinations=_d(name)), change)


@dataclass(frozen=True)
class DestinationView:
    """``pools``: the pool the destination is in, per resource. ``standalone_pools``: per
    resource, the destination's *own* pool (``owner`` is the destination, named ``<d>/<r>``)
    when it is still in it, whether or not other destinations have joined it (T7). A resource
    for which the destination moved to another pool is absent."""

    destination: Destination
    pools: dict[str, str]
    standalone_pools: dict[str, str]
    identity: Identity = NONE


def destination_view(
    topo: Topology, name: str, identity: Identity = NONE
) -> DestinationView | None:
    """The destination ``name`` as a view of ``topo`` (a scope holding it, such as the one a
    create or update returns), or None when it is not there."""
    if name not in topo.destinations:
        return None
    pools = dict(topo.pools_of(name))
    # Joined by others or not: the T7 idiom ``a.standalone_pools["gpu"]`` must survive refresh.
    standalone = {
        resource: pool for resource, pool in pools.items() if topo.pools[pool].owner == name
    }
    return DestinationView(topo.destinations[name], pools, standalone, identity)


def get_destination(store: Store, name: str) -> DestinationView | None:
    def read(conn: Connection) -> DestinationView | None:
        topo = load_scope(conn, Scope(destinations=_d(name)))
        found = read_identity(conn, DESTINATIONS, DESTINATIONS.c.name == name) or NONE
        return destination_view(topo, name, found)

    return query(store, read)


# -- pools -----------------------------------------------------------------------------------


def create_pool(store: Store, pool: Pool, claim: Claim | None = None) -> Topology:
    """Add a declared pool. A destination's standalone pool of that name and resource is adopted
    (T7: a standalone pool may be selected and becomes shared); so is, with a ``claim``, the
    stack's own declared pool of that name (another stack's is refused)."""
    where = (POOLS.c.name == pool.name,)

    def change(conn: Connection, topo: Topology) -> tuple[Topology, Stamp | None]:
        existing = topo.pools.get(pool.name)
        mark = _stamper(claim, POOLS, *where)
        if claim is not None and existing is not None:
            found = read_identity(conn, POOLS, *where)
            if may_adopt(f"pool {pool.name!r}", found, claim):
                return rules.update_pool(topo, _with_targets(pool, existing.scale_targets)), mark
        adopt = existing is not None and existing.owner is not None
        if adopt and existing is not None and existing.resource == pool.resource:
            adopted = _with_targets(pool, existing.scale_targets)
            return rules.update_pool(topo, adopted, adopt=True), mark
        return rules.add_pool(topo, pool), mark

    return _apply(store, _pool_scope(pool.name), change)


def _pool_scope(name: str) -> Scope:
    """A pool with its members and every scale target (names are unique across pools)."""
    return Scope(pools=_d(name), pools_with_members=_d(name), all_targets=True)


def update_pool(store: Store, pool: Pool, claim: Claim | None = None) -> Topology:
    """Change capacity, headroom or scale policy; the pool's scale targets are kept as stored."""
    where = (POOLS.c.name == pool.name,)

    def change(conn: Connection, topo: Topology) -> tuple[Topology, Stamp | None]:
        if claim is not None:
            require_own(f"pool {pool.name!r}", read_identity(conn, POOLS, *where), claim.create_id)
        current = topo.pools.get(pool.name)
        targets = current.scale_targets if current is not None else ()
        return rules.update_pool(topo, _with_targets(pool, targets)), _stamper(claim, POOLS, *where)

    return _apply(store, _pool_scope(pool.name), change)


def delete_pool(store: Store, name: str, create_id: str | None = None) -> None:
    """T6: refused while scale targets are attached; members get standalone pools back (T4)."""

    def change(conn: Connection, topo: Topology) -> tuple[Topology, Stamp | None]:
        found = read_identity(conn, POOLS, POOLS.c.name == name)
        if name not in topo.pools or not owns(found, create_id):
            return topo, None
        return rules.remove_pool(topo, name), None

    _apply(store, Scope(pools=_d(name), pools_with_members=_d(name)), change)


@dataclass(frozen=True)
class PoolView:
    pool: Pool
    members: tuple[str, ...]
    standalone: bool
    identity: Identity = NONE


def pool_view(topo: Topology, name: str, identity: Identity = NONE) -> PoolView | None:
    """The pool ``name`` as a view of ``topo`` (a scope holding it and its members)."""
    if name not in topo.pools:
        return None
    return PoolView(topo.pools[name], topo.members(name), topo.is_standalone(name), identity)


def get_pool(store: Store, name: str) -> PoolView | None:
    def read(conn: Connection) -> PoolView | None:
        topo = load_scope(conn, Scope(pools=_d(name), pools_with_members=_d(name)))
        found = read_identity(conn, POOLS, POOLS.c.name == name) or NONE
        return pool_view(topo, name, found)

    return query(store, read)


def _with_targets(pool: Pool, targets: tuple[ScaleTarget, ...]) -> Pool:
    return replace(pool, scale_targets=targets)


# -- memberships -----------------------------------------------------------------------------


def _membership_where(destination: str, resource: str) -> tuple[object, object]:
    return (MEMBERSHIPS.c.destination == destination, MEMBERSHIPS.c.resource == resource)


def join(store: Store, destination: str, pool: str, claim: Claim | None = None) -> str:
    """T2, T3, T7: move the destination's membership for the pool's resource into ``pool``.
    With a ``claim``: a membership declared by another stack is refused, not moved. Returns the
    resource."""
    obj = f"membership of destination {destination!r} in pool {pool!r}"
    # The destination's memberships' identities come with the snapshot; a membership the join
    # moves is stamped by the statement moving it, one that stays (adopted) afterwards.
    identities: dict[tuple[str, str], Identity] = {}
    claims: dict[tuple[str, str], Claim] = {}

    def change(_conn: Connection, topo: Topology) -> tuple[Topology, Stamp | None]:
        after = rules.join(topo, destination, pool)
        if claim is None:
            return after, None
        resource = topo.pools[pool].resource
        found = identities.get((destination, resource))
        if found is not None and found.create_id is not None:
            may_adopt(obj, found, claim)
        if after is not topo:
            claims[(destination, resource)] = claim
            return after, None
        return after, lambda conn: stamp_membership(conn, destination, resource, claim)

    scope = Scope(destinations=_d(destination), pools=_d(pool))
    topo = _apply(store, scope, change, identities, claims)
    return topo.pools[pool].resource


def leave(store: Store, destination: str, pool: str, create_id: str | None = None) -> None:
    """T4: drop the membership if it is still there (and, given ``create_id``, still that
    create's); the destination gets a standalone pool."""

    def change(conn: Connection, topo: Topology) -> tuple[Topology, Stamp | None]:
        current = topo.pools.get(pool)
        if destination not in topo.destinations or current is None:
            return topo, None
        if topo.memberships.get((destination, current.resource)) != pool:
            return topo, None
        found = read_identity(conn, MEMBERSHIPS, *_membership_where(destination, current.resource))
        if not owns(found, create_id):
            return topo, None
        return rules.leave(topo, destination, pool), None

    _apply(store, Scope(destinations=_d(destination), pools=_d(pool)), change)


def update_membership(store: Store, destination: str, pool: str, claim: Claim) -> str | None:
    """Record a new owner (a renamed resource, a row from before schema 0002) on the
    membership when it is still this create's; the resource, or None when it is gone."""

    resources: list[str] = []

    def change(conn: Connection, topo: Topology) -> tuple[Topology, Stamp | None]:
        current = topo.pools.get(pool)
        if current is None or topo.memberships.get((destination, current.resource)) != pool:
            return topo, None
        where = _membership_where(destination, current.resource)
        found = read_identity(conn, MEMBERSHIPS, *where)
        require_own(
            f"membership of destination {destination!r} in pool {pool!r}", found, claim.create_id
        )
        resources.append(current.resource)
        return topo, _stamper(claim, MEMBERSHIPS, *where)

    _apply(store, Scope(destinations=_d(destination), pools=_d(pool)), change)
    return resources[-1] if resources else None


@dataclass(frozen=True)
class MembershipView:
    resource: str
    identity: Identity = NONE


def membership_view(store: Store, destination: str, pool: str) -> MembershipView | None:
    """The membership of ``destination`` in ``pool``, when it is one, with its identity."""

    def read(conn: Connection) -> MembershipView | None:
        found = read_membership(conn, destination, pool)
        return None if found is None else MembershipView(*found)

    return query(store, read)


# -- scale targets ---------------------------------------------------------------------------


def _pool_of_target(topo: Topology, name: str) -> Pool | None:
    return next(
        (p for p in topo.pools.values() if any(t.name == name for t in p.scale_targets)), None
    )


def attach_target(
    store: Store, pool: str, target: ScaleTarget, claim: Claim | None = None
) -> Topology:
    """With a ``claim``: the stack's own target of this name is adopted (moved to ``pool`` if
    needed, its observed replicas kept within the new bounds); another stack's is refused."""
    where = (TARGETS.c.name == target.name,)

    def change(conn: Connection, topo: Topology) -> tuple[Topology, Stamp | None]:
        mark = _stamper(claim, TARGETS, *where)
        current = _pool_of_target(topo, target.name)
        if claim is not None and current is not None:
            found = read_identity(conn, TARGETS, *where)
            if may_adopt(f"pool {pool!r}, scale target {target.name!r}", found, claim):
                return _adopt_target(topo, current, pool, target), mark
        return rules.attach_target(topo, pool, target), mark

    return _apply(store, Scope(pools=_d(pool), all_targets=True), change)


def _observed_kept(current: Pool, target: ScaleTarget) -> ScaleTarget:
    """``target`` with the stored (observed) replica count, inside its new bounds."""
    stored = next(t for t in current.scale_targets if t.name == target.name)
    replicas = clamp(stored.replicas, target.min_replicas, target.max_replicas)
    return replace(target, replicas=replicas)


def _adopt_target(topo: Topology, current: Pool, pool: str, target: ScaleTarget) -> Topology:
    target = _observed_kept(current, target)
    if current.name == pool:
        return rules.update_target(topo, pool, target)
    return rules.attach_target(rules.detach_target(topo, current.name, target.name), pool, target)


def update_target(
    store: Store, pool: str, target: ScaleTarget, claim: Claim | None = None
) -> Topology:
    where = (TARGETS.c.name == target.name,)

    def change(conn: Connection, topo: Topology) -> tuple[Topology, Stamp | None]:
        if claim is not None:
            found = read_identity(conn, TARGETS, *where)
            require_own(f"pool {pool!r}, scale target {target.name!r}", found, claim.create_id)
        current = _pool_of_target(topo, target.name)
        kept = target if current is None else _observed_kept(current, target)
        return rules.update_target(topo, pool, kept), _stamper(claim, TARGETS, *where)

    return _apply(store, Scope(pools=_d(pool), all_targets=True), change)


def detach_target(store: Store, pool: str, name: str, create_id: str | None = None) -> None:
    def change(conn: Connection, topo: Topology) -> tuple[Topology, Stamp | None]:
        current = topo.pools.get(pool)
        if current is None or all(t.name != name for t in current.scale_targets):
            return topo, None
        if not owns(read_identity(conn, TARGETS, TARGETS.c.name == name), create_id):
            return topo, None
        return rules.detach_target(topo, pool, name), None

    _apply(store, Scope(pools=_d(pool), all_targets=True), change)


@dataclass(frozen=True)
class TargetView:
    pool: str
    target: ScaleTarget
    identity: Identity = NONE


def target_view(topo: Topology, name: str, identity: Identity = NONE) -> TargetView | None:
    """The scale target ``name`` as a view of ``topo`` (a scope holding every target)."""
    current = _pool_of_target(topo, name)
    if current is None:
        return None
    target = next(t for t in current.scale_targets if t.name == name)
    return TargetView(current.name, target, identity)


def get_target(store: Store, name: str) -> TargetView | None:
    def read(conn: Connection) -> TargetView | None:
        topo = load_scope(conn, Scope(all_targets=True))
        found = read_identity(conn, TARGETS, TARGETS.c.name == name) or NONE
        return target_view(topo, name, found)

    return query(store, read)
