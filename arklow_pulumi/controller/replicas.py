"""The tick loop of a controller replica on PostgreSQL: lead or stand by, tick by tick.

Each turn asks the :class:`~.electing.Elector` whether this replica leads *now*. A new lease first
reloads the runtime state the previous leader wrote (:meth:`Controller.lead`), then ticks under
it; a standby serves the last tick the leader published (:meth:`Controller.follow`) and stores
demand reports for it. A fenced write that finds the lease taken over steps down at once; a store
or supply failure is logged and the loop goes on (no restart after the store comes back).
"""

from __future__ import annotations

from collections.abc import Callable

from arklow_pulumi.controller.electing import Elector
from arklow_pulumi.controller.ticking import Controller
from arklow_pulumi.core.errors import ArklowError
from arklow_pulumi.store.runtime import Lease, LeaseLost


def run_replica_loop(
    controller: Controller, elector: Elector, wait: Callable[[float], bool]
) -> None:
    """Until ``wait(delay)`` says stop (it returns True)."""
    acting: Lease | None = None
    while True:
        delay = controller.interval_s
        lease = elector.leading()
        try:
            if lease is None:
                if acting is not None:
                    controller.step_down(acting)
                    acting = None
                controller.follow()
            else:
                if lease != acting:
                    controller.lead(lease)
                    acting = lease
                delay = controller.tick().next_delay_s
        except LeaseLost:
            if lease is not None:
                elector.lost(lease)
                controller.step_down(lease)
            acting = None
            delay = 0.0
        except ArklowError as exc:
            controller.failed(exc)
        if wait(delay):
            return
