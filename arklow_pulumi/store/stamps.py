"""The identity on a stored row (:mod:`.identity`): read with the row's key, stamped by the
write that creates or adopts it, in the same transaction as the change."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection, Table, bindparam, select, update

from arklow_pulumi.store.identity import Claim, Identity
from arklow_pulumi.store.snapshots import MEMBERSHIP_KEY, MEMBERSHIPS, POOLS


def read_identity(conn: Connection, table: Table, *where: Any) -> Identity | None:
    """The identity of the one row matching ``where``, or None when there is no such row."""
    c = table.c
    row = conn.execute(select(c.create_id, c.owner_stack, c.owner_urn).where(*where)).first()
    return None if row is None else Identity(row.create_id, row.owner_stack, row.owner_urn)


def read_membership(conn: Connection, destination: str, pool: str) -> tuple[str, Identity] | None:
    """When ``destination`` is a member of ``pool``: the pool's resource and the membership's
    identity, in one statement (the membership of the destination for the pool's resource, when
    it points at that pool)."""
    row = conn.execute(_MEMBERSHIP_IN_POOL, {"d": destination, "p": pool}).first()
    if row is None:
        return None
    return row.resource, Identity(row.create_id, row.owner_stack, row.owner_urn)


_MEMBERSHIP_IN_POOL = (
    select(
        POOLS.c.resource,
        MEMBERSHIPS.c.create_id,
        MEMBERSHIPS.c.owner_stack,
        MEMBERSHIPS.c.owner_urn,
    )
    .select_from(
        POOLS.join(
            MEMBERSHIPS,
            (MEMBERSHIPS.c.pool == POOLS.c.name) & (MEMBERSHIPS.c.resource == POOLS.c.resource),
        )
    )
    .where(POOLS.c.name == bindparam("p"), MEMBERSHIPS.c.destination == bindparam("d"))
)


def stamp(conn: Connection, table: Table, claim: Claim, *where: Any) -> None:
    conn.execute(update(table).where(*where).values(_claimed(claim)))


def _claimed(claim: Claim) -> dict[str, Any]:
    values: dict[str, Any] = {"create_id": claim.create_id}
    if claim.owner is not None:
        values.update(owner_stack=claim.owner.stack, owner_urn=claim.owner.urn)
    return values


# A membership's identity stamped by its key, with a statement built once.
_STAMP_MEMBERSHIP = {
    owned: update(MEMBERSHIPS)
    .where(*MEMBERSHIP_KEY)
    .values(
        create_id=bindparam("new_create_id"),
        **(
            {"owner_stack": bindparam("new_stack"), "owner_urn": bindparam("new_urn")}
            if owned
            else {}
        ),
    )
    for owned in (False, True)
}


def stamp_membership(conn: Connection, destination: str, resource: str, claim: Claim) -> None:
    """:func:`stamp` of the membership ``(destination, resource)``."""
    params = {"key_d": destination, "key_r": resource, "new_create_id": claim.create_id}
    if claim.owner is not None:
        params.update(new_stack=claim.owner.stack, new_urn=claim.owner.urn)
    conn.execute(_STAMP_MEMBERSHIP[claim.owner is not None], params)
