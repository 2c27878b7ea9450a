"""YAML text to plain values built straight from the parser's events, with no node tree.

PyYAML's loader composes a whole document into nodes before it builds a single value: about 60
times the file's size for a large topology (an 18 MB file peaked at 1.15 GB). Here the values
are built as libyaml's parser emits its events (PyYAML's ``CParser``; its pure-Python parser
where libyaml is missing), so reading holds the values themselves and one open collection per
level of nesting, a small multiple of the file (``tests/reading/test_yaml_memory.py``).

The values are those of PyYAML's safe loader (YAML 1.1 tag resolution, anchors and aliases,
merge keys ``<<``), with these refusals, each a :class:`~yaml.YAMLError` naming the line:

- a key given twice in one mapping (a merged key may be overridden);
- tags no field can hold (``!!set``, ``!!omap``, ``!!pairs``, ``!!binary``, ``!!timestamp``)
  and tags the safe loader does not know;
- an integer of more than 4,300 digits;
- more than :data:`MAX_DEPTH` levels of nesting.

A plain scalar that YAML 1.1 reads as a number or a boolean that people rarely mean —
sexagesimal ``1:30`` (90), octal ``017`` (15), ``0o17`` (text in YAML 1.1, 15 in YAML 1.2),
``yes``/``no``/``on``/``off`` (booleans) — is kept as its text, a :class:`Yaml11Scalar` that
knows its line and what YAML 1.1 makes of it. Where a name is expected it is that text (YAML
1.2 reads it so); where a number or a boolean is expected the schema refuses it, naming the line
(:mod:`arklow_pulumi.reading.parsing`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import yaml
from yaml import events
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "Yaml11Scalar", "load_yaml"]

MAX_DEPTH = 1000
MAX_INT_DIGITS = 4300  # what Python itself converts (sys.get_int_max_str_digits)
_YAML = "tag:yaml.org,2002:"
_STR, _INT, _FLOAT, _BOOL = (f"{_YAML}{t}" for t in ("str", "int", "float", "bool"))
_MAP, _SEQ, _MERGE = f"{_YAML}map", f"{_YAML}seq", f"{_YAML}merge"
REFUSED_TAGS = {
    "set": "a set (its order is not kept): write a list",
    "omap": "an ordered map: write a mapping",
    "pairs": "a list of pairs: write a mapping",
    "binary": "binary data",
    "timestamp": "a date or time: quote it if it is a name",
}
_KIND = {_MAP: "mapping", _SEQ: "sequence"}
_OCTAL_1_1 = re.compile(r"[-+]?0[0-7_]+")
_OCTAL_1_2 = re.compile(r"0o[0-7]+")
_BOOL_1_1 = frozenset({"yes", "no", "on", "off"})


class Yaml11Scalar(str):
    """A plain scalar YAML 1.1 would read as a number or a boolean people rarely mean, kept as
    its text; ``line`` (1-based) and ``reading`` (what YAML 1.1 makes of it) name it when a
    number or a boolean is expected instead."""

    line: int
    reading: str


def _surprise(value: str, line: int, reading: str) -> Yaml11Scalar:
    out = Yaml11Scalar(value)
    out.line, out.reading = line, reading
    return out


_CONSTRUCT = SafeConstructor()  # its scalar constructors, called on one transient node at a time
_RESOLVER = Resolver()


def _pure_parser(text: str) -> Any:
    class Parser(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
        def __init__(self, stream: str) -> None:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)

    return Parser(text)


def _libyaml_parser() -> Callable[[str], Any] | None:
    """libyaml's parser, or ``None`` where PyYAML was built without it."""
    try:
        from yaml import cyaml
    except ImportError:
        return None
    parser: Callable[[str], Any] | None = getattr(cyaml, "CParser", None)
    return parser


_PARSER: Callable[[str], Any] = _libyaml_parser() or _pure_parser


def _fail(problem: str, mark: Any) -> ConstructorError:
    return ConstructorError(None, None, problem, mark)


def _resolve(value: str, implicit: tuple[bool, bool]) -> str:
    tag: str = _RESOLVER.resolve(ScalarNode, value, implicit)  # type: ignore[no-untyped-call]
    return tag


def scalar(event: Any) -> object:
    """One scalar's value (see the module doc)."""
    value: str = event.value
    tag: str | None = event.tag
    mark: Any = event.start_mark
    plain = event.implicit[0] and tag is None
    if tag is None or tag == "!":
        tag = _resolve(value, event.implicit)
    if tag == _STR:
        if plain and _OCTAL_1_2.fullmatch(value):
            return _surprise(value, mark.line + 1, "text in YAML 1.1 (15 in YAML 1.2: octal)")
        return value
    if tag in (_INT, _FLOAT, _BOOL):
        reading = _yaml11_reading(tag, value)
        if reading is not None:
            return _surprise(value, mark.line + 1, reading)
        if tag == _INT and len(value) > MAX_INT_DIGITS:
            digits = sum(c.isdigit() for c in value)
            if digits > MAX_INT_DIGITS:
                raise _fail(
                    f"an integer of {digits:,} digits (at most {MAX_INT_DIGITS:,} are read)", mark
                )
    if tag.startswith(_YAML) and tag[len(_YAML) :] in REFUSED_TAGS:
        name = tag[len(_YAML) :]
        raise _fail(f"!!{name} is not accepted here ({REFUSED_TAGS[name]})", mark)
    if tag in (_MAP, _SEQ):
        raise _fail(f"expected a {_KIND[tag]} node, but found a scalar", mark)
    construct = _CONSTRUCT.yaml_constructors.get(tag)
    if construct is None or tag == _MERGE:
        raise _fail(f"could not determine a constructor for the tag {tag!r}", mark)
    try:
        return construct(_CONSTRUCT, ScalarNode(tag, value, mark, event.end_mark, event.style))
    except (ValueError, IndexError, KeyError, AttributeError, TypeError, OverflowError):
        # the safe loader's own constructors fail this way on some tagged scalars
        # (``!!float ""``, ``!!int x``)
        raise _fail(f"{value!r:.60} is not a valid {tag.rsplit(':', 1)[-1]}", mark) from None


def _yaml11_reading(tag: str, value: str) -> str | None:
    """What YAML 1.1 makes of a number or a boolean people rarely mean by it, else ``None``."""
    if tag == _BOOL:
        if value.lower() in _BOOL_1_1:
            meaning = "true" if value.lower() in ("yes", "on") else "false"
            return f"a boolean in YAML 1.1 ({meaning}), text in YAML 1.2"
        return None
    if ":" in value:
        number = _CONSTRUCT.yaml_constructors[tag](_CONSTRUCT, ScalarNode(tag, value))
        return f"a number in base 60 in YAML 1.1 ({number:g})"
    if tag == _INT and _OCTAL_1_1.fullmatch(value) and value.lstrip("+-").strip("0_"):
        number = _CONSTRUCT.yaml_constructors[tag](_CONSTRUCT, ScalarNode(tag, value))
        return f"octal in YAML 1.1 ({number}), decimal in YAML 1.2"
    return None


class _Open:
    """A collection being built: its value, and for a mapping its pending key, where each own
    key was first given (for the duplicate message) and what ``<<`` merges into it."""

    __slots__ = ("key", "key_mark", "lines", "mark", "merges", "value")

    def __init__(self, value: Any, mark: Any) -> None:
        self.value = value
        self.mark = mark
        self.key: Any = _NO_KEY
        self.key_mark: Any = None
        self.lines: dict[Any, int] | None = {} if isinstance(value, dict) else None
        self.merges: list[Any] = []


_NO_KEY = object()
_MERGE_KEY = object()


def load_yaml(text: str) -> object:
    """The one document of ``text`` as plain values (``None`` for an empty stream); raises
    :class:`yaml.YAMLError` with the place (see the module doc)."""
    parser = _PARSER(text)
    try:
        return _document(parser)
    finally:
        parser.dispose()


def _document(parser: Any) -> object:
    anchors: dict[str, Any] = {}
    stack: list[_Open] = []
    result: Any = None
    documents = 0
    while True:
        event: Any = parser.get_event()
        mark: Any = event.start_mark
        if isinstance(event, events.StreamEndEvent):
            return result
        if isinstance(event, events.DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise yaml.composer.ComposerError(
                    "expected a single document in the stream", None,
                    "but found another document", mark,
                )  # fmt: skip
            continue
        if isinstance(event, events.ScalarEvent):
            value: Any = _scalar_or_merge(event, stack)
            if event.anchor is not None:
                anchors[event.anchor] = value
        elif isinstance(event, events.AliasEvent):
            if event.anchor not in anchors:
                raise yaml.composer.ComposerError(
                    None, None, f"found undefined alias {event.anchor!r}", mark
                )
            value = anchors[event.anchor]
        elif isinstance(event, (events.MappingStartEvent, events.SequenceStartEvent)):
            stack.append(_start(event, stack))
            if event.anchor is not None:
                anchors[event.anchor] = stack[-1].value
            continue
        elif isinstance(event, (events.MappingEndEvent, events.SequenceEndEvent)):
            value = _end(stack.pop())
        else:  # DocumentEnd, StreamStart
            continue
        if stack:
            _add(stack[-1], value, event.start_mark)
        else:
            result = value


def _scalar_or_merge(event: Any, stack: list[_Open]) -> Any:
    top = stack[-1] if stack else None
    if (
        top is not None
        and top.lines is not None
        and top.key is _NO_KEY
        and event.tag is None
        and event.implicit[0]
        and event.value == "<<"
    ):
        return _MERGE_KEY
    return scalar(event)


def _start(event: Any, stack: list[_Open]) -> _Open:
    if len(stack) >= MAX_DEPTH:
        raise _fail(f"nested too deeply (more than {MAX_DEPTH} levels)", event.start_mark)
    mapping = isinstance(event, events.MappingStartEvent)
    tag = event.tag
    if tag is not None and tag != "!" and tag != (_MAP if mapping else _SEQ):
        name = tag[len(_YAML) :] if tag.startswith(_YAML) else ""
        if name in REFUSED_TAGS:
            raise _fail(f"!!{name} is not accepted here ({REFUSED_TAGS[name]})", event.start_mark)
        if tag in _KIND:
            found = "mapping" if mapping else "sequence"
            raise _fail(f"expected a {_KIND[tag]} node, but found a {found}", event.start_mark)
        raise _fail(f"could not determine a constructor for the tag {tag!r}", event.start_mark)
    return _Open({} if mapping else [], event.start_mark)


def _add(top: _Open, value: Any, mark: Any) -> None:
    if top.lines is None:
        top.value.append(value)
        return
    if top.key is _NO_KEY:
        try:
            hash(value)
        except TypeError:
            raise ConstructorError(
                "while constructing a mapping", top.mark, "found unhashable key", mark
            ) from None
        top.key, top.key_mark = value, mark
        return
    key, top.key = top.key, _NO_KEY
    if key is _MERGE_KEY:
        top.merges.append((value, mark))
        return
    first = top.lines.get(key)
    if first is not None:
        raise _fail(f"duplicate key {key!r:.100} (first at line {first})", top.key_mark)
    top.lines[key] = top.key_mark.line + 1
    top.value[key] = value


def _end(top: _Open) -> Any:
    if not top.merges:
        return top.value
    merged: dict[Any, Any] = {}
    for value, mark in reversed(top.merges):  # an earlier mapping wins over a later one
        for part in reversed(value) if isinstance(value, list) else (value,):
            if not isinstance(part, dict):
                raise ConstructorError(
                    "while constructing a mapping",
                    top.mark,
                    "expected a mapping or list of mappings for merging",
                    mark,
                )
            merged.update(part)
    own = dict(top.value)
    top.value.clear()
    top.value.update(merged)
    top.value.update(own)  # the mapping's own keys override merged ones
    return top.value
