"""Topology, demand and other documents read from files (an adapter: the core never reads files).

A file is read as text (UTF-8), parsed by :func:`~arklow_pulumi.reading.text.parse_document` and
validated in one step into core values (:func:`~arklow_pulumi.reading.parsing.parse_topology`,
then :func:`~arklow_pulumi.reading.spec.build_topology`). Every failure is one
:class:`~arklow_pulumi.core.errors.InvalidInput` naming the file, the object and the field.
"""

from __future__ import annotations

from pathlib import Path

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.topology import Topology
from arklow_pulumi.reading.parsing import parse_demand, parse_topology
from arklow_pulumi.reading.spec import build_topology
from arklow_pulumi.reading.text import MalformedDocument, parse_document

__all__ = ["load_demand", "load_topology", "read_document"]


def read_document(path: Path, what: str) -> object:
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
    raw = read_document(path, "topology")
    return build_topology(parse_topology(raw, f"topology {str(path)!r}"))


def load_demand(path: Path) -> dict[str, float]:
    raw = read_document(path, "demand")
    return dict(parse_demand(raw, f"demand {str(path)!r}").lanes)
