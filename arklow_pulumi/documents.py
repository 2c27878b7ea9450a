"""Parse one YAML or JSON document into plain values, fast and strictly.

A document whose first character is ``{`` or ``[`` and that parses as JSON is read by the JSON
parser (faster, and it reads ``1e3`` as the number JSON says it is); anything else is YAML: plain
YAML is read by the compiled parser (:mod:`arklow_pulumi.yaml_plain`), the rest by
:mod:`arklow_pulumi.yaml_events` (imported only then: PyYAML's import is not free). Every
failure is one :class:`MalformedDocument` whose message is one line.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["MalformedDocument", "parse_document"]


class MalformedDocument(ValueError):
    """The text is not one well-formed document (message: one line, with the place when known)."""


class _DuplicateKey(ValueError):
    pass


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(f"duplicate key {key!r}")
            seen.add(key)
    return out


@contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Parsing makes only acyclic containers; the collector would rescan them again and again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_document(text: str) -> object:
    """One document, JSON or YAML, as plain values; :class:`MalformedDocument` if it is not."""
    try:
        with _no_cyclic_gc():
            if text.lstrip()[:1] in ("{", "["):
                try:
                    return json.loads(text, object_pairs_hook=_unique_object)
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
    from arklow_pulumi.yaml_plain import read_plain_yaml

    plain, value = read_plain_yaml(text)
    if plain:
        return value
    import yaml  # only now: PyYAML's import is not free either

    from arklow_pulumi.yaml_events import describe, read_yaml_text

    try:
        return read_yaml_text(text)
    except yaml.YAMLError as exc:
        raise MalformedDocument(describe(exc)) from exc


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else f"{line[: limit - 3]}..."
