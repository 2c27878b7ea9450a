"""The provider of ``PoolMembership``: destination D draws its resource R from pool P.

Create joins (T2, T3, T7); delete leaves (T4: the destination gets a standalone pool back) and is
a no-op when the membership is already gone, which also makes create-before-delete replacement
safe: the new membership moves the destination, the old one's delete finds nothing to undo.

T3 is also checked at preview, without reading the store: when the program passes the
resources themselves, the resource adds two hidden inputs, ``destination_resources`` (what the
destination draws from) and ``pool_resource`` (the pool's resource; ``r`` for a pool named
``<d>/<r>``), and ``check`` compares them when both are known.
"""

from __future__ import annotations

from typing import Any

from pulumi.dynamic import (
    CheckFailure,
    CheckResult,
    CreateResult,
    DiffResult,
    ReadResult,
    UpdateResult,
)
from pydantic import BaseModel, ConfigDict

from arklow_pulumi.core.errors import Problem
from arklow_pulumi.providers.diffing import diff_inputs
from arklow_pulumi.providers.inputs import check_model, is_unknown, shown
from arklow_pulumi.providers.storing import (
    StoreProvider,
    claim_of,
    gone,
    is_own,
    service,
    with_store,
)
from arklow_pulumi.reading.parsing import parse_model
from arklow_pulumi.reading.spec import Name
from arklow_pulumi.store.identity import new_create_id

INPUTS = ("destination", "pool")
IDENTITY = ("destination", "pool")


class MembershipSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    destination: Name
    pool: Name


def t3_problem(news: dict[str, Any]) -> Problem | None:
    """T3 from the hidden inputs, worded exactly as :func:`arklow_pulumi.core.rules.join`."""
    destination, pool = news.get("destination"), news.get("pool")
    resources, resource = news.get("destination_resources"), news.get("pool_resource")
    known = not any(is_unknown(v) for v in (destination, pool, resources, resource))
    if not known or not isinstance(destination, str) or not isinstance(pool, str):
        return None
    if not isinstance(resources, (list, tuple)) or not isinstance(resource, str):
        return None
    if resource in resources:
        return None
    return Problem(
        f"membership of destination {destination!r} in pool {pool!r}",
        "pool",
        f"destination {destination!r} does not draw from resource {resource!r} "
        f"(it draws from {list(resources)}); it would wait on an unrelated constraint",
    )


class PoolMembershipProvider(StoreProvider):
    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        raw = {"destination": news.get("destination"), "pool": news.get("pool")}
        source = (
            f"membership of destination {shown(raw['destination'])} in pool {shown(raw['pool'])}"
        )
        result = check_model(
            lambda known: parse_model(MembershipSpec, known, source),
            raw,
            news,
            lambda _spec: (),
            lambda _spec: {},
        )
        problem = t3_problem(news)
        if problem is not None and not result.failures:
            result.failures.append(CheckFailure("pool", str(problem)))
        return result

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        return diff_inputs(olds, news, INPUTS, IDENTITY, same_name_key=None)

    def create(self, props: dict[str, Any]) -> CreateResult:
        destination, pool = str(props["destination"]), str(props["pool"])
        create_id = new_create_id()
        resource = service.join(self.store(props), destination, pool, claim_of(create_id, props))
        outs = {"destination": destination, "pool": pool, "resource": resource}
        return CreateResult(create_id, with_store(outs, props))

    def update(self, id_: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        # Only ``store`` and the owner can change without a replacement: the owner is recorded
        # on the row (when it is still this create's); the outputs carry the new URL.
        destination, pool = str(news["destination"]), str(news["pool"])
        claim = claim_of(id_, news)
        resource = olds.get("resource")
        if claim.owner is not None:
            stored = service.update_membership(self.store(news), destination, pool, claim)
            resource = stored if stored is not None else resource
        outs = {"destination": destination, "pool": pool, "resource": resource}
        return UpdateResult(with_store(outs, news))

    def delete(self, id_: str, props: dict[str, Any]) -> None:
        destination, pool = str(props["destination"]), str(props["pool"])
        service.leave(self.stored_store(props), destination, pool, id_)

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        outs = self._outs(self.stored_store(props), props, id_)
        return ReadResult(id_, outs) if outs else gone(id_)

    def _outs(self, store: Any, props: dict[str, Any], id_: str) -> dict[str, Any] | None:
        destination, pool = str(props["destination"]), str(props["pool"])
        view = service.membership_view(store, destination, pool)
        if view is None or not is_own(view, id_):
            return None
        outs = {"destination": destination, "pool": pool, "resource": view.resource}
        return with_store(outs, props)
