"""Read topology and demand documents from YAML files (an adapter: the core never reads files)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from arklow_pulumi.core.building import build_topology
from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.parsing import parse_demand, parse_topology
from arklow_pulumi.core.topology import Topology


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping (PyYAML keeps the last silently,
    so a lane listed twice in a demand report would lose one of its values)."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: dict[object, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, (str, int, float, bool)) or key is None:
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first at line {seen[key]})",
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark.line + 1
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,
)


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
        return yaml.load(text, Loader=_StrictLoader)  # a SafeLoader subclass: no arbitrary objects
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
