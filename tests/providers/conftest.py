"""Provider fixtures: a store per test (SQLite and PostgreSQL) and the session's moto server for
ASGs (tests/conftest.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

from arklow_pulumi.store.engine import close_stores
from tests import aws_moto
from tests.store.conftest import postgres, postgres_url, sqlite_url, store_url

__all__ = ["postgres", "postgres_url", "sqlite_url", "store_url"]
REGION = aws_moto.REGION


@pytest.fixture(autouse=True)
def _fresh_engines() -> Iterator[None]:
    yield
    close_stores()


@pytest.fixture(autouse=True)
def _fresh_supplies() -> Iterator[None]:
    """A provider process keeps one supply binding per endpoint config, its clients made with the
    process's environment; tests change the environment (moto or none), so each starts afresh."""
    from arklow_pulumi.providers import scale_targets

    scale_targets._SUPPLIES.clear()
    yield
    scale_targets._SUPPLIES.clear()


@pytest.fixture(autouse=True)
def _traceback_limit() -> Iterator[None]:
    """A provider call that raised an ArklowError leaves ``sys.tracebacklimit = 0`` (by design,
    see ``providers/storing.py``); in the provider process nothing else runs, but here it would
    leak into later tests (``traceback.extract_stack()`` in the SDK then finds no frames)."""
    yield
    if hasattr(sys, "tracebacklimit"):
        del sys.tracebacklimit


@pytest.fixture
def props(store_url: str) -> Any:
    """Build resource properties as the engine hands them to a provider (with the store URL)."""

    def make(**values: Any) -> dict[str, Any]:
        return {**values, "store": store_url}

    return make


def preview_wait(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """How long ``check`` waits for a group's description at preview, for one test: short where
    nothing can answer (the wait can only run out), long where the answer must be seen however
    busy the machine (the wait ends as soon as it comes)."""
    from arklow_pulumi.providers import scale_targets

    monkeypatch.setattr(scale_targets, "PREVIEW_DESCRIBE_SECONDS", seconds)


def make_asg(client: Any, name: str, low: int, high: int) -> None:
    aws_moto.make_asg(client, name, low, high)
