"""What changed between two topologies, in short phrases for one line of a review comment.

Every name in a phrase goes through ``quote`` (plain by default; what-if's markdown passes its
code span, so that no name is read as markdown), the rest is fixed words and numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

from arklow_pulumi.core.topology import Pool, ScaleTarget, Topology

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


def _cost(cost: Mapping[str, float], q: Quote) -> str:
    return "{" + ", ".join(f"{q(r)}: {n:g}" for r, n in cost.items()) + "}"


def _destinations(before: Topology, after: Topology, q: Quote) -> Iterator[str]:
    for name in after.destinations.keys() - before.destinations.keys():
        yield f"new destination {q(name)}"
    for name in before.destinations.keys() - after.destinations.keys():
        yield f"destination {q(name)} removed"
    old, new = before.lanes_by_key, after.lanes_by_key
    for key in sorted(new.keys() - old.keys()):
        if new[key].destination in before.destinations:
            yield f"new lane {q(key)}"
    for key in sorted(old.keys() - new.keys()):
        if old[key].destination in after.destinations:
            yield f"lane {q(key)} removed"
    for key in sorted(old.keys() & new.keys()):
        a, b = old[key], new[key]
        for field in ("limit", "weight"):
            if getattr(a, field) != getattr(b, field):
                yield f"lane {q(key)} {field} {getattr(a, field):g} → {getattr(b, field):g}"
        if dict(a.cost) != dict(b.cost):
            yield f"lane {q(key)} cost {_cost(a.cost, q)} → {_cost(b.cost, q)}"


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
    for field in ("capacity", "headroom"):
        if getattr(old, field) != getattr(new, field):
            yield f"pool {q(name)} {field} {getattr(old, field):g} → {getattr(new, field):g}"
    if old.scale_policy != new.scale_policy:
        yield f"pool {q(name)} scale policy changed"
    olds = {t.name: t for t in old.scale_targets}
    news = {t.name: t for t in new.scale_targets}
    for target in news.keys() - olds.keys():
        yield f"pool {q(name)} new scale target {q(target)}"
    for target in olds.keys() - news.keys():
        yield f"pool {q(name)} scale target {q(target)} removed"
    for target in sorted(olds.keys() & news.keys()):
        yield from _target_fields(name, olds[target], news[target], q)


def _target_fields(pool: str, old: ScaleTarget, new: ScaleTarget, q: Quote) -> Iterator[str]:
    for field in ("min_replicas", "max_replicas", "units_per_replica", "replicas"):
        a, b = getattr(old, field), getattr(new, field)
        if a != b:
            yield f"pool {q(pool)} target {q(old.name)} {field} {a:g} → {b:g}"
