"""The one schema of a topology, as written by people.

The same models are read from an ``arklow allocate`` topology file, from the ``arklow:topology``
stack config and from the arguments of the Pulumi resources. They check each field on its own
(types, ranges); rules that span objects (unknown members, a second pool for one resource, ...)
are checked when a :class:`~arklow_pulumi.core.topology.Topology` is built from a spec.

Numbers are strict: ``"5"`` and ``true`` are not numbers; NaN and infinities are refused. Every
number has a documented range (below), so that no sum, product or ``ceil`` the engine computes
(``Σ e × cost × (1 + headroom)``, ``demand / capacity``, ``needed / units_per_replica``) can
overflow or turn into NaN, and every output stays strict JSON:

- replica counts (``min_replicas``, ``max_replicas``, ``replicas``, step sizes): integers in
  [0, 1,000,000] (steps from 1);
- amounts of units (``limit``, demand, ``capacity``, ``standalone_capacity``): in [0, 1e12]; a
  capacity is 0 or at least 1e-9, so that pressure stays finite;
- ``units_per_replica``: in [1e-6, 1e12]; ``weight`` and ``cost``: in [1e-6, 1e6];
- ``headroom``: a fraction in [0, 100].

Names (destinations, lanes, resources, pools, scale targets, groups, regions, zones, projects,
members) are 1 to 255 characters, all printable (``str.isprintable``: no control, format,
separator other than the space, or unassigned characters), the same rule on every store backend.
Composite keys stay in bounds: ``<destination>/<lane>`` is at most 511 characters, and a
standalone pool's name ``<destination>/<resource>`` is checked against 255 where it is formed.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from arklow_pulumi.core.limits import (
    DEFAULT_HEADROOM,
    MAX_COUNT,
    MAX_FACTOR,
    MAX_HEADROOM,
    MAX_NAME_LENGTH,
    MAX_UNITS,
    MIN_CAPACITY,
    MIN_FACTOR,
    MIN_UNITS_PER_REPLICA,
    TARGET_KINDS,
    TargetKind,
)
from arklow_pulumi.core.policy import DEFAULT_POLICY

__all__ = [
    "DEFAULT_HEADROOM",
    "MAX_COUNT",
    "MAX_FACTOR",
    "MAX_HEADROOM",
    "MAX_NAME_LENGTH",
    "MAX_UNITS",
    "MIN_CAPACITY",
    "MIN_FACTOR",
    "MIN_UNITS_PER_REPLICA",
    "TARGET_KINDS",
    "DemandSpec",
    "DestinationSpec",
    "LaneSpec",
    "Name",
    "PoolSpec",
    "ScalePolicySpec",
    "ScaleTargetSpec",
    "TargetKind",
    "TopologySpec",
]


def _printable(value: str) -> str:
    if not value.isprintable():
        bad = next(c for c in value if not c.isprintable())
        raise ValueError(f"must contain only printable characters (found U+{ord(bad):04X})")
    return value


def _capacity(value: float) -> float:
    if 0 < value < MIN_CAPACITY:
        raise ValueError(f"must be 0 or at least {MIN_CAPACITY:g} (got {value!r})")
    return value


Name = Annotated[
    str, Field(strict=True, min_length=1, max_length=MAX_NAME_LENGTH), AfterValidator(_printable)
]
NonNegative = Annotated[float, Field(strict=True, ge=0, le=MAX_UNITS, allow_inf_nan=False)]
Capacity = Annotated[NonNegative, AfterValidator(_capacity)]
Factor = Annotated[float, Field(strict=True, ge=MIN_FACTOR, le=MAX_FACTOR, allow_inf_nan=False)]
UnitsPerReplica = Annotated[
    float, Field(strict=True, ge=MIN_UNITS_PER_REPLICA, le=MAX_UNITS, allow_inf_nan=False)
]
Headroom = Annotated[float, Field(strict=True, ge=0, le=MAX_HEADROOM, allow_inf_nan=False)]
Count = Annotated[int, Field(strict=True, ge=0, le=MAX_COUNT)]
Step = Annotated[int, Field(strict=True, ge=1, le=MAX_COUNT)]
Percent = Annotated[float, Field(strict=True, ge=0, le=100, allow_inf_nan=False)]
Fraction = Annotated[float, Field(strict=True, ge=0, le=1, allow_inf_nan=False)]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _null_means_default(cls, data: Any) -> Any:
        """``members:`` left empty in YAML is null: treat it as the field's default."""
        if not isinstance(data, dict) or None not in data.values():
            return data
        fields = cls.model_fields
        return {
            k: v
            for k, v in data.items()
            if not (v is None and k in fields and not fields[k].is_required())
        }


class LaneSpec(_Spec):
    """One stream of work into a destination."""

    name: Name
    limit: NonNegative
    weight: Factor = 1.0
    cost: dict[Name, Factor] | None = None


class DestinationSpec(_Spec):
    """Where work goes, the resources its work draws from, and its lanes."""

    name: Name
    resources: list[Name] = Field(default_factory=list)
    lanes: list[LaneSpec] = Field(default_factory=list)
    standalone_capacity: dict[Name, Capacity] = Field(default_factory=dict)


class ScaleTargetSpec(_Spec):
    """Binds a pool to a group whose replica count changes the pool's real supply.

    ``group`` is the cloud group's name (defaults to ``name``). AWS groups need ``region``;
    GCP groups need ``project`` and exactly one of ``zone`` or ``region``. Those references are
    only required where the group is reached (Pulumi, the controller), not to compute an allocation.
    ``replicas`` is the group's current in-service count (defaults to ``min_replicas``).
    """

    kind: TargetKind
    name: Name
    group: Name | None = None
    region: Name | None = None
    zone: Name | None = None
    project: Name | None = None
    min_replicas: Count
    max_replicas: Count
    units_per_replica: UnitsPerReplica
    replicas: Count | None = None
    override_policies: bool = False


class ScalePolicySpec(_Spec):
    """How the controller moves a pool's targets (DESIGN.md "Scale policy"); a field left out
    keeps its default. Each step limit is the larger of the count and the percentage of the
    current count; a step of at least 1 keeps every target able to move."""

    max_step_up: Step = DEFAULT_POLICY.max_step_up
    max_step_up_percent: NonNegative = DEFAULT_POLICY.max_step_up_percent
    scale_down_window_s: NonNegative = DEFAULT_POLICY.scale_down_window_s
    max_step_down: Step = DEFAULT_POLICY.max_step_down
    max_step_down_percent: Percent = DEFAULT_POLICY.max_step_down_percent
    tolerance: Fraction = DEFAULT_POLICY.tolerance


class PoolSpec(_Spec):
    """One supply of one resource, shared by its member destinations."""

    name: Name
    resource: Name
    capacity: Capacity = 0.0
    headroom: Headroom = DEFAULT_HEADROOM
    members: list[Name] = Field(default_factory=list)
    scale_targets: list[ScaleTargetSpec] = Field(default_factory=list)
    scale_policy: ScalePolicySpec | None = None


class TopologySpec(_Spec):
    """A whole topology: destinations and the pools declared between them."""

    destinations: list[DestinationSpec] = Field(default_factory=list)
    pools: list[PoolSpec] = Field(default_factory=list)


class DemandSpec(_Spec):
    """One demand report: in-flight plus queued units per lane, keyed ``<destination>/<lane>``."""

    lanes: dict[str, NonNegative] = Field(default_factory=dict)
