"""Read one YAML document into plain values, fast and strictly.

A plain document (the subset of :mod:`arklow_pulumi.yaml_plain`) is read by a compiled parser
before this module is imported (:mod:`arklow_pulumi.documents`); the rest as follows.

YAML is read from libyaml's event stream (PyYAML's ``CSafeLoader`` parser) straight into dicts and
lists. The generic route — compose a node graph, then construct values from it — took seconds for
a 10,000-lane topology: most of it in the cyclic garbage collector walking the ever-growing node
graph, the rest in per-node bookkeeping. Plain documents (untagged scalars, mappings, sequences,
anchors and aliases) take the fast route; anything else (explicit tags, merge keys, a key given
twice, a mapping as a key, several documents) is read again by PyYAML's safe constructor, which
gives the same values, or the same precise error, as before. Either way a key given twice in one
mapping is refused: PyYAML keeps the last silently, so a lane listed twice in a demand report
would lose one of its values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    DocumentEndEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)
from yaml.nodes import MappingNode, ScalarNode

__all__ = ["read_yaml_text"]

_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_MAP = "tag:yaml.org,2002:map"
_MERGE = "tag:yaml.org,2002:merge"


class _Unusual(Exception):
    """The fast route does not handle this document; PyYAML's constructor reads it."""


def _construct_mapping(loader: yaml.SafeLoader, node: MappingNode, deep: bool = False) -> Any:
    seen: dict[object, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == _MERGE:
            continue
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


class StrictLoader(_BaseLoader):  # type: ignore[valid-type,misc]
    """The safe loader (no arbitrary objects) with a key given twice refused."""


StrictLoader.add_constructor(_MAP, _construct_mapping)


def _scalar_reader(loader: yaml.SafeLoader) -> Callable[[str], Any]:
    """Plain scalar text to its value (YAML 1.1 core schema, as PyYAML reads it)."""
    implicit = {
        first: tuple(resolvers)
        for first, resolvers in loader.yaml_implicit_resolvers.items()
        if first is not None
    }
    constructors = loader.yaml_constructors
    int_tag, float_tag = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"

    def read(value: str) -> Any:
        for tag, regexp in implicit.get(value[:1], ()):
            if regexp.match(value):
                if tag == int_tag and value.isdigit() and value[0] != "0":
                    return int(value)
                if tag == float_tag and ":" not in value and "n" not in value.lower():
                    return float(value)
                construct = constructors.get(tag)
                if construct is None or tag == _MERGE:
                    raise _Unusual
                return construct(loader, ScalarNode(tag, value))
        return value

    return read


def _fast_yaml(text: str) -> Any:
    """Values from the event stream, or :class:`_Unusual` when the document needs more."""
    loader = _BaseLoader(text)
    try:
        return _from_events(loader)
    finally:
        loader.dispose()


def _from_events(loader: yaml.SafeLoader) -> Any:
    get: Callable[[], Any] = loader.get_event
    read = _scalar_reader(loader)
    known: dict[str, Any] = {}  # plain scalar text -> value: keys and small numbers repeat
    anchors: dict[str, Any] = {}
    stack: list[tuple[Any, Any]] = []
    no_key = _Unusual  # a sentinel: "the next scalar is a key"
    cur: Any = None
    key: Any = no_key
    root: Any = None
    if type(get()) is not StreamStartEvent:
        raise _Unusual
    event = get()
    if type(event) is StreamEndEvent:
        return None
    if type(event) is not DocumentStartEvent:
        raise _Unusual
    while True:
        event = get()
        kind = type(event)
        if kind is ScalarEvent:
            if event.tag is not None:
                raise _Unusual
            value = event.value
            if event.implicit[0]:
                text = value
                value = known.get(text, known)
                if value is known:
                    value = known[text] = read(text)
            if event.anchor is not None:
                anchors[event.anchor] = value
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            if event.tag is not None or (type(cur) is dict and key is no_key):
                raise _Unusual  # a tag, or a mapping or sequence used as a key
            stack.append((cur, key))
            cur = {} if kind is MappingStartEvent else []
            key = no_key
            if event.anchor is not None:
                anchors[event.anchor] = cur
            continue
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            value = cur
            cur, key = stack.pop()
        elif kind is AliasEvent:
            if event.anchor not in anchors or (type(cur) is dict and key is no_key):
                raise _Unusual
            value = anchors[event.anchor]
        elif kind is DocumentEndEvent:
            break
        else:
            raise _Unusual
        if cur is None:
            root = value
        elif type(cur) is list:
            cur.append(value)
        elif key is no_key:
            if value in cur:
                raise _Unusual  # a key given twice: the constructor says where
            key = value
        else:
            cur[key] = value
            key = no_key
    if type(get()) is not StreamEndEvent:
        raise _Unusual  # several documents: the constructor refuses them
    return root


def read_yaml_text(text: str) -> Any:
    """The document's values. Raises ``yaml.YAMLError`` for malformed YAML or a key given
    twice."""
    try:
        return _fast_yaml(text)
    except _Unusual:
        return yaml.load(text, Loader=StrictLoader)  # a SafeLoader subclass: no arbitrary objects


def describe(exc: yaml.YAMLError) -> str:
    """One line: what is wrong and where."""
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    parts = [getattr(exc, "context", None), getattr(exc, "problem", None)]
    text = ", ".join(str(p) for p in parts if p) or "malformed YAML"
    return f"{' '.join(text.split())}{where}"
