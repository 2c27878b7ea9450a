"""The GCP binding against the project's Compute API test server, through the real client."""

from __future__ import annotations

from typing import Any

import dill
import pytest

from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.devservers.compute import ComputeServer
from arklow_pulumi.supply.errors import (
    GroupNotFound,
    OutOfBounds,
    PermanentSupplyError,
    TemporarySupplyError,
)
from arklow_pulumi.supply.gcp import GcpMigSupply
from arklow_pulumi.supply.groups import ReplicaLimits
from arklow_pulumi.supply.retrying import RetryPolicy

P, Z, R = "demo-project", "us-central1-a", "us-central1"


def zonal(name: str) -> GroupRef:
    return GroupRef("gcp_mig", name, zone=Z, project=P)


def regional(name: str) -> GroupRef:
    return GroupRef("gcp_mig", name, region=R, project=P)


def supply_for(server: ComputeServer, deadline: float = 5.0) -> GcpMigSupply:
    return GcpMigSupply(server.url, RetryPolicy(deadline=deadline, base=0.01, cap=0.05))


def seed(server: ComputeServer, name: str, size: int, **extra: Any) -> None:
    where = {"region": R} if extra.pop("regional", False) else {"zone": Z}
    server.add_group({"project": P, "name": name, "targetSize": size, **where, **extra})


def test_describe_reports_size_stability_and_autoscaler(compute: ComputeServer) -> None:
    seed(compute, "web", 2)
    seed(compute, "api", 3, regional=True, autoscaler={"min": 2, "max": 6})
    states = supply_for(compute).describe([zonal("web"), regional("api"), zonal("gone")])
    web, api = states[zonal("web")], states[regional("api")]
    assert zonal("gone") not in states
    assert (web.desired, web.in_service, web.min, web.max, web.autoscaler) == (
        2,
        2,
        None,
        None,
        False,
    )
    assert web.stable
    assert (api.desired, api.min, api.max, api.autoscaler) == (3, 2, 6, True)
    assert api.autoscaler_link and api.autoscaler_link.endswith("/autoscalers/api-autoscaler")


def test_resize_waits_for_the_operation_and_reports_unstable_group(compute: ComputeServer) -> None:
    seed(compute, "web", 2)
    supply = supply_for(compute)
    result = supply.set_desired(zonal("web"), 5, limits=ReplicaLimits(1, 10))
    assert (result.previous, result.desired, result.method) == (2, 5, "resize")
    assert result.request_id
    calls = compute.call_report()
    assert calls["resizes"] == [
        {"group": f"{P}/zones/{Z}/web", "size": 5, "requestId": result.request_id}
    ]
    after = supply.describe([zonal("web")])[zonal("web")]
    assert after.desired == 5 and not after.stable and after.pending == 3
    assert (
        calls["by_route"].get("POST operations.wait", 0)
        + calls["by_route"].get("GET operations.get", 0)
        >= 1
    )


def test_regional_resize_and_unchanged(compute: ComputeServer) -> None:
    seed(compute, "api", 2, regional=True)
    supply = supply_for(compute)
    assert supply.set_desired(regional("api"), 4).method == "resize"
    assert supply.set_desired(regional("api"), 4).method == "unchanged"
    assert len(compute.call_report()["resizes"]) == 1


@pytest.mark.parametrize("regional_group", [False, True])
def test_autoscaled_group_gets_its_window_moved_not_resized(
    compute: ComputeServer, regional_group: bool
) -> None:
    seed(compute, "api", 2, regional=regional_group, autoscaler={"min": 1, "max": 4})
    ref = regional("api") if regional_group else zonal("api")
    supply = supply_for(compute)
    result = supply.set_desired(ref, 3, limits=ReplicaLimits(1, 8))
    assert result.method == "autoscaler_window" and result.window == (3, 8)
    assert compute.call_report()["resizes"] == []
    after = supply.describe([ref])[ref]
    assert (after.min, after.max, after.desired) == (3, 8, 3)
    assert supply.set_desired(ref, 3, limits=ReplicaLimits(1, 8)).method == "unchanged"


def test_regional_resize_of_autoscaled_group_is_412_and_permanent(compute: ComputeServer) -> None:
    """What the window move avoids: the API refuses this resize outright."""
    seed(compute, "api", 2, regional=True, autoscaler={"min": 1, "max": 4})
    supply = supply_for(compute)
    with pytest.raises(PermanentSupplyError, match="412") as info:
        supply._resize(regional("api"), 3, "req-1")
    from google.api_core.exceptions import PreconditionFailed

    assert isinstance(info.value.__cause__, PreconditionFailed)


def test_out_of_target_bounds_is_refused_without_a_write(compute: ComputeServer) -> None:
    seed(compute, "web", 2)
    with pytest.raises(OutOfBounds, match="target's bounds \\[1, 4\\]"):
        supply_for(compute).set_desired(zonal("web"), 5, limits=ReplicaLimits(1, 4))
    report = compute.call_report()
    assert report["resizes"] == [] and "POST instanceGroupManagers.resize" not in report["by_route"]


def test_missing_group(compute: ComputeServer) -> None:
    with pytest.raises(GroupNotFound):
        supply_for(compute).set_desired(zonal("nope"), 1)


@pytest.mark.parametrize("code", [429, 503, 500, 409])
def test_temporary_errors_are_retried(compute: ComputeServer, code: int) -> None:
    seed(compute, "web", 2)
    compute.set_faults({"scripted": [{"path": "resize", "code": code, "count": 2}]})
    result = supply_for(compute).set_desired(zonal("web"), 3)
    assert result.desired == 3
    report = compute.call_report()
    assert report["by_route"]["POST instanceGroupManagers.resize"] == 3
    assert report["injected"] == {str(code): 2}


def test_lost_response_retried_with_same_request_id_resizes_once(compute: ComputeServer) -> None:
    seed(compute, "web", 2)
    compute.set_faults(
        {"scripted": [{"path": "resize", "code": 503, "count": 1, "after_apply": True}]}
    )
    result = supply_for(compute).set_desired(zonal("web"), 6)
    report = compute.call_report()
    assert report["by_route"]["POST instanceGroupManagers.resize"] == 2
    assert report["resizes"] == [
        {"group": f"{P}/zones/{Z}/web", "size": 6, "requestId": result.request_id}
    ]


def test_retry_gives_up_at_the_deadline_with_chained_error(compute: ComputeServer) -> None:
    seed(compute, "web", 2)
    compute.set_faults({"scripted": [{"path": "resize", "code": 429, "count": 1000}]})
    with pytest.raises(TemporarySupplyError, match="429") as info:
        supply_for(compute, deadline=0.3).set_desired(zonal("web"), 3)
    from google.api_core.exceptions import TooManyRequests

    assert isinstance(info.value.__cause__, TooManyRequests)


@pytest.mark.parametrize(
    ("code", "error"), [(403, PermanentSupplyError), (400, PermanentSupplyError)]
)
def test_permanent_errors_are_not_retried(
    compute: ComputeServer, code: int, error: type[Exception]
) -> None:
    seed(compute, "web", 2)
    compute.set_faults({"scripted": [{"path": "resize", "code": code, "count": 5}]})
    with pytest.raises(error):
        supply_for(compute).set_desired(zonal("web"), 3)
    assert compute.call_report()["by_route"]["POST instanceGroupManagers.resize"] == 1


def test_many_groups_are_read_with_aggregated_listing(compute: ComputeServer) -> None:
    for k in range(40):
        seed(
            compute,
            f"g{k:02d}",
            1,
            regional=k % 2 == 1,
            **({"autoscaler": {"min": 1, "max": 3}} if k % 5 == 0 else {}),
        )
    refs = [regional(f"g{k:02d}") if k % 2 else zonal(f"g{k:02d}") for k in range(40)]
    compute.reset_calls()
    states = supply_for(compute).describe(refs)
    assert len(states) == 40 and sum(s.autoscaler for s in states.values()) == 8
    assert compute.call_report()["by_route"] == {
        "GET aggregated/instanceGroupManagers": 1,
        "GET aggregated/autoscalers": 1,
    }


def test_supply_pickles_with_dill_without_clients(compute: ComputeServer) -> None:
    seed(compute, "web", 2)
    supply = supply_for(compute)
    supply.describe([zonal("web")])
    copy = dill.loads(dill.dumps(supply))
    assert len(copy._clients) == 0
    assert copy.describe([zonal("web")])[zonal("web")].desired == 2
