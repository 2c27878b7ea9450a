"""What changed between two topologies, in short phrases for one line of a review comment."""

from __future__ import annotations

from collections.abc import Iterator

from arklow_pulumi.core.topology import Pool, ScaleTarget, Topology


def describe_change(before: Topology, after: Topology) -> str:
    """``"search moved from pool a to b for gpu; pool b: max_replicas of asg 4 → 8"`` or
    ``"no change to the topology"``."""
    phrases = [*_destinations(before, after), *_memberships(before, after), *_pools(before, after)]
    return "; ".join(phrases) if phrases else "no change to the topology"


def _destinations(before: Topology, after: Topology) -> Iterator[str]:
    for name in after.destinations.keys() - before.destinations.keys():
        yield f"new destination {name}"
    for name in before.destinations.keys() - after.destinations.keys():
        yield f"destination {name} removed"
    old, new = before.lanes_by_key, after.lanes_by_key
    for key in sorted(new.keys() - old.keys()):
        if new[key].destination in before.destinations:
            yield f"new lane {key}"
    for key in sorted(old.keys() - new.keys()):
        if old[key].destination in after.destinations:
            yield f"lane {key} removed"
    for key in sorted(old.keys() & new.keys()):
        a, b = old[key], new[key]
        for field in ("limit", "weight"):
            if getattr(a, field) != getattr(b, field):
                yield f"lane {key} {field} {getattr(a, field):g} → {getattr(b, field):g}"
        if dict(a.cost) != dict(b.cost):
            yield f"lane {key} cost {dict(a.cost)} → {dict(b.cost)}"


def _memberships(before: Topology, after: Topology) -> Iterator[str]:
    for (dest, resource), pool in sorted(after.memberships.items()):
        was = before.memberships.get((dest, resource))
        if was is not None and was != pool:
            yield f"{dest} moved from pool {was} to {pool} for {resource}"


def _pools(before: Topology, after: Topology) -> Iterator[str]:
    for name, pool in after.pools.items():
        old = before.pools.get(name)
        if old is None:
            if not after.is_standalone(name):
                yield f"new pool {name}"
            continue
        yield from _pool_fields(name, old, pool)
    for name in before.pools:
        if name not in after.pools and not before.is_standalone(name):
            yield f"pool {name} removed"


def _pool_fields(name: str, old: Pool, new: Pool) -> Iterator[str]:
    for field in ("capacity", "headroom"):
        if getattr(old, field) != getattr(new, field):
            yield f"pool {name} {field} {getattr(old, field):g} → {getattr(new, field):g}"
    if old.scale_policy != new.scale_policy:
        yield f"pool {name} scale policy changed"
    olds = {t.name: t for t in old.scale_targets}
    news = {t.name: t for t in new.scale_targets}
    for target in news.keys() - olds.keys():
        yield f"pool {name} new scale target {target}"
    for target in olds.keys() - news.keys():
        yield f"pool {name} scale target {target} removed"
    for target in sorted(olds.keys() & news.keys()):
        yield from _target_fields(name, olds[target], news[target])


def _target_fields(pool: str, old: ScaleTarget, new: ScaleTarget) -> Iterator[str]:
    for field in ("min_replicas", "max_replicas", "units_per_replica", "replicas"):
        a, b = getattr(old, field), getattr(new, field)
        if a != b:
            yield f"pool {pool} target {old.name} {field} {a:g} → {b:g}"
