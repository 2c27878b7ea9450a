"""Prometheus metrics of the controller, on a registry of its own (never the global one).

The per-pool, per-lane and per-target gauges are not kept as ``Gauge`` children updated every
tick: a collector renders them at scrape time from the last :class:`Published` tick. A tick costs
one reference swap whatever the topology's size, and a pool, lane or target that leaves the
topology leaves the scrape with it (no stale series to remove by hand). Counters and histograms
(tick duration, scale actions, supply errors, demand reports, HTTP requests) are ordinary
prometheus-client objects; the scale-action series of a target that disappeared are removed.

Names follow Kueue / API Priority and Fairness habits: ``arklow_<object>_<quantity>_<unit>``,
counters ending in ``_total``. A pool's pressure with zero capacity and positive demand is ``+Inf``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Literal

import prometheus_client
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from arklow_pulumi.controller.ports import Published

POOL_STATES = ("idle", "steady", "constrained")
TICK_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
HTTP_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# Typed alias: the library function is unannotated.
_disable_created_metrics: Callable[[], None] = prometheus_client.disable_created_metrics


class _PublishedCollector(Collector):
    """Renders the gauges of the last published tick at scrape time."""

    def __init__(self) -> None:
        self.published: Published | None = None

    def describe(self) -> list[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        published = self.published
        if published is None:
            return
        tick = GaugeMetricFamily("arklow_published_tick", "Number of the last published tick")
        tick.add_metric([], float(published.tick))
        yield tick
        at = GaugeMetricFamily(
            "arklow_published_tick_timestamp_seconds", "Clock time of the last published tick"
        )
        at.add_metric([], published.time.timestamp())
        yield at
        yield from _pool_families(published)
        yield from _lane_families(published)
        yield from _target_families(published)


def _gauges(prefix: str, labels: list[str], specs: dict[str, str]) -> dict[str, GaugeMetricFamily]:
    return {
        key: GaugeMetricFamily(f"{prefix}_{key}", doc, labels=labels) for key, doc in specs.items()
    }


def _pool_families(published: Published) -> Iterator[Metric]:
    g = _gauges(
        "arklow_pool",
        ["pool", "resource"],
        {
            "capacity_units": "Pool capacity in units (static plus in-service replicas)",
            "demand_units": "Pool demand in units (sum of min(demand, limit) x cost)",
            "pressure_ratio": "Pool demand / capacity (+Inf with no capacity and some demand)",
            "desired_replicas": "Replicas the pool's scale targets are asked for",
        },
    )
    state = GaugeMetricFamily(
        "arklow_pool_state", "1 for the pool's current state", labels=["pool", "resource", "state"]
    )
    for name, pool in published.pools.items():
        labels = [name, pool.resource]
        g["capacity_units"].add_metric(labels, pool.capacity)
        g["demand_units"].add_metric(labels, pool.demand)
        pressure = math.inf if pool.pressure is None else pool.pressure
        g["pressure_ratio"].add_metric(labels, pressure)
        g["desired_replicas"].add_metric(labels, float(pool.desired_replicas))
        for s in POOL_STATES:
            state.add_metric([*labels, s], 1.0 if pool.state == s else 0.0)
    yield from g.values()
    yield state


def _lane_families(published: Published) -> Iterator[Metric]:
    g = _gauges(
        "arklow_lane",
        ["destination", "lane"],
        {
            "demand_units": "Last demand reported by the lane (raw, not capped by its limit)",
            "allocation_units": "Fair allocation of the lane",
            "admission_units": "Units the lane may run now",
            "held_units": "Work held back by pool sharing: min(demand, limit) - allocation",
            "report_stale": "1 when the lane has no demand report fresher than the TTL",
        },
    )
    for key, lane in published.lanes.items():
        destination, _, name = key.partition("/")
        labels = [destination, name]
        g["demand_units"].add_metric(labels, lane.demand)
        g["allocation_units"].add_metric(labels, lane.allocation)
        g["admission_units"].add_metric(labels, lane.admission)
        g["held_units"].add_metric(labels, lane.held)
        g["report_stale"].add_metric(labels, 1.0 if lane.stale else 0.0)
    yield from g.values()


def _target_families(published: Published) -> Iterator[Metric]:
    g = _gauges(
        "arklow_target",
        ["pool", "target"],
        {
            "desired_replicas": "Replicas the controller wants for the target",
            "in_service_replicas": "Replicas in service (counted as capacity)",
            "pending_replicas": "Replicas launched, not yet in service (never counted as capacity)",
            "min_replicas": "The target's lower bound",
            "max_replicas": "The target's upper bound",
        },
    )
    for pool_name, pool in published.pools.items():
        for name, target in pool.targets.items():
            labels = [pool_name, name]
            g["desired_replicas"].add_metric(labels, float(target.desired))
            g["in_service_replicas"].add_metric(labels, float(target.in_service))
            g["pending_replicas"].add_metric(labels, float(target.pending))
            g["min_replicas"].add_metric(labels, float(target.min))
            g["max_replicas"].add_metric(labels, float(target.max))
    yield from g.values()


class Metrics:
    """The controller's metrics; implements :class:`~arklow_pulumi.controller.ports.TickObserver`.

    ``clock`` (monotonic seconds) ages the last lease renewal between two ``leadership`` calls.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        # ``*_created`` series double every counter and histogram for nothing Prometheus uses;
        # the switch is process-wide in prometheus-client (one registry per process anyway).
        _disable_created_metrics()
        self.registry = CollectorRegistry()
        self._clock = clock
        self._lock = threading.Lock()
        self._published = _PublishedCollector()
        self.registry.register(self._published)
        r = self.registry
        self._tick_duration = Histogram(
            "arklow_tick_duration_seconds", "Duration of one tick", buckets=TICK_BUCKETS, registry=r
        )
        self._tick_overruns = Counter(
            "arklow_tick_overruns", "Ticks that took longer than the interval", registry=r
        )
        self._scale_actions = Counter(
            "arklow_scale_actions",
            "Changes of a target's desired replicas, by direction",
            ["target", "direction"],
            registry=r,
        )
        self._action_series: set[tuple[str, str]] = set()
        self._supply_errors = Counter(
            "arklow_supply_api_errors",
            "Supply API errors by kind and code",
            ["kind", "code"],
            registry=r,
        )
        self._demand_reports = Counter(
            "arklow_demand_reports", "Lane demand reports, by result", ["result"], registry=r
        )
        self._leader = Gauge("arklow_leader_status", "1 while this replica leads", registry=r)
        self._epoch = Gauge("arklow_leader_epoch", "Epoch of the lease as last seen", registry=r)
        self._transitions = Counter(
            "arklow_leader_transitions", "Times this replica gained or lost leadership", registry=r
        )
        self._renewal_age = Gauge(
            "arklow_leader_last_renewal_age_seconds",
            "Age of the lease's last renewal (NaN before the first)",
            registry=r,
        )
        self._renewal: tuple[float, float] | None = None  # (age at report, clock at report)
        self._renewal_age.set_function(self._current_renewal_age)
        self._was_leader = False
        self._http_requests = Counter(
            "arklow_http_requests",
            "HTTP requests served, by route, method and status code",
            ["route", "method", "code"],
            registry=r,
        )
        self._http_duration = Histogram(
            "arklow_http_request_duration_seconds",
            "Time to answer an HTTP request, by route",
            ["route"],
            buckets=HTTP_BUCKETS,
            registry=r,
        )

    # -- TickObserver ---------------------------------------------------------------------------

    def tick_done(self, published: Published, duration_s: float, overran: bool) -> None:
        self._published.published = published
        self._tick_duration.observe(duration_s)
        if overran:
            self._tick_overruns.inc()
        self._forget_removed_targets(published)

    def scale_action(self, target: str, direction: Literal["up", "down"]) -> None:
        with self._lock:
            self._action_series.add((target, direction))
            self._scale_actions.labels(target, direction).inc()

    def supply_error(self, kind: str, code: str) -> None:
        self._supply_errors.labels(kind, code).inc()

    def demand_reports(self, result: str, count: int) -> None:
        self._demand_reports.labels(result).inc(count)

    def leadership(self, leader: bool, epoch: int, renew_age_s: float | None) -> None:
        with self._lock:
            if leader != self._was_leader:
                self._transitions.inc()
                self._was_leader = leader
            self._renewal = None if renew_age_s is None else (renew_age_s, self._clock())
        self._leader.set(1.0 if leader else 0.0)
        self._epoch.set(float(epoch))

    # -- the HTTP face --------------------------------------------------------------------------

    def http_request(self, route: str, method: str, code: int, duration_s: float) -> None:
        self._http_requests.labels(route, method, str(code)).inc()
        self._http_duration.labels(route).observe(duration_s)

    def render(self) -> bytes:
        """The Prometheus text exposition of this registry (``CONTENT_TYPE``)."""
        return generate_latest(self.registry)

    # -- internals ------------------------------------------------------------------------------

    def _current_renewal_age(self) -> float:
        renewal = self._renewal
        if renewal is None:
            return math.nan
        age, at = renewal
        return age + max(0.0, self._clock() - at)

    def _forget_removed_targets(self, published: Published) -> None:
        with self._lock:
            if not self._action_series:
                return
            # the loop names a target "<pool>/<target>" (TargetId); the published pools key
            # their targets by name: either form keeps a series
            present = {
                form
                for pool_name, pool in published.pools.items()
                for name in pool.targets
                for form in (name, f"{pool_name}/{name}")
            }
            for series in [s for s in self._action_series if s[0] not in present]:
                self._action_series.discard(series)
                self._scale_actions.remove(*series)
