"""The gauges of one published tick in the Prometheus text format, written directly.

prometheus-client builds an object per sample and formats it generically: for 10,000 lanes,
1,000 pools and 1,000 targets (about 67,000 samples) a scrape took two seconds of CPU with the
GIL held, competing with the tick. Writing the lines here takes a small fraction of that; the text
is rendered once per published tick and reused by every scrape until the next one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

from arklow_pulumi.controller.ports import LaneView, PoolView, Published, TargetView
from arklow_pulumi.core.policy import REASONS

POOL_STATES = ("idle", "steady", "constrained")


def number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


def label(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _family(name: str, doc: str, samples: Iterable[tuple[str, float]]) -> list[str]:
    lines = [f"# HELP {name} {doc}", f"# TYPE {name} gauge"]
    lines += [f"{name}{labels} {number(value)}" for labels, value in samples]
    return lines


_POOL: list[tuple[str, str, Callable[[PoolView], float]]] = [
    (
        "capacity_units",
        "Pool capacity in units (static plus in-service replicas)",
        lambda p: p.capacity,
    ),
    ("demand_units", "Pool demand in units (sum of min(demand, limit) x cost)", lambda p: p.demand),
    (
        "pressure_ratio",
        "Pool demand / capacity (+Inf with no capacity and some demand)",
        lambda p: math.inf if p.pressure is None else p.pressure,
    ),
    (
        "desired_replicas",
        "Replicas the pool's scale targets are asked for",
        lambda p: p.desired_replicas,
    ),
]
_LANE: list[tuple[str, str, Callable[[LaneView], float]]] = [
    (
        "demand_units",
        "Last demand reported by the lane (raw, not capped by its limit)",
        lambda x: x.demand,
    ),
    ("allocation_units", "Fair allocation of the lane", lambda x: x.allocation),
    ("admission_units", "Units the lane may run now", lambda x: x.admission),
    (
        "held_units",
        "Work held back by pool sharing: min(demand, limit) - allocation",
        lambda x: x.held,
    ),
    (
        "report_stale",
        "1 when the lane has no demand report fresher than the TTL",
        lambda x: float(x.stale),
    ),
]
_TARGET: list[tuple[str, str, Callable[[TargetView], float]]] = [
    ("desired_replicas", "Replicas the controller wants for the target", lambda t: t.desired),
    ("in_service_replicas", "Replicas in service (counted as capacity)", lambda t: t.in_service),
    (
        "pending_replicas",
        "Replicas launched, not yet in service (never counted as capacity)",
        lambda t: t.pending,
    ),
    ("min_replicas", "The target's lower bound", lambda t: t.min),
    ("max_replicas", "The target's upper bound", lambda t: t.max),
]


def render_published(published: Published) -> str:
    lines = _family(
        "arklow_published_tick", "Number of the last published tick", [("", published.tick)]
    )
    lines += _family(
        "arklow_published_tick_timestamp_seconds",
        "Clock time of the last published tick",
        [("", published.time.timestamp())],
    )
    pools = [
        (f'{{pool="{label(name)}",resource="{label(p.resource)}"', p)
        for name, p in published.pools.items()
    ]
    for key, doc, get in _POOL:
        lines += _family(f"arklow_pool_{key}", doc, [(f"{at}}}", get(p)) for at, p in pools])
    lines += _family(
        "arklow_pool_state",
        "1 for the pool's current state",
        [(f'{at},state="{s}"}}', float(p.state == s)) for at, p in pools for s in POOL_STATES],
    )
    lanes = []
    for key, lane in published.lanes.items():
        destination, _, name = key.partition("/")
        lanes.append((f'{{destination="{label(destination)}",lane="{label(name)}"}}', lane))
    for key, doc, get_lane in _LANE:
        lines += _family(f"arklow_lane_{key}", doc, [(at, get_lane(v)) for at, v in lanes])
    targets = [
        (f'{{pool="{label(pool_name)}",target="{label(name)}"}}', t)
        for pool_name, p in published.pools.items()
        for name, t in p.targets.items()
    ]
    for key, doc, get_target in _TARGET:
        lines += _family(f"arklow_target_{key}", doc, [(at, get_target(t)) for at, t in targets])
    lines += _family(
        "arklow_target_decision_state",
        "1 for the reason of the target's last decision (docs/scale-policy.md)",
        [(f'{at[:-1]},reason="{r}"}}', float(t.reason == r)) for at, t in targets for r in REASONS],
    )
    return "\n".join(lines) + "\n"
