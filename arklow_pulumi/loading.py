"""Read topology and demand documents from YAML files (an adapter: the core never reads files)."""

from __future__ import annotations

from pathlib import Path

import yaml

from arklow_pulumi.core.building import build_topology
from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.parsing import parse_demand, parse_topology
from arklow_pulumi.core.topology import Topology


def read_yaml(path: Path, what: str) -> object:
    """Parse one YAML document; unreadable or malformed files become :class:`InvalidInput`."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput.one(
            f"{what} file {str(path)!r}", "(file)", exc.strerror or str(exc)
        ) from exc
    except UnicodeDecodeError as exc:
        raise InvalidInput.one(f"{what} file {str(path)!r}", "(file)", "is not UTF-8 text") from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "malformed YAML"
        raise InvalidInput.one(f"{what} file {str(path)!r}", "(yaml)", f"{problem}{where}") from exc


def load_topology(path: Path) -> Topology:
    return build_topology(parse_topology(read_yaml(path, "topology"), f"topology {str(path)!r}"))


def load_demand(path: Path) -> dict[str, float]:
    spec = parse_demand(read_yaml(path, "demand"), f"demand {str(path)!r}")
    return dict(spec.lanes)
