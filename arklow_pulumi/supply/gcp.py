"""GCP managed instance groups through google-cloud-compute (REST), zonal and regional.

Reading: a few groups are read with ``get`` (plus their autoscaler); many with one aggregated
listing of instance group managers and one of autoscalers per project (paged), never one ``get``
per group. Writing: every mutation carries a ``request_id`` generated once per change and reused
on each retry, so a retry after a lost response returns the first operation instead of resizing
again. The ``*_unary`` methods return an Operation which is polled with the zone or region
operations client built with the same endpoint (``ExtendedOperation.result()`` would poll the
public API). An autoscaled MIG is changed by moving the autoscaler's window min, not by
resizing (a regional resize would be refused with 412, a zonal one overridden); its
``maxNumReplicas`` is the group's own max and is never raised.

Polling: ``wait`` may answer before the operation is DONE (the API holds it up to about two
minutes, less when busy), so each ``wait`` call has its own ``wait_timeout`` (above that hold),
a not-DONE answer is followed by a jittered backoff sleep, and the whole poll is bounded by
``op_deadline``; past it the operation is reported as still running (a temporary error).
"""

from __future__ import annotations

import random
import re
import time
import uuid
import warnings
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.extras import require
from arklow_pulumi.supply import fencing
from arklow_pulumi.supply.clients import CloudBinding
from arklow_pulumi.supply.errors import (
    GroupNotFound,
    PermanentSupplyError,
    SupplyError,
    TemporarySupplyError,
)
from arklow_pulumi.supply.gcp_errors import is_read_timeout, map_gcp_error
from arklow_pulumi.supply.groups import GroupState, Plan, SetResult
from arklow_pulumi.supply.retrying import Retrier, RetryPolicy

# google-api-core warns when it is imported that Google will stop supporting this Python version:
# a notice for the package's maintainers, which would be a second line on a command's stderr.
warnings.filterwarnings("ignore", "You are using a Python version", FutureWarning)

FEW = 3
PAGE = 500
CALL_TIMEOUT = 60.0
# An operations ``wait`` call may be held by the API for about 120 s before it answers.
WAIT_TIMEOUT = 130.0
# How long one mutation's operation is polled, in all, before it is reported still running.
OP_DEADLINE = 300.0
ENDPOINT_FORM = re.compile(r"^https?://[^/\s]+")
PENDING_ACTIONS = (
    "creating",
    "creating_without_retries",
    "recreating",
    "refreshing",
    "restarting",
    "resuming",
    "starting",
    "verifying",
)
# The zonal and the regional client of each kind of resource (their keys in CLIENTS).
_SCOPED_CLIENTS = {
    "InstanceGroupManager": ("migs", "region_migs"),
    "Autoscaler": ("autoscalers", "region_autoscalers"),
    "Operation": ("zone_ops", "region_ops"),
}
CLIENTS = {
    "migs": "InstanceGroupManagersClient",
    "region_migs": "RegionInstanceGroupManagersClient",
    "autoscalers": "AutoscalersClient",
    "region_autoscalers": "RegionAutoscalersClient",
    "zone_ops": "ZoneOperationsClient",
    "region_ops": "RegionOperationsClient",
}


class GcpMigSupply(CloudBinding):
    """Supply backed by Compute Engine MIGs. Holds configuration only."""

    def __init__(
        self,
        endpoint: str | None = None,
        retry: RetryPolicy | None = None,
        project: str | None = None,
        *,
        op_deadline: float = OP_DEADLINE,
        wait_timeout: float = WAIT_TIMEOUT,
        call_timeout: float = CALL_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        require("gcp", "a gcp_mig scale target (GCP managed instance groups)")
        super().__init__(retry)
        self.endpoint = endpoint
        self.project = project
        self.op_deadline = op_deadline
        self.wait_timeout = wait_timeout
        self.call_timeout = call_timeout
        self.clock = clock
        self.sleep = sleep

    # -- describing --------------------------------------------------------------------------

    def describe(
        self, refs: Sequence[GroupRef], *, detail: bool = True
    ) -> Mapping[GroupRef, GroupState]:
        found: dict[GroupRef, GroupState] = {}
        by_project: dict[str, list[GroupRef]] = defaultdict(list)
        for ref in refs:
            by_project[self._project(ref)].append(ref)
        for project, group_refs in by_project.items():
            if len(group_refs) <= FEW:
                found.update(self._describe_each(project, group_refs))
            else:
                found.update(self._describe_aggregated(project, group_refs))
        return found

    def _describe_each(self, project: str, refs: list[GroupRef]) -> dict[GroupRef, GroupState]:
        out: dict[GroupRef, GroupState] = {}
        for ref in refs:
            try:
                client, request = _scoped(
                    "Get",
                    "InstanceGroupManager",
                    ref.zone,
                    ref.region,
                    project=project,
                    instance_group_manager=ref.name,
                )
                mig = self._call(client, "get", ref, request)
            except GroupNotFound:
                continue
            scaler = (
                self._autoscaler(ref, project, mig.status.autoscaler)
                if mig.status.autoscaler
                else None
            )
            out[ref] = _state(ref, mig, scaler)
        return out

    def _autoscaler(self, ref: GroupRef, project: str, link: str) -> Any:
        client, request = _autoscaler_call("Get", link, ref, project=project)
        try:
            return self._call(client, "get", ref, request)
        except GroupNotFound:
            return None

    def _describe_aggregated(
        self, project: str, refs: list[GroupRef]
    ) -> dict[GroupRef, GroupState]:
        from google.cloud import compute_v1

        wanted = {(_scope_of(r), r.name): r for r in refs}
        migs: dict[tuple[str, str], Any] = {}
        for scope, scoped in self._aggregated(
            "migs", compute_v1.AggregatedListInstanceGroupManagersRequest, project
        ):
            for mig in scoped.instance_group_managers:
                if (scope, mig.name) in wanted:
                    migs[(scope, mig.name)] = mig
        # Keyed by (scope, name) parsed from the links: the MIG's status.autoscaler and the
        # autoscaler's selfLink may differ in host, API version or a trailing slash.
        scalers: dict[tuple[str, str], Any] = {}
        if any(m.status.autoscaler for m in migs.values()):
            for _scope, scoped in self._aggregated(
                "autoscalers", compute_v1.AggregatedListAutoscalersRequest, project
            ):
                for scaler in scoped.autoscalers:
                    key = _link_key(scaler.self_link)
                    if key is not None:
                        scalers[key] = scaler
        out: dict[GroupRef, GroupState] = {}
        for key, mig in migs.items():
            link_key = _link_key(mig.status.autoscaler) if mig.status.autoscaler else None
            scaler = scalers.get(link_key) if link_key is not None else None
            out[wanted[key]] = _state(wanted[key], mig, scaler)
        return out

    def _aggregated(
        self, client: str, request_type: Callable[..., Any], project: str
    ) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        token = ""
        while True:
            request = request_type(project=project, max_results=PAGE)
            if token:  # the first page is asked for without any pageToken
                request.page_token = token
            pager = self._call(client, "aggregated_list", None, request)
            out.extend(pager.items.items())
            token = pager.next_page_token
            if not token:
                return out

    # -- applying ----------------------------------------------------------------------------

    def apply(self, plan: Plan, current: GroupState) -> SetResult:
        """Carries out a plan made against ``current``: one mutation (polled), or none."""
        if plan.method == "unchanged":
            return SetResult.of(plan, current)
        token = fencing.current()  # the controller's epoch and tick, when it is acting
        request_id = (
            str(uuid.uuid4())
            if token is None
            else fencing.request_id(token, str(plan.ref), plan.desired)
        )
        if plan.method == "autoscaler_window":
            assert plan.window is not None
            self._move_window(current, plan.window[0], request_id)
            after = replace(current, min=plan.window[0], max=plan.window[1], stable=False)
        else:
            self._resize(plan.ref, plan.desired, request_id)
            after = replace(current, desired=plan.desired, stable=False)
        return SetResult.of(plan, after, request_id)

    def _resize(self, ref: GroupRef, replicas: int, request_id: str) -> None:
        project = self._project(ref)
        client, request = _scoped(
            "Resize",
            "InstanceGroupManager",
            ref.zone,
            ref.region,
            project=project,
            instance_group_manager=ref.name,
            size=replicas,
            request_id=request_id,
        )
        self._wait(ref, project, self._call(client, "resize_unary", ref, request))

    def _move_window(self, state: GroupState, low: int, request_id: str) -> None:
        """Sets the autoscaler's minNumReplicas only: the PATCH is a JSON merge patch, so its
        maxNumReplicas (the group's own max) and mode stay as they are."""
        from google.cloud import compute_v1

        ref = state.ref
        if not state.autoscaler_link:
            raise PermanentSupplyError("autoscaler link missing from the group's status", ref)
        _scope, _where, name = _parse_link(state.autoscaler_link, ref)
        project = self._project(ref)
        policy = compute_v1.AutoscalingPolicy(min_num_replicas=low)
        resource = compute_v1.Autoscaler(name=name, autoscaling_policy=policy)
        client, request = _autoscaler_call(
            "Patch",
            state.autoscaler_link,
            ref,
            project=project,
            autoscaler_resource=resource,
            request_id=request_id,
        )
        self._wait(ref, project, self._call(client, "patch_unary", ref, request))

    def _wait(self, ref: GroupRef, project: str, op: Any) -> None:
        """Polls the operation until DONE, within ``op_deadline``; raises its error, if any.

        The operation's own zone or region is polled; one that names neither is looked for
        where the group lives, in the group's project. ``wait`` answering before DONE is
        followed by a jittered backoff sleep, never a tight loop.
        """
        from google.cloud import compute_v1

        done = compute_v1.Operation.Status.DONE
        name = str(op.name)
        client, request = self._wait_request(ref, project, op)
        rng = random.Random()
        start = self.clock()
        until = start + self.op_deadline
        polls = 0
        while op.status != done:
            spent = self.clock() - start
            if spent >= self.op_deadline:
                raise TemporarySupplyError(
                    f"operation {name} still {_status_name(op)} after {round(spent, 1):g}s", ref
                )
            try:
                op = self._call(
                    client, "wait", ref, request, timeout=self.wait_timeout, until=until
                )
            except GroupNotFound as exc:
                raise PermanentSupplyError(f"operation {name} not found", ref) from (
                    exc.__cause__ or exc
                )
            except TemporarySupplyError as exc:
                if not is_read_timeout(exc.__cause__):
                    raise
                # The wait was held past its timeout: the operation is still running.
            if op.status != done:
                left = until - self.clock()
                self.sleep(max(0.0, min(self.retry.delay(polls, rng, None), left)))
                polls += 1
        status = int(op.http_error_status_code or 0)
        errors = list(op.error.errors) if op.error else []
        if errors or status >= 400:
            http = " ".join(p for p in (str(status or ""), op.http_error_message or "") if p)
            http = f" (HTTP {http})" if status else ""
            detail = "; ".join(f"{e.code}: {e.message}" for e in errors) or "no error detail"
            raise PermanentSupplyError(f"operation {name} failed{http}: {detail}", ref)

    def _wait_request(self, ref: GroupRef, project: str, op: Any) -> tuple[str, Any]:
        zone = str(op.zone or "").rstrip("/").rsplit("/", 1)[-1]
        region = str(op.region or "").rstrip("/").rsplit("/", 1)[-1]
        if not zone and not region:  # fall back to where the group lives
            zone, region = ref.zone or "", ref.region or ""
        if zone or region:
            return _scoped("Wait", "Operation", zone, region, project=project, operation=op.name)
        raise PermanentSupplyError(f"operation {op.name} names no zone or region", ref)

    # -- calling -----------------------------------------------------------------------------

    def _project(self, ref: GroupRef) -> str:
        project = ref.project or self.project
        if not project:
            raise PermanentSupplyError(
                "project: a GCP project is required (the group's project, provider config "
                "arklow:gcpProject, GOOGLE_CLOUD_PROJECT or CLOUDSDK_CORE_PROJECT)",
                ref,
            )
        return project

    def _call(
        self,
        client_name: str,
        method: str,
        ref: GroupRef | None,
        request: Any,
        *,
        timeout: float = CALL_TIMEOUT,
        until: float | None = None,
    ) -> Any:
        """One API call, retried on temporary errors until the retry deadline. With ``until`` (a
        time on ``self.clock``) no attempt starts or lasts past it: each one's timeout is cut
        to the time left."""
        client = self._client(client_name, ref)
        label = f"{client_name}.{method}"

        def attempt() -> Any:
            self.api_calls[label] += 1
            limit = min(timeout, self.call_timeout)
            if until is not None:
                limit = min(limit, max(0.01, until - self.clock()))
            try:
                return getattr(client, method)(request=request, retry=None, timeout=limit)
            except SupplyError:
                raise
            except Exception as exc:
                raise map_gcp_error(exc, ref) from exc

        policy = self.retry
        if until is not None:
            policy = replace(policy, deadline=min(policy.deadline, until - self.clock()))
        return Retrier(policy, clock=self.clock, sleep=self.sleep).call(attempt)

    def _client(self, name: str, ref: GroupRef | None = None) -> Any:
        if self.endpoint and not ENDPOINT_FORM.match(self.endpoint):
            raise PermanentSupplyError(
                f"Compute API endpoint {self.endpoint!r} must start with http:// or https:// "
                "(e.g. http://127.0.0.1:8085)",
                ref,
            )
        try:
            return self._clients.get(name, lambda: self._make_client(name))
        except Exception as exc:  # made here, outside any mapped call: no credentials, mostly
            raise map_gcp_error(exc, ref) from exc

    def _make_client(self, name: str) -> Any:
        from google.cloud import compute_v1

        factory = getattr(compute_v1, CLIENTS[name])
        if not self.endpoint:
            return factory()
        from google.auth.credentials import AnonymousCredentials

        return factory(
            credentials=AnonymousCredentials(),  # type: ignore[no-untyped-call]
            client_options={"api_endpoint": self.endpoint},
        )


def _scope_of(ref: GroupRef) -> str:
    return f"zones/{ref.zone}" if ref.zone else f"regions/{ref.region}"


def _parse_link(link: str, ref: GroupRef | None = None) -> tuple[str, str, str]:
    """``.../projects/p/zones/z/autoscalers/name`` → ("zones", "z", "name"), whatever the host,
    API version or trailing slash."""
    parts = [p for p in link.strip().split("/") if p]
    if len(parts) < 4 or parts[-4] not in ("zones", "regions") or not parts[-1]:
        raise PermanentSupplyError(f"unexpected autoscaler link {link!r}", ref)
    return parts[-4], parts[-3], parts[-1]


def _link_key(link: str) -> tuple[str, str] | None:
    """(``zones/z`` or ``regions/r``, name) of a resource link; ``None`` if it is not one."""
    try:
        kind, where, name = _parse_link(link)
    except PermanentSupplyError:
        return None
    return f"{kind}/{where}", name


def _status_name(op: Any) -> str:
    return str(getattr(op.status, "name", op.status) or "UNKNOWN")


def _state(ref: GroupRef, mig: Any, scaler: Any) -> GroupState:
    actions = mig.current_actions
    active = scaler is not None and scaler.autoscaling_policy.mode != "OFF"
    policy = scaler.autoscaling_policy if active else None
    return GroupState(
        ref=ref,
        desired=int(mig.target_size),
        in_service=int(actions.none),
        pending=sum(int(getattr(actions, a, 0) or 0) for a in PENDING_ACTIONS),
        min=int(policy.min_num_replicas) if policy is not None else None,
        max=int(policy.max_num_replicas) if policy is not None else None,
        autoscaler=active,
        policies=(),
        scheduled_actions=(),
        scale_in_protected=False,
        stable=bool(mig.status.is_stable),
        autoscaler_link=scaler.self_link if active else None,
    )


def _scoped(
    verb: str, kind: str, zone: str | None, region: str | None, **fields: Any
) -> tuple[str, Any]:
    """The client (a key of CLIENTS) and the request of ``verb`` on a ``kind`` of resource in
    ``zone``, else in ``region``: the API's zonal request (``ResizeInstanceGroupManagerRequest``;
    ``WaitZoneOperationRequest`` for operations) or its regional twin (``Resize`` +
    ``Region`` + kind)."""
    from google.cloud import compute_v1

    zonal, regional = _SCOPED_CLIENTS[kind]
    if zone:
        name = f"{verb}Zone{kind}Request" if kind == "Operation" else f"{verb}{kind}Request"
        return zonal, getattr(compute_v1, name)(zone=zone, **fields)
    return regional, getattr(compute_v1, f"{verb}Region{kind}Request")(region=region, **fields)


def _autoscaler_call(verb: str, link: str, ref: GroupRef, **fields: Any) -> tuple[str, Any]:
    """The client and request of ``verb`` on the autoscaler at ``link`` (zonal or regional)."""
    scope, where, name = _parse_link(link, ref)
    zonal = scope == "zones"
    return _scoped(
        verb,
        "Autoscaler",
        where if zonal else None,
        None if zonal else where,
        autoscaler=name,
        **fields,
    )
