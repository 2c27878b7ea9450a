"""The in-memory world of the Compute API test server: MIGs, autoscalers and operations.

Time drives everything, read lazily (no background threads): an operation is PENDING for
``op_delay`` seconds, RUNNING for as long again, then DONE. A resize changes ``targetSize`` at
once (as the real API does) and the group's instances follow after ``settle_delay``: until then
``currentActions`` shows them creating or deleting and ``status.isStable`` is false. Rendering
follows the REST shapes of Compute Engine v1 (camelCase, int64 as strings, full resource URLs).

An autoscaler (mode ON) acts as Compute Engine's does within [minNumReplicas, maxNumReplicas]: its
recommendation is what its signal asks for (``signal``: idle VMs ask for none; the admin API sets
it) inside those bounds; it scales out to it at once, and scales in only as far as the highest
recommendation of the last 10 minutes (its stabilization period), so a lowered minimum empties
VMs 10 minutes later. A group it was attached to counts as a recommendation of its size then.
``ONLY_SCALE_OUT`` never scales in; ``OFF`` does nothing. Read lazily like the rest:
:meth:`World.autoscale` brings every group to where its autoscaler has put it by now (the server
calls it before each request).

The world's time is wall time plus what :meth:`World.skip` added: a simulated day moves the
server's clock with its own, so stabilization periods and settling pass between its ticks.

Scripted operation faults: an operation started with ``fail`` ends DONE with that error
(``error.errors``, ``httpErrorStatusCode``, ``httpErrorMessage``) and its change is not applied;
one started ``stuck`` never leaves RUNNING.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arklow_pulumi.devservers.compute_values import BASE, ApiError, new_id, rfc3339, scope_link

# How far back scale-in looks: Compute Engine's autoscaler keeps the highest recommendation of the
# last 10 minutes (its stabilization period).
STABILIZATION_S = 600.0


@dataclass
class Autoscaler:
    project: str
    scope: str
    name: str
    target: str
    min: int
    max: int
    mode: str = "ON"
    signal: int = 0  # the size its signal (CPU, load balancing, ...) asks for: idle VMs, none
    id: int = field(default_factory=lambda: new_id())
    created: float = field(default_factory=time.time)
    # (since, recommendation) at each change, from the one in force STABILIZATION_S ago
    history: list[tuple[float, int]] = field(default_factory=list)

    @property
    def link(self) -> str:
        return f"{scope_link(self.project, self.scope)}/autoscalers/{self.name}"

    @property
    def active(self) -> bool:
        return self.mode != "OFF"

    def clamp(self, size: int) -> int:
        return max(self.min, min(self.max, size)) if self.active else size

    def recommendation(self) -> int:
        return max(self.min, min(self.max, self.signal))

    def note(self, now: float, size: int | None = None) -> None:
        """Record the recommendation in force from ``now`` (after a change of bounds, mode or
        signal), or ``size`` (the group's size when the autoscaler is attached)."""
        value = self.recommendation() if size is None else size
        if not self.history or self.history[-1][1] != value:
            self.history.append((now, value))
        start = now - STABILIZATION_S
        while len(self.history) > 1 and self.history[1][0] <= start:
            del self.history[0]

    def stabilized(self, now: float) -> int:
        """The highest recommendation in force at any time in the last STABILIZATION_S."""
        start = now - STABILIZATION_S
        ends = [since for since, _ in self.history[1:]] + [math.inf]
        return max(r for (_, r), end in zip(self.history, ends, strict=True) if end > start)

    def size(self, now: float, current: int) -> int:
        """Where it puts a group of ``current`` now: up to its recommendation at once, down only
        as far as the highest recommendation of the stabilization period, never above max."""
        if not self.active:
            return current
        wanted = self.recommendation()
        if current <= wanted:
            return wanted
        if self.mode == "ONLY_SCALE_OUT":
            return min(current, self.max)
        return min(current, self.max, self.stabilized(now))

    def render(self, mig: Mig | None) -> dict[str, Any]:
        kind = self.scope.split("/")[0]
        out: dict[str, Any] = {
            "kind": "compute#autoscaler",
            "id": str(self.id),
            "creationTimestamp": rfc3339(self.created),
            "name": self.name,
            "target": mig.link if mig else self.target,
            "autoscalingPolicy": {
                "minNumReplicas": self.min,
                "maxNumReplicas": self.max,
                "coolDownPeriodSec": 60,
                "cpuUtilization": {"utilizationTarget": 0.6, "predictiveMethod": "NONE"},
                "mode": self.mode,
            },
            kind[:-1]: scope_link(self.project, self.scope),
            "selfLink": self.link,
            "status": "ACTIVE",
        }
        if mig is not None:
            out["recommendedSize"] = mig.target_size
        return out


@dataclass
class Mig:
    project: str
    scope: str
    name: str
    target_size: int
    previous_size: int
    changed_at: float
    autoscaler: str | None = None
    id: int = field(default_factory=lambda: new_id())
    created: float = field(default_factory=time.time)

    @property
    def link(self) -> str:
        return f"{scope_link(self.project, self.scope)}/instanceGroupManagers/{self.name}"

    def resize(self, size: int, now: float, settle_delay: float) -> None:
        self.previous_size = self.actual(now, settle_delay)
        self.target_size = size
        self.changed_at = now

    def actual(self, now: float, settle_delay: float) -> int:
        settled = now - self.changed_at >= settle_delay
        return self.target_size if settled else self.previous_size

    def render(
        self, now: float, settle_delay: float, autoscaler: Autoscaler | None
    ) -> dict[str, Any]:
        settled = now - self.changed_at >= settle_delay
        prev = self.target_size if settled else self.previous_size
        kind = self.scope.split("/")[0]
        actions = dict.fromkeys(_ACTIONS, 0)
        actions["none"] = min(prev, self.target_size)
        actions["creating"] = max(0, self.target_size - prev)
        actions["deleting"] = max(0, prev - self.target_size)
        status: dict[str, Any] = {
            "isStable": settled,
            "versionTarget": {"isReached": True},
            "stateful": {"hasStatefulConfig": False, "perInstanceConfigs": {"allEffective": True}},
            "allInstancesConfig": {"effective": True},
        }
        if autoscaler is not None:
            status["autoscaler"] = autoscaler.link
        group = f"{scope_link(self.project, self.scope)}/instanceGroups/{self.name}"
        template = f"{BASE}/projects/{self.project}/global/instanceTemplates/{self.name}-template"
        return {
            "kind": "compute#instanceGroupManager",
            "id": str(self.id),
            "creationTimestamp": rfc3339(self.created),
            "name": self.name,
            kind[:-1]: scope_link(self.project, self.scope),
            "instanceTemplate": template,
            "versions": [
                {"instanceTemplate": template, "targetSize": {"calculated": self.target_size}}
            ],
            "instanceGroup": group,
            "baseInstanceName": self.name,
            "fingerprint": f"{self.id:x}{int(self.changed_at * 1000):x}"[-16:],
            "currentActions": actions,
            "status": status,
            "targetSize": self.target_size,
            "selfLink": self.link,
            "updatePolicy": {
                "type": "OPPORTUNISTIC",
                "instanceRedistributionType": "PROACTIVE" if kind == "regions" else "NONE",
            },
            "listManagedInstancesResults": "PAGELESS",
        }


_ACTIONS = (
    "abandoning",
    "creating",
    "creatingWithoutRetries",
    "deleting",
    "none",
    "recreating",
    "refreshing",
    "restarting",
    "resuming",
    "starting",
    "stopping",
    "suspending",
    "verifying",
)


@dataclass
class Operation:
    project: str
    scope: str
    name: str
    op_type: str
    target_link: str
    target_id: int
    created: float
    delay: float
    id: int = field(default_factory=lambda: new_id())
    error: dict[str, Any] | None = None
    stuck: bool = False

    def status(self, now: float) -> str:
        age = now - self.created
        if age < self.delay:
            return "PENDING"
        return "RUNNING" if self.stuck or age < 2 * self.delay else "DONE"

    def done_at(self) -> float:
        return self.created + 2 * self.delay

    def render(self, now: float, not_done: bool = False) -> dict[str, Any]:
        """The operation as the API shows it; ``not_done`` shows a DONE one as RUNNING."""
        kind, _ = self.scope.split("/")
        status = self.status(now)
        if not_done and status == "DONE":
            status = "RUNNING"
        out: dict[str, Any] = {
            "kind": "compute#operation",
            "id": str(self.id),
            "name": self.name,
            kind[:-1]: scope_link(self.project, self.scope),
            "operationType": self.op_type,
            "targetLink": self.target_link,
            "targetId": str(self.target_id),
            "status": status,
            "user": "arklow-dev@example.com",
            "progress": {"PENDING": 0, "RUNNING": 50, "DONE": 100}[status],
            "insertTime": rfc3339(self.created),
            "selfLink": f"{scope_link(self.project, self.scope)}/operations/{self.name}",
        }
        if status != "PENDING":
            out["startTime"] = rfc3339(self.created + self.delay)
        if status == "DONE":
            out["endTime"] = rfc3339(self.done_at())
            if self.error is not None:
                code = int(self.error.get("http_status", 400))
                out["error"] = {
                    "errors": [
                        {
                            "code": str(self.error.get("code", "INVALID_ARGUMENT")),
                            "message": str(self.error.get("message", "The operation failed.")),
                        }
                    ]
                }
                out["httpErrorStatusCode"] = code
                out["httpErrorMessage"] = str(
                    self.error.get("http_message", ApiError.STATUS.get(code, ("UNKNOWN",))[0])
                )
        return out


@dataclass
class World:
    """All state, guarded by the server's lock. ``clock`` is wall time; :meth:`now` (what
    operations, settling and autoscalers go by) is it plus what :meth:`skip` added."""

    op_delay: float = 0.05
    settle_delay: float = 0.2
    clock: Callable[[], float] = time.time
    skipped: float = 0.0
    migs: dict[tuple[str, str, str], Mig] = field(default_factory=dict)
    autoscalers: dict[tuple[str, str, str], Autoscaler] = field(default_factory=dict)
    operations: dict[tuple[str, str, str], Operation] = field(default_factory=dict)
    by_request_id: dict[tuple[str, str], Operation] = field(default_factory=dict)
    resizes: list[dict[str, Any]] = field(default_factory=list)

    def now(self) -> float:
        return self.clock() + self.skipped

    def skip(self, seconds: float) -> None:
        """Move the world's time forward (a simulated day's tick); never back."""
        if not seconds >= 0 or math.isinf(seconds):
            raise ApiError(400, f"Invalid value for field 'seconds': {seconds!r}.")
        self.skipped += seconds

    def autoscale(self) -> None:
        """Every autoscaled group where its autoscaler has put it by now."""
        now = self.now()
        for mig in self.migs.values():
            scaler = self.autoscaler_of(mig)
            if scaler is None:
                continue
            size = scaler.size(now, mig.target_size)
            if size != mig.target_size:
                mig.resize(size, now, self.settle_delay)

    def mig(self, project: str, scope: str, name: str) -> Mig:
        mig = self.migs.get((project, scope, name))
        if mig is None:
            raise ApiError(
                404,
                f"The resource 'projects/{project}/{scope}/instanceGroupManagers/{name}' "
                "was not found",
            )
        return mig

    def autoscaler_of(self, mig: Mig) -> Autoscaler | None:
        if mig.autoscaler is None:
            return None
        return self.autoscalers.get((mig.project, mig.scope, mig.autoscaler))

    def add_group(
        self, project: str, scope: str, name: str, size: int, autoscaler: dict[str, Any] | None
    ) -> Mig:
        now = self.now()
        mig = Mig(project, scope, name, size, size, now - self.settle_delay)
        self.migs[(project, scope, name)] = mig
        if autoscaler is not None:
            a_name = str(autoscaler.get("name") or f"{name}-autoscaler")
            scaler = Autoscaler(
                project,
                scope,
                a_name,
                mig.link,
                int(autoscaler.get("min", 1)),
                int(autoscaler.get("max", max(size, 1))),
                str(autoscaler.get("mode", "ON")),
            )
            self.autoscalers[(project, scope, a_name)] = scaler
            mig.autoscaler = a_name
            mig.target_size = mig.previous_size = scaler.clamp(size)
            scaler.note(now, mig.target_size)
            scaler.note(now)
        return mig

    def set_signal(self, project: str, scope: str, name: str, size: int) -> Autoscaler:
        """What autoscaler ``name``'s signal asks for from now on (admin; not a Compute call)."""
        scaler = self.autoscalers.get((project, scope, name))
        if scaler is None:
            raise ApiError(
                404, f"The resource 'projects/{project}/{scope}/autoscalers/{name}' was not found"
            )
        if size < 0:
            raise ApiError(400, f"Invalid value for field 'size': '{size}'.")
        scaler.signal = size
        scaler.note(self.now())
        self.autoscale()
        return scaler

    def operation(self, project: str, scope: str, name: str) -> Operation:
        op = self.operations.get((project, scope, name))
        if op is None:
            raise ApiError(
                404, f"The resource 'projects/{project}/{scope}/operations/{name}' was not found"
            )
        return op

    def start_operation(
        self,
        project: str,
        scope: str,
        op_type: str,
        target_link: str,
        target_id: int,
        request_id: str | None,
        apply: Callable[[], None],
        fail: dict[str, Any] | None = None,
        stuck: bool = False,
    ) -> tuple[Operation, bool]:
        """The operation for ``request_id`` (the earlier one if it was seen: nothing applied).

        With ``fail`` the operation ends DONE with that error and nothing is applied; ``stuck``
        keeps it RUNNING for ever.
        """
        if request_id and (project, request_id) in self.by_request_id:
            return self.by_request_id[(project, request_id)], False
        if fail is None:
            apply()
        now = self.now()
        op = Operation(
            project,
            scope,
            f"operation-{int(now * 1000)}-{new_id():x}",
            op_type,
            target_link,
            target_id,
            now,
            self.op_delay,
            error=fail,
            stuck=stuck,
        )
        self.operations[(project, scope, op.name)] = op
        if request_id:
            self.by_request_id[(project, request_id)] = op
        return op, True

    def resize(
        self,
        project: str,
        scope: str,
        name: str,
        size: int,
        request_id: str | None,
        fail: dict[str, Any] | None = None,
        stuck: bool = False,
    ) -> Operation:
        mig = self.mig(project, scope, name)
        if size < 0:
            raise ApiError(
                400,
                f"Invalid value for field 'size': '{size}'. Must be greater than or equal to 0.",
            )
        scaler = self.autoscaler_of(mig)
        if scaler is not None and scaler.active and scope.startswith("regions/"):
            raise ApiError(
                412, "Resizing of autoscaled regional managed instance groups is not allowed."
            )

        def apply() -> None:
            effective = scaler.clamp(size) if scaler is not None else size
            mig.resize(effective, self.now(), self.settle_delay)
            self.resizes.append(
                {"group": f"{project}/{scope}/{name}", "size": size, "requestId": request_id}
            )

        op, _ = self.start_operation(
            project,
            scope,
            "compute.instanceGroupManagers.resize",
            mig.link,
            mig.id,
            request_id,
            apply,
            fail,
            stuck,
        )
        return op

    def patch_autoscaler(
        self,
        project: str,
        scope: str,
        name: str,
        body: dict[str, Any],
        request_id: str | None,
        fail: dict[str, Any] | None = None,
        stuck: bool = False,
    ) -> Operation:
        scaler = self.autoscalers.get((project, scope, name))
        if scaler is None:
            raise ApiError(
                404, f"The resource 'projects/{project}/{scope}/autoscalers/{name}' was not found"
            )
        policy = body.get("autoscalingPolicy") or {}
        low = int(policy.get("minNumReplicas", scaler.min))
        high = int(policy.get("maxNumReplicas", scaler.max))
        if low < 0 or high < 1 or low > high or high > 1000:
            raise ApiError(
                400, f"Invalid value for field 'resource.autoscalingPolicy': min {low}, max {high}."
            )

        def apply() -> None:
            scaler.min, scaler.max = low, high
            scaler.mode = str(policy.get("mode", scaler.mode))
            scaler.note(self.now())
            self.autoscale()

        op, _ = self.start_operation(
            project,
            scope,
            "compute.autoscalers.patch",
            scaler.link,
            scaler.id,
            request_id,
            apply,
            fail,
            stuck,
        )
        return op
