"""The provider of ``Pool``: a declared supply of one resource (T6 on delete)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi.dynamic import CheckResult, CreateResult, DiffResult, UpdateResult

from arklow_pulumi.core.fields import declared, table
from arklow_pulumi.core.policy import ScalePolicy
from arklow_pulumi.core.topology import Pool
from arklow_pulumi.core.validating import pool_problems
from arklow_pulumi.providers.diffing import diff_inputs
from arklow_pulumi.providers.inputs import check_model, integral, parse_in_topology
from arklow_pulumi.providers.storing import (
    NamedObjectProvider,
    service,
    stored_name,
)
from arklow_pulumi.reading.spec import PoolSpec, pool_from_spec
from arklow_pulumi.topology_documents import pool_document, value_from_document

# The resource's inputs: its Arklow name and the fields a pool declares (core.fields).
FIELDS = tuple(f.name for f in declared(Pool))
INPUTS = ("arklow_name", *FIELDS)
IDENTITY = ("arklow_name", "resource")
_COUNTS = {f.name for f in table(ScalePolicy) if f.form == "count"}


def _raw(props: dict[str, Any]) -> dict[str, Any]:
    """The inputs as a pool of a topology file (the engine sends the step counts as floats)."""
    raw = {"name": props.get("arklow_name"), **{name: props.get(name) for name in FIELDS}}
    policy = raw.get("scale_policy")
    if isinstance(policy, Mapping):
        raw["scale_policy"] = {k: integral(v) if k in _COUNTS else v for k, v in policy.items()}
    return raw


def _normalized(spec: PoolSpec) -> dict[str, Any]:
    return {"arklow_name": spec.name, **pool_document(pool_from_spec(spec))}


def _pool(checked: dict[str, Any]) -> Pool:
    """The pool that inputs returned by :meth:`PoolProvider.check` describe: checked there (the
    engine hands ``create``/``update`` exactly those), so this only converts; the store's rule
    checks the pool once more in its own transaction, against the topology it joins."""
    return value_from_document(Pool, {**checked, "name": checked["arklow_name"]})


class PoolProvider(NamedObjectProvider):
    """Members and scale targets are resources of their own (PoolMembership, ScaleTarget)."""

    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        return check_model(
            lambda raw: parse_in_topology(PoolSpec, "pools", raw),
            _raw(news),
            news,
            lambda spec: pool_problems(pool_from_spec(spec), fields_checked=True),
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
