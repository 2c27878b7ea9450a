"""Where the HTTP API's demand reports go: the runtime store.

``known_lanes`` is the lanes of the topology the last tick (or the start) read: a lane added by a
``pulumi up`` is known from the next tick on. A batch is stored whole, in one transaction, stamped
with the controller's clock. Reports are the clients' input, not the controller's state: any
process stores them, leading or standing by, unfenced, and the leader reads them from the store on
its next tick (docs/controller-ha.md).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

from arklow_pulumi.controller.ports import Clock, DemandReport
from arklow_pulumi.core.topology import Topology
from arklow_pulumi.store.engine import Store
from arklow_pulumi.store.runtime import store_demand_reports


class ReportsOwner(Protocol):
    """What the sink needs of the controller that owns it."""

    @property
    def store(self) -> Store: ...

    @property
    def clock(self) -> Clock: ...


class StoreDemandSink:
    def __init__(self, owner: ReportsOwner) -> None:
        self._owner = owner
        self._lanes: frozenset[str] = frozenset()
        self._topology: Topology | None = None

    def refresh(self, topo: Topology) -> None:
        """Know ``topo``'s lanes (called every tick; the topology changes only on reload)."""
        if topo is not self._topology:
            self._lanes = frozenset(topo.lanes_by_key)
            self._topology = topo

    def known_lanes(self) -> Collection[str]:
        return self._lanes

    def accept(self, reports: Sequence[DemandReport]) -> int:
        owner = self._owner
        rows = [(r.lane, r.demand) for r in reports]
        return store_demand_reports(owner.store, None, rows, owner.clock.time())
