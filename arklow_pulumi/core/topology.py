"""The immutable topology value: destinations, their lanes, pools, memberships and scale targets.

A :class:`Topology` is a point-in-time snapshot. Every change goes through
:mod:`arklow_pulumi.core.rules`, which returns a new value; nothing here mutates.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType
from typing import TypeVar

from arklow_pulumi.core.limits import DEFAULT_HEADROOM, TargetKind
from arklow_pulumi.core.policy import DEFAULT_POLICY, ScalePolicy

EMPTY: Mapping[str, float] = MappingProxyType({})
K = TypeVar("K")
V = TypeVar("V")


def frozen_map(items: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> Mapping[K, V]:
    return MappingProxyType(dict(items))


def standalone_pool_name(destination: str, resource: str) -> str:
    return f"{destination}/{resource}"


def lane_key(destination: str, lane: str) -> str:
    return f"{destination}/{lane}"


@dataclass(frozen=True, slots=True)
class Lane:
    """One stream of work into a destination. ``cost`` maps resource to units per unit of work."""

    destination: str
    name: str
    limit: float
    weight: float = 1.0
    cost: Mapping[str, float] = field(default_factory=frozen_map)

    @property
    def key(self) -> str:
        return lane_key(self.destination, self.name)

    def cost_of(self, resource: str) -> float:
        return self.cost.get(resource, 1.0)


@dataclass(frozen=True, slots=True)
class Destination:
    name: str
    resources: tuple[str, ...] = ()
    lanes: tuple[Lane, ...] = ()
    standalone_capacity: Mapping[str, float] = field(default_factory=frozen_map)


@dataclass(frozen=True, slots=True)
class GroupRef:
    """Where a target's group lives: ASG (name, region) or MIG (project, zone or region, name)."""

    kind: TargetKind
    name: str
    region: str | None = None
    zone: str | None = None
    project: str | None = None

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

    name: str
    group: GroupRef
    min_replicas: int
    max_replicas: int
    units_per_replica: float
    replicas: int
    override_policies: bool = False

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

    name: str
    resource: str
    capacity: float = 0.0
    headroom: float = DEFAULT_HEADROOM
    scale_targets: tuple[ScaleTarget, ...] = ()
    owner: str | None = None
    scale_policy: ScalePolicy = DEFAULT_POLICY

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
