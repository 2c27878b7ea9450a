"""Prometheus metrics of the controller: names and units, values from the published tick, series
removed with their pool/lane/target, counters, leadership, and a registry of its own."""

from __future__ import annotations

import math
import platform
from datetime import UTC, datetime
from importlib import metadata

import prometheus_client
from prometheus_client.parser import text_string_to_metric_families

from arklow_pulumi.controller.api.metrics import Metrics
from arklow_pulumi.controller.ports import LaneView, PoolView, Published, TargetView

AT = datetime(2026, 11, 30, 4, 0, tzinfo=UTC)


def pool(
    capacity: float = 16.0,
    pressure: float | None = 1.25,
    state: str = "constrained",
    targets: dict[str, TargetView] | None = None,
) -> PoolView:
    return PoolView(
        resource="gpu",
        capacity=capacity,
        demand=20.0,
        pressure=pressure,
        state=state,  # type: ignore[arg-type]
        desired_replicas=5,
        targets=targets if targets is not None else {"asg/gpu-a": TargetView(5, 4, 1, 1, 8)},
    )


def tick(number: int, lanes: dict[str, LaneView], pools: dict[str, PoolView]) -> Published:
    return Published(tick=number, time=AT, lanes=lanes, pools=pools)


def samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    found = {}
    for family in text_string_to_metric_families(metrics.render().decode()):
        for s in family.samples:
            found[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return found


def value(metrics: Metrics, name: str, **labels: str) -> float | None:
    return samples(metrics).get((name, tuple(sorted(labels.items()))))


def names(metrics: Metrics) -> set[str]:
    return {name for name, _ in samples(metrics)}


LANE = LaneView(demand=12.0, allocation=4.0, held=4.0, admission=4.5)


def test_gauges_follow_the_published_tick() -> None:
    metrics = Metrics()
    metrics.tick_done(tick(3, {"search/batch": LANE}, {"gpu-shared": pool()}), 0.02, False)
    p = {"pool": "gpu-shared", "resource": "gpu"}
    lane = {"destination": "search", "lane": "batch"}
    target = {"pool": "gpu-shared", "target": "asg/gpu-a"}
    no: dict[str, str] = {}
    expected = [
        ("arklow_published_tick", no, 3.0),
        ("arklow_pool_capacity_units", p, 16.0),
        ("arklow_pool_demand_units", p, 20.0),
        ("arklow_pool_pressure_ratio", p, 1.25),
        ("arklow_pool_desired_replicas", p, 5.0),
        ("arklow_pool_state", {**p, "state": "constrained"}, 1.0),
        ("arklow_pool_state", {**p, "state": "steady"}, 0.0),
        ("arklow_pool_state", {**p, "state": "idle"}, 0.0),
        ("arklow_lane_demand_units", lane, 12.0),
        ("arklow_lane_allocation_units", lane, 4.0),
        ("arklow_lane_admission_units", lane, 4.5),
        ("arklow_lane_held_units", lane, 4.0),
        ("arklow_lane_report_stale", lane, 0.0),
        ("arklow_target_desired_replicas", target, 5.0),
        ("arklow_target_in_service_replicas", target, 4.0),
        ("arklow_target_pending_replicas", target, 1.0),
        ("arklow_target_min_replicas", target, 1.0),
        ("arklow_target_max_replicas", target, 8.0),
        ("arklow_tick_duration_seconds_count", no, 1.0),
        ("arklow_tick_duration_seconds_sum", no, 0.02),
    ]
    for name, labels, want in expected:
        assert value(metrics, name, **labels) == want, name
    assert value(metrics, "arklow_published_tick_timestamp_seconds") == AT.timestamp()


def test_nothing_per_pool_before_the_first_tick() -> None:
    metrics = Metrics()
    assert not any(
        n.startswith(("arklow_pool_", "arklow_lane_", "arklow_target_")) for n in names(metrics)
    )


def test_series_of_removed_pools_lanes_and_targets_disappear() -> None:
    metrics = Metrics()
    lanes = {"search/batch": LANE, "ads/serve": LANE}
    pools = {"gpu-shared": pool(), "cpu": pool(targets={"mig/cpu": TargetView(1, 1, 0, 1, 2)})}
    metrics.tick_done(tick(1, lanes, pools), 0.01, False)
    metrics.scale_action("cpu", "mig/cpu", "up")
    metrics.scale_action("gpu-shared", "asg/gpu-a", "down")
    metrics.supply_error("cpu", "mig/cpu", "gcp_mig", "TemporarySupplyError")
    metrics.supply_error("gpu-shared", "asg/gpu-a", "aws_asg", "PolicyConflict")
    up = {"pool": "cpu", "target": "mig/cpu", "direction": "up"}
    assert value(metrics, "arklow_scale_actions_total", **up) == 1.0
    metrics.tick_done(tick(2, {"search/batch": LANE}, {"gpu-shared": pool()}), 0.01, False)
    text = metrics.render().decode()
    assert 'destination="ads"' not in text and "mig/cpu" not in text and 'pool="cpu"' not in text
    down = {"pool": "gpu-shared", "target": "asg/gpu-a", "direction": "down"}
    assert value(metrics, "arklow_scale_actions_total", **down) == 1.0
    kept = {
        "pool": "gpu-shared",
        "target": "asg/gpu-a",
        "kind": "aws_asg",
        "error": "PolicyConflict",
    }
    assert value(metrics, "arklow_supply_api_errors_total", **kept) == 1.0
    assert value(metrics, "arklow_lane_admission_units", destination="search", lane="batch") == 4.5


def test_scale_actions_are_kept_per_pool_and_target_across_ticks() -> None:
    """A target's counter keeps counting while (pool, target) is published; the same target
    name in another pool is another series, removed with its pool."""
    metrics = Metrics()
    pools = {"gpu-shared": pool(), "gpu-other": pool()}
    for number in (1, 2, 3):
        metrics.scale_action("gpu-shared", "asg/gpu-a", "up")
        metrics.tick_done(tick(number, {}, pools), 0.01, False)
    metrics.scale_action("gpu-other", "asg/gpu-a", "up")
    labels = {"pool": "gpu-shared", "target": "asg/gpu-a", "direction": "up"}
    assert value(metrics, "arklow_scale_actions_total", **labels) == 3.0
    metrics.tick_done(tick(4, {}, {"gpu-shared": pool()}), 0.01, False)
    assert value(metrics, "arklow_scale_actions_total", **labels) == 3.0
    gone = {**labels, "pool": "gpu-other"}
    assert value(metrics, "arklow_scale_actions_total", **gone) is None
    metrics.tick_done(tick(5, {}, {}), 0.01, False)
    assert value(metrics, "arklow_scale_actions_total", **labels) is None


def test_one_label_set_names_one_object_on_every_metric() -> None:
    """Joins need no relabelling: a target is {pool, target} on its gauges and on its scale
    actions, a pool {pool, resource} (plus state), a lane {destination, lane}."""
    metrics = Metrics()
    metrics.tick_done(tick(1, {"search/batch": LANE}, {"gpu-shared": pool()}), 0.01, False)
    metrics.scale_action("gpu-shared", "asg/gpu-a", "up")
    metrics.supply_error("gpu-shared", "asg/gpu-a", "aws_asg", "TemporarySupplyError")
    objects = {
        "arklow_target_": {"pool", "target"},
        "arklow_scale_actions_": {"pool", "target", "direction"},
        "arklow_supply_api_errors_": {"pool", "target", "kind", "error"},
        "arklow_pool_": {"pool", "resource"},
        "arklow_lane_": {"destination", "lane"},
    }
    seen = set()
    for (name, labels), _ in samples(metrics).items():
        for prefix, want in objects.items():
            if name.startswith(prefix):
                # the closed sets of a pool's state and a target's decision reason
                extra = {"arklow_pool_state": {"state"}, "arklow_target_decision_state": {"reason"}}
                got = {k for k, _ in labels} - extra.get(name, set())
                assert got == want, name
                seen.add(prefix)
    assert seen == set(objects)
    targets = {
        dict(labels)["target"]
        for (name, labels), _ in samples(metrics).items()
        if name.startswith(("arklow_target_", "arklow_scale_actions_", "arklow_supply_api_"))
    }
    assert targets == {"asg/gpu-a"}


def test_pressure_with_no_capacity_is_infinite() -> None:
    metrics = Metrics()
    metrics.tick_done(tick(1, {}, {"p": pool(capacity=0.0, pressure=None)}), 0.01, False)
    assert value(metrics, "arklow_pool_pressure_ratio", pool="p", resource="gpu") == math.inf


def test_counters() -> None:
    metrics = Metrics()
    metrics.tick_done(tick(1, {}, {}), 12.0, True)
    metrics.tick_done(tick(2, {}, {}), 0.5, False)
    metrics.supply_error("p", "asg/a", "aws_asg", "TemporarySupplyError")
    metrics.supply_error("p", "asg/a", "aws_asg", "TemporarySupplyError")
    metrics.supply_error("q", "mig/b", "gcp_mig", "OutOfBounds")
    metrics.demand_reports("accepted", 100)
    metrics.demand_reports("expired", 3)
    assert value(metrics, "arklow_tick_overruns_total") == 1.0
    assert value(metrics, "arklow_tick_duration_seconds_count") == 2.0
    assert value(metrics, "arklow_tick_duration_seconds_bucket", le="1.0") == 1.0
    asg = {"pool": "p", "target": "asg/a", "kind": "aws_asg", "error": "TemporarySupplyError"}
    mig = {"pool": "q", "target": "mig/b", "kind": "gcp_mig", "error": "OutOfBounds"}
    assert value(metrics, "arklow_supply_api_errors_total", **asg) == 2.0
    assert value(metrics, "arklow_supply_api_errors_total", **mig) == 1.0
    assert value(metrics, "arklow_demand_reports_total", result="accepted") == 100.0
    assert value(metrics, "arklow_demand_reports_total", result="expired") == 3.0


def test_leadership_transitions_and_renewal_age() -> None:
    now = [100.0]
    metrics = Metrics(clock=lambda: now[0])
    assert math.isnan(value(metrics, "arklow_leader_last_renewal_age_seconds") or 0.0)
    assert value(metrics, "arklow_leader_status") == 0.0
    metrics.leadership(True, 1, 0.5)
    now[0] = 103.0
    assert value(metrics, "arklow_leader_status") == 1.0
    assert value(metrics, "arklow_leader_epoch") == 1.0
    assert value(metrics, "arklow_leader_last_renewal_age_seconds") == 3.5
    metrics.leadership(True, 1, 0.0)  # renewed: no transition
    metrics.leadership(False, 2, None)
    metrics.leadership(True, 3, 0.0)
    assert value(metrics, "arklow_leader_transitions_total") == 3.0
    assert value(metrics, "arklow_leader_epoch") == 3.0


def test_names_carry_units_and_the_prefix() -> None:
    metrics = Metrics()
    metrics.tick_done(tick(1, {"a/b": LANE}, {"p": pool()}), 0.01, False)
    metrics.scale_action("p", "asg/gpu-a", "up")
    metrics.supply_error("p", "asg/gpu-a", "aws_asg", "x")
    metrics.demand_reports("accepted", 1)
    metrics.http_request("/v1/demand", "POST", 200, 0.001)
    metrics.leadership(True, 1, 0.0)
    units = ("_units", "_replicas", "_seconds", "_ratio", "_state", "_status", "_stale", "_info")
    plain = {"arklow_published_tick", "arklow_leader_epoch"}
    families = list(text_string_to_metric_families(metrics.render().decode()))
    assert len(families) >= 28
    for family in families:
        assert family.name.startswith("arklow_"), family.name
        assert not family.name.endswith("_created"), family.name
        if family.type == "counter":
            assert all(s.name == f"{family.name}_total" for s in family.samples), family.name
        else:
            assert family.name in plain or family.name.endswith(units), family.name


def test_each_instance_has_its_own_registry() -> None:
    a, b = Metrics(), Metrics()
    a.demand_reports("accepted", 5)
    assert value(b, "arklow_demand_reports_total", result="accepted") is None
    global_names = {f.name for f in prometheus_client.REGISTRY.collect()}
    assert not any(n.startswith("arklow_") for n in global_names)


def test_label_values_are_escaped() -> None:
    metrics = Metrics()
    odd = 'we"ird\\name\nx'
    metrics.tick_done(tick(1, {f"{odd}/lane": LANE}, {odd: pool()}), 0.01, False)
    assert value(metrics, "arklow_lane_admission_units", destination=odd, lane="lane") == 4.5
    assert value(metrics, "arklow_pool_capacity_units", pool=odd, resource="gpu") == 16.0


def test_a_new_tick_replaces_the_rendered_gauges() -> None:
    metrics = Metrics()
    metrics.tick_done(tick(1, {"a/b": LANE}, {}), 0.01, False)
    assert value(metrics, "arklow_published_tick") == 1.0
    metrics.tick_done(tick(2, {"a/b": LaneView(1.0, 1.0, 0.0, 2.0)}, {}), 0.01, False)
    assert value(metrics, "arklow_published_tick") == 2.0
    assert value(metrics, "arklow_lane_admission_units", destination="a", lane="b") == 2.0


def test_build_info_names_the_versions() -> None:
    metrics = Metrics()
    (labels,) = [dict(k) for (n, k), v in samples(metrics).items() if n == "arklow_build_info"]
    assert set(labels) == {"version", "python", "kernel"}
    assert labels["python"] == platform.python_version()
    assert labels["version"] == metadata.version("arklow-pulumi")
    assert labels["kernel"] == metadata.version("arklow-pulumi")  # one distribution
    assert value(metrics, "arklow_build_info", **labels) == 1.0


def test_the_request_histogram_has_route_method_and_code() -> None:
    metrics = Metrics()
    metrics.http_request("/v1/lanes/{destination}/{lane}", "GET", 304, 0.002)
    metrics.http_request("other", "BREW", 999, 0.001)
    lane = {"route": "/v1/lanes/{destination}/{lane}", "method": "GET", "code": "304"}
    assert value(metrics, "arklow_http_request_duration_seconds_count", **lane) == 1.0
    assert value(metrics, "arklow_http_request_duration_seconds_bucket", **lane, le="0.0025") == 1
    odd = {"route": "other", "method": "other", "code": "500"}
    assert value(metrics, "arklow_http_request_duration_seconds_count", **odd) == 1.0
    assert value(metrics, "arklow_http_requests_total", **odd) == 1.0


def test_interval_and_served_tick_are_exported() -> None:
    served: list[Published | None] = [None]
    metrics = Metrics(interval_s=2.5)
    metrics.serving(lambda: served[0])
    assert value(metrics, "arklow_tick_interval_seconds") == 2.5
    assert value(metrics, "arklow_served_tick_timestamp_seconds") is None
    served[0] = tick(7, {}, {})
    assert value(metrics, "arklow_served_tick_timestamp_seconds") == AT.timestamp()
    assert value(Metrics(), "arklow_tick_interval_seconds") is None


def test_a_replica_that_stops_leading_drops_the_gauges_of_its_ticks() -> None:
    """Else its last tick would be exported for ever beside the new leader's."""
    metrics = Metrics()
    metrics.leadership(True, 1, 0.0)
    metrics.tick_done(tick(1, {"a/b": LANE}, {"p": pool()}), 0.01, False)
    assert value(metrics, "arklow_published_tick") == 1.0
    metrics.leadership(True, 1, 0.0)
    assert value(metrics, "arklow_pool_capacity_units", pool="p", resource="gpu") == 16.0
    metrics.leadership(False, 2, None)
    assert not any(
        n.startswith(("arklow_pool_", "arklow_lane_", "arklow_target_", "arklow_published_"))
        for n in names(metrics)
    )
    assert value(metrics, "arklow_leader_status") == 0.0
