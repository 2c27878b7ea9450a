"""The one service layer over the store: every change applies a rule from
:mod:`arklow_pulumi.core.rules` to a snapshot read inside the same write transaction.

Each operation: take the writer lock (see :mod:`.engine`), load the snapshot the change needs
(:class:`~.snapshots.Scope`), let the rule function decide (it raises
:class:`~arklow_pulumi.core.errors.TopologyRuleViolation` and nothing is written), write back only
what changed, commit. Deletions are idempotent (deleting what is already gone is not an error), so
Pulumi can retry them and replacements can run create-before-delete.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.exc import DBAPIError, IntegrityError

from arklow_pulumi.core import rules
from arklow_pulumi.core.errors import ArklowError
from arklow_pulumi.core.topology import Destination, Pool, ScaleTarget, Topology
from arklow_pulumi.store.engine import Store, StoreError, reading, writing
from arklow_pulumi.store.snapshots import Scope, load_all, load_scope, write_changes

Change = Callable[[Topology], Topology]


def _apply(store: Store, scope: Scope, change: Change) -> Topology:
    try:
        with writing(store) as conn:
            before = load_scope(conn, scope)
            after = change(before)
            if after is not before:
                write_changes(conn, before, after)
            return after
    except IntegrityError as exc:
        raise StoreError(
            f"store {store.display_url} refused the change (a constraint caught what the "
            f"rules did not): {exc.orig}"
        ) from exc
    except DBAPIError as exc:
        raise StoreError(f"store {store.display_url}: {exc.orig}") from exc


def _read(store: Store, scope: Scope | None) -> Topology:
    try:
        with reading(store) as conn:
            return load_all(conn) if scope is None else load_scope(conn, scope)
    except DBAPIError as exc:
        raise StoreError(f"store {store.display_url}: {exc.orig}") from exc


def _d(*names: str) -> frozenset[str]:
    return frozenset(names)


# -- whole topology --------------------------------------------------------------------------


def load_topology(store: Store) -> Topology:
    return _read(store, None)


# -- destinations ----------------------------------------------------------------------------


def create_destination(store: Store, dest: Destination) -> Topology:
    return _apply(
        store, Scope(destinations=_d(dest.name)), lambda t: rules.add_destination(t, dest)
    )


def update_destination(store: Store, dest: Destination) -> Topology:
    scope = Scope(destinations=_d(dest.name))
    return _apply(store, scope, lambda t: rules.update_destination(t, dest))


def delete_destination(store: Store, name: str) -> None:
    def change(topo: Topology) -> Topology:
        return rules.remove_destination(topo, name) if name in topo.destinations else topo

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


def get_destination(store: Store, name: str) -> DestinationView | None:
    topo = _read(store, Scope(destinations=_d(name)))
    if name not in topo.destinations:
        return None
    pools = dict(topo.pools_of(name))
    # Joined by others or not: the T7 idiom ``a.standalone_pools["gpu"]`` must survive refresh.
    standalone = {
        resource: pool for resource, pool in pools.items() if topo.pools[pool].owner == name
    }
    return DestinationView(topo.destinations[name], pools, standalone)


# -- pools -----------------------------------------------------------------------------------


def create_pool(store: Store, pool: Pool) -> Topology:
    """Add a declared pool. A destination's standalone pool of that name and resource is adopted
    (T7: a standalone pool may be selected and becomes shared)."""

    def change(topo: Topology) -> Topology:
        existing = topo.pools.get(pool.name)
        adopt = existing is not None and existing.owner is not None
        if adopt and existing is not None and existing.resource == pool.resource:
            adopted = _with_targets(pool, existing.scale_targets)
            return rules.update_pool(topo, adopted, adopt=True)
        return rules.add_pool(topo, pool)

    return _apply(store, Scope(pools=_d(pool.name), all_targets=True), change)


def update_pool(store: Store, pool: Pool) -> Topology:
    """Change capacity or headroom; the pool's scale targets are kept as stored."""

    def change(topo: Topology) -> Topology:
        current = topo.pools.get(pool.name)
        targets = current.scale_targets if current is not None else ()
        return rules.update_pool(topo, _with_targets(pool, targets))

    return _apply(store, Scope(pools=_d(pool.name), all_targets=True), change)


def delete_pool(store: Store, name: str) -> None:
    """T6: refused while scale targets are attached; members get standalone pools back (T4)."""

    def change(topo: Topology) -> Topology:
        return rules.remove_pool(topo, name) if name in topo.pools else topo

    _apply(store, Scope(pools=_d(name), pools_with_members=_d(name)), change)


@dataclass(frozen=True)
class PoolView:
    pool: Pool
    members: tuple[str, ...]
    standalone: bool


def get_pool(store: Store, name: str) -> PoolView | None:
    topo = _read(store, Scope(pools=_d(name), pools_with_members=_d(name)))
    if name not in topo.pools:
        return None
    return PoolView(topo.pools[name], topo.members(name), topo.is_standalone(name))


def _with_targets(pool: Pool, targets: tuple[ScaleTarget, ...]) -> Pool:
    return Pool(
        name=pool.name,
        resource=pool.resource,
        capacity=pool.capacity,
        headroom=pool.headroom,
        scale_targets=targets,
        owner=pool.owner,
    )


# -- memberships -----------------------------------------------------------------------------


def join(store: Store, destination: str, pool: str) -> str:
    """T2, T3, T7: move the destination's membership for the pool's resource into ``pool``.
    Returns the resource."""
    topo = _apply(
        store,
        Scope(destinations=_d(destination), pools=_d(pool)),
        lambda t: rules.join(t, destination, pool),
    )
    return topo.pools[pool].resource


def leave(store: Store, destination: str, pool: str) -> None:
    """T4: drop the membership if it is still there; the destination gets a standalone pool."""

    def change(topo: Topology) -> Topology:
        current = topo.pools.get(pool)
        if destination not in topo.destinations or current is None:
            return topo
        if topo.memberships.get((destination, current.resource)) != pool:
            return topo
        return rules.leave(topo, destination, pool)

    _apply(store, Scope(destinations=_d(destination), pools=_d(pool)), change)


def get_membership(store: Store, destination: str, pool: str) -> str | None:
    """The pool's resource when ``destination`` is a member of ``pool``, else None."""
    topo = _read(store, Scope(destinations=_d(destination), pools=_d(pool)))
    current = topo.pools.get(pool)
    if current is None or topo.memberships.get((destination, current.resource)) != pool:
        return None
    return current.resource


# -- scale targets ---------------------------------------------------------------------------


def attach_target(store: Store, pool: str, target: ScaleTarget) -> Topology:
    scope = Scope(pools=_d(pool), all_targets=True)
    return _apply(store, scope, lambda t: rules.attach_target(t, pool, target))


def update_target(store: Store, pool: str, target: ScaleTarget) -> Topology:
    scope = Scope(pools=_d(pool), all_targets=True)
    return _apply(store, scope, lambda t: rules.update_target(t, pool, target))


def detach_target(store: Store, pool: str, name: str) -> None:
    def change(topo: Topology) -> Topology:
        current = topo.pools.get(pool)
        if current is None or all(t.name != name for t in current.scale_targets):
            return topo
        return rules.detach_target(topo, pool, name)

    _apply(store, Scope(pools=_d(pool), all_targets=True), change)


@dataclass(frozen=True)
class TargetView:
    pool: str
    target: ScaleTarget


def get_target(store: Store, name: str) -> TargetView | None:
    topo = _read(store, Scope(all_targets=True))
    for pool in topo.pools.values():
        for target in pool.scale_targets:
            if target.name == name:
                return TargetView(pool.name, target)
    return None


def record_replicas(store: Store, name: str, replicas: int) -> None:
    """Store a target's observed in-service replica count (the controller's observation)."""

    def change(topo: Topology) -> Topology:
        for pool in topo.pools.values():
            for target in pool.scale_targets:
                if target.name == name:
                    updated = ScaleTarget(
                        name=target.name,
                        group=target.group,
                        min_replicas=target.min_replicas,
                        max_replicas=target.max_replicas,
                        units_per_replica=target.units_per_replica,
                        replicas=replicas,
                        override_policies=target.override_policies,
                    )
                    return rules.update_target(topo, pool.name, updated)
        raise ArklowError(f"scale target {name!r}: no such target in the store")

    _apply(store, Scope(all_targets=True), change)
