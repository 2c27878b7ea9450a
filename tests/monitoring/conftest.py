"""Fixtures of the monitoring tests: promtool (from .tools/bin on PATH) and one live controller
scraped for the whole session."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from tests.monitoring.live import LiveController, live_controller

MISSING_PROMTOOL = (
    "promtool is not on PATH: run scripts/install-promtool (`make test` does) and put .tools/bin "
    "on PATH (or set ARKLOW_SKIP_PROMTOOL=1 to skip the tests that need it)"
)


@pytest.fixture(scope="session")
def promtool() -> str:
    """Fail (never skip) without promtool, unless ARKLOW_SKIP_PROMTOOL=1 says so explicitly."""
    found = shutil.which("promtool")
    if found:
        return found
    if os.environ.get("ARKLOW_SKIP_PROMTOOL") == "1":
        pytest.skip("ARKLOW_SKIP_PROMTOOL=1: " + MISSING_PROMTOOL)
    pytest.fail(MISSING_PROMTOOL, pytrace=False)


@pytest.fixture(scope="session")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveController]:
    with live_controller(tmp_path_factory.mktemp("live-controller")) as controller:
        yield controller


@pytest.fixture(scope="session")
def scrape(live: LiveController) -> str:
    """One scrape of the live controller, every family populated."""
    return live.scrape()
