"""Who may run the controller on a store.

**SQLite** (the embedded default) is one controller: the process takes an exclusive ``flock`` on
``<database>.controller.lock`` beside the database file before anything else, and a second
``arklow controller run`` on the same file refuses to start with one line. The kernel releases
the lock when the holder exits, however it exits (``kill -9`` included), so a restart never finds
it stuck. Under that lock the process takes the lease row unconditionally, at epoch 1.

**PostgreSQL**: the lease row alone (no session advisory lock: those do not survive transaction
poolers). A replica takes the lease when it is free or expired by the database clock; a take-over
bumps the epoch, and every runtime write and resize is fenced by it (see
:mod:`arklow_pulumi.store.runtime`). A starting replica that finds the lease held waits once
for it to expire (a crashed holder stops renewing); if it is still renewed, it refuses to start.
``arklow controller run`` on PostgreSQL does not use :func:`take_leadership`: its processes are
replicas that stand by and take over (:mod:`.electing`, docs/controller-ha.md).
"""

from __future__ import annotations

import fcntl
import os
import socket
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from sqlalchemy.engine import make_url

from arklow_pulumi.core.errors import ArklowError
from arklow_pulumi.store.engine import Store
from arklow_pulumi.store.runtime import Lease, acquire_lease, read_lease, release_lease

LEASE_TTL_S = 15.0


class AlreadyRunning(ArklowError):
    """Another controller holds this store."""


def holder_id() -> str:
    """This process, as the lease names it: host, pid and a random suffix (pids are reused)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def lock_path(store: Store) -> Path | None:
    """The lock file beside a SQLite database; None for PostgreSQL."""
    if store.dialect != "sqlite":
        return None
    database = make_url(store.url).database
    assert database, "open_store refuses a SQLite store without a file"
    return Path(database).with_name(Path(database).name + ".controller.lock")


@dataclass
class Leadership:
    """The lease this process holds, and the lock file that backs it on SQLite."""

    store: Store
    lease: Lease
    lock: IO[str] | None

    def release(self) -> None:
        try:
            release_lease(self.store, self.lease)
        finally:
            if self.lock is not None:
                self.lock.close()  # closing the descriptor drops the flock


def take_leadership(
    store: Store, ttl_s: float = LEASE_TTL_S, sleep: Callable[[float], None] = time.sleep
) -> Leadership:
    """Become the store's controller, or raise :class:`AlreadyRunning` (one line)."""
    path = lock_path(store)
    lock = None if path is None else _lock_file(path, store)
    me = holder_id()
    try:
        lease = acquire_lease(store, me, ttl_s, force=lock is not None)
        if lease is None:
            # A holder that stopped renewing (a crashed controller) loses the lease after ttl_s
            # by the database clock: wait that long once, so a restart after kill -9 works.
            state = read_lease(store)
            sleep(max(0.0, ttl_s - (state.age_s or 0.0)) + 0.5)
            lease = acquire_lease(store, me, ttl_s)
        if lease is None:
            state = read_lease(store)
            raise AlreadyRunning(
                f"store {store.display_url}: controller {state.holder!r} holds the lease "
                f"(epoch {state.epoch}, renewed {state.age_s or 0:.0f}s ago); not starting"
            )
    except BaseException:
        if lock is not None:
            lock.close()
        raise
    return Leadership(store, lease, lock)


def _lock_file(path: Path, store: Store) -> IO[str]:
    handle = path.open("a+")
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise AlreadyRunning(
            f"store {store.display_url}: a controller is already running on it ({holder}); "
            "SQLite stores run one controller"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
    handle.flush()
    return handle
