"""``arklow supply describe|set``: look at one cloud group, or set its size within bounds.

``set`` plans first (:func:`~arklow_pulumi.supply.planning.plan_change`): a count out of the
group's or the given bounds, or an ASG with policies of its own, fails with one line on stderr and
no write call. ``--dry-run`` prints the plan and stops there. ``--min-replicas`` and
``--max-replicas`` may be given alone: the side not given is unbounded (nothing stands in for it).

A MIG's project is ``--project``, else ``GOOGLE_CLOUD_PROJECT``, else ``CLOUDSDK_CORE_PROJECT``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import click

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.supply.contract import Supply, describe_one
from arklow_pulumi.supply.groups import ReplicaLimits
from arklow_pulumi.supply.planning import plan_change
from arklow_pulumi.supply.selecting import EndpointConfig, supply_for


def _group_options(command: Any) -> Any:
    options = [
        click.option("--kind", type=click.Choice(["aws_asg", "gcp_mig"]), required=True),
        click.option("--name", required=True, help="ASG or MIG name."),
        click.option("--region", default=None, help="AWS region, or a regional MIG's region."),
        click.option("--zone", default=None, help="A zonal MIG's zone."),
        click.option(
            "--project",
            default=None,
            help="GCP project (MIGs; default: GOOGLE_CLOUD_PROJECT, else CLOUDSDK_CORE_PROJECT).",
        ),
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


def _config(endpoint: str | None) -> EndpointConfig:
    config = EndpointConfig.from_env()
    return replace(config, gcp_compute_endpoint=endpoint) if endpoint else config


def _ref(
    kind: str,
    name: str,
    region: str | None,
    zone: str | None,
    project: str | None,
    config: EndpointConfig,
) -> GroupRef:
    if kind == "gcp_mig":
        project = project or config.gcp_project
        if not project:
            raise InvalidInput.one(
                f"group '{name}'",
                "project",
                "no GCP project for gcp_mig: give --project or set GOOGLE_CLOUD_PROJECT "
                "(or CLOUDSDK_CORE_PROJECT)",
            )
        if bool(zone) == bool(region):
            raise InvalidInput.one(
                f"group '{name}'", "zone", "give exactly one of --zone or --region for gcp_mig"
            )
        return GroupRef("gcp_mig", name, region=region, zone=zone, project=project)
    if zone:
        raise InvalidInput.one(f"group '{name}'", "zone", "--zone does not apply to aws_asg")
    return GroupRef("aws_asg", name, region=region)


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
    config = _config(endpoint)
    ref = _ref(kind, name, region, zone, project, config)
    _echo(describe_one(supply_for(kind, config), ref).as_json())


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
    config = _config(endpoint)
    ref = _ref(kind, name, region, zone, project, config)
    limits = _limits(name, min_replicas, max_replicas)
    binding: Supply = supply_for(kind, config)
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
        previous_window=list(result.previous_window) if result.previous_window else None,
        warnings=list(result.warnings),
        request_id=result.request_id,
    )
    _echo(after)


def _limits(name: str, low: int | None, high: int | None) -> ReplicaLimits | None:
    if low is None and high is None:
        return None
    if low is not None and high is not None and low > high:
        raise InvalidInput.one(
            f"group '{name}'", "min_replicas", "--min-replicas is above --max-replicas"
        )
    return ReplicaLimits(low, high)
