"""``arklow supply describe|set``: look at one cloud group, or set its size within bounds.

``set`` goes through the one act path the controller uses
(:func:`~arklow_pulumi.supply.reconciling.reconcile_pass`, for one group): the group is described
with its policies, the pure planner refuses a count out of the group's or the given bounds, or an
ASG with policies of its own, with one line on stderr and no write call, and otherwise the plan is
applied. ``--dry-run`` prints the plan and stops there. ``--min-replicas`` and ``--max-replicas``
may be given alone: the side not given is unbounded (nothing stands in for it).

A MIG's project is ``--project``, else ``GOOGLE_CLOUD_PROJECT``, else ``CLOUDSDK_CORE_PROJECT``.

``--timeout SECONDS`` (default 20) bounds the whole command: it is each call's connect and read
timeout and the retry budget of the binding (botocore's and Arklow's retries, GCP operation
polling), and a watchdog (``SIGALRM``) ends the command at the deadline whatever it is doing. A
refused or silent endpoint therefore fails within the deadline, with one line.
"""

from __future__ import annotations

import functools
import json
import re
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from types import FrameType
from typing import Any, TypeVar

import click

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.supply.contract import Supply, describe_one
from arklow_pulumi.supply.errors import SupplyError
from arklow_pulumi.supply.groups import ReplicaLimits
from arklow_pulumi.supply.reconciling import reconcile_pass
from arklow_pulumi.supply.retrying import RetryPolicy
from arklow_pulumi.supply.routing import SupplyRouter
from arklow_pulumi.supply.selecting import EndpointConfig

DEFAULT_TIMEOUT = 20.0
# The share of --timeout given to call timeouts and retries; the watchdog takes the rest.
BUDGET_SHARE = 0.8
# A GCP zone, region or MIG name: an RFC 1035 label, as the Compute API requires.
GCP_NAME = re.compile(r"[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?")
T = TypeVar("T")


@dataclass(frozen=True)
class Group:
    """The group a command acts on, from its options: the group, where to reach it, the time
    the whole command may take."""

    ref: GroupRef
    config: EndpointConfig
    timeout: float


def _group_options(command: Callable[..., None]) -> Any:
    """The group options, read into a :class:`Group` handed to ``command`` as ``group``."""

    @functools.wraps(command)
    def with_group(
        kind: str,
        name: str,
        region: str | None,
        zone: str | None,
        project: str | None,
        endpoint: str | None,
        fmt: str,
        timeout: float,
        **rest: Any,
    ) -> None:
        config = _config(endpoint)
        command(Group(_ref(kind, name, region, zone, project, config), config, timeout), **rest)

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
        click.option(
            "--timeout",
            type=click.FloatRange(min=0, min_open=True, max=3600),
            default=DEFAULT_TIMEOUT,
            show_default=True,
            help="Seconds the whole command may take, retries included.",
        ),
    ]
    wrapped: Any = with_group
    for option in reversed(options):
        wrapped = option(wrapped)
    return wrapped


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
        for field, value in (("name", name), ("zone", zone), ("region", region)):
            if value is not None and not GCP_NAME.fullmatch(value):
                raise InvalidInput.one(
                    f"group {name!r}",
                    field,
                    f"{value!r} is not a GCP {field} (lowercase letters, digits and '-', "
                    "starting with a letter, at most 63)",
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
def describe(group: Group) -> None:
    """Print one group: desired and in-service size, bounds, autoscaler, policies, stability."""
    ref = group.ref
    binding = _binding(ref.kind, group.config, group.timeout)
    _echo(within(group.timeout, ref, lambda: describe_one(binding, ref).as_json()))


@supply.command(name="set")
@_group_options
@click.option("--replicas", type=click.IntRange(min=0), required=True)
@click.option("--min-replicas", type=click.IntRange(min=0), default=None)
@click.option("--max-replicas", type=click.IntRange(min=0), default=None)
@click.option("--override-policies", is_flag=True, help="Set an ASG that has scaling policies.")
@click.option("--dry-run", is_flag=True, help="Print the plan; make no write call.")
def set_size(
    group: Group,
    replicas: int,
    min_replicas: int | None,
    max_replicas: int | None,
    override_policies: bool,
    dry_run: bool,
) -> None:
    """Set a group's size, refusing counts outside its bounds and the given ones."""
    ref = group.ref
    limits = _limits(ref.name, min_replicas, max_replicas, override_policies)
    binding = _binding(ref.kind, group.config, group.timeout)
    router = SupplyRouter({ref.kind: binding}, max_workers=1)
    with deadline(group.timeout, ref) as progress:
        report = reconcile_pass(
            router,
            {ref: replicas},
            targets={ref: limits},
            detail=True,
            dry_run=dry_run,
            guard=progress.sending,
        )
        if dry_run:
            if ref in report.failed:
                raise report.failed[ref]
            _echo({**report.plans[ref].as_json(), "dry_run": True})
            return
        result = report.result(ref)
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


def _limits(name: str, low: int | None, high: int | None, override: bool) -> ReplicaLimits:
    if low is not None and high is not None and low > high:
        raise InvalidInput.one(
            f"group '{name}'", "min_replicas", "--min-replicas is above --max-replicas"
        )
    return ReplicaLimits(low, high, override)


def _binding(kind: str, config: EndpointConfig, timeout: float) -> Supply:
    """The binding for ``kind``, its call timeouts and retry budget inside ``timeout``: they end
    a little before the watchdog, so a failure is reported with its own cause."""
    budget = timeout * BUDGET_SHARE
    retry = RetryPolicy(deadline=budget)
    if kind == "aws_asg":
        from arklow_pulumi.supply.aws import AwsAsgSupply

        # botocore's own retries would sleep past the budget: Arklow's retrier does them all.
        return AwsAsgSupply(
            config.aws_region,
            config.aws_endpoint_url,
            retry,
            botocore_max_attempts=1,
            call_timeout=budget,
        )
    from arklow_pulumi.extras import require

    require("gcp", "--kind gcp_mig")
    # isort: off
    # the binding first: it quiets the client library's notice about this Python version
    from arklow_pulumi.supply.gcp import GcpMigSupply
    import google.cloud.compute_v1  # noqa: F401  (its import is seconds; not out of the budget)
    # isort: on

    return GcpMigSupply(
        config.gcp_compute_endpoint,
        retry,
        config.gcp_project,
        op_deadline=budget,
        wait_timeout=budget,
        call_timeout=budget,
    )


class _DeadlinePassed(BaseException):
    """Raised by the watchdog; a BaseException so that no ``except Exception`` on the way
    (an SDK's, a retry loop's) can swallow it."""


@dataclass
class Progress:
    """What a command cut short by its deadline has done (the block updates it)."""

    consequence: str = "nothing was changed"

    @contextmanager
    def sending(self) -> Iterator[None]:
        """Entered right before the write call: from then on the change may have been made."""
        self.consequence = "the change may have been made: see `arklow supply describe`"
        yield


def within(timeout: float, ref: GroupRef, call: Callable[[], T]) -> T:
    with deadline(timeout, ref):
        return call()


@contextmanager
def deadline(timeout: float, ref: GroupRef) -> Iterator[Progress]:
    """Ends the block with a one-line :class:`SupplyError` once ``timeout`` seconds have passed
    (main thread only: elsewhere the per-call timeouts and retry budget alone bound it), and
    names the group in a supply error that does not."""
    progress = Progress()
    if threading.current_thread() is not threading.main_thread():
        yield progress
        return

    def expire(_signum: int, _frame: FrameType | None) -> None:
        raise _DeadlinePassed

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield progress
    except _DeadlinePassed:
        raise SupplyError(
            f"field 'timeout': no answer within {timeout:g} s (--timeout); {progress.consequence}",
            ref,
        ) from None
    except SupplyError as exc:
        if exc.ref is not None:
            raise
        raise SupplyError(str(exc), ref) from exc.__cause__  # name the group
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
