"""The controller process's heap and the cyclic garbage collector.

A controller holds a large, long-lived heap (the topology, its compiled index arrays, the last
published tick: at 10,000 lanes, millions of objects) and every tick makes a few hundred thousand
short-lived ones. CPython's collector then runs a full collection every few ticks, and each one
walks the whole long-lived heap: measured at 10,000 lanes, the collector took more time than
everything else outside the allocation together.

:func:`settle` is what the process does after a tick that (re)loaded the topology: one full
collection, then :func:`gc.freeze` moves every object still alive out of the collector's reach
(Python's documented remedy for a long-lived heap, as in a pre-forking server). Reference counting
still frees them as usual; only reference cycles among them wait for the next :func:`settle`,
which unfreezes everything first so that nothing frozen is kept past it.

During a tick (:func:`collected_at_end`) the collector does not run on its own: a tick makes a
few hundred thousand short-lived objects, and with the default thresholds the collector would
run a few hundred times in it, each run walking the objects the tick still holds. Reference
counting frees nearly all of them as they go; one young-generation collection at the end of the
tick, counted in the tick's duration, looks at what is left once. It runs after the tick has let
go of its observation (every lane's report, demand, the described groups), so the collector walks
only what the tick keeps: the published tick, the decision it returns, the controller's memory.
That is what the collection costs, so the tick keeps those light: columns of floats as
``array('d')`` (neither tracked nor walked), maps of strings to floats (a dict holding no
container is not tracked), ids made once per topology, unchanged rows kept rather than rebuilt.
A reference cycle made during a tick is freed by that tick's collection or, having survived into
an older generation, by the collector's usual older-generation runs.

This is a process setting: ``arklow controller run`` turns it on (``TickSettings.settle_heap``);
a controller embedded in another program (tests, the scenario runner) leaves the collector alone.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collected_at_end(on: bool) -> Iterator[None]:
    """No automatic collection inside the block, one young-generation collection at its end
    (``on``; and only when the collector was enabled to begin with)."""
    if not on or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(0)


def settle() -> None:
    gc.unfreeze()
    gc.collect()
    gc.freeze()
