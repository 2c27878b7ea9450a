"""The rows Pulumi resources created, found by the owner recorded on them, and deleted as their
own resource's delete would (``arklow orphans``): by create id, the rules applying."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Row, select

from arklow_pulumi.store.engine import Store
from arklow_pulumi.store.identity import Identity
from arklow_pulumi.store.service import (
    delete_destination,
    delete_pool,
    detach_target,
    leave,
    query,
)
from arklow_pulumi.store.snapshots import DESTINATIONS, MEMBERSHIPS, POOLS, TARGETS

KINDS = ("membership", "scale target", "pool", "destination")  # the order orphans are deleted in


@dataclass(frozen=True)
class OwnedRow:
    """A row a Pulumi resource created. ``name`` is ``<pool>:<destination>`` for a membership."""

    kind: str
    name: str
    identity: Identity
    destination: str | None = None
    pool: str | None = None


def owned_rows(store: Store, stack: str | None = None) -> list[OwnedRow]:
    """Every row with a recorded owner (of ``stack`` when given), in :data:`KINDS` order."""

    def read(conn: Connection) -> list[OwnedRow]:
        found: list[OwnedRow] = []
        for kind, table in (
            ("membership", MEMBERSHIPS),
            ("scale target", TARGETS),
            ("pool", POOLS),
            ("destination", DESTINATIONS),
        ):
            query = select(table).where(table.c.owner_stack.is_not(None))
            if stack is not None:
                query = query.where(table.c.owner_stack == stack)
            for r in conn.execute(query):
                found.append(_owned(kind, r))
        return sorted(found, key=lambda row: (KINDS.index(row.kind), row.name))

    return query(store, read)


def _owned(kind: str, r: Row[Any]) -> OwnedRow:
    identity = Identity(r.create_id, r.owner_stack, r.owner_urn)
    if kind == "membership":
        return OwnedRow(kind, f"{r.pool}:{r.destination}", identity, r.destination, r.pool)
    if kind == "scale target":
        return OwnedRow(kind, r.name, identity, pool=r.pool)
    return OwnedRow(kind, r.name, identity)


def delete_owned(store: Store, row: OwnedRow) -> None:
    """Delete ``row`` as its own resource's delete would (by create id, the rules applying: a
    pool with scale targets is refused, T6)."""
    create_id = row.identity.create_id
    if row.kind == "membership" and row.destination is not None and row.pool is not None:
        leave(store, row.destination, row.pool, create_id)
    elif row.kind == "scale target" and row.pool is not None:
        detach_target(store, row.pool, row.name, create_id)
    elif row.kind == "pool":
        delete_pool(store, row.name, create_id)
    elif row.kind == "destination":
        delete_destination(store, row.name, create_id)
