"""Interrupting ``pulumi`` the hard ways, for the tests of issue 8 item 2.

- :func:`run_killed_when`: start a pulumi command in a session of its own, poll a count (rows in
  the store) and SIGKILL every process of the run (the CLI, the language host, the dynamic
  providers) once the count reaches a mark, as a CI runner killing a job would.
- :class:`CuttingProxy`: a TCP proxy in front of PostgreSQL that, once armed, swallows the
  ``CommandComplete COMMIT`` answering a commit that has landed and drops every connection, then
  refuses new ones for a few seconds: the commit is in the database, the client sees only the
  connection drop (a store outage mid-update).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from tests.e2e.pulumi_cli import PULUMI, Stack

IDENTITY_TABLES = ("destinations", "pools", "memberships", "scale_targets")
COUNT_OWNED = " + ".join(
    f"(SELECT count(*) FROM {table} WHERE create_id IS NOT NULL)" for table in IDENTITY_TABLES
)


def sqlite_owned_rows(path: Path) -> Callable[[], int]:
    """Rows a resource created, read without creating or locking anything (0 before the schema)."""
    import sqlite3

    def count() -> int:
        if not path.exists():
            return 0
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as conn:
                return int(conn.execute(f"SELECT {COUNT_OWNED}").fetchone()[0])
        except sqlite3.OperationalError:  # no tables yet
            return 0

    return count


def postgres_owned_rows(libpq_url: str) -> Callable[[], int]:
    import psycopg

    def count() -> int:
        with psycopg.connect(libpq_url, autocommit=True) as conn:
            try:
                row = conn.execute(f"SELECT {COUNT_OWNED}").fetchone()
            except psycopg.errors.UndefinedTable:
                return 0
            return int(row[0]) if row else 0

    return count


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def run_killed_when(
    stack: Stack, args: list[str], reached: Callable[[int], bool], count: Callable[[], int]
) -> tuple[bool, int]:
    """Run ``pulumi <args>`` and SIGKILL all of it once ``reached(count())``. Returns (killed,
    the count seen then); (False, count) when the command ended first."""
    process = subprocess.Popen(
        [str(PULUMI), *args, "--non-interactive"],
        cwd=stack.project,
        env=stack.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        while process.poll() is None:
            seen = count()
            if reached(seen):
                victims = [process.pid, *_descendants(process.pid)]
                for pid in victims:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                process.wait(timeout=30)
                return True, seen
            time.sleep(0.02)
        return False, count()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)


class CuttingProxy:
    """127.0.0.1:<port> -> PostgreSQL; see the module docstring. Needs ``sslmode=disable`` on the
    client (the proxy reads the plain protocol: a type byte and a length per message)."""

    def __init__(self, upstream: tuple[str, int], outage_seconds: float = 3.0) -> None:
        self.upstream = upstream
        self.outage_seconds = outage_seconds
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self._trigger: Callable[[], bool] | None = None
        self._refuse_until = 0.0
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._trigger_lock = threading.Lock()
        self.cuts = 0
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self, trigger: Callable[[], bool]) -> None:
        """Cut at the first COMMIT answered once ``trigger()`` is true (checked at each one)."""
        self._trigger = trigger

    def close(self) -> None:
        self._closed = True
        self.listener.close()
        self._drop_all()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if time.monotonic() < self._refuse_until:
                client.close()
                continue
            try:
                server = socket.create_connection(self.upstream)
            except OSError:
                client.close()
                continue
            with self._lock:  # a cut between the check above and here must still drop these
                cut_meanwhile = time.monotonic() < self._refuse_until
                if not cut_meanwhile:
                    self._sockets |= {client, server}
            if cut_meanwhile:
                client.close()
                server.close()
                continue
            threading.Thread(target=self._pipe, args=(client, server), daemon=True).start()
            threading.Thread(target=self._answers, args=(server, client), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        self._close_pair(source, sink)

    def _answers(self, server: socket.socket, client: socket.socket) -> None:
        buffer = b""
        try:
            while data := server.recv(65536):
                buffer += data
                while len(buffer) >= 5:
                    size = 1 + int.from_bytes(buffer[1:5], "big")
                    if len(buffer) < size:
                        break
                    message, buffer = buffer[:size], buffer[size:]
                    if message[:1] == b"C" and message[5:11] == b"COMMIT" and self._cut_now():
                        return
                    client.sendall(message)
        except OSError:
            pass
        self._close_pair(server, client)

    def _cut_now(self) -> bool:
        with self._trigger_lock:  # one cut, even when two commits are answered at once
            trigger = self._trigger
            if trigger is None or not trigger():
                return False
            self._trigger = None
            self.cuts += 1
            with self._lock:  # read under the same lock by _accept
                self._refuse_until = time.monotonic() + self.outage_seconds
        self._drop_all()
        return True

    def _drop_all(self) -> None:
        with self._lock:
            doomed, self._sockets = self._sockets, set()
        for sock in doomed:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _close_pair(self, one: socket.socket, other: socket.socket) -> None:
        with self._lock:
            self._sockets -= {one, other}
        for sock in (one, other):
            # shutdown first: close() alone does not end a recv() another thread is blocked in
            # (the pipe's other direction), so the peer would never see the connection end and
            # a client waiting for an answer would wait for ever
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                sock.close()
