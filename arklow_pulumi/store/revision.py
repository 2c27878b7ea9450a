"""The topology's revision: one number the database raises in every transaction that writes a
topology row (triggers of migration 0006, :class:`~arklow_pulumi.store.tables.TopologyRevisionRow`).

The controller reads it each tick and reloads (and recompiles) its topology only when it moved.
Read it *before* loading the topology: a change landing in between then shows as a newer number
on the next tick, which reloads again.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.exc import DBAPIError

from arklow_pulumi.store.engine import Store, StoreError, reading
from arklow_pulumi.store.tables import TopologyRevisionRow, table_of

_COLUMN = table_of(TopologyRevisionRow).c.revision


def topology_revision(store: Store) -> int:
    """The store's topology revision (a store the triggers keep, so any writer counts)."""
    try:
        with reading(store) as conn:
            value = conn.execute(select(_COLUMN)).scalar_one_or_none()
    except DBAPIError as exc:
        raise StoreError(f"store {store.display_url}: {exc.orig}") from exc
    if value is None:
        raise StoreError(f"store {store.display_url}: field 'topology_revision': row missing")
    return int(value)
