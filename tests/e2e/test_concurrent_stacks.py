"""Two stacks, one PostgreSQL store, `pulumi up` at the same time: no invariant ever breaks.

Both stacks write the same tables at once (destinations, pools, memberships, scale targets),
through two engines and two sets of provider processes, the way two deployment pipelines would.
After each concurrent round the stored topology must hold every invariant and exactly the union of
what both stacks declare.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from arklow_pulumi.store import open_store
from arklow_pulumi.store import service as svc
from arklow_pulumi.store.engine import close_stores
from tests.e2e.pulumi_cli import Stack
from tests.store import postgres_server
from tests.store.invariants import violations

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    yield postgres_server.cluster().create_database()
    close_stores()
    postgres_server.stop()


def topology(prefix: str, size: int, shared: int, target: str | None) -> dict[str, Any]:
    names = [f"{prefix}{i}" for i in range(size)]
    pool: dict[str, Any] = {"name": f"{prefix}-gpu", "resource": "gpu", "members": names[:shared]}
    if target:
        pool["scale_targets"] = [
            {
                "kind": "aws_asg",
                "name": target,
                "region": "us-east-1",
                "min_replicas": 1,
                "max_replicas": 3,
                "units_per_replica": 4,
            }
        ]
    return {
        "destinations": [
            {"name": n, "resources": ["gpu", "quota"], "lanes": [{"name": "default", "limit": 4}]}
            for n in names
        ],
        "pools": [
            pool,
            {
                "name": f"{prefix}-quota",
                "resource": "quota",
                "capacity": 10,
                "members": names[shared:],
            },
        ],
    }


def both(east: Stack, west: Stack, action: Callable[[Stack], Any]) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        for future in [pool.submit(action, east), pool.submit(action, west)]:
            future.result()


def configure(stack: Stack, url: str, topo: dict[str, Any]) -> None:
    stack.set_config({"arklow:store": url, "arklow:topology": topo})


def test_two_stacks_up_concurrently_against_one_postgres_store(
    make_stack: Callable[..., Stack], postgres_url: str
) -> None:
    east = make_stack(topology("e", 8, 5, "gpu-workers"), name="east")
    west = make_stack(topology("w", 8, 3, "quota-workers"), name="west")
    store = open_store(postgres_url)

    rounds = [
        (topology("e", 8, 5, "gpu-workers"), topology("w", 8, 3, "quota-workers")),
        (topology("e", 8, 2, "gpu-workers"), topology("w", 8, 7, "quota-workers")),  # moves (T2/T4)
        (topology("e", 5, 5, None), topology("w", 10, 0, "quota-workers")),  # removals, additions
    ]
    for east_topo, west_topo in rounds:
        configure(east, postgres_url, east_topo)
        configure(west, postgres_url, west_topo)
        both(east, west, lambda s: s.up())
        topo = svc.stored_topology(store)
        assert violations(topo) == []
        expected = {d["name"] for d in east_topo["destinations"] + west_topo["destinations"]}
        assert set(topo.destinations) == expected
        for declared in (east_topo, west_topo):
            for pool in declared["pools"]:
                assert topo.members(pool["name"]) == tuple(sorted(pool["members"]))

    both(east, west, lambda s: s.destroy())
    topo = svc.stored_topology(store)
    assert dict(topo.destinations) == {} and dict(topo.pools) == {}
