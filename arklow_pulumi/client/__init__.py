"""The lane client: report demand to the Arklow controller and run work within its admission.

::

    from arklow_pulumi.client import Client

    with Client("http://127.0.0.1:8470", token=TOKEN) as client:
        lane = client.lane("search/interactive", limit=8, floor=1)
        lane.report(12)               # sent in the background, batched with other lanes
        with lane.slot():             # at most the lane's admission, never above its limit
            ...

    async with AsyncClient(url, token=TOKEN) as client:
        lane = client.lane("search/interactive", limit=8)
        async with lane.slot():
            ...

Arklow keeps controlling each lane locally: when the controller cannot be reached the lane keeps
its last admission for ``grace_s`` (60 s by default), then falls back to its ``floor`` (0 by
default: set it to what the lane may always run).
"""

from __future__ import annotations

from arklow_pulumi.client.admission import Mode
from arklow_pulumi.client.asynchronous import AsyncClient, AsyncLane
from arklow_pulumi.client.exchange import ClientError
from arklow_pulumi.client.slots import SlotTimeout
from arklow_pulumi.client.threaded import Client, Lane

__all__ = ["AsyncClient", "AsyncLane", "Client", "ClientError", "Lane", "Mode", "SlotTimeout"]
