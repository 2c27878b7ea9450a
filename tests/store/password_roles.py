"""A PostgreSQL role that logs in with a password, on the session's test cluster.

The cluster trusts its superuser (``initdb -A trust``), which would accept any password. For the
role made here a ``scram-sha-256`` line is put first in ``pg_hba.conf`` (and the configuration
reloaded), so its password is really checked and can be rotated with ``ALTER ROLE``.
"""

from __future__ import annotations

import uuid

import psycopg
import pytest

from tests.store.postgres_server import Cluster, _libpq


def password_role(cluster: Cluster, password: str) -> tuple[str, str]:
    """A new role and a database it owns; returns (role, database)."""
    if cluster.data_dir is None:
        pytest.fail("password rotation needs the test's own cluster (pg_hba.conf)", pytrace=False)
    role, database = f"rot_{uuid.uuid4().hex[:8]}", f"arklow_{uuid.uuid4().hex[:12]}"
    hba = cluster.data_dir / "pg_hba.conf"
    line = f"host all {role} 127.0.0.1/32 scram-sha-256\n"
    hba.write_text(line + hba.read_text())
    with psycopg.connect(_libpq(cluster.admin_url), autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        conn.execute(f'CREATE DATABASE "{database}" OWNER {role}')
        conn.execute("SELECT pg_reload_conf()")
    return role, database


def rotate(cluster: Cluster, role: str, password: str) -> None:
    with psycopg.connect(_libpq(cluster.admin_url), autocommit=True) as conn:
        conn.execute(f"ALTER ROLE {role} PASSWORD '{password}'")


def role_url(cluster: Cluster, role: str, password: str, database: str) -> str:
    host = cluster.admin_url.split("@", 1)[1].rsplit("/", 1)[0]
    return f"postgresql+psycopg://{role}:{password}@{host}/{database}"
