"""``arklow controller run`` as the process tests (and ``bench/bench_prometheus.py``) start it: a
topology (built, or a document) written into a store through the store's own snapshot diff (as
``pulumi up`` would; the controller and store tests arrange their stores with it too), the process with its output in files (no pipe to fill), its address read from its
``listening on`` line, and the one wait they all poll with: a deadline, nothing asserted on timing.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tests.arklow_cli import ARKLOW

if TYPE_CHECKING:
    from arklow_pulumi.core.topology import Topology
    from arklow_pulumi.store.engine import Store

T = TypeVar("T")


def eventually(
    probe: Callable[[], T | None], what: str, deadline_s: float = 120.0, every: float = 0.2
) -> T:
    """``probe()``'s first truthy answer, asked every ``every`` seconds; fails naming ``what`` if
    none comes before the deadline."""
    end = time.monotonic() + deadline_s
    while True:
        answer = probe()
        if answer:
            return answer
        if time.monotonic() > end:
            raise AssertionError(f"gave up waiting for {what} (last answer {answer!r})")
        time.sleep(every)


def put_topology(store: Store, topo: Topology) -> None:
    """Replace what ``store`` holds with ``topo`` (test arrangement, as ``pulumi up`` would)."""
    from arklow_pulumi.store.engine import writing
    from arklow_pulumi.store.snapshots import load_all, write_changes

    with writing(store) as conn:
        write_changes(conn, load_all(conn), topo)


def store_topology(url: str, document: Mapping[str, Any]) -> str:
    """Replace what the store at ``url`` holds with the topology ``document``; returns ``url``."""
    from arklow_pulumi.reading.parsing import parse_topology
    from arklow_pulumi.reading.spec import build_topology
    from arklow_pulumi.store.engine import close_stores, open_store

    try:
        put_topology(open_store(url), build_topology(parse_topology(dict(document))))
    finally:
        close_stores()
    return url


class ControllerProcess:
    """One ``arklow controller run --listen 127.0.0.1:0`` on ``store_url``, started in ``cwd``
    (default ``work``) with ``env`` (default this process's); stdout and stderr go to
    ``work/out.txt`` and ``work/err.txt``."""

    def __init__(
        self,
        work: Path,
        store_url: str,
        *extra: str,
        interval: float = 1,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.out, self.err = work / "out.txt", work / "err.txt"
        argv = [ARKLOW, "controller", "run", "--store", store_url]
        argv += ["--listen", "127.0.0.1:0", "--interval", str(interval), *extra]
        with self.out.open("w") as out, self.err.open("w") as err:
            self.process = subprocess.Popen(
                argv,
                cwd=cwd or work,
                env=None if env is None else dict(env),
                stdout=out,
                stderr=err,
            )

    def url(self) -> str:
        """The address it listens on, once it says so; fails if it exits first."""

        def listening() -> str | None:
            if self.process.poll() is not None:
                raise AssertionError(
                    f"controller exited {self.process.returncode}: {self.err.read_text()}"
                )
            for line in self.out.read_text().splitlines():
                if "listening on " in line:
                    return line.split("listening on ")[1].split()[0]
            return None

        return eventually(listening, "the controller to listen")

    def stop(self, sig: int = signal.SIGTERM) -> int:
        """Send ``sig`` and wait for the exit code."""
        self.process.send_signal(sig)
        return self.process.wait(timeout=60)

    def end(self, timeout: float = 60) -> None:
        """Stop it if it still runs: SIGTERM, then SIGKILL after ``timeout`` seconds."""
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=timeout)
