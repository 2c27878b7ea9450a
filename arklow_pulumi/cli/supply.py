"""``arklow supply describe|set``: look at one cloud group, or set its size within bounds.

``set`` plans first (:func:`~arklow_pulumi.supply.planning.plan_change`): a count out of the
group's or the given bounds, or an ASG with policies of its own, fails with one line on stderr and
no write call. ``--dry-run`` prints the plan and stops there.
"""

from __future__ import annotations

import json
from typing import Any

import click

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.supply.contract import Supply, describe_one
from arklow_pulumi.supply.groups import ReplicaLimits
from arklow_pulumi.supply.planning import plan_change
from arklow_pulumi.supply.selecting import EndpointConfig, supply_for

UNBOUNDED = 2**31 - 1


def _group_options(command: Any) -> Any:
    options = [
        click.option("--kind", type=click.Choice(["aws_asg", "gcp_mig"]), required=True),
        click.option("--name", required=True, help="ASG or MIG name."),
        click.option("--region", default=None, help="AWS region, or a regional MIG's region."),
        click.option("--zone", default=None, help="A zonal MIG's zone."),
        click.option("--project", default=None, help="GCP project (MIGs)."),
        click.option(
            "--endpoint",
            default=None,
            help="Compute API endpoint (default: ARKLOW_GCP_COMPUTE_ENDPOINT, else the real API).",
        ),
        click.option("--format", "fmt", type=click.Choice(["json"]), default="json"),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _ref(
    kind: str, name: str, region: str | None, zone: str | None, project: str | None
) -> GroupRef:
    if kind == "gcp_mig":
        if not project:
            raise InvalidInput.one(
                f"group '{name}'", "project", "--project is required for gcp_mig"
            )
        if bool(zone) == bool(region):
            raise InvalidInput.one(
                f"group '{name}'", "zone", "give exactly one of --zone or --region for gcp_mig"
            )
        return GroupRef("gcp_mig", name, region=region, zone=zone, project=project)
    if zone:
        raise InvalidInput.one(f"group '{name}'", "zone", "--zone does not apply to aws_asg")
    return GroupRef("aws_asg", name, region=region)


def _supply(kind: str, endpoint: str | None) -> Supply:
    config = EndpointConfig.from_env()
    if endpoint:
        config = EndpointConfig(endpoint, config.aws_endpoint_url, config.aws_region)
    return supply_for(kind, config)


def _echo(payload: dict[str, Any]) -> None:
    click.echo(json.dumps(payload, sort_keys=False))


@click.group()
def supply() -> None:
    """Inspect and size cloud groups (AWS Auto Scaling groups, GCP managed instance groups)."""


@supply.command()
@_group_options
def describe(
    kind: str,
    name: str,
    region: str | None,
    zone: str | None,
    project: str | None,
    endpoint: str | None,
    fmt: str,
) -> None:
    """Print one group: desired and in-service size, bounds, autoscaler, policies, stability."""
    ref = _ref(kind, name, region, zone, project)
    _echo(describe_one(_supply(kind, endpoint), ref).as_json())


@supply.command(name="set")
@_group_options
@click.option("--replicas", type=click.IntRange(min=0), required=True)
@click.option("--min-replicas", type=click.IntRange(min=0), default=None)
@click.option("--max-replicas", type=click.IntRange(min=0), default=None)
@click.option("--override-policies", is_flag=True, help="Set an ASG that has scaling policies.")
@click.option("--dry-run", is_flag=True, help="Print the plan; make no write call.")
def set_size(
    kind: str,
    name: str,
    region: str | None,
    zone: str | None,
    project: str | None,
    endpoint: str | None,
    fmt: str,
    replicas: int,
    min_replicas: int | None,
    max_replicas: int | None,
    override_policies: bool,
    dry_run: bool,
) -> None:
    """Set a group's size, refusing counts outside its bounds and the given ones."""
    ref = _ref(kind, name, region, zone, project)
    limits = _limits(name, min_replicas, max_replicas)
    binding = _supply(kind, endpoint)
    state = describe_one(binding, ref)
    plan = plan_change(state, replicas, limits, override_policies)
    if dry_run:
        _echo({**plan.as_json(), "dry_run": True})
        return
    result = binding.set_desired(
        ref, replicas, limits=limits, override_policies=override_policies, current=state
    )
    after = describe_one(binding, ref).as_json()
    after.update(
        method=result.method,
        previous=result.previous,
        window=list(result.window) if result.window else None,
        warnings=list(result.warnings),
        request_id=result.request_id,
    )
    _echo(after)


def _limits(name: str, low: int | None, high: int | None) -> ReplicaLimits | None:
    if low is None and high is None:
        return None
    limits = ReplicaLimits(low or 0, UNBOUNDED if high is None else high)
    if limits.min_replicas > limits.max_replicas:
        raise InvalidInput.one(
            f"group '{name}'", "min_replicas", "--min-replicas is above --max-replicas"
        )
    return limits
