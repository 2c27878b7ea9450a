"""``arklow controller plan``: what one tick would do now, and nothing else.

The same observe and decide as the running controller (topology, fresh demand reports and the
scale-down history from the store; groups described through the supply bindings), with no lease,
no act and no publish: it reads the store and the clouds and writes to neither.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from arklow_pulumi.controller.ports import PoolView
from arklow_pulumi.controller.tick.acting import plan_of, with_detail
from arklow_pulumi.controller.tick.documents import lane_view_document, pool_view_document
from arklow_pulumi.controller.tick.ticking import Controller, PlanView
from arklow_pulumi.supply.errors import SupplyError


def plan_now(store_url: str) -> PlanView:
    from arklow_pulumi.store.engine import open_store
    from arklow_pulumi.supply.routing import router_from_env

    controller = Controller(open_store(store_url, read_only=True), router_from_env(), None)
    controller.restore()
    view = controller.plan()
    return replace(view, changes=with_detail(controller.supply, view.changes))


def _with_reasons(pool: PoolView) -> dict[str, Any]:
    """A pool as ``GET /v1/pools`` has it, each target with the reason of its decision."""
    doc = pool_view_document(pool)
    for name, target in pool.targets.items():
        doc["targets"][name]["reason"] = target.reason
    return doc


def plan_document(view: PlanView) -> dict[str, Any]:
    published = view.published
    changes = []
    for change in view.changes:
        plan = plan_of(change)
        entry: dict[str, Any] = {
            "target": change.target.name,
            "pool": change.target.pool,
            "group": str(change.state.ref),
            "previous": change.state.desired,
            "desired": change.desired,
        }
        if isinstance(plan, SupplyError):
            entry["refused"] = str(plan)
        else:
            entry["method"] = plan.method
        changes.append(entry)
    return {
        "time": published.time.isoformat(),
        "lanes": {key: lane_view_document(lane) for key, lane in published.lanes.items()},
        "pools": {name: _with_reasons(pool) for name, pool in published.pools.items()},
        "changes": changes,
        "supply_errors": {
            str(tid): str(error) for tid, error in sorted(view.observation.errors.items())
        },
    }
