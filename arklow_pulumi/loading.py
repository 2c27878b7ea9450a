"""Read topology and demand documents from files (an adapter: the core never reads files)."""

from __future__ import annotations

from pathlib import Path

from arklow_pulumi.core.building import build_topology
from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.parsing import parse_demand, parse_topology
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
    return build_topology(parse_topology(read_yaml(path, "topology"), f"topology {str(path)!r}"))


def load_demand(path: Path) -> dict[str, float]:
    spec = parse_demand(read_yaml(path, "demand"), f"demand {str(path)!r}")
    return dict(spec.lanes)
