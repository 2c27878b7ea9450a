"""GCP managed instance groups through google-cloud-compute (REST), zonal and regional.

Reading: a few groups are read with ``get`` (plus their autoscaler); many with one aggregated
listing of instance group managers and one of autoscalers per project (paged), never one ``get``
per group. Writing: every mutation carries a ``request_id`` generated once per change and reused
on each retry, so a retry after a lost response returns the first operation instead of resizing
again. The ``*_unary`` methods return an Operation which is polled with the zone or region
operations client built with the same endpoint (``ExtendedOperation.result()`` would poll the
public API). An autoscaled MIG is changed by moving the autoscaler's window, not by resizing
(a regional resize would be refused with 412, a zonal one overridden).
"""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.supply.clients import ClientCache
from arklow_pulumi.supply.errors import GroupNotFound, PermanentSupplyError, SupplyError
from arklow_pulumi.supply.gcp_errors import map_gcp_error
from arklow_pulumi.supply.groups import GroupState, Plan, ReplicaLimits, SetResult
from arklow_pulumi.supply.planning import plan_change
from arklow_pulumi.supply.retrying import Retrier, RetryPolicy

FEW = 3
PAGE = 500
CALL_TIMEOUT = 60.0
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
CLIENTS = {
    "migs": "InstanceGroupManagersClient",
    "region_migs": "RegionInstanceGroupManagersClient",
    "autoscalers": "AutoscalersClient",
    "region_autoscalers": "RegionAutoscalersClient",
    "zone_ops": "ZoneOperationsClient",
    "region_ops": "RegionOperationsClient",
}


class GcpMigSupply:
    """Supply backed by Compute Engine MIGs. Holds configuration only."""

    def __init__(
        self,
        endpoint: str | None = None,
        retry: RetryPolicy | None = None,
        project: str | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.retry = retry or RetryPolicy()
        self.project = project
        self.api_calls: Counter[str] = Counter()
        self._clients = ClientCache()

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
        from google.cloud import compute_v1

        out: dict[GroupRef, GroupState] = {}
        for ref in refs:
            try:
                if ref.zone:
                    mig = self._call(
                        "migs",
                        "get",
                        ref,
                        compute_v1.GetInstanceGroupManagerRequest(
                            project=project, zone=ref.zone, instance_group_manager=ref.name
                        ),
                    )
                else:
                    mig = self._call(
                        "region_migs",
                        "get",
                        ref,
                        compute_v1.GetRegionInstanceGroupManagerRequest(
                            project=project, region=ref.region, instance_group_manager=ref.name
                        ),
                    )
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
        from google.cloud import compute_v1

        scope, where, name = _parse_link(link)
        try:
            if scope == "zones":
                return self._call(
                    "autoscalers",
                    "get",
                    ref,
                    compute_v1.GetAutoscalerRequest(project=project, zone=where, autoscaler=name),
                )
            return self._call(
                "region_autoscalers",
                "get",
                ref,
                compute_v1.GetRegionAutoscalerRequest(
                    project=project, region=where, autoscaler=name
                ),
            )
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
        scalers: dict[str, Any] = {}
        if any(m.status.autoscaler for m in migs.values()):
            for _scope, scoped in self._aggregated(
                "autoscalers", compute_v1.AggregatedListAutoscalersRequest, project
            ):
                for scaler in scoped.autoscalers:
                    scalers[scaler.self_link] = scaler
        return {
            wanted[key]: _state(wanted[key], mig, scalers.get(mig.status.autoscaler))
            for key, mig in migs.items()
        }

    def _aggregated(
        self, client: str, request_type: Callable[..., Any], project: str
    ) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        token = ""
        while True:
            request = request_type(project=project, max_results=PAGE, page_token=token)
            pager = self._call(client, "aggregated_list", None, request)
            out.extend(pager.items.items())
            token = pager.next_page_token
            if not token:
                return out

    # -- setting -----------------------------------------------------------------------------

    def set_desired(
        self,
        ref: GroupRef,
        replicas: int,
        *,
        limits: ReplicaLimits | None = None,
        override_policies: bool = False,
        current: GroupState | None = None,
    ) -> SetResult:
        if current is None:
            current = self.describe([ref]).get(ref)
            if current is None:
                raise GroupNotFound(ref)
        plan = plan_change(current, replicas, limits, override_policies)
        if plan.method == "unchanged":
            return SetResult.of(plan, current)
        request_id = str(uuid.uuid4())
        if plan.method == "autoscaler_window":
            self._move_window(current, plan, request_id)
            assert plan.window is not None
            after = replace(current, min=plan.window[0], max=plan.window[1], stable=False)
        else:
            self._resize(ref, replicas, request_id)
            after = replace(current, desired=replicas, stable=False)
        return SetResult.of(plan, after, request_id)

    def _resize(self, ref: GroupRef, replicas: int, request_id: str) -> None:
        from google.cloud import compute_v1

        project = self._project(ref)
        if ref.zone:
            request: Any = compute_v1.ResizeInstanceGroupManagerRequest(
                project=project,
                zone=ref.zone,
                instance_group_manager=ref.name,
                size=replicas,
                request_id=request_id,
            )
            op = self._call("migs", "resize_unary", ref, request)
        else:
            request = compute_v1.ResizeRegionInstanceGroupManagerRequest(
                project=project,
                region=ref.region,
                instance_group_manager=ref.name,
                size=replicas,
                request_id=request_id,
            )
            op = self._call("region_migs", "resize_unary", ref, request)
        self._wait(ref, project, op)

    def _move_window(self, state: GroupState, plan: Plan, request_id: str) -> None:
        from google.cloud import compute_v1

        ref, (low, high) = state.ref, plan.window or (0, 0)
        if not state.autoscaler_link:
            raise PermanentSupplyError("autoscaler link missing from the group's status", ref)
        scope, where, name = _parse_link(state.autoscaler_link)
        project = self._project(ref)
        policy = compute_v1.AutoscalingPolicy(min_num_replicas=low, max_num_replicas=high)
        resource = compute_v1.Autoscaler(name=name, autoscaling_policy=policy)
        if scope == "zones":
            request: Any = compute_v1.PatchAutoscalerRequest(
                project=project,
                zone=where,
                autoscaler=name,
                autoscaler_resource=resource,
                request_id=request_id,
            )
            op = self._call("autoscalers", "patch_unary", ref, request)
        else:
            request = compute_v1.PatchRegionAutoscalerRequest(
                project=project,
                region=where,
                autoscaler=name,
                autoscaler_resource=resource,
                request_id=request_id,
            )
            op = self._call("region_autoscalers", "patch_unary", ref, request)
        self._wait(ref, project, op)

    def _wait(self, ref: GroupRef, project: str, op: Any) -> None:
        """Polls the operation until DONE; raises its error, if it has one."""
        from google.cloud import compute_v1

        done = compute_v1.Operation.Status.DONE
        while op.status != done:
            if op.zone:
                request: Any = compute_v1.WaitZoneOperationRequest(
                    project=project, zone=op.zone.rsplit("/", 1)[-1], operation=op.name
                )
                op = self._call("zone_ops", "wait", ref, request)
            else:
                request = compute_v1.WaitRegionOperationRequest(
                    project=project, region=op.region.rsplit("/", 1)[-1], operation=op.name
                )
                op = self._call("region_ops", "wait", ref, request)
        if op.error and op.error.errors:
            detail = "; ".join(f"{e.code}: {e.message}" for e in op.error.errors)
            raise PermanentSupplyError(f"operation {op.name} failed: {detail}", ref)

    # -- calling -----------------------------------------------------------------------------

    def _project(self, ref: GroupRef) -> str:
        project = ref.project or self.project
        if not project:
            raise PermanentSupplyError("a GCP project is required (--project)", ref)
        return project

    def _call(self, client_name: str, method: str, ref: GroupRef | None, request: Any) -> Any:
        client = self._client(client_name)
        label = f"{client_name}.{method}"

        def attempt() -> Any:
            self.api_calls[label] += 1
            try:
                return getattr(client, method)(request=request, retry=None, timeout=CALL_TIMEOUT)
            except SupplyError:
                raise
            except Exception as exc:
                raise map_gcp_error(exc, ref) from exc

        return Retrier(self.retry).call(attempt)

    def _client(self, name: str) -> Any:
        return self._clients.get(name, lambda: self._make_client(name))

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


def _parse_link(link: str) -> tuple[str, str, str]:
    """``.../projects/p/zones/z/autoscalers/name`` → ("zones", "z", "name")."""
    parts = link.rstrip("/").split("/")
    return parts[-4], parts[-3], parts[-1]


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
