"""Read a topology snapshot from the store, and write back the difference between two snapshots.

A change touches few objects, so a write loads a *partial* snapshot: the objects a rule looks at
(:class:`Scope`), closed over everything the rules in :mod:`arklow_pulumi.core.rules` may read for
them — every membership of the named destinations and the pools they point at, every membership
of any standalone (collectable) pool in the snapshot, the pools whose names a new standalone pool
could take, and, for scale-target changes, every scale target (name and group conflicts). The rule
functions decide on that snapshot; :func:`write_changes` stores only what they changed.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import (
    Connection,
    Row,
    Table,
    and_,
    bindparam,
    delete,
    insert,
    or_,
    select,
    update,
)

from arklow_pulumi.core.topology import (
    Destination,
    Pool,
    ScaleTarget,
    Topology,
    frozen_map,
    standalone_pool_name,
)
from arklow_pulumi.reading.spec import policy_from_document
from arklow_pulumi.store.identity import Claim, Identity
from arklow_pulumi.store.tables import (
    DestinationRow,
    MembershipRow,
    PoolRow,
    ScaleTargetRow,
    table_of,
)
from arklow_pulumi.topology_documents import row_values, value_from_row

DESTINATIONS = table_of(DestinationRow)
POOLS = table_of(PoolRow)
MEMBERSHIPS = table_of(MembershipRow)
TARGETS = table_of(ScaleTargetRow)


@dataclass(frozen=True)
class Scope:
    """What a change looks at: destinations, pools, pools with all their members, scale targets."""

    destinations: frozenset[str] = frozenset()
    pools: frozenset[str] = frozenset()
    pools_with_members: frozenset[str] = frozenset()
    all_targets: bool = False
    # Standalone names (``<d>/<r>``) a change may give out besides those of the destinations
    # already stored: a destination being created, or given a new resource.
    standalone_names: frozenset[str] = frozenset()


@dataclass
class _Rows:
    destinations: dict[str, Destination] = field(default_factory=dict)
    pools: dict[str, Row[Any]] = field(default_factory=dict)
    memberships: dict[tuple[str, str], str] = field(default_factory=dict)
    targets: dict[str, list[ScaleTarget]] = field(default_factory=dict)


# -- reading ---------------------------------------------------------------------------------


def load_all(conn: Connection) -> Topology:
    rows = _Rows()
    rows.destinations = {r.name: _destination(r) for r in conn.execute(select(DESTINATIONS))}
    rows.pools = {r.name: r for r in conn.execute(select(POOLS))}
    rows.memberships = {
        (r.destination, r.resource): r.pool for r in conn.execute(select(MEMBERSHIPS))
    }
    _add_targets(rows, conn.execute(select(TARGETS).order_by(TARGETS.c.name)))
    return _topology(rows)


def load_scope(
    conn: Connection,
    scope: Scope,
    identities: dict[tuple[str, str], Identity] | None = None,
) -> Topology:
    """The snapshot of ``scope``. ``identities``, when given, receives the identity of every
    membership of the scope's destinations, read with them (no second statement)."""
    rows = _Rows()
    names = set(scope.destinations)
    if scope.pools_with_members:
        _add_memberships(rows, conn, _MEMBERS_OF_POOLS, scope.pools_with_members)
        names |= {d for d, _ in rows.memberships}
    if names:
        _load_destinations(rows, conn, names, identities)
    wanted = set(scope.pools) | set(scope.pools_with_members) | set(rows.memberships.values())
    target_rows: list[Any] = []
    if scope.all_targets:
        target_rows = list(conn.execute(_ALL_TARGETS))
        wanted |= {r.pool for r in target_rows}
    # Without all the targets, each pool comes with its own (one statement).
    found = _load_pools(
        rows,
        conn,
        wanted,
        rows.destinations.values(),
        scope.standalone_names,
        with_targets=not scope.all_targets,
    )
    if not scope.all_targets:
        target_rows = found
    owned = [name for name, r in rows.pools.items() if r.owner is not None]
    if owned:
        _add_memberships(rows, conn, _MEMBERS_OF_POOLS, owned)
    _add_targets(rows, target_rows)
    return _topology(rows)


# The statements a snapshot is read with, built once: SQLAlchemy compiles a statement once per
# engine and reuses it while the statement object (or one built the same way) comes back, and the
# lists go in expanding bind parameters, so any number of names reuses one compiled form.
def _names(key: str) -> Any:
    return bindparam(key, expanding=True)


_MEMBERS_OF_POOLS = select(MEMBERSHIPS).where(MEMBERSHIPS.c.pool.in_(_names("pools")))
_ALL_TARGETS = select(TARGETS).order_by(TARGETS.c.name)
# The destinations with every membership they have and its identity, in one round trip (a
# destination without memberships comes back once, with NULL membership columns).
_DESTINATIONS_WITH_MEMBERSHIPS = (
    select(
        DESTINATIONS,
        MEMBERSHIPS.c.resource.label("m_resource"),
        MEMBERSHIPS.c.pool,
        MEMBERSHIPS.c.create_id.label("m_create_id"),
        MEMBERSHIPS.c.owner_stack.label("m_owner_stack"),
        MEMBERSHIPS.c.owner_urn.label("m_owner_urn"),
    )
    .select_from(
        DESTINATIONS.outerjoin(MEMBERSHIPS, MEMBERSHIPS.c.destination == DESTINATIONS.c.name)
    )
    .where(DESTINATIONS.c.name.in_(_names("names")))
)


def _load_destinations(
    rows: _Rows,
    conn: Connection,
    names: set[str],
    identities: dict[tuple[str, str], Identity] | None,
) -> None:
    """The named destinations and all their memberships (a membership row implies its
    destination: the foreign key)."""
    for r in conn.execute(_DESTINATIONS_WITH_MEMBERSHIPS, {"names": list(names)}):
        if r.name not in rows.destinations:
            rows.destinations[r.name] = _destination(r)
        if r.m_resource is not None:
            rows.memberships[(r.name, r.m_resource)] = r.pool
            if identities is not None:
                identity = Identity(r.m_create_id, r.m_owner_stack, r.m_owner_urn)
                identities[(r.name, r.m_resource)] = identity


def _add_memberships(rows: _Rows, conn: Connection, query: Any, pools: Iterable[str]) -> None:
    for r in conn.execute(query, {"pools": list(pools)}):
        rows.memberships[(r.destination, r.resource)] = r.pool


def _load_pools(
    rows: _Rows,
    conn: Connection,
    names: set[str],
    destinations: Iterable[Destination],
    standalone_names: Iterable[str] = (),
    *,
    with_targets: bool = False,
) -> list[Any]:
    """Load the pools of a scope; ``with_targets``: return their scale targets too (by name)."""
    dest_names = [d.name for d in destinations]
    # A new standalone pool takes the first free name of <d>/<r>, <d>/<r>.2, ...
    stored = {standalone_pool_name(d.name, r) for d in destinations for r in d.resources}
    bases = sorted(stored.union(standalone_names))
    if not names and not dest_names and not bases:
        return []
    params: dict[str, Any] = {"names": list(names), "owners": dest_names}
    for i, base in enumerate(bases):
        params[f"from_{i}"], params[f"below_{i}"] = base, base + "/"
    query = _pools_query(len(bases), conn.dialect.name == "postgresql", with_targets)
    owners = set(dest_names)
    targets: list[Any] = []
    for r in conn.execute(query, params):
        if r.name not in names and r.owner not in owners and not _standalone_like(r.name, bases):
            continue  # in a range, but not <d>/<r> nor <d>/<r>.…: "<d>/<r>-2", say
        rows.pools[r.name] = r
        if with_targets and r.t_name is not None:
            targets.append(_TargetColumns(r))
    return targets


def _standalone_like(name: str, bases: list[str]) -> bool:
    """Whether ``name`` is one a new standalone pool of ``bases`` could take or collide with:
    ``<d>/<r>`` or ``<d>/<r>.…``."""
    return any(name == base or name.startswith(base + ".") for base in bases)


@functools.lru_cache(maxsize=64)
def _pools_query(prefixes: int, postgresql: bool, with_targets: bool = False) -> Any:
    """The pools named, owned by the named destinations, or named in one of ``prefixes`` ranges
    (``from_i`` to ``below_i``, by bytes): one statement per number of ranges, dialect, and
    whether each pool comes with its scale targets (one row per target, their columns named
    ``t_<column>``, in the order of their names).

    The names a standalone pool ``<d>/<r>`` could take, ``<d>/<r>`` and ``<d>/<r>.…``, are all in
    the range from ``<d>/<r>`` to below ``<d>/<r>/`` in byte order (the range also holds, say,
    ``<d>/<r>-2``: :func:`_load_pools` drops those): a range an index answers (migration 0007),
    where a LIKE pattern in a bind parameter made the database read every pool. SQLite compares
    text in byte order; PostgreSQL does with ``COLLATE "C"``. Two parameters per range, as the
    name and the pattern were.
    """
    c = POOLS.c
    name = c.name.collate("C") if postgresql else c.name
    query = select(POOLS)
    if with_targets:
        query = (
            select(POOLS, *(column.label(f"t_{column.name}") for column in TARGETS.c))
            .select_from(POOLS.outerjoin(TARGETS, TARGETS.c.pool == c.name))
            .order_by(TARGETS.c.name)
        )
    return query.where(
        or_(
            c.name.in_(_names("names")),
            c.owner.in_(_names("owners")),
            *(
                and_(name >= bindparam(f"from_{i}"), name < bindparam(f"below_{i}"))
                for i in range(prefixes)
            ),
        )
    )


class _TargetColumns:
    """A scale target's columns (``t_<column>``) of a pool row, under their own names."""

    __slots__ = ("_row",)

    def __init__(self, row: Row[Any]) -> None:
        self._row = row

    def __getattr__(self, column: str) -> Any:
        return getattr(self._row, "t_" + column)


def _add_targets(rows: _Rows, target_rows: Iterable[Row[Any]]) -> None:
    for r in target_rows:
        target = value_from_row(ScaleTarget, r, policy_from_document)
        rows.targets.setdefault(r.pool, []).append(target)


def _destination(r: Row[Any]) -> Destination:
    return value_from_row(Destination, r, policy_from_document)


def _topology(rows: _Rows) -> Topology:
    pools = {
        name: value_from_row(
            Pool, r, policy_from_document, scale_targets=tuple(rows.targets.get(name, ()))
        )
        for name, r in rows.pools.items()
    }
    return Topology(
        destinations=frozen_map(rows.destinations),
        pools=frozen_map(pools),
        memberships=frozen_map(rows.memberships),
    )


# -- writing ---------------------------------------------------------------------------------


def write_changes(
    conn: Connection,
    before: Topology,
    after: Topology,
    claims: Mapping[tuple[str, str], Claim] | None = None,
) -> None:
    """Store what ``after`` changed relative to ``before``, in an order the foreign keys accept.

    A membership that moved loses its identity, unless ``claims`` holds one for its key (a join
    moving it on purpose): then the moving statement stamps that claim, as :func:`stamp` would
    after it."""
    _upsert(conn, DESTINATIONS, before.destinations, after.destinations, row_values)
    _upsert(conn, POOLS, before.pools, after.pools, row_values)
    old_targets = _targets_by_name(before)
    new_targets = _targets_by_name(after)
    gone = [n for n in old_targets if n not in new_targets]
    if gone:
        conn.execute(delete(TARGETS).where(TARGETS.c.name.in_(gone)))
    _write_memberships(conn, before.memberships, after.memberships, claims or {})
    _upsert(conn, TARGETS, old_targets, new_targets, _target_values)
    removed_pools = [n for n in before.pools if n not in after.pools]
    if removed_pools:
        conn.execute(delete(POOLS).where(POOLS.c.name.in_(removed_pools)))
    removed = [n for n in before.destinations if n not in after.destinations]
    if removed:
        conn.execute(delete(DESTINATIONS).where(DESTINATIONS.c.name.in_(removed)))


def _upsert(
    conn: Connection,
    table: Table,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    values: Any,
) -> None:
    added = [values(v) for k, v in new.items() if k not in old]
    if added:
        conn.execute(insert(table), added)
    for key, value in new.items():
        if key in old and values(old[key]) != values(value):
            conn.execute(update(table).where(table.c.name == key).values(values(value)))


def _write_memberships(
    conn: Connection,
    old: Mapping[tuple[str, str], str],
    new: Mapping[tuple[str, str], str],
    claims: Mapping[tuple[str, str], Claim],
) -> None:
    gone = [{"key_d": d, "key_r": r} for (d, r) in old if (d, r) not in new]
    if gone:
        conn.execute(_DELETE_MEMBERSHIP, gone)
    # A moved membership is no longer the one its creator made: the caller that moved it on
    # purpose (a join) gives its own claim; a move by the rules (into a new standalone pool)
    # leaves none.
    moved = [
        {"key_d": d, "key_r": r, "new_pool": pool, **_moved_identity(claims.get((d, r)))}
        for (d, r), pool in new.items()
        if (d, r) in old and old[(d, r)] != pool
    ]
    if moved:
        conn.execute(_MOVE_MEMBERSHIP, moved)
    added = [
        {"destination": d, "resource": r, "pool": pool}
        for (d, r), pool in new.items()
        if (d, r) not in old
    ]
    if added:
        conn.execute(insert(MEMBERSHIPS), added)


def _moved_identity(claim: Claim | None) -> dict[str, Any]:
    """A moved membership's identity: cleared, then ``claim``'s stamped (the owner stays cleared
    when the claim has none)."""
    if claim is None:
        return {"new_create_id": None, "new_stack": None, "new_urn": None}
    owner = claim.owner
    return {
        "new_create_id": claim.create_id,
        "new_stack": None if owner is None else owner.stack,
        "new_urn": None if owner is None else owner.urn,
    }


MEMBERSHIP_KEY = (
    MEMBERSHIPS.c.destination == bindparam("key_d"),
    MEMBERSHIPS.c.resource == bindparam("key_r"),
)
_DELETE_MEMBERSHIP = delete(MEMBERSHIPS).where(*MEMBERSHIP_KEY)
_MOVE_MEMBERSHIP = (
    update(MEMBERSHIPS)
    .where(*MEMBERSHIP_KEY)
    .values(
        pool=bindparam("new_pool"),
        create_id=bindparam("new_create_id"),
        owner_stack=bindparam("new_stack"),
        owner_urn=bindparam("new_urn"),
    )
)


def _targets_by_name(topo: Topology) -> dict[str, tuple[str, ScaleTarget]]:
    return {t.name: (p.name, t) for p in topo.pools.values() for t in p.scale_targets}


def _target_values(item: tuple[str, ScaleTarget]) -> dict[str, Any]:
    pool, target = item
    return {"pool": pool, **row_values(target)}
