"""The provider of ``Pool``: a declared supply of one resource (T6 on delete)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arklow_pulumi.core.errors import Problem
from arklow_pulumi.core.fields import table
from arklow_pulumi.core.policy import ScalePolicy
from arklow_pulumi.core.topology import Pool
from arklow_pulumi.core.validating import pool_problems
from arklow_pulumi.providers.declaring import DeclaredObjectProvider, StoreCalls, fields_of
from arklow_pulumi.providers.inputs import integral
from arklow_pulumi.providers.storing import service
from arklow_pulumi.reading.spec import PoolSpec, pool_from_spec
from arklow_pulumi.topology_documents import pool_document

# The resource's inputs: its Arklow name and the fields a pool declares (core.fields).
FIELDS = fields_of(Pool)
IDENTITY = ("arklow_name", "resource")
_COUNTS = {f.name for f in table(ScalePolicy) if f.form == "count"}


class PoolProvider(DeclaredObjectProvider):
    """Members and scale targets are resources of their own (PoolMembership, ScaleTarget)."""

    value = Pool
    spec = PoolSpec
    collection = "pools"
    identity = IDENTITY
    from_spec = staticmethod(pool_from_spec)

    @staticmethod
    def problems(value: Any) -> list[Problem]:
        return pool_problems(value, fields_checked=True)

    def raw(self, props: dict[str, Any]) -> dict[str, Any]:
        """The inputs as a pool of a topology file (the engine sends the step counts as
        floats)."""
        raw = super().raw(props)
        policy = raw.get("scale_policy")
        if isinstance(policy, Mapping):
            raw["scale_policy"] = {k: integral(v) if k in _COUNTS else v for k, v in policy.items()}
        return raw

    @staticmethod
    def services() -> StoreCalls:
        return StoreCalls(
            service.create_pool,
            service.update_pool,
            service.pool_view,
            service.delete_pool,
            service.get_pool,
        )

    @staticmethod
    def document(view: service.PoolView) -> dict[str, Any]:
        return {
            "arklow_name": view.pool.name,
            **pool_document(view.pool),
            "standalone": view.standalone,
            "members": list(view.members),
            "scale_targets": [t.name for t in view.pool.scale_targets],
        }
