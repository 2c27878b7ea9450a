"""Value types taken by the resources' arguments. Every field accepts a Pulumi Input."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import pulumi

from arklow_pulumi.core.limits import DEFAULT_WEIGHT


@dataclass(frozen=True)
class Lane:
    """One stream of work into a destination: ``limit`` concurrent units, a ``weight`` (default 1)
    and an optional ``cost`` per resource (units of the resource per unit of work, default 1)."""

    name: pulumi.Input[str]
    limit: pulumi.Input[float]
    weight: pulumi.Input[float] = DEFAULT_WEIGHT
    cost: pulumi.Input[Mapping[str, pulumi.Input[float]]] | None = None

    def to_input(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class AwsAutoScalingGroup:
    """A reference to an AWS Auto Scaling group by name and region."""

    name: pulumi.Input[str]
    region: pulumi.Input[str]

    def to_input(self) -> dict[str, Any]:
        return {"kind": "aws_asg", "name": self.name, "region": self.region}


@dataclass(frozen=True)
class GcpManagedInstanceGroup:
    """A reference to a GCP managed instance group: project, name, and a zone or a region."""

    project: pulumi.Input[str]
    name: pulumi.Input[str]
    zone: pulumi.Input[str] | None = None
    region: pulumi.Input[str] | None = None

    def to_input(self) -> dict[str, Any]:
        group: dict[str, Any] = {"kind": "gcp_mig", "name": self.name, "project": self.project}
        if self.zone is not None:
            group["zone"] = self.zone
        if self.region is not None:
            group["region"] = self.region
        return group


GroupReference = AwsAutoScalingGroup | GcpManagedInstanceGroup


def lane_input(lane: Lane | Mapping[str, Any]) -> Any:
    return lane.to_input() if isinstance(lane, Lane) else lane


def group_input(group: Any) -> Any:
    return group.to_input() if isinstance(group, GroupReference) else group
