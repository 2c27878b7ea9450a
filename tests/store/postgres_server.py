"""A throwaway PostgreSQL cluster for the test session, from Debian's ``postgresql`` binaries.

``ARKLOW_TEST_POSTGRES_URL`` points the tests at an existing server instead (a superuser URL: each
test creates its own database). Without it the cluster is created in a temporary directory owned
by the ``postgres`` system user (``initdb`` refuses to run as root), listens on 127.0.0.1 on a free
port, and is stopped when the session ends. If the binaries are missing the PostgreSQL tests fail
with a message saying so, unless ``ARKLOW_TEST_SKIP_POSTGRES=1``.
"""

from __future__ import annotations

import atexit
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

URL_ENV = "ARKLOW_TEST_POSTGRES_URL"
SKIP_ENV = "ARKLOW_TEST_SKIP_POSTGRES"
# `make check` runs only the tests that need no PostgreSQL: there a test that asks for the cluster
# without its marker fails, instead of starting one.
ABSENT_ENV = "ARKLOW_TEST_NO_POSTGRES"


@dataclass
class Cluster:
    admin_url: str  # postgresql+psycopg://user@127.0.0.1:port/postgres
    data_dir: Path | None = None
    bin_dir: Path | None = None
    run_as: list[str] | None = None

    def url_for(self, database: str) -> str:
        base, _, _ = self.admin_url.rpartition("/")
        return f"{base}/{database}"

    def create_database(self) -> str:
        import psycopg

        name = f"arklow_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(_libpq(self.admin_url), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url_for(name)

    def stop(self) -> None:
        if self.data_dir is None or self.bin_dir is None:
            return
        subprocess.run(
            [
                *(self.run_as or []),
                str(self.bin_dir / "pg_ctl"),
                "-D",
                str(self.data_dir),
                "-m",
                "immediate",
                "stop",
            ],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(self.data_dir.parent, ignore_errors=True)
        self.data_dir = None


_CLUSTER: Cluster | None = None
_LOCK = threading.Lock()


def _libpq(url: str) -> str:
    return url.replace("postgresql+psycopg://", "postgresql://", 1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _bin_dir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(found[-1]).parent if found else None


def _start() -> Cluster:
    if os.environ.get(ABSENT_ENV) == "1":
        pytest.fail(
            f"{ABSENT_ENV}=1 (make check): this test uses PostgreSQL, so it needs "
            "@pytest.mark.postgres",
            pytrace=False,
        )
    url = os.environ.get(URL_ENV)
    if url:
        return Cluster(admin_url=url.replace("postgresql://", "postgresql+psycopg://", 1))
    bin_dir = _bin_dir()
    if bin_dir is None:
        if os.environ.get(SKIP_ENV) == "1":
            pytest.skip(f"PostgreSQL binaries absent and {SKIP_ENV}=1")
        pytest.fail(
            "PostgreSQL tests need Debian's 'postgresql' package (/usr/lib/postgresql/*/bin/initdb)"
            f" or {URL_ENV}; set {SKIP_ENV}=1 to skip them",
            pytrace=False,
        )
    root = Path(tempfile.mkdtemp(prefix="arklow-pg-"))
    data = root / "data"
    run_as: list[str] = []
    user = os.environ.get("USER") or "postgres"
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
        os.chmod(root, 0o700)
        run_as = ["runuser", "-u", "postgres", "--"]
        user = "postgres"
    _run(
        [
            *run_as,
            str(bin_dir / "initdb"),
            "-D",
            str(data),
            "-U",
            user,
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-sync",
        ]
    )
    port = _free_port()
    options = (
        f"-c listen_addresses=127.0.0.1 -p {port} -k {root} -c fsync=off -c max_connections=200"
    )
    _run(
        [
            *run_as,
            str(bin_dir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-l",
            str(root / "log"),
            "-w",
            "start",
        ]
    )
    cluster = Cluster(
        admin_url=f"postgresql+psycopg://{user}@127.0.0.1:{port}/postgres",
        data_dir=data,
        bin_dir=bin_dir,
        run_as=run_as,
    )
    atexit.register(cluster.stop)
    return cluster


def _run(cmd: list[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.fail(f"{' '.join(cmd)} failed: {done.stderr or done.stdout}", pytrace=False)


def cluster() -> Cluster:
    """The session's cluster, started on first use (shared by every test directory)."""
    global _CLUSTER
    with _LOCK:
        if _CLUSTER is None:
            _CLUSTER = _start()
        return _CLUSTER


def stop() -> None:
    global _CLUSTER
    with _LOCK:
        if _CLUSTER is not None:
            _CLUSTER.stop()
            _CLUSTER = None
