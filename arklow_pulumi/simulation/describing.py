"""What changed between two topologies, in short phrases for one line of a review comment.

Every name in a phrase goes through ``quote`` (plain by default; what-if's markdown passes its
code span, so that no name is read as markdown), the rest is fixed words and numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from arklow_pulumi.core.fields import table
from arklow_pulumi.core.topology import GroupRef, Pool, Topology

Quote = Callable[[str], str]


def _plain(name: str) -> str:
    return name


def describe_change(before: Topology, after: Topology, quote: Quote = _plain) -> str:
    """``"search moved from pool a to b for gpu; pool b: max_replicas of asg 4 → 8"`` or
    ``"no change to the topology"``."""
    phrases = [
        *_destinations(before, after, quote),
        *_memberships(before, after, quote),
        *_pools(before, after, quote),
    ]
    return "; ".join(phrases) if phrases else "no change to the topology"


def _shown(value: Any, q: Quote) -> str:
    """A field's value in a phrase: numbers as ``:g``, names quoted, mappings and lists."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float)):
        return f"{value:g}"
    if isinstance(value, str):
        return q(value)
    if value is None:
        return "none"
    if isinstance(value, GroupRef):
        return q(str(value))
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{q(k)}: {_shown(v, q)}" for k, v in value.items()) + "}"
    return "[" + ", ".join(_shown(v, q) for v in value) + "]"


def _fields(label: str, old: Any, new: Any, q: Quote) -> Iterator[str]:
    """A phrase per changed field of two values of one kind, walking its field table: the
    related and owned values are compared by their own callers, a scale policy as a whole."""
    for info in table(type(new)):
        if info.form in ("key", "parent", "owned", "related", "rules"):
            continue
        a, b = getattr(old, info.name), getattr(new, info.name)
        if a == b:
            continue
        if info.form == "policy":
            yield f"{label} scale policy changed"
        else:
            yield f"{label} {info.name} {_shown(a, q)} → {_shown(b, q)}"


def _destinations(before: Topology, after: Topology, q: Quote) -> Iterator[str]:
    for name in after.destinations.keys() - before.destinations.keys():
        yield f"new destination {q(name)}"
    for name in before.destinations.keys() - after.destinations.keys():
        yield f"destination {q(name)} removed"
    for name in sorted(after.destinations.keys() & before.destinations.keys()):
        yield from _fields(
            f"destination {q(name)}", before.destinations[name], after.destinations[name], q
        )
    old, new = before.lanes_by_key, after.lanes_by_key
    for key in sorted(new.keys() - old.keys()):
        if new[key].destination in before.destinations:
            yield f"new lane {q(key)}"
    for key in sorted(old.keys() - new.keys()):
        if old[key].destination in after.destinations:
            yield f"lane {q(key)} removed"
    for key in sorted(old.keys() & new.keys()):
        yield from _fields(f"lane {q(key)}", old[key], new[key], q)


def _memberships(before: Topology, after: Topology, q: Quote) -> Iterator[str]:
    for (dest, resource), pool in sorted(after.memberships.items()):
        was = before.memberships.get((dest, resource))
        if was is not None and was != pool:
            yield f"{q(dest)} moved from pool {q(was)} to {q(pool)} for {q(resource)}"


def _pools(before: Topology, after: Topology, q: Quote) -> Iterator[str]:
    for name, pool in after.pools.items():
        old = before.pools.get(name)
        if old is None:
            if not after.is_standalone(name):
                yield f"new pool {q(name)}"
            continue
        yield from _pool_fields(name, old, pool, q)
    for name in before.pools:
        if name not in after.pools and not before.is_standalone(name):
            yield f"pool {q(name)} removed"


def _pool_fields(name: str, old: Pool, new: Pool, q: Quote) -> Iterator[str]:
    yield from _fields(f"pool {q(name)}", old, new, q)
    olds = {t.name: t for t in old.scale_targets}
    news = {t.name: t for t in new.scale_targets}
    for target in news.keys() - olds.keys():
        yield f"pool {q(name)} new scale target {q(target)}"
    for target in olds.keys() - news.keys():
        yield f"pool {q(name)} scale target {q(target)} removed"
    for target in sorted(olds.keys() & news.keys()):
        yield from _fields(f"pool {q(name)} target {q(target)}", olds[target], news[target], q)
