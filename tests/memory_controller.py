"""An in-memory :class:`~arklow_pulumi.controller.ports.ControllerPort` (a fake of the project's
own seam, for the HTTP API's tests and benchmark): a fixed set of lanes, a sink that keeps the last
report of each lane, and ticks published by the test."""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import UTC, datetime

from arklow_pulumi.controller.ports import (
    DemandReport,
    LaneView,
    LeaderView,
    PoolView,
    Published,
    TargetView,
)


class MemorySink:
    def __init__(self, lanes: Iterable[str]) -> None:
        self.lanes = frozenset(lanes)
        self.reports: dict[str, float] = {}
        self.batches = 0
        self.fail = False
        self._lock = threading.Lock()

    def known_lanes(self) -> Collection[str]:
        return self.lanes

    def accept(self, reports: Sequence[DemandReport]) -> int:
        if self.fail:
            raise ConnectionError("store down at postgresql://arklow:hunter2@db/arklow")
        with self._lock:
            for report in reports:
                self.reports[report.lane] = report.demand
            self.batches += 1
        return len(reports)


class MemoryPort:
    def __init__(self, lanes: Iterable[str], interval_s: float = 10.0) -> None:
        self.sink = MemorySink(lanes)
        self.interval = interval_s
        self.published: Published | None = None
        self.leader_view = LeaderView(True, "replica-a", 1)
        self.is_ready = True

    @property
    def interval_s(self) -> float:
        return self.interval

    def latest(self) -> Published | None:
        return self.published

    def demand_sink(self) -> MemorySink:
        return self.sink

    def leader(self) -> LeaderView:
        return self.leader_view

    def ready(self) -> bool:
        return self.is_ready

    def publish(
        self,
        admission: Mapping[str, float],
        tick: int | None = None,
        time: datetime | None = None,
        pools: Mapping[str, PoolView] | None = None,
    ) -> Published:
        """Publish a tick where each lane's admission (and allocation) is given; demand from the
        sink's last report."""
        number = tick if tick is not None else (self.published.tick + 1 if self.published else 1)
        lanes = {
            key: LaneView(
                demand=self.sink.reports.get(key, 0.0),
                allocation=value,
                held=0.0,
                admission=value,
            )
            for key, value in admission.items()
        }
        self.published = Published(
            tick=number,
            time=time or datetime.now(UTC),
            lanes=lanes,
            pools=dict(pools) if pools is not None else {"gpu-shared": sample_pool()},
        )
        return self.published


def sample_pool() -> PoolView:
    return PoolView(
        resource="gpu",
        capacity=16.0,
        demand=20.0,
        pressure=1.25,
        state="constrained",
        desired_replicas=5,
        targets={"asg:us-east-1/gpu": TargetView(desired=5, in_service=4, pending=1, min=1, max=8)},
    )
