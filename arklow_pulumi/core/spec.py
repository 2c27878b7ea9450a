"""The one schema of a topology, as written by people.

The same models are read from an ``arklow allocate`` topology file, from the ``arklow:topology``
stack config and from the arguments of the Pulumi resources. They check each field on its own
(types, ranges); rules that span objects (unknown members, a second pool for one resource, ...)
are checked when a :class:`~arklow_pulumi.core.topology.Topology` is built from a spec.

Numbers are strict: ``"5"`` and ``true`` are not numbers; NaN and infinities are refused.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from arklow_pulumi.core.policy import DEFAULT_POLICY

Name = Annotated[str, Field(strict=True, min_length=1)]
NonNegative = Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)]
Positive = Annotated[float, Field(strict=True, gt=0, allow_inf_nan=False)]
Count = Annotated[int, Field(strict=True, ge=0)]
Step = Annotated[int, Field(strict=True, ge=1)]
Percent = Annotated[float, Field(strict=True, ge=0, le=100, allow_inf_nan=False)]
Fraction = Annotated[float, Field(strict=True, ge=0, le=1, allow_inf_nan=False)]

TargetKind = Literal["aws_asg", "gcp_mig"]
TARGET_KINDS: tuple[TargetKind, ...] = ("aws_asg", "gcp_mig")
DEFAULT_HEADROOM = 0.1


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
    weight: Positive = 1.0
    cost: dict[Name, Positive] | None = None


class DestinationSpec(_Spec):
    """Where work goes, the resources its work draws from, and its lanes."""

    name: Name
    resources: list[Name] = Field(default_factory=list)
    lanes: list[LaneSpec] = Field(default_factory=list)
    standalone_capacity: dict[Name, NonNegative] = Field(default_factory=dict)


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
    units_per_replica: Positive
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
    capacity: NonNegative = 0.0
    headroom: NonNegative = DEFAULT_HEADROOM
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
