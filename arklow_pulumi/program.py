"""The root Pulumi program: a stack's topology, read from stack config, declared as resources.

``arklow:topology`` in ``stacks/Pulumi.<stack>.yaml`` holds a topology in the schema of
``arklow allocate``'s topology file. It is validated with the same model and the same
cross-object rules before anything is declared, so a bad topology fails ``pulumi preview`` with
the message ``arklow validate`` would print, and nothing is stored. Each destination, declared
pool, membership (``<pool>:<destination>``) and scale target becomes one resource.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi

from arklow_pulumi.core.errors import InvalidInput, Problem
from arklow_pulumi.core.fields import declared
from arklow_pulumi.core.topology import Pool as CorePool
from arklow_pulumi.core.topology import ScaleTarget as CoreTarget
from arklow_pulumi.core.validating import target_reference_problems
from arklow_pulumi.reading.parsing import parse_topology
from arklow_pulumi.reading.spec import (
    DestinationSpec,
    ScaleTargetSpec,
    TopologySpec,
    build_topology,
    target_from_spec,
)
from arklow_pulumi.resources import (
    AwsAutoScalingGroup,
    Destination,
    GcpManagedInstanceGroup,
    Lane,
    Pool,
    PoolMembership,
    ScaleTarget,
)
from arklow_pulumi.resources.values import GroupReference

CONFIG_SOURCE = "stack config 'arklow:topology'"


@dataclass
class DeclaredTopology:
    """The resources declared for one topology, by Arklow name (memberships by Pulumi name)."""

    destinations: dict[str, Destination] = field(default_factory=dict)
    pools: dict[str, Pool] = field(default_factory=dict)
    memberships: dict[str, PoolMembership] = field(default_factory=dict)
    scale_targets: dict[str, ScaleTarget] = field(default_factory=dict)


def check_topology(spec: TopologySpec) -> None:
    """Every rule ``arklow validate`` checks, plus complete group references for scale targets."""
    build_topology(spec)
    problems: list[Problem] = [
        problem
        for pool in spec.pools
        for target in pool.scale_targets
        for problem in target_reference_problems(pool.name, target_from_spec(target))
    ]
    if problems:
        raise InvalidInput(problems)


def declare_topology(
    spec: TopologySpec, store: pulumi.Input[str] | None = None
) -> DeclaredTopology:
    """Validate ``spec`` (raising :class:`InvalidInput` before declaring anything), then declare."""
    check_topology(spec)
    declared = DeclaredTopology()
    for dest in spec.destinations:
        declared.destinations[dest.name] = _destination(dest, store)
    for pool_spec in spec.pools:
        pool = Pool(
            pool_spec.name,
            **_declared(pool_spec, POOL_FIELDS),
            store=store,
            scale_policy=(
                pool_spec.scale_policy.model_dump(exclude_unset=True)
                if pool_spec.scale_policy
                else None
            ),
        )
        declared.pools[pool_spec.name] = pool
        for member in pool_spec.members:
            name = f"{pool_spec.name}:{member}"
            declared.memberships[name] = PoolMembership(
                name, declared.destinations[member], pool, store=store
            )
        for target in pool_spec.scale_targets:
            declared.scale_targets[target.name] = _target(target, pool, store)
    return declared


def _destination(spec: DestinationSpec, store: pulumi.Input[str] | None) -> Destination:
    lanes = [Lane(**lane.model_dump()) for lane in spec.lanes]
    return Destination(
        spec.name,
        list(spec.resources),
        lanes,
        dict(spec.standalone_capacity),
        store=store,
    )


def _group(spec: ScaleTargetSpec) -> GroupReference:
    name = spec.group or spec.name
    if spec.kind == "aws_asg":
        return AwsAutoScalingGroup(name, spec.region or "")
    return GcpManagedInstanceGroup(spec.project or "", name, zone=spec.zone, region=spec.region)


def _target(spec: ScaleTargetSpec, pool: Pool, store: pulumi.Input[str] | None) -> ScaleTarget:
    return ScaleTarget(spec.name, pool, _group(spec), **_declared(spec, TARGET_FIELDS), store=store)


# A pool's and a target's declared fields (core.fields) that the spec holds as they are: the
# resources take them under the same names (a pool's policy and a target's group are shaped).
POOL_FIELDS = tuple(f.name for f in declared(CorePool) if f.form != "policy")
TARGET_FIELDS = tuple(f.name for f in declared(CoreTarget) if f.form != "group")


def _declared(spec: Any, names: tuple[str, ...]) -> dict[str, Any]:
    return {name: getattr(spec, name) for name in names}


def main() -> DeclaredTopology:
    """Entry point of the root ``__main__.py``: read, validate, declare, export."""
    raw = pulumi.Config("arklow").get_object("topology")
    try:
        if raw is None:
            raise InvalidInput.one(CONFIG_SOURCE, "(document)", "is not set for this stack")
        spec = parse_topology(raw, CONFIG_SOURCE)
        declared = declare_topology(spec)
    except InvalidInput as exc:
        raise pulumi.RunError(f"invalid topology: {exc}") from exc
    export_topology(declared)
    return declared


def export_topology(declared: DeclaredTopology) -> None:
    """Export ``destinations`` (``{destination: {resource: pool}}``) and ``pools`` (``{pool:
    [members]}``, declared pools and the destinations' standalone pools) from the resources'
    settled outputs: as the store holds them when the update is done (resources/settling.py),
    so a refresh with ``--run-program`` brings them back to the store too."""
    destinations = {name: d.pools for name, d in declared.destinations.items()}
    members = {name: p.members for name, p in declared.pools.items()}
    pulumi.export("destinations", destinations)
    pulumi.export(
        "pools",
        pulumi.Output.from_input({"d": destinations, "p": members}).apply(_pools_document),
    )


def _pools_document(found: Any) -> dict[str, list[str]]:
    destinations: dict[str, dict[str, str]] = found["d"]
    members: dict[str, list[str]] = found["p"]
    pools = {name: list(found) for name, found in members.items()}
    for destination, found in destinations.items():
        for pool in found.values():
            if pool not in members:
                pools.setdefault(pool, []).append(destination)
    return pools
