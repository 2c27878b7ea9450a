"""examples/shared_gpu_pool runs under pulumi.runtime.set_mocks and declares what it says."""

from __future__ import annotations

import runpy
from pathlib import Path

from tests.program.mocks import mocked

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shared_gpu_pool" / "__main__.py"


def test_shared_gpu_pool_example() -> None:
    import asyncio

    with mocked() as mocks:
        namespace = runpy.run_path(str(EXAMPLE))
        loop = asyncio.get_event_loop()
        for membership in namespace["memberships"]:
            loop.run_until_complete(membership.pool.future())
    pools = mocks.of_type("Pool")
    assert pools["shared-gpu"]["resource"] == "gpu" and pools["shared-gpu"]["capacity"] == 64
    destinations = mocks.of_type("Destination")
    assert set(destinations) == {"search", "summarize", "embeddings"}
    weights = {lane["name"]: lane["weight"] for lane in destinations["search"]["lanes"]}
    assert weights == {"interactive": 4, "batch": 1}
    memberships = mocks.of_type("PoolMembership")
    assert {(m["destination"], m["pool"]) for m in memberships.values()} == {
        ("search", "shared-gpu"),
        ("summarize", "shared-gpu"),
        ("embeddings", "shared-gpu"),
    }
