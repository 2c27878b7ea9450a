"""The one schema of a topology, as written by people, and how each part becomes a core value.

The same models are read from an ``arklow allocate`` topology file, from the ``arklow:topology``
stack config and from the arguments of the Pulumi resources. They check each field on its own:
its type here (numbers are strict: ``"5"`` and ``true`` are not numbers), its range and the name
rule with the functions of :mod:`arklow_pulumi.core.limits` (the one home of those rules, which
documents them), all inside pydantic-core: a value is checked against constraints made from the
rules' own constants and reaches the rule's function only when they leave it (:class:`_Rule`).
Rules that span objects (unknown members, a second pool for one resource, ...) are checked by
:func:`~arklow_pulumi.core.rules.assemble_topology` when the topology is built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import core_schema

from arklow_pulumi.core.limits import (
    ASCII_NAME_PATTERN,
    CAPACITY_RANGE,
    COUNT_RANGE,
    DEFAULT_HEADROOM,
    DEFAULT_WEIGHT,
    FACTOR_RANGE,
    FRACTION_RANGE,
    HEADROOM_RANGE,
    MIN_CAPACITY,
    PERCENT_RANGE,
    STEP_RANGE,
    UNITS_PER_REPLICA_RANGE,
    UNITS_RANGE,
    TargetKind,
    capacity_problem,
    count_problem,
    factor_problem,
    fraction_problem,
    headroom_problem,
    name_problem,
    percent_problem,
    step_problem,
    units_per_replica_problem,
    units_problem,
)
from arklow_pulumi.core.policy import DEFAULT_POLICY, ScalePolicy
from arklow_pulumi.core.rules import assemble_topology, owner_of
from arklow_pulumi.core.topology import (
    EMPTY,
    Destination,
    GroupRef,
    Lane,
    Pool,
    ScaleTarget,
    Topology,
    frozen_map,
)

__all__ = [
    "DemandSpec",
    "DestinationSpec",
    "LaneSpec",
    "Name",
    "PoolSpec",
    "ScalePolicySpec",
    "ScaleTargetSpec",
    "TargetKind",
    "TopologySpec",
    "build_topology",
    "destination_from_spec",
    "policy_from_document",
    "policy_from_spec",
    "pool_from_spec",
    "target_from_spec",
]


#: The type of the one pydantic-core error a field rule raises; its context holds the rule's
#: function (``rule``), which :mod:`~arklow_pulumi.reading.parsing` calls for the message.
RULE_ERROR = "field_rule"


@dataclass(frozen=True, eq=False)  # hashed by identity, as Annotated metadata must be
class _Rule:
    """A field's type and its rule of :mod:`arklow_pulumi.core.limits`, all in pydantic-core.

    The type is checked first (``base``, strict: its errors are pydantic's own). The rule's
    function decides, but pydantic-core first tries ``accept``, constraints made from the same
    constants of :mod:`~arklow_pulumi.core.limits` that accept only values the function accepts
    (its whole range, or its ASCII names): a value they accept is kept without a call into
    Python. Any other value goes to the function. A value it refuses is one :data:`RULE_ERROR`.
    """

    base: core_schema.CoreSchema
    accept: core_schema.CoreSchema
    problem: Callable[[Any], str | None]

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> core_schema.CoreSchema:
        decided = core_schema.no_info_plain_validator_function(self._check)
        either = core_schema.union_schema([self.accept, decided], mode="left_to_right")
        rule = core_schema.custom_error_schema(
            either,
            RULE_ERROR,
            custom_error_message="does not keep its field rule",
            custom_error_context={"rule": self.problem},
        )
        return core_schema.chain_schema([self.base, rule])

    def _check(self, value: Any) -> Any:
        if self.problem(value) is not None:
            raise ValueError  # worded by the caller, from the error's context
        return value


def _number(problem: Callable[[float], str | None], low: float, high: float) -> _Rule:
    within = core_schema.float_schema(ge=low, le=high, allow_inf_nan=False)
    return _Rule(core_schema.float_schema(strict=True), within, problem)


def _count(problem: Callable[[int], str | None], low: int, high: int) -> _Rule:
    return _Rule(
        core_schema.int_schema(strict=True), core_schema.int_schema(ge=low, le=high), problem
    )


_NAME = _Rule(
    core_schema.str_schema(strict=True),
    core_schema.str_schema(pattern=ASCII_NAME_PATTERN, regex_engine="rust-regex"),
    name_problem,
)

Name = Annotated[str, _NAME]
NonNegative = Annotated[float, _number(units_problem, *UNITS_RANGE)]
# the constraints take [MIN_CAPACITY, max]: 0 (which the rule accepts) is left to the function
Capacity = Annotated[float, _number(capacity_problem, MIN_CAPACITY, CAPACITY_RANGE[1])]
Factor = Annotated[float, _number(factor_problem, *FACTOR_RANGE)]
UnitsPerReplica = Annotated[float, _number(units_per_replica_problem, *UNITS_PER_REPLICA_RANGE)]
Headroom = Annotated[float, _number(headroom_problem, *HEADROOM_RANGE)]
Count = Annotated[int, _count(count_problem, *COUNT_RANGE)]
Step = Annotated[int, _count(step_problem, *STEP_RANGE)]
Percent = Annotated[float, _number(percent_problem, *PERCENT_RANGE)]
Fraction = Annotated[float, _number(fraction_problem, *FRACTION_RANGE)]


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
    weight: Factor = DEFAULT_WEIGHT
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
    override_policies: Annotated[bool, Field(strict=True)] = False


class ScalePolicySpec(_Spec):
    """How the controller moves a pool's targets (docs/scale-policy.md); a field left out
    keeps its default. Each step limit is the larger of the count and the percentage of the
    current count; a step of at least 1 keeps every target able to move."""

    max_step_up: Step = DEFAULT_POLICY.max_step_up
    max_step_up_percent: NonNegative = DEFAULT_POLICY.max_step_up_percent
    scale_down_window_s: NonNegative = DEFAULT_POLICY.scale_down_window_s
    max_step_down: Step = DEFAULT_POLICY.max_step_down
    max_step_down_percent: Percent = DEFAULT_POLICY.max_step_down_percent
    tolerance: Fraction = DEFAULT_POLICY.tolerance
    headroom_kept: Fraction = DEFAULT_POLICY.headroom_kept


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


# -- specs to core values ---------------------------------------------------------------------


def destination_from_spec(spec: DestinationSpec) -> Destination:
    name = spec.name
    lanes = tuple(
        [  # positional arguments: a topology can have 100,000 lanes
            Lane(
                name,
                lane.name,
                lane.limit,
                lane.weight,
                frozen_map(lane.cost) if lane.cost else EMPTY,
            )
            for lane in spec.lanes
        ]
    )
    return Destination(
        name=spec.name,
        resources=tuple(spec.resources),
        lanes=lanes,
        standalone_capacity=frozen_map(spec.standalone_capacity),
    )


def target_from_spec(spec: ScaleTargetSpec) -> ScaleTarget:
    group = GroupRef(
        kind=spec.kind,
        name=spec.group or spec.name,
        region=spec.region,
        zone=spec.zone,
        project=spec.project,
    )
    return ScaleTarget(
        name=spec.name,
        group=group,
        min_replicas=spec.min_replicas,
        max_replicas=spec.max_replicas,
        units_per_replica=spec.units_per_replica,
        replicas=spec.min_replicas if spec.replicas is None else spec.replicas,
        override_policies=spec.override_policies,
    )


def policy_from_spec(spec: ScalePolicySpec | None) -> ScalePolicy:
    return DEFAULT_POLICY if spec is None else ScalePolicy(**spec.model_dump())


def policy_from_document(doc: Mapping[str, Any] | None) -> ScalePolicy:
    """A stored or given ``scale_policy`` document, validated as the schema does."""
    if doc is None:
        return DEFAULT_POLICY
    return policy_from_spec(ScalePolicySpec.model_validate(dict(doc)))


def pool_from_spec(spec: PoolSpec, owner: str | None = None) -> Pool:
    return Pool(
        name=spec.name,
        resource=spec.resource,
        capacity=spec.capacity,
        headroom=spec.headroom,
        scale_targets=tuple(target_from_spec(t) for t in spec.scale_targets),
        owner=owner,
        scale_policy=policy_from_spec(spec.scale_policy),
    )


def build_topology(spec: TopologySpec) -> Topology:
    """Check every cross-object rule and build the topology, or raise :class:`InvalidInput`."""
    destinations = [destination_from_spec(d) for d in spec.destinations]
    declared = [
        (pool_from_spec(p, owner_of(p.name, p.resource, p.members)), p.members) for p in spec.pools
    ]
    return assemble_topology(destinations, declared)
