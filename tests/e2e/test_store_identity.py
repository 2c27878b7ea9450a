"""Issue 8 items 1, 2 and 4 under the real engine: a replaced scale target never vanishes; an
interrupted ``pulumi up`` (kill -9, a store connection cut after the commit landed) converges on
retry and ``destroy`` leaves nothing; a rotated PostgreSQL password does not strand a delete.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arklow_pulumi.store import open_store
from arklow_pulumi.store import service as svc
from arklow_pulumi.store.engine import close_stores
from tests.e2e.interrupting import (
    CuttingProxy,
    postgres_owned_rows,
    run_killed_when,
    sqlite_owned_rows,
)
from tests.e2e.pulumi_cli import PulumiError, Stack, arklow_steps, count_ops
from tests.e2e.test_pulumi_e2e import DEV_DESTINATIONS, DEV_POOLS, assert_topology, dev_topology
from tests.store import password_roles, postgres_server
from tests.store.invariants import violations
from tests.store.postgres_server import _libpq

pytestmark = pytest.mark.e2e

MakeStack = Callable[..., Stack]
DEV_RESOURCES = 9  # 3 destinations, 2 pools, 3 memberships, 1 scale target: one owned row each


def target_in_new_pool(topology: dict[str, Any], max_replicas: int) -> dict[str, Any]:
    """``gpu-workers`` moved out of ``shared-gpu`` into a new pool ``new-gpu``."""
    moved = copy.deepcopy(topology)
    shared = next(p for p in moved["pools"] if p["name"] == "shared-gpu")
    (target,) = shared.pop("scale_targets")
    moved["pools"].append(
        {
            "name": "new-gpu",
            "resource": "gpu",
            "members": [],
            "scale_targets": [{**target, "max_replicas": max_replicas}],
        }
    )
    return moved


def stored(stack: Stack) -> Any:
    try:
        return svc.stored_topology(open_store(stack.store_url))
    finally:
        close_stores()


def assert_empty(stack: Stack) -> None:
    topo = stored(stack)
    assert dict(topo.destinations) == {} and dict(topo.pools) == {}, (
        f"left in the store: {sorted(topo.destinations)} {sorted(topo.pools)}"
    )


def unlock(stack: Stack) -> None:
    """What an operator does after a kill -9 with the file backend (Pulumi 3.260): `pulumi
    cancel` removes the killed run's lock; and a kill that lands while the backend writes a
    checkpoint's metadata leaves an empty ``<stack>.json.attrs`` ("failed to load checkpoint:
    EOF"), which is deleted (the checkpoint itself is written to a temporary file and renamed)."""
    state = Path(stack.env["PULUMI_BACKEND_URL"].removeprefix("file://"))
    for attrs in (state / ".pulumi" / "stacks").rglob("*.attrs"):
        if attrs.stat().st_size == 0:
            attrs.unlink()
    stack.run("cancel", "--yes", "--stack", stack.name)


def assert_dev_converged(stack: Stack) -> None:
    assert_topology(stack.topology(), DEV_DESTINATIONS, DEV_POOLS)
    assert violations(stored(stack)) == []
    assert count_ops(stack.preview()) == {}, "a second run would still change something"


# -- item 1 ------------------------------------------------------------------------------------


def test_a_replaced_scale_target_never_vanishes(make_stack: MakeStack) -> None:
    topology = dev_topology()
    stack = make_stack(topology)
    stack.up()

    # max_replicas above the group's own maximum (20 on the moto server) now fails at preview
    stack.set_topology(target_in_new_pool(topology, 50))
    with pytest.raises(PulumiError) as err:
        stack.preview()
    assert "max_replicas 50 is above the group's MaxSize 20" in err.value.output

    # The reproduction: a move whose create fails after the engine deleted the original (the
    # replacement keeps the name, so it deletes first). Here the cloud is out of reach during that
    # `up`: check lets the bounds wait, create cannot verify the group and fails.
    stack.set_topology(target_in_new_pool(topology, 10))
    reachable = stack.env["AWS_ENDPOINT_URL"]
    stack.env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:9"
    with pytest.raises(PulumiError):
        stack.up()
    stack.env["AWS_ENDPOINT_URL"] = reachable

    # Restored: the engine replaces the target (create first, then delete the "original").
    stack.set_topology(topology)
    restored = stack.up()
    target_ops = {op for op, kind, _ in arklow_steps(restored) if kind == "ScaleTarget"}
    print(f"restore: {arklow_steps(restored)}")
    assert target_ops & {"replace", "create-replacement"}, target_ops
    view = svc.get_target(open_store(stack.store_url), "gpu-workers")
    close_stores()
    assert view is not None and view.pool == "shared-gpu", "the replaced target vanished"
    assert_dev_converged(stack)
    stack.destroy()
    assert_empty(stack)


# -- item 2: kill -9 ---------------------------------------------------------------------------


def test_kill_9_of_up_and_destroy_at_many_points_converges(make_stack: MakeStack) -> None:
    """SIGKILL every process of `pulumi up` when the store holds k rows a resource created
    (k = 1, 3, 5, 7, 8 of 9), each time `pulumi cancel` (the file backend keeps the lock) and run
    `up` again, itself killed at the next mark: every retry adopts what the killed runs stored.
    The last `up` converges; a `destroy` killed half-way is run again: nothing is left."""
    stack = make_stack(dev_topology())
    count = sqlite_owned_rows(stack.default_store_path)
    up = ["up", "--yes", "--skip-preview", "--stack", stack.name]
    for mark in (1, 3, 5, 7, 8):
        killed, seen = run_killed_when(stack, up, lambda n, k=mark: n >= k, count)
        assert killed, f"`pulumi up` finished before the store held {mark} rows ({seen})"
        unlock(stack)
    stack.up()
    assert count() == DEV_RESOURCES
    assert_dev_converged(stack)
    assert orphans(stack, stack.store_url) == []

    destroy = ["destroy", "--yes", "--skip-preview", "--stack", stack.name]
    killed, _seen = run_killed_when(stack, destroy, lambda n: n <= DEV_RESOURCES - 4, count)
    assert killed
    unlock(stack)
    stack.destroy()
    assert_empty(stack)
    assert count() == 0


def orphans(stack: Stack, store_url: str, *extra: str) -> list[dict[str, Any]]:
    """`arklow topology orphans --stack <stack> --format json` run in the project directory."""
    argv = ["topology", "orphans", "--store", store_url, "--stack", stack.name]
    done = stack.arklow(*argv, "--format", "json", *extra, timeout=300)
    assert done.returncode == 0, done.stderr
    found: list[dict[str, Any]] = json.loads(done.stdout)["orphans"]
    assert {o["stack"] for o in found} <= {stack.name}
    return found


# -- item 2: a store connection cut after the commit landed --------------------------------------


@pytest.fixture(scope="module")
def postgres() -> Iterator[postgres_server.Cluster]:
    yield postgres_server.cluster()
    close_stores()


@pytest.mark.postgres
def test_a_connection_cut_after_commit_converges(
    make_stack: MakeStack, postgres: postgres_server.Cluster
) -> None:
    direct = postgres.create_database()
    host, port = direct.split("@", 1)[1].split("/", 1)[0].rsplit(":", 1)
    proxy = CuttingProxy((host, int(port)))
    try:
        database = direct.rsplit("/", 1)[1]
        through = f"postgresql+psycopg://postgres@127.0.0.1:{proxy.port}/{database}"
        url = f"{through}?sslmode=disable&gssencmode=disable"
        stack = make_stack(dev_topology())
        stack.set_config({"arklow:store": url, "arklow:topology": dev_topology()})
        count = postgres_owned_rows(_libpq(direct))
        proxy.arm(lambda: count() >= 4)
        with pytest.raises(PulumiError):
            stack.up()
        assert proxy.cuts == 1 and count() >= 4
        time.sleep(proxy.outage_seconds)
        # the create whose commit landed unanswered is in the store, not in the state
        assert len(orphans(stack, direct)) >= 1
        stack.up()
        assert orphans(stack, direct) == []
        assert_topology(_shown(direct), DEV_DESTINATIONS, DEV_POOLS)
        assert count() == DEV_RESOURCES
        stack.destroy()
        assert count() == 0
        topo = svc.stored_topology(open_store(direct))
        assert dict(topo.destinations) == {} and dict(topo.pools) == {}
    finally:
        close_stores()
        proxy.close()


def _shown(url: str) -> dict[str, Any]:
    from arklow_pulumi.cli.topology import topology_document

    try:
        return topology_document(svc.stored_topology(open_store(url)))
    finally:
        close_stores()


# -- item 4: password rotation -----------------------------------------------------------------


@pytest.mark.postgres
def test_a_rotated_password_and_a_removed_pool_in_one_update(
    make_stack: MakeStack, postgres: postgres_server.Cluster
) -> None:
    role, database = password_roles.password_role(postgres, "first-secret")
    old_url = password_roles.role_url(postgres, role, "first-secret", database)
    new_url = password_roles.role_url(postgres, role, "second-secret", database)
    topology = dev_topology()
    stack = make_stack(topology)
    stack.set_config({"arklow:store": old_url, "arklow:topology": topology})
    stack.up()

    password_roles.rotate(postgres, role, "second-secret")
    smaller = copy.deepcopy(topology)
    smaller["pools"] = [p for p in smaller["pools"] if p["name"] != "llm-quota"]
    stack.set_config({"arklow:store": new_url, "arklow:topology": smaller})
    result = stack.up()
    assert result["result"] == "succeeded"
    topo = svc.stored_topology(open_store(new_url))
    close_stores()
    assert "llm-quota" not in topo.pools
    assert dict(topo.pools_of("summarize")) == {
        "gpu": "shared-gpu",
        "llm-quota": "summarize/llm-quota",
    }
    stack.destroy()
    topo = svc.stored_topology(open_store(new_url))
    close_stores()
    assert dict(topo.destinations) == {} and dict(topo.pools) == {}
