"""Outputs that other resources of the same update change, as the store holds them after it.

``Pool.members``, ``.standalone`` and ``.scale_targets`` change when a ``PoolMembership`` joins
the pool or a ``ScaleTarget`` attaches to it; ``Destination.pools`` and ``.standalone_pools``
when a membership moves the destination. The provider answers them when it creates (or
updates) its own resource, before those other resources exist: a first ``pulumi up`` exported
``members: []`` for a pool its three memberships had just joined.

So these attributes are *settled*: the value waits until every Arklow resource the program
constructed before the attribute was read (the resource itself, its memberships and targets:
the whole program when the value is exported at its end) has done its step, then is read from
the store and shaped as the provider's ``read`` shapes it, less what the update's deletes will
remove (:mod:`arklow_pulumi.providers.settling`). Waiting only on resources constructed
*earlier* keeps it free of cycles: nothing constructed before the attribute was read can take
it as an input.

- ``pulumi up`` and ``pulumi refresh --run-program``: read after those steps (one read of the
  store for all the values a program exports at its end).
- ``pulumi preview``: unknown while one of those resources is to be created or replaced (the
  value is known once it is); otherwise the store is read read-only, when it exists, so an
  unchanged stack previews no change of its exports. A store that does not exist (or cannot be
  read) is not created: the value is then what the state holds.
- Under unit-test mocks: the mocked outputs, unchanged.

Plain ``pulumi refresh`` does not run the program: it refreshes each resource's outputs from the
store (the providers' ``read``) but keeps the stack's exports; ``pulumi refresh --run-program``
recomputes those too. What a resource's *state* records for these fields stays the provider's
answer at its own step (a pool's ``members`` as it was created) until a refresh.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pulumi
from pulumi.runtime import settings
from pulumi.runtime.mocks import MockMonitor

from arklow_pulumi.resources import registry

Read = Callable[[Any, str], dict[str, Any] | None]


def settled(resource: pulumi.CustomResource, field: str, read: Read) -> pulumi.Output[Any]:
    """``resource``'s output ``field`` as the store holds it once the update is done (see the
    module). ``read(topology, arklow_name)`` gives the resource's outputs in a topology."""
    provided: pulumi.Output[Any] = resource.__dict__[field]
    if _mocked():
        return provided
    waited = registry.constructed()
    _warm_up()
    found = asyncio.ensure_future(_settle(resource, field, read, provided, waited))
    deps: set[pulumi.Resource] = {entry.resource for entry in waited} | {resource}
    return pulumi.Output(deps, _first(found), _second(found), _false())


async def _settle(
    resource: pulumi.CustomResource,
    field: str,
    read: Read,
    provided: pulumi.Output[Any],
    waited: list[registry.Constructed],
) -> tuple[Any, bool]:
    """The settled value and whether it is known."""
    for entry in waited:
        await entry.resource.urn.future()  # its step is done (a failed one fails the update)
    preview = settings.is_dry_run()
    if preview and not all([await entry.resource.id.is_known() for entry in waited]):
        return None, False  # something is created or replaced: known once it is
    name = await resource.__dict__["arklow_name"].future()
    url = await resource.__dict__["store"].future()
    urns = [await entry.owner_urn.future() for entry in registry.constructed()]
    topo = None
    if isinstance(name, str) and isinstance(url, str):
        declared = frozenset(u for u in urns if isinstance(u, str))
        after = frozenset(id(entry.resource) for entry in waited)
        topo = await _settled_topology(url, declared, after, preview)
    outputs = read(topo, name) if topo is not None else None
    if outputs is None:  # no store to read in preview, or not in it (dropped by a refresh)
        return await provided.future(with_unknowns=True), await provided.is_known()
    return outputs.get(field), True


async def _settled_topology(
    url: str, urns: frozenset[str], after: frozenset[int], preview: bool
) -> Any:
    """The settled topology read once the resources ``after`` were done: one read per program
    for each store, set of declared URNs and set of resources waited for (the values a program
    exports at its end share one). A preview reads only a store that exists, read-only, and
    gets None for one it cannot read (the exports then show what the state holds)."""
    key = (url, urns, after)
    cache = registry.settled_reads()
    found = cache.get(key)
    if found is None:
        stack, project = pulumi.get_stack(), pulumi.get_project()
        loop = asyncio.get_event_loop()
        found = loop.run_in_executor(None, _read, url, stack, project, urns, preview)
        cache[key] = found
    return await found


def _read(url: str, stack: str, project: str, urns: frozenset[str], preview: bool) -> Any:
    from arklow_pulumi.providers.settling import settled_topology

    if not preview:
        return settled_topology(url, stack, project, urns)
    try:
        return settled_topology(url, stack, project, urns, read_only=True)
    except Exception:  # no store yet, or none reachable: a preview goes on without it
        return None


async def _first(found: asyncio.Future[tuple[Any, bool]]) -> Any:
    return (await found)[0]


async def _second(found: asyncio.Future[tuple[Any, bool]]) -> bool:
    return (await found)[1]


async def _false() -> bool:
    return False


_warming: list[Any] = []


def _warm_up() -> None:
    """Once per process: import the store's modules in a thread while the engine works."""
    if not _warming:
        from arklow_pulumi.providers.settling import warm_up

        _warming.append(asyncio.get_event_loop().run_in_executor(None, warm_up))


def _mocked() -> bool:
    try:
        return isinstance(settings.get_monitor(), MockMonitor)
    except Exception:  # no runtime configured at all
        return True
