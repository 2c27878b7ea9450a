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
from tests.supply.conftest import FakeClock, set_size

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
    result = set_size(supply, zonal("web"), 5, limits=ReplicaLimits(1, 10))
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
    assert set_size(supply, regional("api"), 4).method == "resize"
    assert set_size(supply, regional("api"), 4).method == "unchanged"
    assert len(compute.call_report()["resizes"]) == 1


@pytest.mark.parametrize("regional_group", [False, True])
def test_autoscaled_group_gets_its_window_moved_not_resized(
    compute: ComputeServer, regional_group: bool
) -> None:
    seed(compute, "api", 2, regional=regional_group, autoscaler={"min": 1, "max": 4})
    ref = regional("api") if regional_group else zonal("api")
    supply = supply_for(compute)
    result = set_size(supply, ref, 3, limits=ReplicaLimits(1, 8))
    assert result.method == "autoscaler_window" and result.window == (3, 4)
    assert (result.previous, result.previous_window) == (2, (1, 4))
    assert compute.call_report()["resizes"] == []
    after = supply.describe([ref])[ref]
    assert (after.min, after.max, after.desired) == (3, 4, 3)
    assert set_size(supply, ref, 3, limits=ReplicaLimits(1, 8)).method == "unchanged"
    # the autoscaler's max is the group's own: never widened, a count above it is refused
    with pytest.raises(OutOfBounds, match="group's bounds \\[0, 4\\]"):
        set_size(supply, ref, 5, limits=ReplicaLimits(1, 8))
    low = set_size(supply, ref, 0)
    assert (low.method, low.window) == ("autoscaler_window", (0, 4))
    patches = [
        e["body"] for e in compute.call_report()["log"] if e["route"] == "PATCH autoscalers.patch"
    ]
    assert [b["autoscalingPolicy"] for b in patches] == [
        {"minNumReplicas": 3},
        {"minNumReplicas": 0},
    ]
    assert supply.describe([ref])[ref].min == 0


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
        set_size(supply_for(compute), zonal("web"), 5, limits=ReplicaLimits(1, 4))
    report = compute.call_report()
    assert report["resizes"] == [] and "POST instanceGroupManagers.resize" not in report["by_route"]


def test_missing_group(compute: ComputeServer) -> None:
    with pytest.raises(GroupNotFound):
        set_size(supply_for(compute), zonal("nope"), 1)


@pytest.mark.parametrize("code", [429, 503, 500, 409])
def test_temporary_errors_are_retried(compute: ComputeServer, code: int) -> None:
    seed(compute, "web", 2)
    compute.set_faults({"scripted": [{"path": "resize", "code": code, "count": 2}]})
    result = set_size(supply_for(compute), zonal("web"), 3)
    assert result.desired == 3
    report = compute.call_report()
    assert report["by_route"]["POST instanceGroupManagers.resize"] == 3
    assert report["injected"] == {str(code): 2}


def test_lost_response_retried_with_same_request_id_resizes_once(compute: ComputeServer) -> None:
    seed(compute, "web", 2)
    compute.set_faults(
        {"scripted": [{"path": "resize", "code": 503, "count": 1, "after_apply": True}]}
    )
    result = set_size(supply_for(compute), zonal("web"), 6)
    report = compute.call_report()
    assert report["by_route"]["POST instanceGroupManagers.resize"] == 2
    assert report["resizes"] == [
        {"group": f"{P}/zones/{Z}/web", "size": 6, "requestId": result.request_id}
    ]


def test_retry_gives_up_at_the_deadline_with_chained_error(compute: ComputeServer) -> None:
    seed(compute, "web", 2)
    compute.set_faults({"scripted": [{"path": "resize", "code": 429, "count": 1000}]})
    with pytest.raises(TemporarySupplyError, match="429") as info:
        set_size(supply_for(compute, deadline=0.3), zonal("web"), 3)
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
        set_size(supply_for(compute), zonal("web"), 3)
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


# -- polling operations ---------------------------------------------------------------------------


def fake_clocked(server: ComputeServer, clock: FakeClock, op_deadline: float) -> GcpMigSupply:
    return GcpMigSupply(
        server.url,
        RetryPolicy(deadline=5.0, base=1.0, cap=8.0),
        op_deadline=op_deadline,
        clock=clock,
        sleep=clock.sleep,
    )


def test_wait_answering_early_is_followed_by_a_jittered_backoff(compute: ComputeServer) -> None:
    seed(compute, "web", 2)
    compute.set_faults({"early_waits": 4})
    clock = FakeClock()
    result = set_size(fake_clocked(compute, clock, 300.0), zonal("web"), 5)
    assert result.method == "resize"
    assert compute.call_report()["by_route"]["POST operations.wait"] == 5
    assert len(clock.sleeps) == 4
    assert all(0 <= s <= min(8.0, 2.0**k) for k, s in enumerate(clock.sleeps))


def test_an_operation_never_done_is_reported_at_the_deadline(compute: ComputeServer) -> None:
    seed(compute, "web", 2)
    compute.set_faults({"early_waits": 10**6})
    clock = FakeClock()
    with pytest.raises(
        TemporarySupplyError, match=r"operation operation-\S+ still RUNNING after 60s"
    ):
        set_size(fake_clocked(compute, clock, 60.0), zonal("web"), 5)
    assert clock.now == pytest.approx(60.0)
    waits = compute.call_report()["by_route"]["POST operations.wait"]
    assert waits == len(clock.sleeps) and 8 <= waits <= 200


def test_a_wait_held_past_its_timeout_is_still_running_not_unreachable(
    compute: ComputeServer,
) -> None:
    """The API holds ``wait`` up to ~120 s: a client timeout there is no connection problem."""
    seed(compute, "web", 2)
    compute.set_faults({"stuck_ops": 1, "wait_limit": 1.0})
    supply = GcpMigSupply(
        compute.url,
        RetryPolicy(deadline=5.0, base=0.01, cap=0.05),
        op_deadline=0.6,
        wait_timeout=0.25,
    )
    with pytest.raises(TemporarySupplyError, match=r"still (PENDING|RUNNING) after 0\.6s") as info:
        set_size(supply, zonal("web"), 5)
    assert "cannot reach" not in str(info.value)
    assert compute.call_report()["resizes"][0]["size"] == 5  # the resize was applied


def test_wait_timeout_is_above_the_api_hold() -> None:
    from arklow_pulumi.supply import gcp

    assert gcp.WAIT_TIMEOUT >= 130 > gcp.CALL_TIMEOUT and gcp.OP_DEADLINE >= gcp.WAIT_TIMEOUT
    assert GcpMigSupply().wait_timeout == gcp.WAIT_TIMEOUT


@pytest.mark.parametrize("path", ["resize", "autoscalers.patch"])
def test_operation_done_with_error_is_permanent_with_its_http_status(
    compute: ComputeServer, path: str
) -> None:
    scaler = {"autoscaler": {"min": 1, "max": 4}} if path != "resize" else {}
    seed(compute, "web", 2, **scaler)
    compute.set_faults(
        {
            "op_errors": [
                {
                    "path": path,
                    "code": "QUOTA_EXCEEDED",
                    "message": "Quota 'CPUS' exceeded.",
                    "http_status": 403,
                }
            ]
        }
    )
    with pytest.raises(PermanentSupplyError) as info:
        set_size(supply_for(compute), zonal("web"), 3)
    message = str(info.value)
    assert "failed (HTTP 403 PERMISSION_DENIED): QUOTA_EXCEEDED: Quota 'CPUS' exceeded." in message
    report = compute.call_report()
    assert (
        report["resizes"] == []
        and sum(
            report["by_route"].get(f"{m} {r}", 0)
            for m, r in [
                ("POST", "instanceGroupManagers.resize"),
                ("PATCH", "autoscalers.patch"),
            ]
        )
        == 1
    )


def test_operation_missing_while_polling_is_not_a_missing_group(compute: ComputeServer) -> None:
    seed(compute, "web", 2)
    compute.set_faults({"scripted": [{"path": "operations.wait", "code": 404, "count": 1}]})
    with pytest.raises(PermanentSupplyError, match=r"operation operation-\S+ not found") as info:
        set_size(supply_for(compute), zonal("web"), 3)
    assert not isinstance(info.value, GroupNotFound)
    from google.api_core.exceptions import NotFound

    assert isinstance(info.value.__cause__, NotFound)


@pytest.mark.parametrize("regional_group", [False, True])
def test_operation_naming_no_scope_is_polled_where_the_group_lives(
    compute: ComputeServer, regional_group: bool
) -> None:
    from google.cloud import compute_v1

    seed(compute, "web", 2, regional=regional_group)
    ref = regional("web") if regional_group else zonal("web")
    supply = supply_for(compute)
    if regional_group:
        request: Any = compute_v1.ResizeRegionInstanceGroupManagerRequest(
            project=P, region=R, instance_group_manager="web", size=4
        )
        op = supply._call("region_migs", "resize_unary", ref, request)
    else:
        request = compute_v1.ResizeInstanceGroupManagerRequest(
            project=P, zone=Z, instance_group_manager="web", size=4
        )
        op = supply._call("migs", "resize_unary", ref, request)
    bare = compute_v1.Operation(name=op.name, status=op.status)
    assert not bare.zone and not bare.region
    supply._wait(ref, P, bare)
    assert supply.api_calls[("region_ops" if regional_group else "zone_ops") + ".wait"] >= 1


# -- reading --------------------------------------------------------------------------------------


def test_autoscalers_are_matched_by_scope_and_name_not_link_text(compute: ComputeServer) -> None:
    for k in range(6):
        seed(compute, f"g{k}", 2, **({"autoscaler": {"min": 1, "max": 5}} if k < 2 else {}))
    supply = supply_for(compute)
    listed = supply._aggregated

    def other_links(client: str, request_type: Any, project: str) -> Any:
        pages = listed(client, request_type, project)
        for _scope, scoped in pages if client == "autoscalers" else []:
            for scaler in scoped.autoscalers:
                scaler.self_link = (
                    scaler.self_link.replace(
                        "https://www.googleapis.com/compute/v1",
                        "https://compute.googleapis.com/compute/beta",
                    )
                    + "/"
                )
        return pages

    supply._aggregated = other_links  # type: ignore[method-assign]
    states = supply.describe([zonal(f"g{k}") for k in range(6)])
    assert [states[zonal(f"g{k}")].autoscaler for k in range(6)] == [True, True] + [False] * 4
    assert (states[zonal("g0")].min, states[zonal("g0")].max) == (1, 5)


def test_aggregated_listing_sends_no_page_token_on_the_first_page(
    compute: ComputeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arklow_pulumi.supply import gcp

    monkeypatch.setattr(gcp, "PAGE", 2)
    for k in range(5):
        seed(compute, f"g{k}", 1)
    states = supply_for(compute).describe([zonal(f"g{k}") for k in range(5)])
    assert len(states) == 5
    queries = [
        e["query"]
        for e in compute.call_report()["log"]
        if e["route"] == "GET aggregated/instanceGroupManagers"
    ]
    assert [q.get("pageToken") for q in queries] == [None, "2", "4"]


# -- endpoints ------------------------------------------------------------------------------------


def test_endpoint_without_scheme_is_a_clear_permanent_error(compute: ComputeServer) -> None:
    supply = GcpMigSupply(compute.url.removeprefix("http://"), RetryPolicy(deadline=30.0))
    with pytest.raises(PermanentSupplyError, match="must start with http:// or https://"):
        supply.describe([zonal("web")])
    assert compute.call_report()["total"] == 0


def test_tls_to_a_plain_http_server_is_permanent_and_not_retried(compute: ComputeServer) -> None:
    supply = GcpMigSupply(compute.url.replace("http://", "https://"), RetryPolicy(deadline=30.0))
    with pytest.raises(PermanentSupplyError, match="TLS handshake") as info:
        supply.describe([zonal("web")])
    assert supply.api_calls["migs.get"] == 1  # one attempt: not retried
    import requests

    assert isinstance(info.value.__cause__, requests.exceptions.SSLError)
