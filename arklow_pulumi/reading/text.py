"""Text to plain values: JSON by the standard library, YAML by PyYAML over libyaml.

One reader per format. A text whose first character is ``{`` or ``[`` and that parses as JSON is
JSON (``json``: faster, and it reads ``1e3`` as the number JSON says it is); anything else is YAML
1.1, read by PyYAML's safe loader over libyaml (``CSafeLoader``; the pure-Python ``SafeLoader``
where libyaml is missing). Both refuse a key given twice in one mapping: PyYAML and ``json`` keep
the last silently, so a lane listed twice in a demand report would lose one of its values. Every
failure is one :class:`MalformedDocument` whose message is one line.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import yaml
from yaml.nodes import MappingNode

__all__ = ["MalformedDocument", "no_cyclic_gc", "parse_document", "parse_json"]

_MERGE = "tag:yaml.org,2002:merge"
_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class MalformedDocument(ValueError):
    """The text is not one well-formed document (message: one line, with the place when known)."""


class StrictLoader(_BaseLoader):  # type: ignore[valid-type,misc]
    """The safe loader (no arbitrary objects) with a key given twice in one mapping refused."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        if not isinstance(node, MappingNode) or any(k.tag == _MERGE for k, _ in node.value):
            return self._merged_mapping(node, deep)
        mapping: dict[Any, Any] = {}
        construct = self.construct_object
        for key_node, value_node in node.value:
            key = construct(key_node, deep=deep)
            try:
                seen = key in mapping
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "found unhashable key",
                    key_node.start_mark,
                ) from None
            if seen:
                raise self._duplicate(node, key, key_node)
            mapping[key] = construct(value_node, deep=deep)
        return mapping

    def _duplicate(
        self, node: MappingNode, key: object, key_node: yaml.Node
    ) -> yaml.constructor.ConstructorError:
        first = next(
            k for k, _ in node.value if k.tag != _MERGE and self.construct_object(k) == key
        )
        return yaml.constructor.ConstructorError(
            None,
            None,
            f"duplicate key {key!r} (first at line {first.start_mark.line + 1})",
            key_node.start_mark,
        )

    def _merged_mapping(self, node: MappingNode, deep: bool) -> dict[Any, Any]:
        """A mapping with merge keys (``<<: *base``): a merged key may be overridden, so only
        the mapping's own keys are checked, then PyYAML's constructor merges."""
        seen: set[object] = set()
        for key_node, _ in node.value if isinstance(node, MappingNode) else ():
            if key_node.tag == _MERGE:
                continue
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, (str, int, float, bool)) or key is None:
                if key in seen:
                    raise self._duplicate(node, key, key_node)
                seen.add(key)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


# Tags whose values no field of ours can hold, refused where they stand instead of read into
# something a schema then half-accepts (a !!set read as a list whose order follows the hash seed).
_REFUSED_TAGS = {
    "set": "a set (its order is not kept): write a list",
    "omap": "an ordered map: write a mapping",
    "pairs": "a list of pairs: write a mapping",
    "binary": "binary data",
    "timestamp": "a date or time: quote it if it is a name",
}


def _refusal(tag: str, what: str) -> Any:
    def refuse(loader: Any, node: yaml.Node) -> Any:
        raise yaml.constructor.ConstructorError(
            None, None, f"!!{tag} is not accepted here ({what})", node.start_mark
        )

    return refuse


for _tag, _what in _REFUSED_TAGS.items():
    StrictLoader.add_constructor(f"tag:yaml.org,2002:{_tag}", _refusal(_tag, _what))


class DuplicateKey(ValueError):
    """A JSON object with a key given twice: well-formed JSON, but not a document we read."""


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(f"duplicate key {key!r:.100}")
            seen.add(key)
    return out


@contextmanager
def no_cyclic_gc() -> Iterator[None]:
    """The cyclic collector off for a while: parsing and building make only acyclic containers,
    hundreds of thousands of them, which the collector would rescan again and again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_json(text: str | bytes) -> object:
    """One JSON document as plain values (a key given twice refused). Raises
    ``json.JSONDecodeError`` for text that is not JSON, :class:`DuplicateKey` for a key given
    twice, ``ValueError`` for an integer of over 4,300 digits, ``RecursionError`` when nested too
    deeply."""
    return json.loads(text, object_pairs_hook=_unique_object)


def parse_document(text: str) -> object:
    """One document, JSON or YAML, as plain values; :class:`MalformedDocument` if it is not."""
    try:
        with no_cyclic_gc():
            if text.lstrip()[:1] in ("{", "["):
                try:
                    return parse_json(text)
                except json.JSONDecodeError:
                    pass  # YAML flow style ({a: 1}) is not JSON; read it as YAML
            return _yaml(text)
    except RecursionError as exc:
        raise MalformedDocument("nested too deeply") from exc
    except MalformedDocument:
        raise
    except ValueError as exc:  # a key given twice in JSON; an integer of over 4,300 digits
        raise MalformedDocument(_one_line(str(exc))) from exc


def _yaml(text: str) -> object:
    try:
        return yaml.load(text, Loader=StrictLoader)  # a SafeLoader: no arbitrary objects
    except yaml.YAMLError as exc:
        raise MalformedDocument(_described(exc)) from exc
    except (IndexError, KeyError, AttributeError, TypeError, OverflowError) as exc:
        # PyYAML's constructors fail this way on some tagged scalars (``!!float ""``,
        # ``!!timestamp ""``)
        raise MalformedDocument(f"a tagged value could not be read ({type(exc).__name__})") from exc


def _described(exc: yaml.YAMLError) -> str:
    """One line: what is wrong and where."""
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    parts = [getattr(exc, "context", None), getattr(exc, "problem", None)]
    text = ", ".join(str(p) for p in parts if p) or "malformed YAML"
    return f"{' '.join(text.split())}{where}"


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else f"{line[: limit - 3]}..."
