"""The provider of ``Pool``: a declared supply of one resource (T6 on delete)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi.dynamic import CheckResult, CreateResult, DiffResult, UpdateResult

from arklow_pulumi.core.policy import policy_document
from arklow_pulumi.core.validating import pool_problems
from arklow_pulumi.providers.diffing import diff_inputs
from arklow_pulumi.providers.inputs import check_model, integral, parse_in_topology
from arklow_pulumi.providers.storing import (
    NamedObjectProvider,
    service,
    stored_name,
)
from arklow_pulumi.reading.spec import PoolSpec, policy_from_spec, pool_from_spec
from arklow_pulumi.topology_documents import POOL_FIELDS, picked, pool_document

INPUTS = ("arklow_name", "resource", "capacity", "headroom", "scale_policy")
STEPS = ("max_step_up", "max_step_down")
IDENTITY = ("arklow_name", "resource")


def _raw(props: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": props.get("arklow_name"),
        "resource": props.get("resource"),
        "capacity": props.get("capacity"),
        "headroom": props.get("headroom"),
        "scale_policy": _policy_raw(props.get("scale_policy")),
    }


def _policy_raw(value: Any) -> Any:
    """The engine sends numbers as floats; the step counts are checked as integers."""
    if not isinstance(value, Mapping):
        return value
    return {k: integral(v) if k in STEPS else v for k, v in value.items()}


def _normalized(spec: PoolSpec) -> dict[str, Any]:
    return {
        "arklow_name": spec.name,
        **picked(spec, POOL_FIELDS),
        "scale_policy": policy_document(policy_from_spec(spec.scale_policy)),
    }


def _pool(props: dict[str, Any]) -> Any:
    raw = {k: v for k, v in _raw(props).items() if v is not None}
    return pool_from_spec(PoolSpec.model_validate(raw))


class PoolProvider(NamedObjectProvider):
    """Members and scale targets are resources of their own (PoolMembership, ScaleTarget)."""

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        return check_model(
            lambda raw: parse_in_topology(PoolSpec, "pools", raw),
            _raw(news),
            news,
            lambda spec: pool_problems(pool_from_spec(spec)),
            _normalized,
        )

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        return diff_inputs(olds, news, INPUTS, IDENTITY)

    def create(self, props: dict[str, Any]) -> CreateResult:
        pool = _pool(props)
        return self.created(
            props,
            lambda store, claim: service.pool_view(
                service.create_pool(store, pool, claim), pool.name
            ),
        )

    def update(self, id_: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        pool = _pool(news)
        return self.updated(
            id_,
            news,
            lambda store, claim: service.pool_view(
                service.update_pool(store, pool, claim), pool.name
            ),
        )

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        service.delete_pool(self.stored_store(props), stored_name(props, id_), id_)

    def view(self, store: Any, name: str) -> Any:
        return service.get_pool(store, name)

    @staticmethod
    def document(view: service.PoolView) -> dict[str, Any]:
        return {
            "arklow_name": view.pool.name,
            **pool_document(view.pool),
            "standalone": view.standalone,
            "members": list(view.members),
            "scale_targets": [t.name for t in view.pool.scale_targets],
        }
