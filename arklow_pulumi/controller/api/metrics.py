"""Prometheus metrics of the controller, on a registry of its own (never the global one).

The per-pool, per-lane and per-target gauges are not kept as ``Gauge`` children updated every
tick: they are written as text from the last :class:`Published` tick (:mod:`.exposition`), once
per tick, at the first scrape after it. A tick costs one reference swap whatever the topology's
size, and a pool, lane or target that leaves the topology leaves the scrape with it (no stale
series to remove by hand). :meth:`Metrics.render` joins that text to the registry's. Counters
and histograms (tick duration, scale actions, supply errors, demand reports, HTTP requests) are
ordinary prometheus-client objects; the scale-action and supply-error series of a target that
disappeared are removed.

One label set names one object everywhere, so series join without relabelling: a pool is
``{pool}`` (``resource`` beside it on the pool gauges), a lane ``{destination, lane}``, a scale
target ``{pool, target}`` (the target's name within its pool), on the gauges and on
``arklow_scale_actions_total`` and ``arklow_supply_api_errors_total`` alike. Only the replica
that leads exports the gauges of the ticks it made: a replica that stops leading drops them (its
last tick would otherwise be exported for ever beside the new leader's); every replica exports
the tick it serves on ``/v1/admission`` (``arklow_served_tick_timestamp_seconds``), the
configured interval, its leadership and ``arklow_build_info``. docs/monitoring.md lists every
metric; ``deploy/`` holds alerting rules and a dashboard built on them.

Names follow Kueue / API Priority and Fairness habits: ``arklow_<object>_<quantity>_<unit>``,
counters ending in ``_total``. A pool's pressure with zero capacity and positive demand is ``+Inf``.
"""

from __future__ import annotations

import math
import platform
import threading
import time
from collections.abc import Callable
from importlib import metadata
from typing import Literal

import prometheus_client
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from arklow_pulumi.controller.api.exposition import number, render_published
from arklow_pulumi.controller.ports import Published

TICK_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
HTTP_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# Label values come from closed sets: a request with an invented method counts as "other", so no
# caller, authenticated or not, can add series (routes are templates; unknown paths are "other").
HTTP_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"})

# Typed alias: the library function is unannotated.
_disable_created_metrics: Callable[[], None] = prometheus_client.disable_created_metrics


def _distribution_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "unknown"


def build_labels() -> dict[str, str]:
    """What ``arklow_build_info`` says: the package's version, Python's, the filling kernel's (the
    package's own: the kernel is compiled into it)."""
    return {
        "version": _distribution_version("arklow-pulumi"),
        "python": platform.python_version(),
        "kernel": _distribution_version("arklow-pulumi"),
    }


class Metrics:
    """The controller's metrics; implements :class:`~arklow_pulumi.controller.ports.TickObserver`.

    ``clock`` (monotonic seconds) ages the last lease renewal between two ``leadership`` calls.
    ``interval_s``: the loop's configured interval, exported as ``arklow_tick_interval_seconds``
    (the alerting rules count lateness in intervals; ``None``: not exported).
    """

    def __init__(
        self, clock: Callable[[], float] = time.monotonic, interval_s: float | None = None
    ) -> None:
        # ``*_created`` series double every counter and histogram for nothing Prometheus uses;
        # the switch is process-wide in prometheus-client (one registry per process anyway).
        _disable_created_metrics()
        self.registry = CollectorRegistry()
        self._clock = clock
        self._lock = threading.Lock()
        self._published: Published | None = None
        self._published_text: tuple[Published | None, bytes] = (None, b"")
        self._served: Callable[[], Published | None] | None = None
        r = self.registry
        self._build_info = Gauge(
            "arklow_build_info",
            "1, labelled with the controller's version, Python's and the filling kernel's",
            list(build_labels()),
            registry=r,
        )
        self._build_info.labels(**build_labels()).set(1.0)
        if interval_s is not None:
            Gauge(
                "arklow_tick_interval_seconds",
                "The loop's configured interval between ticks",
                registry=r,
            ).set(interval_s)
        self._tick_duration = Histogram(
            "arklow_tick_duration_seconds", "Duration of one tick", buckets=TICK_BUCKETS, registry=r
        )
        self._tick_overruns = Counter(
            "arklow_tick_overruns", "Ticks that took longer than the interval", registry=r
        )
        self._scale_actions = Counter(
            "arklow_scale_actions",
            "Writes that changed a target's group, by direction (the value written against the "
            "one it replaced: a group's size, or an autoscaled MIG's autoscaler minimum)",
            ["pool", "target", "direction"],
            registry=r,
        )
        self._supply_errors = Counter(
            "arklow_supply_api_errors",
            "Failed describes or writes of a target's group, by the target's kind and the error",
            ["pool", "target", "kind", "error"],
            registry=r,
        )
        # the label values of each per-target counter's series, removed with their target
        self._target_series: dict[Counter, set[tuple[str, ...]]] = {
            self._scale_actions: set(),
            self._supply_errors: set(),
        }
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
            "Time to answer an HTTP request, by route, method and status code",
            ["route", "method", "code"],
            buckets=HTTP_BUCKETS,
            registry=r,
        )

    # -- TickObserver ---------------------------------------------------------------------------

    def tick_done(self, published: Published, duration_s: float, overran: bool) -> None:
        self._published = published
        self._tick_duration.observe(duration_s)
        if overran:
            self._tick_overruns.inc()
        self._forget_removed_targets(published)

    def scale_action(self, pool: str, target: str, direction: Literal["up", "down"]) -> None:
        self._count_for_target(self._scale_actions, (pool, target, direction))

    def supply_error(self, pool: str, target: str, kind: str, error: str) -> None:
        self._count_for_target(self._supply_errors, (pool, target, kind, error))

    def demand_reports(self, result: str, count: int) -> None:
        self._demand_reports.labels(result).inc(count)

    def leadership(self, leader: bool, epoch: int, renew_age_s: float | None) -> None:
        with self._lock:
            if leader != self._was_leader:
                self._transitions.inc()
                self._was_leader = leader
            self._renewal = None if renew_age_s is None else (renew_age_s, self._clock())
            if not leader:
                # the gauges of this replica's own ticks go with its leadership: the new leader
                # exports its own, and one object is never exported twice
                self._published = None
        self._leader.set(1.0 if leader else 0.0)
        self._epoch.set(float(epoch))

    # -- the HTTP face --------------------------------------------------------------------------

    def serving(self, source: Callable[[], Published | None]) -> None:
        """Where the tick this replica serves on ``/v1/admission`` is read at each scrape (the
        controller's ``latest``: on a standby, the leader's last tick as read from the store)."""
        self._served = source

    def http_request(self, route: str, method: str, code: int, duration_s: float) -> None:
        method = method if method in HTTP_METHODS else "other"
        status = str(code if 100 <= code <= 599 else 500)
        self._http_requests.labels(route, method, status).inc()
        self._http_duration.labels(route, method, status).observe(duration_s)

    def render(self) -> bytes:
        """The Prometheus text exposition (``CONTENT_TYPE``): the registry's counters and
        histograms, the tick served, then the gauges of the last published tick."""
        published = self._published
        cached_for, text = self._published_text
        if cached_for is not published:
            text = b"" if published is None else render_published(published).encode()
            self._published_text = (published, text)
        return generate_latest(self.registry) + self._served_text() + text

    # -- internals ------------------------------------------------------------------------------

    def _current_renewal_age(self) -> float:
        renewal = self._renewal
        if renewal is None:
            return math.nan
        age, at = renewal
        return age + max(0.0, self._clock() - at)

    def _served_text(self) -> bytes:
        source = self._served
        served = None if source is None else source()
        if served is None:
            return b""
        name = "arklow_served_tick_timestamp_seconds"
        return (
            f"# HELP {name} Clock time of the tick this replica serves on /v1/admission "
            "(stale past 2 intervals)\n"
            f"# TYPE {name} gauge\n"
            f"{name} {number(served.time.timestamp())}\n"
        ).encode()

    def _count_for_target(self, counter: Counter, labels: tuple[str, ...]) -> None:
        """``labels`` start with the target's (pool, target)."""
        with self._lock:
            self._target_series[counter].add(labels)
            counter.labels(*labels).inc()

    def _forget_removed_targets(self, published: Published) -> None:
        with self._lock:
            if not any(self._target_series.values()):
                return
            present = {
                (pool_name, name)
                for pool_name, pool in published.pools.items()
                for name in pool.targets
            }
            for counter, series in self._target_series.items():
                for labels in [s for s in series if s[:2] not in present]:
                    series.discard(labels)
                    counter.remove(*labels)
