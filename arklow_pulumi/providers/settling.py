"""The store as a ``pulumi up`` leaves it, read by the Pulumi program once its resources are done.

Some outputs depend on other resources of the same update: a pool's ``members`` change when a
``PoolMembership`` joins it, a destination's ``pools`` too, a pool's ``scale_targets`` when a
``ScaleTarget`` attaches. A provider returns them when *its* resource is created or updated, which
is before those other resources exist (the pool is created first: the memberships depend on it).
So the resources read them again here, from the store, once the resources they wait for are done
(:mod:`arklow_pulumi.resources.settling`), and shape them with the providers' own output
functions, exactly as ``read`` (``pulumi refresh``) does.

One thing the store cannot show yet: the deletes of the same update. The engine deletes the
resources a program no longer declares *after* the program has finished, so after its stack
outputs are taken. The rows those deletes will remove are the rows this stack owns (their
recorded owner: :mod:`arklow_pulumi.store.identity`) whose URN the program does not declare; they
are removed here by the same rules their deletes apply (a membership leaves, T4; a target
detaches; a pool goes, its members getting standalone pools back; a destination goes), in that
order, each only when its rule allows it (a pool that keeps scale targets stays, T6, and its
delete fails the update).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from arklow_pulumi.core import rules
from arklow_pulumi.core.errors import ArklowError
from arklow_pulumi.providers import destinations, pools
from arklow_pulumi.providers.storing import _STORE_LOCK, _open, service
from arklow_pulumi.store.identity import stack_of_urn

if TYPE_CHECKING:
    from arklow_pulumi.core.topology import Topology
    from arklow_pulumi.store.ownership import OwnedRow


def settled_topology(
    url: str,
    stack: str,
    project: str,
    declared_urns: Collection[str],
    *,
    read_only: bool = False,
) -> Topology:
    """The store's topology, less the rows the update's deletes will remove: rows of ``stack``
    (in ``project``) whose owner URN is not in ``declared_urns``. ``read_only`` (a preview):
    the store must exist at the current schema, and is not written (a
    :class:`~arklow_pulumi.store.engine.StoreError` otherwise)."""
    with _STORE_LOCK:
        from arklow_pulumi.store.engine import open_store
        from arklow_pulumi.store.ownership import owned_rows

        store = open_store(url, read_only=True) if read_only else _open(url)
    topo = service.stored_topology(store)
    declared = set(declared_urns)
    for row in owned_rows(store, stack):
        urn = row.identity.owner_urn
        if urn is None or urn in declared or _project(urn) not in (None, project):
            continue
        topo = _without(topo, row)
    return topo


def warm_up() -> None:
    """Import the store's modules (SQLAlchemy takes about half a second), so that a program's
    first read of the store does not wait for them: run while the engine does its steps."""
    with _STORE_LOCK:
        from arklow_pulumi.store import engine, ownership  # noqa: F401
        from arklow_pulumi.store import service as _service  # noqa: F401


def _project(urn: str) -> str | None:
    found = stack_of_urn(urn)
    return found[1] if found is not None else None


def _without(topo: Topology, row: OwnedRow) -> Topology:
    """``topo`` after ``row``'s own resource's delete, or ``topo`` when the rule refuses it (or
    the row is no longer what it was)."""
    try:
        if row.kind == "membership" and row.destination is not None and row.pool is not None:
            pool = topo.pools.get(row.pool)
            if pool is None or topo.memberships.get((row.destination, pool.resource)) != row.pool:
                return topo
            return rules.leave(topo, row.destination, row.pool)
        if row.kind == "scale target" and row.pool is not None:
            return rules.detach_target(topo, row.pool, row.name)
        if row.kind == "pool" and row.name in topo.pools:
            return rules.remove_pool(topo, row.name)
        if row.kind == "destination" and row.name in topo.destinations:
            return rules.remove_destination(topo, row.name)
    except ArklowError:
        pass
    return topo


def pool_outputs(topo: Topology, name: str) -> dict[str, Any] | None:
    """The outputs ``read`` would give pool ``name`` in ``topo`` (None when it is not there)."""
    found = pools.PoolProvider().outputs(service.pool_view(topo, name), {})
    return found or None


def destination_outputs(topo: Topology, name: str) -> dict[str, Any] | None:
    """The outputs ``read`` would give destination ``name`` in ``topo`` (None when not there)."""
    found = destinations.DestinationProvider().outputs(service.destination_view(topo, name), {})
    return found or None
