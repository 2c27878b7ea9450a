"""Live SDK clients, made on first use and never pickled.

Supplies are pickled into Pulumi state with the providers that hold them (docs/supply.md): they keep
configuration only, and a :class:`ClientCache` that pickles as empty.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Hashable
from typing import Any

from arklow_pulumi.supply.retrying import RetryPolicy


class ClientCache:
    """One client per key (a region, a client kind), shared by concurrent provider calls."""

    def __init__(self) -> None:
        self._clients: dict[Hashable, Any] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                client = self._clients[key] = make()
            return client

    def __len__(self) -> int:
        return len(self._clients)

    def __getstate__(self) -> dict[str, Any]:
        return {}

    def __setstate__(self, _state: dict[str, Any]) -> None:
        self.__init__()  # type: ignore[misc]


class LockedState:
    """A value guarded by ``self._lock`` that pickles without it (a lock cannot be pickled) and
    gets a new one when unpickled."""

    _lock: threading.Lock

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()


class CloudBinding:
    """What a cloud's binding keeps beside its configuration: its retry policy, a count of its
    API calls by name, and its live clients."""

    def __init__(self, retry: RetryPolicy | None) -> None:
        self.retry = retry or RetryPolicy()
        self.api_calls: Counter[str] = Counter()
        self._clients = ClientCache()
