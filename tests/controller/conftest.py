"""Controller test fixtures: a SQLite store holding a topology (or a store on each dialect), the
in-memory supply, a fake clock and a controller wired to them (the same classes the process runs)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest

from arklow_pulumi.controller.ports import Published
from arklow_pulumi.controller.tick.ticking import Controller, TickSettings
from arklow_pulumi.core.deciding import TargetId
from arklow_pulumi.core.topology import Topology
from arklow_pulumi.store.engine import Store, close_stores, open_store, reading
from arklow_pulumi.store.runtime import Lease, acquire_lease
from arklow_pulumi.store.snapshots import load_all
from arklow_pulumi.supply.groups import GroupState
from arklow_pulumi.supply.memory import InMemorySupply
from arklow_pulumi.supply.routing import SupplyRouter
from tests.controller_process import put_topology as put_topology
from tests.store import postgres_server

START = 1_800_000_000.0


@dataclass
class FakeClock:
    """Wall and monotonic time that move only when a test says so."""

    now: float = START
    mono: float = 1000.0
    steps: list[float] = field(default_factory=list)

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.mono

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.mono += seconds


@dataclass
class RecordingObserver:
    """A :class:`~arklow_pulumi.controller.ports.TickObserver` that keeps what it was told."""

    ticks: list[tuple[int, bool]] = field(default_factory=list)
    actions: list[tuple[str, str, str]] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    epochs: list[int] = field(default_factory=list)

    def tick_done(self, published: Published, duration_s: float, overran: bool) -> None:
        self.ticks.append((published.tick, overran))

    def scale_action(self, pool: str, target: str, direction: Literal["up", "down"]) -> None:
        self.actions.append((pool, target, direction))

    def supply_error(self, pool: str, target: str, kind: str, error: str) -> None:
        self.errors.append((kind, error))

    def demand_reports(self, result: str, count: int) -> None:
        pass

    def leadership(self, leader: bool, epoch: int, renew_age_s: float | None) -> None:
        self.epochs.append(epoch)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    yield open_store(f"sqlite:///{tmp_path / '.arklow' / 'arklow.db'}")
    close_stores()


@pytest.fixture(scope="module")
def postgres() -> Iterator[postgres_server.Cluster]:
    yield postgres_server.cluster()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh store on each dialect: a SQLite file, a PostgreSQL database."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'arklow.db'}"
    else:
        url = request.getfixturevalue("postgres").create_database()
    yield open_store(url)
    close_stores()


def stored_topology(store: Store) -> Topology:
    with reading(store) as conn:
        return load_all(conn)


def groups_for(topo: Topology, **desired: int) -> InMemorySupply:
    """An in-memory supply with a group per target: [min, max] from the target, its size from
    ``desired`` (by target name) or the target's ``replicas``."""
    supply = InMemorySupply()
    for pool in topo.pools.values():
        for t in pool.scale_targets:
            size = desired.get(t.name, t.replicas)
            supply.add(GroupState(t.group, size, size, 0, t.min_replicas, t.max_replicas))
    return supply


def tid(pool: str, name: str) -> TargetId:
    return TargetId(pool, name)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def lease(store: Store) -> Lease:
    taken = acquire_lease(store, "test-controller", 15.0, force=True)
    assert taken is not None
    return taken


def make_controller(
    store: Store,
    supply: InMemorySupply | SupplyRouter,
    lease: Lease | None,
    clock: FakeClock,
    **settings: object,
) -> Controller:
    controller = Controller(
        store,
        supply if isinstance(supply, SupplyRouter) else SupplyRouter.of(supply),
        lease,
        settings=TickSettings(**settings),  # type: ignore[arg-type]
        clock=clock,
        say=lambda line: None,
    )
    controller.restore()
    return controller
