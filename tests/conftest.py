"""Fixtures more than one test folder asks for: the project's Compute API test server, started once
for the session (each folder's ``compute`` fixture resets it for each test and sets the
environment its tests need)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from arklow_pulumi.devservers.compute import ComputeServer


@pytest.fixture(scope="session")
def compute_server() -> Iterator[ComputeServer]:
    from arklow_pulumi.devservers.compute import ComputeServer

    server = ComputeServer(port=0, op_delay=0.02, settle_delay=0.5)
    server.start()
    yield server
    server.stop()
