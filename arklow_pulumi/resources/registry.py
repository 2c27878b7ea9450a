"""What one Pulumi program has declared so far, by Arklow identity.

Two resources for one Arklow object (two ``Pool``s named ``gpu``) or two memberships giving one
destination two pools for one resource would both pass ``preview`` and then partly apply, or
undo each other on every run (a destination has one pool per resource, T2). The registry refuses
the second declaration when it is constructed, naming both Pulumi resources and the field, so
``pulumi preview`` fails with that message before anything changes.

It also resolves a pool or destination given by plain name to the resource declared for it, so
the name becomes a dependency (``ScaleTarget("t", "gp", ...)`` after ``Pool("gp", ...)``), and
knows the plain values the resources were declared with (a pool's resource, a destination's
resources), which the preview-time T3 check of a membership uses.

Only plain values count: an identity given as an Output is not known while the program runs and
is not registered. The registry is per program: it is keyed by the engine connection (the
resource monitor), so a new program in the same process (Automation API, unit tests under
``set_mocks``) starts empty. It lives in this module, which the provider process never imports.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.runtime import settings

from arklow_pulumi.core.errors import ArklowError

# Arklow kinds as messages name them.
KIND_WORDS = {
    "Destination": "destination",
    "Pool": "pool",
    "ScaleTarget": "scale target",
}


class DuplicateDeclaration(ArklowError, pulumi.RunError):
    """A program declares one Arklow object (or one destination's pool for a resource) twice.

    A :class:`pulumi.RunError`, so the engine reports the message without a traceback."""


@dataclass
class Declared:
    """One declared Arklow resource and the plain values it was declared with (None: unknown)."""

    kind: str
    pulumi_name: str
    resource: pulumi.Resource
    arklow_name: str | None
    # Pool: the pool's resource. Destination: the resources it draws from.
    pool_resource: str | None = None
    resources: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Constructed:
    """An Arklow resource the program constructed, and its owner URN input."""

    resource: pulumi.CustomResource
    owner_urn: pulumi.Output[str]


@dataclass
class _Program:
    monitor: Any
    by_name: dict[tuple[str, str], Declared] = field(default_factory=dict)
    by_object: dict[int, Declared] = field(default_factory=dict)
    # (destination, resource) -> (membership's Pulumi name, pool name or None)
    memberships: dict[tuple[str, str], tuple[str, str | None]] = field(default_factory=dict)
    # Every Arklow resource constructed, in order (see resources/settling.py).
    constructed: list[Constructed] = field(default_factory=list)
    # The program's reads of the store for settled outputs (see resources/settling.py).
    settled_reads: dict[Any, Any] = field(default_factory=dict)


_LOCK = threading.Lock()
_CURRENT: _Program | None = None


def _program() -> _Program:
    global _CURRENT
    try:
        monitor = settings.get_monitor()
    except Exception:  # no runtime configured at all
        monitor = None
    if _CURRENT is None or _CURRENT.monitor is not monitor:
        _CURRENT = _Program(monitor)
    return _CURRENT


def plain(value: Any) -> str | None:
    """``value`` when it is a plain non-empty string (not an Output, not unknown)."""
    return value if isinstance(value, str) and value else None


def plain_strings(values: Any) -> tuple[str, ...] | None:
    if isinstance(values, (list, tuple)) and all(isinstance(v, str) for v in values):
        return tuple(values)
    return None


def register(
    kind: str,
    pulumi_name: str,
    resource: pulumi.Resource,
    arklow_name: Any,
    *,
    pool_resource: Any = None,
    resources: Any = None,
) -> Any:
    """Record ``resource`` under its Arklow name, ``arklow_name`` when given (not None), else its
    Pulumi name, and return that name; refuse a second resource of ``kind`` with the same one."""
    if arklow_name is None:
        arklow_name = pulumi_name
    name = plain(arklow_name)
    entry = Declared(
        kind,
        pulumi_name,
        resource,
        name,
        pool_resource=plain(pool_resource),
        resources=plain_strings(resources),
    )
    with _LOCK:
        program = _program()
        if name is not None:
            first = program.by_name.get((kind, name))
            if first is not None:
                word = KIND_WORDS[kind]
                raise DuplicateDeclaration(
                    f"{kind} {pulumi_name!r}: field 'arklow_name': {word} {name!r} is already "
                    f"declared by {kind} {first.pulumi_name!r} in this program (one Arklow "
                    f"{word}, one Pulumi resource: give one of them another name)"
                )
            program.by_name[(kind, name)] = entry
        program.by_object[id(resource)] = entry
    return arklow_name


def track(resource: pulumi.CustomResource, owner_urn: pulumi.Output[str]) -> None:
    """Record that the program constructed ``resource`` (every Arklow resource, memberships
    included), with the URN it records as its owner."""
    with _LOCK:
        _program().constructed.append(Constructed(resource, owner_urn))


def constructed() -> list[Constructed]:
    """The Arklow resources the program has constructed so far, in order."""
    with _LOCK:
        return list(_program().constructed)


def settled_reads() -> dict[Any, Any]:
    """The program's cache of store reads for settled outputs."""
    with _LOCK:
        return _program().settled_reads


def declared(value: Any) -> Declared | None:
    """What the registry knows of ``value`` when it is a resource declared in this program."""
    if not isinstance(value, pulumi.Resource):
        return None
    with _LOCK:
        found = _program().by_object.get(id(value))
    return found if found is not None and found.resource is value else None


def named(kind: str, name: str) -> Declared | None:
    with _LOCK:
        return _program().by_name.get((kind, name))


def pool_by_name(name: str) -> Declared | None:
    """The resource declaring pool ``name``: a ``Pool``, or for ``<d>/<r>`` (a standalone pool)
    the ``Destination`` ``d`` (when no Pool of that name is declared)."""
    found = named("Pool", name)
    if found is not None:
        return found
    owner, slash, _resource = name.partition("/")
    return named("Destination", owner) if slash and owner else None


def resource_of_pool(value: Any) -> str | None:
    """The plain resource of a pool given as a ``Pool``, a declared pool name, or ``<d>/<r>``."""
    entry = declared(value)
    if entry is not None:
        return entry.pool_resource if entry.kind == "Pool" else None
    name = plain(value)
    if name is None:
        return None
    found = named("Pool", name)
    if found is not None:
        return found.pool_resource
    _owner, slash, resource = name.partition("/")
    return resource if slash and resource else None


def destination_name(value: Any) -> str | None:
    entry = declared(value)
    if entry is not None:
        return entry.arklow_name if entry.kind == "Destination" else None
    return plain(value)


def pool_name(value: Any) -> str | None:
    entry = declared(value)
    if entry is not None:
        return entry.arklow_name if entry.kind == "Pool" else None
    return plain(value)


def register_membership(
    pulumi_name: str, destination: str | None, resource: str | None, pool: str | None
) -> None:
    """Refuse a second membership giving ``destination`` a pool for ``resource`` (T2)."""
    if destination is None or resource is None:
        return
    with _LOCK:
        program = _program()
        first = program.memberships.get((destination, resource))
        if first is not None:
            first_name, first_pool = first
            pools = f"pool {first_pool!r}" if first_pool else "a pool"
            raise DuplicateDeclaration(
                f"PoolMembership {pulumi_name!r}: field 'pool': destination {destination!r} is "
                f"already given {pools} for resource {resource!r} by PoolMembership "
                f"{first_name!r} in this program; a destination has one pool per resource (T2), "
                "so the two would undo each other on every run: declare one of them"
            )
        program.memberships[(destination, resource)] = (pulumi_name, pool)


def dependencies(values: Sequence[Any]) -> list[pulumi.Resource]:
    """The declared resources behind plain pool names (see :func:`pool_by_name`)."""
    found: list[pulumi.Resource] = []
    for value in values:
        name = plain(value)
        entry = pool_by_name(name) if name is not None else None
        if entry is not None and entry.resource not in found:
            found.append(entry.resource)
    return found
