"""Store identity: create ids and owners (DESIGN.md, "Store identity"), on SQLite and PostgreSQL.

Each test replays, at the service layer, what the engine does to the providers: a
create-before-delete replacement, a create retried after an interrupted update, two stacks
declaring one object.
"""

from __future__ import annotations

import pytest

from arklow_pulumi.core.errors import TopologyRuleViolation
from arklow_pulumi.core.topology import Destination, GroupRef, Lane, Pool, ScaleTarget
from arklow_pulumi.store import Store, ownership
from arklow_pulumi.store import service as svc
from arklow_pulumi.store.identity import Claim, Identity, Owner, new_create_id
from tests.store.invariants import violations

DEV = "urn:pulumi:dev::arklow::pulumi-python:dynamic/arklow:{kind}::{name}"
PROD = "urn:pulumi:prod::arklow::pulumi-python:dynamic/arklow:{kind}::{name}"


def claim(kind: str, name: str, urn: str = DEV) -> Claim:
    found = urn.format(kind=kind, name=name)
    return Claim(new_create_id(), Owner(found.split(":")[2], found))


def dest(name: str, *resources: str, limit: float = 4.0) -> Destination:
    return Destination(name, tuple(resources), (Lane(name, "default", limit=limit),))


def target(name: str, lo: int = 1, hi: int = 4) -> ScaleTarget:
    group = GroupRef("aws_asg", name, region="us-east-1")
    return ScaleTarget(name, group, lo, hi, units_per_replica=2.0, replicas=lo)


def test_a_replacement_created_first_survives_the_delete_of_the_original(store: Store) -> None:
    """Issue 8 item 1: the engine creates the replacement, then deletes the "original"."""
    svc.create_pool(store, Pool("shared-gpu", "gpu"), claim("Pool", "shared-gpu"))
    old = claim("ScaleTarget", "gpu-workers")
    svc.attach_target(store, "shared-gpu", target("gpu-workers"), old)

    new = claim("ScaleTarget", "gpu-workers")  # same stack and URN: a replacement
    svc.attach_target(store, "shared-gpu", target("gpu-workers", hi=8), new)
    svc.detach_target(store, "shared-gpu", "gpu-workers", old.create_id)

    view = svc.get_target(store, "gpu-workers")
    assert view is not None and view.target.max_replicas == 8
    assert view.identity.create_id == new.create_id
    svc.detach_target(store, "shared-gpu", "gpu-workers", new.create_id)
    assert svc.get_target(store, "gpu-workers") is None


def test_a_create_adopts_its_own_stacks_row_and_refuses_another_stacks(store: Store) -> None:
    first = claim("Destination", "search")
    svc.create_destination(store, dest("search", "gpu"), first)
    retried = claim("Destination", "search")  # the state never heard of the first create
    svc.create_destination(store, dest("search", "gpu", limit=9.0), retried)
    view = svc.get_destination(store, "search")
    assert view is not None and view.destination.lanes[0].limit == 9.0
    assert view.identity.create_id == retried.create_id

    with pytest.raises(TopologyRuleViolation) as err:
        svc.create_destination(store, dest("search", "gpu"), claim("Destination", "search", PROD))
    message = str(err.value)
    assert "destination 'search'" in message and "stack 'dev'" in message
    assert "\n" not in message

    # the stale create id can neither update nor delete the adopted row
    with pytest.raises(TopologyRuleViolation, match="another create"):
        svc.update_destination(store, dest("search", "gpu"), first)
    svc.delete_destination(store, "search", first.create_id)
    assert svc.get_destination(store, "search") is not None
    svc.delete_destination(store, "search", retried.create_id)
    assert svc.get_destination(store, "search") is None


def test_pools_and_memberships_adopt_and_conflict_by_stack(store: Store) -> None:
    svc.create_destination(store, dest("a", "gpu"), claim("Destination", "a"))
    svc.create_pool(store, Pool("p", "gpu", capacity=2.0), claim("Pool", "p"))
    svc.create_pool(store, Pool("p", "gpu", capacity=3.0), claim("Pool", "p"))
    pool = svc.get_pool(store, "p")
    assert pool is not None and pool.pool.capacity == 3.0
    with pytest.raises(TopologyRuleViolation, match="stack 'dev'"):
        svc.create_pool(store, Pool("p", "gpu"), claim("Pool", "p", PROD))

    first = claim("PoolMembership", "p:a")
    svc.join(store, "a", "p", first)
    again = claim("PoolMembership", "p:a")
    svc.join(store, "a", "p", again)  # an interrupted create retried: adopted
    svc.leave(store, "a", "p", first.create_id)  # stale: nothing happens
    view = svc.membership_view(store, "a", "p")
    assert view is not None and view.resource == "gpu"
    svc.create_pool(store, Pool("q", "gpu"), claim("Pool", "q", PROD))
    with pytest.raises(TopologyRuleViolation, match="stack 'dev'"):
        svc.join(store, "a", "q", claim("PoolMembership", "q:a", PROD))
    svc.leave(store, "a", "p", again.create_id)
    assert svc.get_destination(store, "a").pools == {"gpu": "a/gpu"}  # type: ignore[union-attr]


def test_a_join_records_its_claim_whether_it_moves_the_membership_or_adopts_it(
    store: Store,
) -> None:
    """A moving join stamps its claim in the statement that moves the membership: the identity
    is the claim's, the mover's owner cleared when the claim has none."""
    svc.create_destination(store, dest("a", "gpu"), claim("Destination", "a"))
    for name in ("p", "q", "r"):
        svc.create_pool(store, Pool(name, "gpu"), claim("Pool", name))
    first = claim("PoolMembership", "p:a")
    svc.join(store, "a", "p", first)  # moved out of a/gpu
    view = svc.membership_view(store, "a", "p")
    assert view is not None and view.identity == Identity(
        first.create_id, "dev", DEV.format(kind="PoolMembership", name="p:a")
    )
    moved = claim("PoolMembership", "q:a")
    svc.join(store, "a", "q", moved)  # the stack's own membership, moved to q
    view = svc.membership_view(store, "a", "q")
    assert view is not None and view.identity.create_id == moved.create_id
    assert view.identity.owner_urn == DEV.format(kind="PoolMembership", name="q:a")
    assert svc.membership_view(store, "a", "p") is None
    bare = Claim(new_create_id())  # no owner known: the moved row keeps none
    svc.join(store, "a", "r", bare)
    assert svc.membership_view(store, "a", "r") == svc.MembershipView(
        "gpu", Identity(bare.create_id)
    )
    again = claim("PoolMembership", "r:a")
    svc.join(store, "a", "r", again)  # already there: adopted, stamped after
    view = svc.membership_view(store, "a", "r")
    assert view is not None and view.identity.create_id == again.create_id
    assert view.identity.owner_stack == "dev"
    assert violations(svc.stored_topology(store)) == []


def test_a_membership_moved_by_the_rules_loses_its_creator(store: Store) -> None:
    svc.create_destination(store, dest("a", "gpu"), claim("Destination", "a"))
    svc.create_pool(store, Pool("p", "gpu"), claim("Pool", "p"))
    svc.join(store, "a", "p", claim("PoolMembership", "p:a"))
    svc.delete_pool(store, "p")  # T4: back to a standalone pool, made by the rules
    kinds = {(row.kind, row.name) for row in ownership.owned_rows(store, "dev")}
    assert kinds == {("destination", "a")}


def test_owned_rows_and_deleting_them_respects_t6(store: Store) -> None:
    svc.create_destination(store, dest("a", "gpu"), claim("Destination", "a"))
    svc.create_pool(store, Pool("p", "gpu"), claim("Pool", "p"))
    svc.join(store, "a", "p", claim("PoolMembership", "p:a"))
    svc.attach_target(store, "p", target("t"), claim("ScaleTarget", "t", PROD))
    rows = ownership.owned_rows(store, "dev")
    assert [(r.kind, r.name) for r in rows] == [
        ("membership", "p:a"),
        ("pool", "p"),
        ("destination", "a"),
    ]
    refused = []
    for row in rows:
        try:
            ownership.delete_owned(store, row)
        except TopologyRuleViolation as exc:
            refused.append((row.name, str(exc)))
    assert [name for name, _ in refused] == ["p"] and "scale targets" in refused[0][1]
    topo = svc.stored_topology(store)
    assert set(topo.destinations) == set() and set(topo.pools) == {"p"}
    assert violations(topo) == []
