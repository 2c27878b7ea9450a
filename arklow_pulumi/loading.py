"""Read topology and demand documents from files (an adapter: the core never reads files).

A document is read by the fast reader (:mod:`arklow_pulumi.core.reading`) when every field is
plainly valid; otherwise it is read through the spec models (:mod:`arklow_pulumi.core.parsing`,
imported only then: pydantic's import and model building cost more than a 10,000-lane
allocation), which name every problem. Both routes give the same topology and demand.
"""

from __future__ import annotations

from pathlib import Path

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.reading import read_demand, read_topology
from arklow_pulumi.core.topology import Topology
from arklow_pulumi.documents import MalformedDocument, parse_document


def read_yaml(path: Path, what: str) -> object:
    """Parse one YAML (or JSON) document; an unreadable or malformed file is one
    :class:`InvalidInput` line."""
    obj = f"{what} file {str(path)!r}"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput.one(obj, "(file)", exc.strerror or str(exc)) from exc
    except UnicodeDecodeError as exc:
        raise InvalidInput.one(obj, "(file)", "is not UTF-8 text") from exc
    try:
        return parse_document(text)
    except MalformedDocument as exc:
        raise InvalidInput.one(obj, "(yaml)", str(exc)) from exc


def load_topology(path: Path) -> Topology:
    raw = read_yaml(path, "topology")
    topology = read_topology(raw)
    if topology is not None:
        return topology
    from arklow_pulumi.core.building import build_topology
    from arklow_pulumi.core.parsing import parse_topology

    return build_topology(parse_topology(raw, f"topology {str(path)!r}"))


def load_demand(path: Path) -> dict[str, float]:
    raw = read_yaml(path, "demand")
    demand = read_demand(raw)
    if demand is not None:
        return demand
    from arklow_pulumi.core.parsing import parse_demand

    return dict(parse_demand(raw, f"demand {str(path)!r}").lanes)
