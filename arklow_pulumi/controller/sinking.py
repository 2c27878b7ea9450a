"""Where the HTTP API's demand reports go: the runtime store, under the controller's lease.

``known_lanes`` is the lanes of the topology the last tick (or the start) read: a lane added by a
``pulumi up`` is known from the next tick on. A batch is stored whole, in one fenced transaction,
stamped with the controller's clock.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from arklow_pulumi.controller.ports import DemandReport
from arklow_pulumi.core.topology import Topology
from arklow_pulumi.store.runtime import LeaseLost, store_demand_reports

if TYPE_CHECKING:
    from arklow_pulumi.controller.ticking import Controller


class StoreDemandSink:
    def __init__(self, controller: Controller) -> None:
        self._controller = controller
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
        controller = self._controller
        # Replicas (PostgreSQL, an elector) store reports whether they lead or not, unfenced:
        # they are the clients' input, and the leader reads them from the store.
        lease = None if controller.elector is not None else controller.lease
        if lease is None and controller.elector is None:
            raise LeaseLost("this controller does not hold the lease; no report was stored")
        rows = [(r.lane, r.demand) for r in reports]
        return store_demand_reports(controller.store, lease, rows, controller.clock.time())
