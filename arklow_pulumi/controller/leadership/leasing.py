"""The SQLite elector: one controller per database file, leading for as long as it lives.

SQLite is the degenerate case of the :class:`~..ports.Elector` interface. :func:`take_leadership`
takes an exclusive ``flock`` on ``<database>.controller.lock`` beside the database file before
anything else, and a second ``arklow controller run`` on the same file refuses to start with one
line (:class:`AlreadyRunning`). The kernel releases the lock when the holder exits, however it
exits (``kill -9`` included), so a restart never finds it stuck. Under that lock the process takes
the lease row unconditionally, at epoch 1, and leads until it stops: :meth:`SoleElector.run` says
``started`` at once and ``stopped`` at the end. There is no renewal to miss; every runtime write
is still fenced by the lease in the store (:mod:`arklow_pulumi.store.runtime`), and a lease found
taken (only by hand: the lock keeps other controllers out) ends the process's leadership for good.

PostgreSQL replicas elect a leader through the lease row instead (:mod:`.electing`).
"""

from __future__ import annotations

import contextlib
import fcntl
import math
import os
import socket
import threading
import uuid
from pathlib import Path
from typing import IO

from arklow_pulumi.controller.ports import LeaderCallbacks, LeaderView, TickObserver
from arklow_pulumi.core.errors import ArklowError
from arklow_pulumi.store.engine import Store, StoreError
from arklow_pulumi.store.runtime import Lease, LeaseLost, acquire_lease, release_lease

# Nothing judges the SQLite lease's age (the lock file keeps others out); the row keeps one anyway.
LEASE_TTL_S = 15.0


class AlreadyRunning(ArklowError):
    """Another controller holds this store."""


def holder_id() -> str:
    """This process, as the lease names it: host, pid and a random suffix (pids are reused)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def lock_path(store: Store) -> Path:
    """The lock file beside a SQLite database."""
    database = store.database_file
    assert database is not None, "open_store refuses a SQLite store without a file"
    return database.with_name(database.name + ".controller.lock")


class SoleElector:
    """The one controller of a SQLite store (see the module doc)."""

    def __init__(
        self, store: Store, lease: Lease, lock: IO[str], observer: TickObserver | None = None
    ) -> None:
        self.store = store
        self.lease = lease
        self.lock: IO[str] | None = lock
        self.observer = observer
        self._held = True
        if observer is not None:
            observer.leadership(True, lease.epoch, 0.0)

    def run(self, stop: threading.Event, callbacks: LeaderCallbacks) -> None:
        """Lead from now until ``stop``; raises :class:`LeaseLost` if the lease was taken."""
        callbacks.started(self.lease)
        try:
            while self._held and not stop.wait(0.25):
                pass
        finally:
            lost = not self._held
            self._held = False
            callbacks.stopped(self.lease)
            self.release()
        if lost:
            raise LeaseLost.taken_over(self.lease)

    @property
    def holder(self) -> str:
        return self.lease.holder

    def leading(self) -> Lease | None:
        return self.lease if self._held else None

    def view(self) -> LeaderView:
        if self._held:
            return LeaderView(True, self.lease.holder, self.lease.epoch)
        return LeaderView(False, None, self.lease.epoch)

    def lost(self, lease: Lease) -> None:
        if lease == self.lease and self._held:
            self._held = False
            if self.observer is not None:
                self.observer.leadership(False, lease.epoch, None)

    @property
    def fence_window_s(self) -> float:
        return math.inf  # no other controller can take the lease while the lock is held

    def release(self) -> None:
        self._held = False
        lock, self.lock = self.lock, None
        if lock is None:
            return
        try:
            with contextlib.suppress(StoreError):  # nobody else can take it: it may stay
                release_lease(self.store, self.lease)
        finally:
            lock.close()  # closing the descriptor drops the flock


def take_leadership(store: Store, observer: TickObserver | None = None) -> SoleElector:
    """Become the SQLite store's controller, or raise :class:`AlreadyRunning` (one line)."""
    if store.dialect != "sqlite":
        raise ValueError(f"store {store.display_url}: the lock file is for SQLite stores only")
    lock = _lock_file(lock_path(store), store)
    try:
        lease = acquire_lease(store, holder_id(), LEASE_TTL_S, force=True)
        if lease is None:  # only if the row changed under the lock: a hand-made write
            raise AlreadyRunning(f"store {store.display_url}: the controller lease is in use")
    except BaseException:
        lock.close()
        raise
    return SoleElector(store, lease, lock, observer)


def _lock_file(path: Path, store: Store) -> IO[str]:
    # private to its owner, as the database beside it (opened for appending and reading)
    handle = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600), "a+")
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
