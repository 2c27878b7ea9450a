"""The immutable topology value: destinations, their lanes, pools, memberships and scale targets.

A :class:`Topology` is a point-in-time snapshot. Every change goes through
:mod:`arklow_pulumi.core.rules`, which returns a new value; nothing here mutates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import Any, NoReturn, TypeVar

from arklow_pulumi.core import limits
from arklow_pulumi.core.fields import table_field
from arklow_pulumi.core.limits import DEFAULT_COST, DEFAULT_HEADROOM, DEFAULT_WEIGHT, TargetKind
from arklow_pulumi.core.policy import DEFAULT_POLICY, ScalePolicy

K = TypeVar("K")
V = TypeVar("V")


class FrozenMap(dict[K, V]):
    """A read-only mapping that is compared and hashed by its items, so the values that hold one
    (a lane's ``cost``, a destination's ``standalone_capacity``) are keys themselves.

    It is a ``dict`` whose every mutating method refuses: reading it (``len``, ``[]``, ``get``,
    ``in``, iteration), which the tick and the compiler do per lane, runs at ``dict``'s speed.
    """

    __slots__ = ("_hash",)

    def __hash__(self) -> int:  # type: ignore[override]
        try:
            return self._hash
        except AttributeError:
            self._hash: int = hash(frozenset(self.items()))
            return self._hash

    def __reduce__(self) -> tuple[Any, ...]:  # pickled and copied as a new one of its items
        return (type(self), (dict(self),))

    def __repr__(self) -> str:
        return f"FrozenMap({dict.__repr__(self)})"

    def _refuse(self, *_args: object, **_kwargs: object) -> NoReturn:
        raise TypeError("a FrozenMap cannot be changed; build a new one")

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse


EMPTY: Mapping[str, float] = FrozenMap()


def frozen_map(items: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> Mapping[K, V]:
    return FrozenMap(items)


def standalone_pool_name(destination: str, resource: str) -> str:
    return f"{destination}/{resource}"


def lane_key(destination: str, lane: str) -> str:
    return f"{destination}/{lane}"


@dataclass(frozen=True, slots=True)
class Lane:
    """One stream of work into a destination. ``cost`` maps resource to units per unit of work."""

    destination: str = table_field("parent")
    name: str = table_field("key")
    limit: float = table_field("number", rule=limits.units_problem)
    weight: float = table_field("number", default=DEFAULT_WEIGHT, rule=limits.factor_problem)
    cost: Mapping[str, float] = table_field("costs", default=EMPTY, rule=limits.factor_problem)

    @property
    def key(self) -> str:
        return lane_key(self.destination, self.name)

    def cost_of(self, resource: str) -> float:
        return self.cost.get(resource, DEFAULT_COST)


@dataclass(frozen=True, slots=True)
class Destination:
    name: str = table_field("key")
    resources: tuple[str, ...] = table_field("names", default=())
    lanes: tuple[Lane, ...] = table_field("owned", default=())
    standalone_capacity: Mapping[str, float] = table_field(
        "amounts", default=EMPTY, rule=limits.capacity_problem
    )


@dataclass(frozen=True, slots=True)
class GroupRef:
    """Where a target's group lives: ASG (name, region) or MIG (project, zone or region, name)."""

    kind: TargetKind = table_field("kind")
    name: str = table_field("name", column="group_name")
    region: str | None = table_field("optional_name", default=None)
    zone: str | None = table_field("optional_name", default=None)
    project: str | None = table_field("optional_name", default=None)

    def sort_key(self) -> tuple[str, str, str, str, str]:
        return (self.kind, self.project or "", self.region or "", self.zone or "", self.name)

    def __lt__(self, other: GroupRef) -> bool:
        # Orderable so that deterministic pickling (Pulumi sorts dict items) works on dicts
        # keyed by group.
        return self.sort_key() < other.sort_key()

    def __str__(self) -> str:
        where = "/".join(p for p in (self.project, self.zone or self.region) if p)
        return f"{self.kind}:{where}/{self.name}" if where else f"{self.kind}:{self.name}"


@dataclass(frozen=True, slots=True)
class ScaleTarget:
    """A group whose replica count changes a pool's supply; ``replicas`` is its current count."""

    name: str = table_field("key")
    group: GroupRef = table_field("group")
    min_replicas: int = table_field("count", rule=limits.count_problem)
    max_replicas: int = table_field("count", rule=limits.count_problem)
    units_per_replica: float = table_field("number", rule=limits.units_per_replica_problem)
    replicas: int = table_field("observed", rule=limits.count_problem)
    override_policies: bool = table_field("flag", default=False)

    @property
    def kind(self) -> TargetKind:
        return self.group.kind

    @property
    def units(self) -> float:
        """The units its replicas supply: ``replicas × units_per_replica``."""
        return self.replicas * self.units_per_replica


@dataclass(frozen=True, slots=True)
class Pool:
    """One supply of one resource. ``owner`` is set on a destination's standalone pool."""

    name: str = table_field("key")
    resource: str = table_field("name")
    capacity: float = table_field("number", default=0.0, rule=limits.capacity_problem)
    headroom: float = table_field("number", default=DEFAULT_HEADROOM, rule=limits.headroom_problem)
    scale_targets: tuple[ScaleTarget, ...] = table_field("related", default=())
    owner: str | None = table_field("rules", default=None)
    scale_policy: ScalePolicy = table_field("policy", default=DEFAULT_POLICY)

    @property
    def total_capacity(self) -> float:
        """The pool's capacity in units: its static ``capacity`` plus what its scale targets'
        replicas supply (the ``capacity`` that ``arklow allocate`` reports)."""
        return self.capacity + sum(t.units for t in self.scale_targets)

    @property
    def reachable_capacity(self) -> float:
        """The most the pool can supply: its static ``capacity`` plus every target at its
        ``max_replicas`` (what the coupled-pool step of the scale policy counts on)."""
        return self.capacity + sum(t.max_replicas * t.units_per_replica for t in self.scale_targets)


@dataclass(frozen=True, eq=False)
class Topology:
    """Destinations, pools, and for each (destination, resource) the one pool it draws from.

    Compared and hashed by identity: a topology is a snapshot, and caches key on it.
    """

    destinations: Mapping[str, Destination] = field(default_factory=frozen_map)
    pools: Mapping[str, Pool] = field(default_factory=frozen_map)
    memberships: Mapping[tuple[str, str], str] = field(default_factory=frozen_map)

    @cached_property
    def _members(self) -> Mapping[str, tuple[str, ...]]:
        index: dict[str, list[str]] = {name: [] for name in self.pools}
        for (destination, _resource), pool in self.memberships.items():
            index[pool].append(destination)
        return MappingProxyType({p: tuple(sorted(ds)) for p, ds in index.items()})

    def members(self, pool: str) -> tuple[str, ...]:
        return self._members.get(pool, ())

    def is_standalone(self, pool: str) -> bool:
        """A standalone pool belongs to one destination and has no other member."""
        owner = self.pools[pool].owner
        return owner is not None and set(self.members(pool)) <= {owner}

    def pools_of(self, destination: str) -> Mapping[str, str]:
        dest = self.destinations[destination]
        return {r: self.memberships[(destination, r)] for r in dest.resources}

    @cached_property
    def lanes(self) -> tuple[Lane, ...]:
        return tuple(lane for d in self.destinations.values() for lane in d.lanes)

    @cached_property
    def lanes_by_key(self) -> Mapping[str, Lane]:
        return MappingProxyType({lane.key: lane for lane in self.lanes})
