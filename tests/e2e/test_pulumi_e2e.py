"""The root Pulumi program under the real engine: preview, up, config changes, drift, bad input,
the pool-deletion guard, destroy. File backend, passphrase secrets, no network; scale targets
check their groups on a moto server on 127.0.0.1 (the provider process inherits
``AWS_ENDPOINT_URL`` from the CLI).

Each test is one scenario on its own copy of the program, backend and SQLite store: every pulumi
command costs seconds, so steps are grouped rather than given a stack each.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from tests.e2e.pulumi_cli import REPO, PulumiError, Stack, arklow_steps, count_ops, short_type

pytestmark = pytest.mark.e2e

MakeStack = Callable[..., Stack]


def dev_topology() -> dict[str, Any]:
    """The repository's dev stack topology (stacks/Pulumi.dev.yaml) without its GCP pools and
    their members: these tests reach AWS only (tests/devservers run the whole dev stack)."""
    config = yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())["config"]
    topology = copy.deepcopy(config["arklow:topology"])
    gcp = [
        p
        for p in topology["pools"]
        if any(t["kind"] == "gcp_mig" for t in p.get("scale_targets") or [])
    ]
    gone = {m for p in gcp for m in p["members"]}
    topology["pools"] = [p for p in topology["pools"] if p not in gcp]
    topology["destinations"] = [d for d in topology["destinations"] if d["name"] not in gone]
    return topology


def pool_spec(topology: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in topology["pools"] if p["name"] == name)


def store_snapshot(stack: Stack) -> dict[str, Any] | None:
    """The store's contents, or None while the SQLite file does not exist (reading creates it)."""
    if stack.store_url.startswith("sqlite:///") and not stack.default_store_path.exists():
        return None
    return stack.topology()


def with_store(stack: Stack, action: Callable[[Any], Any]) -> Any:
    """Run ``action(store)`` against the stack's store from this process (an out-of-band change)."""
    from arklow_pulumi.store.engine import close_stores, open_store

    try:
        return action(open_store(stack.store_url))
    finally:
        close_stores()


# The dev topology once applied: what `arklow topology show` must print (declared pools, and the
# standalone pool T1 gives `reports`, whose gpu is in no declared pool).
DEV_DESTINATIONS = {
    "search": {"gpu": "shared-gpu"},
    "summarize": {"gpu": "shared-gpu", "llm-quota": "llm-quota"},
    "reports": {"gpu": "reports/gpu"},
}
DEV_POOLS = {
    "shared-gpu": {
        "resource": "gpu",
        "standalone": False,
        "members": ["search", "summarize"],
        "targets": [("gpu-workers", "aws_asg", 1, 10, 8)],
    },
    "llm-quota": {
        "resource": "llm-quota",
        "standalone": False,
        "members": ["summarize"],
        "capacity": 1000,
        "targets": [],
    },
    "reports/gpu": {
        "resource": "gpu",
        "standalone": True,
        "members": ["reports"],
        "capacity": 4,
        "targets": [],
    },
}
DEV_CREATES = Counter(
    {
        ("create", "Destination"): 3,
        ("create", "Pool"): 2,
        ("create", "PoolMembership"): 3,
        ("create", "ScaleTarget"): 1,
    }
)


def assert_topology(
    shown: dict[str, Any], destinations: dict[str, Any], pools: dict[str, Any]
) -> None:
    assert {n: d["pools"] for n, d in shown["destinations"].items()} == destinations
    assert set(shown["pools"]) == set(pools)
    for name, want in pools.items():
        got = shown["pools"][name]
        assert got["resource"] == want["resource"], name
        assert got["standalone"] == want["standalone"], name
        assert sorted(got["members"]) == sorted(want["members"]), name
        if "capacity" in want:
            assert got["capacity"] == want["capacity"], name
        targets = [
            (t["name"], t["kind"], t["min_replicas"], t["max_replicas"], t["units_per_replica"])
            for t in got["scale_targets"]
        ]
        assert targets == want["targets"], name


def test_preview_up_move_drift_destroy(make_stack: MakeStack) -> None:
    topology = dev_topology()
    stack = make_stack(topology)

    # preview lists exactly the planned creates and writes nothing to the store
    preview = stack.preview()
    assert count_ops(preview) == DEV_CREATES
    assert {(kind, name) for _, kind, name in arklow_steps(preview)} == {
        ("Destination", "search"),
        ("Destination", "summarize"),
        ("Destination", "reports"),
        ("Pool", "shared-gpu"),
        ("Pool", "llm-quota"),
        ("PoolMembership", "shared-gpu:search"),
        ("PoolMembership", "shared-gpu:summarize"),
        ("PoolMembership", "llm-quota:summarize"),
        ("ScaleTarget", "gpu-workers"),
    }
    assert store_snapshot(stack) is None, "pulumi preview created the store"

    # up creates exactly the declared topology
    up = stack.up()
    assert up["result"] == "succeeded"
    assert count_ops(up) == DEV_CREATES
    assert_topology(stack.topology(), DEV_DESTINATIONS, DEV_POOLS)
    assert len(stack.resources()) == 9

    # nothing to do the second time
    assert count_ops(stack.preview()) == Counter()

    # move `reports` into the shared GPU pool: one membership create, nothing else
    moved = copy.deepcopy(topology)
    pool_spec(moved, "shared-gpu")["members"].append("reports")
    stack.set_topology(moved)
    before = stack.topology()
    preview = stack.preview()
    assert arklow_steps(preview) == [("create", "PoolMembership", "shared-gpu:reports")]
    assert stack.topology() == before, "pulumi preview changed the store"
    up = stack.up()
    assert arklow_steps(up) == [("create", "PoolMembership", "shared-gpu:reports")]
    # T2: the gpu membership of `reports` moved; its standalone gpu pool is gone
    destinations = {**DEV_DESTINATIONS, "reports": {"gpu": "shared-gpu"}}
    pools = {k: v for k, v in DEV_POOLS.items() if k != "reports/gpu"}
    pools["shared-gpu"] = {
        **pools["shared-gpu"],
        "members": ["search", "summarize", "reports"],
    }
    assert_topology(stack.topology(), destinations, pools)
    assert count_ops(stack.preview()) == Counter()

    # a change made out of band in the store is drift on refresh
    from arklow_pulumi.core.topology import Pool
    from arklow_pulumi.store import service

    def shrink_quota(store: Any) -> None:
        current = service.get_pool(store, "llm-quota")
        assert current is not None
        pool = current.pool
        service.update_pool(
            store,
            Pool(name=pool.name, resource=pool.resource, capacity=250.0, headroom=pool.headroom),
        )

    with_store(stack, shrink_quota)
    assert stack.topology()["pools"]["llm-quota"]["capacity"] == 250
    refresh = stack.refresh()
    assert refresh["result"] == "succeeded"
    assert refresh["changeSummary"].get("update") == 1, refresh["changeSummary"]
    drifted = [
        o
        for o in refresh["outputs"]
        if o["op"] in ("update", "refresh")
        and o.get("old")
        and o.get("new")
        and o["old"]["outputs"].get("capacity") != o["new"]["outputs"].get("capacity")
    ]
    assert [short_type(o["urn"]) + ":" + o["urn"].rsplit("::", 1)[1] for o in drifted] == [
        "Pool:llm-quota"
    ]
    assert drifted[0]["new"]["outputs"]["capacity"] == 250
    # the next preview puts the declared capacity back, and only that
    assert arklow_steps(stack.preview()) == [("update", "Pool", "llm-quota")]
    stack.up()
    assert stack.topology()["pools"]["llm-quota"]["capacity"] == 1000

    # destroy leaves no Arklow object behind
    destroy = stack.destroy()
    assert destroy["result"] == "succeeded"
    assert stack.topology() == {"destinations": {}, "pools": {}}
    assert stack.resources() == []


def _min_above_max(topo: dict[str, Any]) -> None:
    target = pool_spec(topo, "shared-gpu")["scale_targets"][0]
    target["min_replicas"], target["max_replicas"] = 12, 3


def _second_pool(topo: dict[str, Any]) -> None:
    topo["pools"].append({"name": "more-gpu", "resource": "gpu", "members": ["search"]})


def _unknown_member(topo: dict[str, Any]) -> None:
    pool_spec(topo, "llm-quota")["members"].append("nobody")


BAD_TOPOLOGIES: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    (
        "min > max",
        _min_above_max,
        "invalid topology: pool 'shared-gpu', scale target 'gpu-workers': field 'min_replicas': "
        "min_replicas (12) is greater than max_replicas (3)",
    ),
    (
        "second pool for one resource",
        _second_pool,
        "invalid topology: pool 'more-gpu': field 'members': destination 'search' is already in "
        "pool 'shared-gpu' for resource 'gpu'; a destination belongs to one pool per resource",
    ),
    (
        "unknown member",
        _unknown_member,
        "invalid topology: pool 'llm-quota': field 'members': unknown destination 'nobody'",
    ),
]


def _assert_clear_failure(exc: PulumiError, message: str) -> None:
    """The program's message is the first error, exactly; the rest is the engine's epilogue."""
    assert exc.errors, f"no error diagnostic in:\n{exc.output}"
    assert exc.errors[0] == message
    assert all("Traceback" not in e for e in exc.errors), exc.errors
    assert "Traceback" not in exc.stderr, exc.stderr


def test_bad_topologies_fail_preview_and_leave_the_store_untouched(
    make_stack: MakeStack,
) -> None:
    # On a new stack: the store is not even created.
    name, breaks, message = BAD_TOPOLOGIES[0]
    topology = dev_topology()
    broken = copy.deepcopy(topology)
    breaks(broken)
    stack = make_stack(broken)
    with pytest.raises(PulumiError) as failed:
        stack.preview()
    _assert_clear_failure(failed.value, message)
    assert store_snapshot(stack) is None, f"{name}: preview created the store"

    # On an applied stack: every bad change fails preview and the store is unchanged.
    stack.set_topology(topology)
    stack.up()
    applied = stack.topology()
    for name, breaks, message in BAD_TOPOLOGIES:
        broken = copy.deepcopy(topology)
        breaks(broken)
        stack.set_topology(broken)
        with pytest.raises(PulumiError) as failed:
            stack.preview()
        _assert_clear_failure(failed.value, message)
        assert stack.topology() == applied, f"{name}: the store changed"
    stack.set_topology(topology)
    stack.destroy()


def test_pool_delete_guard_and_last_member(make_stack: MakeStack) -> None:
    topology = dev_topology()
    stack = make_stack(topology)
    stack.up()

    # Removing the last members keeps the pool and its scale target (T5); the former members
    # get standalone gpu pools back (T4).
    emptied = copy.deepcopy(topology)
    pool_spec(emptied, "shared-gpu")["members"] = []
    stack.set_topology(emptied)
    preview = stack.preview()
    assert arklow_steps(preview) == [
        ("delete", "PoolMembership", "shared-gpu:search"),
        ("delete", "PoolMembership", "shared-gpu:summarize"),
    ]
    stack.up()
    shown = stack.topology()
    assert shown["pools"]["shared-gpu"]["members"] == []
    assert [t["name"] for t in shown["pools"]["shared-gpu"]["scale_targets"]] == ["gpu-workers"]
    assert shown["destinations"]["search"]["pools"] == {"gpu": "search/gpu"}
    assert shown["destinations"]["summarize"]["pools"]["gpu"] == "summarize/gpu"

    # Deleting a pool that still has a scale target fails with the T6 message. The target is
    # attached outside this stack (as another stack or an operator would), so the engine does not
    # detach it first.
    from arklow_pulumi.store import service

    _attach_foreign_target(stack, "llm-quota", "quota-workers")
    without_quota = copy.deepcopy(emptied)
    without_quota["pools"] = [p for p in without_quota["pools"] if p["name"] != "llm-quota"]
    stack.set_topology(without_quota)
    with pytest.raises(PulumiError) as failed:
        stack.up()
    # The dynamic provider server of the SDK reports any provider exception with its traceback;
    # the rule's message is its last line, exactly.
    last_lines = [e.strip().splitlines()[-1] for e in failed.value.errors]
    assert (
        "arklow_pulumi.core.errors.TopologyRuleViolation: pool 'llm-quota': field "
        "'scale_targets': cannot delete a pool with scale targets attached ('quota-workers'); "
        "detach them first"
    ) in last_lines, failed.value.errors
    shown = stack.topology()
    assert "llm-quota" in shown["pools"]
    assert [t["name"] for t in shown["pools"]["llm-quota"]["scale_targets"]] == ["quota-workers"]

    # Detached, the pool can go; destroy then leaves nothing.
    with_store(stack, lambda store: service.detach_target(store, "llm-quota", "quota-workers"))
    stack.up()
    assert "llm-quota" not in stack.topology()["pools"]
    stack.destroy()
    assert stack.topology() == {"destinations": {}, "pools": {}}


def _attach_foreign_target(stack: Stack, pool: str, group: str) -> None:
    from arklow_pulumi.reading.spec import ScaleTargetSpec, target_from_spec
    from arklow_pulumi.store import service

    spec = ScaleTargetSpec.model_validate(
        {
            "kind": "aws_asg",
            "name": group,
            "region": "us-east-1",
            "min_replicas": 0,
            "max_replicas": 5,
            "units_per_replica": 100,
        }
    )
    with_store(stack, lambda store: service.attach_target(store, pool, target_from_spec(spec)))
