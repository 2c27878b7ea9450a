"""The provider of ``ScaleTarget``: binds a pool to an ASG or MIG that changes its supply.

Create, update and read check the group against the cloud with
:func:`arklow_pulumi.supply.verifying.verify_target` (the group exists; ``[min_replicas,
max_replicas]`` fits inside the group's own bounds). The supply binding is built inside the call
from plain provider config (``arklow:awsEndpoint``, ``arklow:gcpComputeEndpoint``...) or the
environment (``AWS_ENDPOINT_URL``); no client is kept on the instance.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from pulumi.dynamic import CheckResult, CreateResult, DiffResult, ReadResult, UpdateResult

from arklow_pulumi.core.building import target_from_spec
from arklow_pulumi.core.errors import InvalidInput, Problem
from arklow_pulumi.core.spec import ScaleTargetSpec
from arklow_pulumi.core.topology import ScaleTarget
from arklow_pulumi.core.validating import target_problems, target_reference_problems
from arklow_pulumi.providers.diffing import diff_inputs
from arklow_pulumi.providers.inputs import check_model, integral, is_unknown, parse_in_topology
from arklow_pulumi.providers.storing import StoreProvider, gone, service, with_store
from arklow_pulumi.supply.contract import Supply
from arklow_pulumi.supply.selecting import EndpointConfig, supply_for
from arklow_pulumi.supply.verifying import verify_target

INPUTS = (
    "arklow_name",
    "pool",
    "group",
    "min_replicas",
    "max_replicas",
    "units_per_replica",
    "override_policies",
)
IDENTITY = ("arklow_name", "pool", "group")
GROUP_FIELDS = ("kind", "name", "region", "zone", "project")


def _raw(props: dict[str, Any]) -> dict[str, Any]:
    group = props.get("group")
    if is_unknown(group) and not isinstance(group, dict):
        group = dict.fromkeys(GROUP_FIELDS, group)
    group = group if isinstance(group, dict) else {}
    return {
        "kind": group.get("kind"),
        "name": props.get("arklow_name"),
        "group": group.get("name"),
        "region": group.get("region"),
        "zone": group.get("zone"),
        "project": group.get("project"),
        "min_replicas": integral(props.get("min_replicas")),
        "max_replicas": integral(props.get("max_replicas")),
        "units_per_replica": props.get("units_per_replica"),
        "override_policies": props.get("override_policies"),
    }


def _problems(pool: Any, spec: ScaleTargetSpec) -> list[Problem]:
    target = target_from_spec(spec)
    obj = f"pool {pool!r}, scale target {spec.name!r}"
    found = [] if isinstance(pool, str) and pool else [Problem(obj, "pool", "is required")]
    return [
        *found,
        *target_problems(str(pool), target),
        *target_reference_problems(str(pool), target),
    ]


def _normalized(spec: ScaleTargetSpec) -> dict[str, Any]:
    return {
        "arklow_name": spec.name,
        "group": {
            "kind": spec.kind,
            "name": spec.group or spec.name,
            "region": spec.region,
            "zone": spec.zone,
            "project": spec.project,
        },
        "min_replicas": spec.min_replicas,
        "max_replicas": spec.max_replicas,
        "units_per_replica": spec.units_per_replica,
        "override_policies": spec.override_policies,
    }


# One binding per (kind, endpoints) per provider process, reused across calls: building a boto3
# client costs ~100 ms. Module-level, never on the provider instance, which Pulumi pickles.
_SUPPLIES: dict[tuple[str, EndpointConfig], Supply] = {}
_SUPPLIES_LOCK = threading.Lock()


def _supply(kind: str, config: EndpointConfig) -> Supply:
    with _SUPPLIES_LOCK:
        supply = _SUPPLIES.get((kind, config))
        if supply is None:
            supply = _SUPPLIES[(kind, config)] = supply_for(kind, config)
        return supply


def _target(props: dict[str, Any]) -> ScaleTarget:
    raw = {k: v for k, v in _raw(props).items() if v is not None}
    return target_from_spec(ScaleTargetSpec.model_validate(raw))


class ScaleTargetProvider(StoreProvider):
    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        pool = news.get("pool")
        parent = {"name": pool if isinstance(pool, str) and pool else "?", "resource": "?"}
        result = check_model(
            lambda raw: parse_in_topology(ScaleTargetSpec, "scale_targets", raw, parent),
            _raw(news),
            news,
            lambda spec: _problems(pool, spec),
            _normalized,
        )
        for failure in result.failures:
            if failure.property in GROUP_FIELDS:
                failure.property = "group"
        return result

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        return diff_inputs(olds, news, INPUTS, IDENTITY)

    def create(self, props: dict[str, Any]) -> CreateResult:
        target, pool = _target(props), str(props["pool"])
        self.verify(target)
        store = self.store(props)
        service.attach_target(store, pool, target)
        return CreateResult(target.name, self._outs(store, target.name, props))

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        target, pool = _target(news), str(news["pool"])
        self.verify(target)
        store = self.store(news)
        current = service.get_target(store, target.name)
        if current is not None:  # keep the observed count, inside the new bounds
            replicas = min(max(current.target.replicas, target.min_replicas), target.max_replicas)
            target = replace(target, replicas=replicas)
        service.update_target(store, pool, target)
        return UpdateResult(self._outs(store, target.name, news))

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        name = props.get("arklow_name") or id_
        service.detach_target(self.store(props), str(props["pool"]), name)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        name = props.get("arklow_name") or id_
        store = self.store(props)
        view = service.get_target(store, name)
        if view is None:
            return gone(id_)
        self.verify(view.target)
        return ReadResult(id_, self._outs(store, name, props))

    def verify(self, target: ScaleTarget) -> None:
        """The group exists and the target's bounds fit inside the group's own."""
        supply = _supply(target.kind, EndpointConfig.from_provider_config(self.config))
        problems = verify_target(target, supply)
        if problems:
            raise InvalidInput(problems)

    def _outs(self, store: Any, name: str, props: dict[str, Any]) -> dict[str, Any]:
        view = service.get_target(store, name)
        if view is None:
            return {}
        target = view.target
        outs = {
            "arklow_name": target.name,
            "pool": view.pool,
            "group": {
                "kind": target.kind,
                "name": target.group.name,
                "region": target.group.region,
                "zone": target.group.zone,
                "project": target.group.project,
            },
            "min_replicas": target.min_replicas,
            "max_replicas": target.max_replicas,
            "units_per_replica": target.units_per_replica,
            "override_policies": target.override_policies,
            "replicas": target.replicas,
        }
        return with_store(outs, props)
