"""The provider of ``PoolMembership``: destination D draws its resource R from pool P.

Create joins (T2, T3, T7); delete leaves (T4: the destination gets a standalone pool back) and is
a no-op when the membership is already gone, which also makes create-before-delete replacement
safe: the new membership moves the destination, the old one's delete finds nothing to undo.
"""

from __future__ import annotations

from typing import Any

from pulumi.dynamic import CheckResult, CreateResult, DiffResult, ReadResult, UpdateResult
from pydantic import BaseModel, ConfigDict

from arklow_pulumi.core.parsing import parse_model
from arklow_pulumi.core.spec import Name
from arklow_pulumi.providers.diffing import diff_inputs
from arklow_pulumi.providers.inputs import check_model
from arklow_pulumi.providers.storing import StoreProvider, gone, service, with_store

INPUTS = ("destination", "pool")
IDENTITY = ("destination", "pool")


class MembershipSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    destination: Name
    pool: Name


def membership_id(destination: str, pool: str) -> str:
    return f"{pool}:{destination}"


class PoolMembershipProvider(StoreProvider):
    def check(self, _olds: dict[str, Any], news: dict[str, Any]) -> CheckResult:
        raw = {"destination": news.get("destination"), "pool": news.get("pool")}
        source = f"membership of destination {raw['destination']!r} in pool {raw['pool']!r}"
        return check_model(
            lambda known: parse_model(MembershipSpec, known, source),
            raw,
            news,
            lambda _spec: (),
            lambda _spec: {},
        )

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        return diff_inputs(olds, news, INPUTS, IDENTITY, same_name_key=None)

    def create(self, props: dict[str, Any]) -> CreateResult:
        destination, pool = str(props["destination"]), str(props["pool"])
        resource = service.join(self.store(props), destination, pool)
        outs = {"destination": destination, "pool": pool, "resource": resource}
        return CreateResult(membership_id(destination, pool), with_store(outs, props))

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        # Only ``store`` can change without a replacement: nothing to do in the store itself.
        return UpdateResult(self._outs(news) or {})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        service.leave(self.store(props), str(props["destination"]), str(props["pool"]))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        outs = self._outs(props)
        return ReadResult(id_, outs) if outs else gone(id_)

    def _outs(self, props: dict[str, Any]) -> dict[str, Any] | None:
        destination, pool = str(props["destination"]), str(props["pool"])
        resource = service.get_membership(self.store(props), destination, pool)
        if resource is None:
            return None
        outs = {"destination": destination, "pool": pool, "resource": resource}
        return with_store(outs, props)
