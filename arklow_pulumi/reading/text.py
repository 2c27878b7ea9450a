"""Text to plain values: JSON by the standard library, YAML by PyYAML over libyaml.

One reader per format. A text whose first character is ``{`` or ``[`` and that parses as JSON is
JSON (``json``: faster, and it reads ``1e3`` as the number JSON says it is); anything else is YAML
1.1 as PyYAML's safe loader reads it, built from libyaml's events without PyYAML's node tree
(:mod:`~arklow_pulumi.reading.yaml_values`, which also refuses YAML 1.1's surprising numbers and
booleans where a number or a boolean is expected). Both refuse a key given twice in one mapping:
PyYAML and ``json`` keep the last silently, so a lane listed twice in a demand report would lose
one of its values. Both refuse an integer of more than 4,300 digits. Every failure is one
:class:`MalformedDocument` whose message is one line.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

__all__ = ["MalformedDocument", "no_cyclic_gc", "parse_document", "parse_json"]


class MalformedDocument(ValueError):
    """The text is not one well-formed document (message: one line, with the place when known)."""


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
    try:
        return json.loads(text, object_pairs_hook=_unique_object)
    except (json.JSONDecodeError, DuplicateKey):
        raise
    except ValueError:  # Python's own words name sys.set_int_max_str_digits(): not ours to give
        from arklow_pulumi.reading.yaml_values import MAX_INT_DIGITS

        raise ValueError(f"an integer of more than {MAX_INT_DIGITS:,} digits") from None


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
    # PyYAML is imported by the first YAML document only: a JSON one never needs it
    import yaml

    from arklow_pulumi.reading.yaml_values import load_yaml

    try:
        return load_yaml(text)  # the safe loader's values: no arbitrary objects
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
