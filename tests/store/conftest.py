"""Store fixtures: a fresh SQLite file or a fresh PostgreSQL database per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from arklow_pulumi.store import Store, open_store
from arklow_pulumi.store.engine import close_stores
from tests.store import postgres_server


@pytest.fixture(scope="session")
def postgres() -> Iterator[postgres_server.Cluster]:
    yield postgres_server.cluster()
    postgres_server.stop()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / '.arklow' / 'arklow.db'}"


@pytest.fixture
def postgres_url(postgres: postgres_server.Cluster) -> str:
    return postgres.create_database()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / '.arklow' / 'arklow.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    yield open_store(store_url)
    close_stores()
