"""What-if for a Pulumi stack: the stack's declared topology against what the store holds.

*After* is ``arklow:topology`` of ``<stackConfigDir>/Pulumi.<stack>.yaml`` (the document the root
program declares, checked by the same model); *before* is the store's topology as loaded by the
controller; the trace is a given file or the store's demand history over a window (each lane's
value at the window's start, then every later row; lanes in neither topology are left out).
A stack file rarely states ``replicas`` (it is runtime state): a scale target the store already
holds starts *after* at the store's replica count, kept within its new [min, max].
The policy pack under ``policy/`` and ``arklow what-if --stack`` both come through here.
"""

from __future__ import annotations

import re
import time
from collections.abc import Collection, Mapping
from dataclasses import replace
from pathlib import Path

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.policy import clamp
from arklow_pulumi.core.topology import Pool, ScaleTarget, Topology
from arklow_pulumi.reading.files import read_document
from arklow_pulumi.reading.parsing import parse_topology
from arklow_pulumi.reading.spec import build_topology
from arklow_pulumi.simulation.tracing import Trace
from arklow_pulumi.store_location import resolve_store_url

TOPOLOGY_KEY = "arklow:topology"
STORE_KEY = "arklow:store"
DEFAULT_HISTORY = 7 * 86400.0
_STACK_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


def stack_config_path(project_dir: Path, stack: str) -> Path:
    """``<stackConfigDir>/Pulumi.<stack>.yaml``; ``org/project/stack`` names use their last part."""
    parts = stack.split("/")
    if len(parts) > 3 or any(not _STACK_NAME.match(p) or p in (".", "..") for p in parts):
        raise InvalidInput.one(f"stack {stack!r}", "(name)", "is not a stack name")
    short = parts[-1]
    config_dir = project_dir
    project_file = project_dir / "Pulumi.yaml"
    if project_file.is_file():
        project = read_document(project_file, "project")
        if isinstance(project, Mapping) and isinstance(project.get("stackConfigDir"), str):
            config_dir = project_dir / project["stackConfigDir"]
    path = config_dir / f"Pulumi.{short}.yaml"
    if not path.is_file():
        raise InvalidInput.one(f"stack {stack!r}", "(config)", f"no such stack file ({path})")
    return path


def stack_config(project_dir: Path, stack: str) -> Mapping[str, object]:
    path = stack_config_path(project_dir, stack)
    document = read_document(path, "stack config")
    config = document.get("config") if isinstance(document, Mapping) else None
    if config is None:
        return {}
    if not isinstance(config, Mapping):
        raise InvalidInput.one(f"stack config file {str(path)!r}", "config", "must be a mapping")
    return config


def topology_from_config(raw: object, source: str) -> Topology:
    """The topology document of ``arklow:topology`` (as the root program reads it)."""
    if raw is None:
        raise InvalidInput.one(source, TOPOLOGY_KEY, "is not set for this stack")
    return build_topology(parse_topology(raw, source))


def stack_topology(project_dir: Path, stack: str) -> Topology:
    config = stack_config(project_dir, stack)
    return topology_from_config(config.get(TOPOLOGY_KEY), f"stack {stack!r} config")


def stack_store_url(project_dir: Path, stack: str, explicit: str | None) -> str:
    """``--store`` > the stack's plain ``arklow:store`` > ``$ARKLOW_STORE`` > the default file.
    A secret ``arklow:store`` cannot be read without the stack's secrets provider: pass --store."""
    configured = stack_config(project_dir, stack).get(STORE_KEY) if explicit is None else None
    return resolve_store_url(
        explicit, configured if isinstance(configured, str) else None, project_dir
    )


def store_topology(url: str) -> Topology:
    from arklow_pulumi.store.engine import open_store
    from arklow_pulumi.store.service import stored_topology

    return stored_topology(open_store(url, create=False, read_only=True))


def history_trace(
    url: str, known: Collection[str], window: float = DEFAULT_HISTORY, now: float | None = None
) -> Trace:
    """The store's demand history of the last ``window`` seconds as a trace starting at 0."""
    from arklow_pulumi.store.engine import open_store
    from arklow_pulumi.store.runtime import demand_trace

    since = (time.time() if now is None else now) - window
    rows = [
        (at, lane, demand)
        for at, lane, demand in demand_trace(open_store(url, create=False, read_only=True), since)
        if lane in known
    ]
    if not rows:
        raise InvalidInput.one(
            "store demand history",
            "(rows)",
            f"holds no demand for these lanes in the last {window / 86400:g} days; pass --trace",
        )
    start = rows[0][0]
    return Trace(
        times=tuple(at - start for at, _, _ in rows),
        lanes=tuple(lane for _, lane, _ in rows),
        demands=tuple(demand for _, _, demand in rows),
    )


def carry_replicas(before: Topology, after: Topology) -> Topology:
    """``after`` with each scale target known to ``before`` at its replica count there, clamped
    to the target's bounds in ``after``."""
    current = {t.name: t.replicas for p in before.pools.values() for t in p.scale_targets}

    def carried(target: ScaleTarget) -> ScaleTarget:
        if target.name not in current:
            return target
        count = clamp(current[target.name], target.min_replicas, target.max_replicas)
        return replace(target, replicas=count)

    pools: dict[str, Pool] = {
        name: replace(pool, scale_targets=tuple(carried(t) for t in pool.scale_targets))
        for name, pool in after.pools.items()
    }
    return Topology(after.destinations, pools, after.memberships)
