"""AWS Auto Scaling groups through boto3.

Describe goes in batches of 100 names per DescribeAutoScalingGroups call (paginated), one batch
list per region. Policies and scheduled actions come from DescribePolicies /
DescribeScheduledActions: per group when few groups are asked for, region-wide (paginated) when
many, and not at all with ``detail=False`` (the act path looks them up only for the groups it is
about to change). botocore retries are pinned to standard mode; ScalingActivityInProgress
(which botocore does not retry) and anything else temporary is retried here with jittered
backoff within a deadline. The client is created on first use and never pickled.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.supply import fencing
from arklow_pulumi.supply.clients import CloudBinding
from arklow_pulumi.supply.errors import (
    GroupNotFound,
    MissingCredentials,
    PermanentSupplyError,
    SupplyError,
    TemporarySupplyError,
)
from arklow_pulumi.supply.groups import GroupState, Plan, SetResult
from arklow_pulumi.supply.retrying import Retrier, RetryPolicy

BATCH = 100
PER_GROUP_DETAIL_UP_TO = 3
TEMPORARY_CODES = frozenset(
    {
        "ScalingActivityInProgress",
        "ResourceContention",
        "ResourceContentionFault",
        "Throttling",
        "ThrottlingException",
        "RequestLimitExceeded",
        "ServiceUnavailable",
        "InternalFailure",
        "InternalError",
    }
)
PENDING_STATES = ("Pending", "Pending:Wait", "Pending:Proceed", "Warmed:Pending")


class AwsAsgSupply(CloudBinding):
    """Supply backed by EC2 Auto Scaling groups. Holds configuration only."""

    def __init__(
        self,
        region: str | None = None,
        endpoint_url: str | None = None,
        retry: RetryPolicy | None = None,
        botocore_max_attempts: int = 3,
        call_timeout: float | None = None,
    ) -> None:
        super().__init__(retry)
        self.region = region
        self.endpoint_url = endpoint_url
        self.botocore_max_attempts = botocore_max_attempts
        self.call_timeout = call_timeout  # connect and read timeout of one call (botocore's: 60 s)

    # -- describing --------------------------------------------------------------------------

    def describe(
        self, refs: Sequence[GroupRef], *, detail: bool = True
    ) -> Mapping[GroupRef, GroupState]:
        found: dict[GroupRef, GroupState] = {}
        for region, group_refs in _by_region(refs, self.region).items():
            by_name = {r.name: r for r in group_refs}
            raw = self._describe_groups(region, list(by_name))
            policies = scheduled = None
            if detail:
                policies, scheduled = self._detail(region, [g["AutoScalingGroupName"] for g in raw])
            for group in raw:
                name = group["AutoScalingGroupName"]
                ref = by_name.get(name)
                if ref is not None:
                    found[ref] = _state(
                        ref,
                        group,
                        None if policies is None else tuple(policies.get(name, ())),
                        None if scheduled is None else tuple(scheduled.get(name, ())),
                    )
        return found

    def _describe_groups(self, region: str | None, names: list[str]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for start in range(0, len(names), BATCH):
            batch = names[start : start + BATCH]
            for page in self._pages(
                region,
                "describe_auto_scaling_groups",
                "AutoScalingGroups",
                AutoScalingGroupNames=batch,
                MaxRecords=BATCH,
            ):
                out.extend(page)
        return out

    def _detail(
        self, region: str | None, names: list[str]
    ) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        policies: dict[str, list[str]] = defaultdict(list)
        scheduled: dict[str, list[str]] = defaultdict(list)
        scopes: list[dict[str, Any]] = (
            [{"AutoScalingGroupName": n} for n in names]
            if len(names) <= PER_GROUP_DETAIL_UP_TO
            else [{}]
        )
        for scope in scopes:
            for page in self._pages(region, "describe_policies", "ScalingPolicies", **scope):
                for p in page:
                    policies[p["AutoScalingGroupName"]].append(p["PolicyName"])
            for page in self._pages(
                region, "describe_scheduled_actions", "ScheduledUpdateGroupActions", **scope
            ):
                for a in page:
                    scheduled[a["AutoScalingGroupName"]].append(a["ScheduledActionName"])
        return policies, scheduled

    def _pages(
        self, region: str | None, operation: str, key: str, **params: Any
    ) -> Iterator[list[dict[str, Any]]]:
        token: str | None = None
        while True:
            args = dict(params, NextToken=token) if token else params
            response = self._call(region, operation, None, **args)
            yield list(response.get(key, []))
            token = response.get("NextToken")
            if not token:
                return

    # -- applying ----------------------------------------------------------------------------

    def apply(self, plan: Plan, current: GroupState) -> SetResult:
        """Carries out a plan made against ``current``: one write, or none when unchanged."""
        if plan.method == "unchanged":
            return SetResult.of(plan, current)
        ref = plan.ref
        self._call(
            ref.region or self.region,
            "set_desired_capacity",
            ref,
            AutoScalingGroupName=ref.name,
            DesiredCapacity=plan.desired,
            HonorCooldown=False,
        )
        return SetResult.of(plan, replace(current, desired=plan.desired, stable=False))

    # -- calling -----------------------------------------------------------------------------

    def _call(self, region: str | None, operation: str, ref: GroupRef | None, **params: Any) -> Any:
        try:
            client = self._client(region)
        except Exception as exc:  # a malformed region is refused when the client is made
            raise map_aws_error(exc, ref) from exc

        def attempt() -> Any:
            self.api_calls[operation] += 1
            try:
                return getattr(client, operation)(**params)
            except Exception as exc:
                raise map_aws_error(exc, ref) from exc

        return Retrier(self.retry).call(attempt)

    def _client(self, region: str | None) -> Any:
        return self._clients.get(region, lambda: self._make_client(region))

    def _make_client(self, region: str | None) -> Any:
        import boto3
        from botocore.config import Config

        timeouts = (
            {"connect_timeout": self.call_timeout, "read_timeout": self.call_timeout}
            if self.call_timeout is not None
            else {}
        )
        config = Config(
            retries={"mode": "standard", "max_attempts": self.botocore_max_attempts}, **timeouts
        )
        client = boto3.session.Session().client(
            "autoscaling", region_name=region, config=config, endpoint_url=self.endpoint_url
        )
        client.meta.events.register("before-send.auto-scaling", _tag_epoch)
        return client


def _tag_epoch(request: Any, **_: Any) -> None:
    """A resize made by the controller says its lease epoch in its User-Agent (unsigned)."""
    token = fencing.current()
    if token is not None:
        agent = request.headers.get("User-Agent", b"")
        agent = agent.decode() if isinstance(agent, bytes) else str(agent)
        request.headers["User-Agent"] = f"{agent} {fencing.user_agent_tag(token)}"


def map_aws_error(exc: Exception, ref: GroupRef | None) -> SupplyError:
    """botocore's exceptions, as the project's own; the caller chains the original."""
    from botocore.exceptions import (
        ClientError,
        ConnectionError,
        HTTPClientError,
        InvalidRegionError,
        NoCredentialsError,
        NoRegionError,
    )
    from botocore.parsers import ResponseParserError

    if isinstance(exc, SupplyError):
        return exc
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = str(error.get("Code", ""))
        message = str(error.get("Message", "")) or code
        status = int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) or 0)
        if code in TEMPORARY_CODES or status == 429 or status >= 500:
            return TemporarySupplyError(f"{code}: {message}", ref)
        if ref is not None and code == "ValidationError" and "not found" in message.lower():
            return GroupNotFound(ref)
        return PermanentSupplyError(f"{code}: {message}", ref)
    if isinstance(exc, (ConnectionError, HTTPClientError)):
        return TemporarySupplyError(f"cannot reach the Auto Scaling API: {exc}", ref)
    if isinstance(exc, NoCredentialsError):
        return MissingCredentials(
            "no AWS credentials found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or "
            "AWS_PROFILE; a test endpoint in AWS_ENDPOINT_URL takes any)",
            ref,
        )
    if isinstance(exc, NoRegionError):
        return PermanentSupplyError("no AWS region given (--region or AWS_DEFAULT_REGION)", ref)
    if isinstance(exc, InvalidRegionError):
        region = exc.kwargs.get("region_name", "")
        return PermanentSupplyError(f"field 'region': {region!r} is not an AWS region name", ref)
    if isinstance(exc, ResponseParserError):  # an HTML error page, not the API's XML
        line = http_status_line(str(exc))
        if line[:1] == "5":
            return TemporarySupplyError(f"the Auto Scaling API failed: HTTP {line}", ref)
        return PermanentSupplyError(f"the Auto Scaling endpoint answered HTTP {line}", ref)
    return PermanentSupplyError(f"{type(exc).__name__}: {exc}", ref)


def http_status_line(text: str) -> str:
    """The status line of an HTML error page quoted in ``text`` (``500 Internal Server Error``
    from its ``<title>``), never the page itself."""
    import html

    match = re.search(r"<title>\s*([^<]{1,200}?)\s*</title>", text, re.IGNORECASE)
    if match:
        return html.unescape(match.group(1))
    return "response that is not the API's XML"


def _by_region(refs: Sequence[GroupRef], default: str | None) -> dict[str | None, list[GroupRef]]:
    out: dict[str | None, list[GroupRef]] = defaultdict(list)
    for ref in refs:
        out[ref.region or default].append(ref)
    return out


def _state(
    ref: GroupRef,
    group: Mapping[str, Any],
    policies: tuple[str, ...] | None,
    scheduled: tuple[str, ...] | None,
) -> GroupState:
    instances = list(group.get("Instances", []))
    in_service = sum(1 for i in instances if i.get("LifecycleState") == "InService")
    pending = sum(1 for i in instances if i.get("LifecycleState") in PENDING_STATES)
    desired = int(group["DesiredCapacity"])
    protected = (
        all(i.get("ProtectedFromScaleIn", False) for i in instances)
        if instances
        else bool(group.get("NewInstancesProtectedFromScaleIn", False))
    )
    return GroupState(
        ref=ref,
        desired=desired,
        in_service=in_service,
        pending=pending,
        min=int(group["MinSize"]),
        max=int(group["MaxSize"]),
        autoscaler=False,
        policies=policies,
        scheduled_actions=scheduled,
        scale_in_protected=protected,
        stable=pending == 0 and in_service == desired,
    )
