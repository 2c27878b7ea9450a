"""Plain YAML, read by a compiled parser: the fast route for the documents people and tools write.

PyYAML reads YAML 1.1, and its libyaml event stream alone takes 0.4 s for a 10,000-lane topology.
``yaml_rs`` (a compiled YAML 1.2 parser) reads the same document into dicts and lists in a third
of that, but the two schemas resolve some plain scalars differently (``yes``/``on`` are booleans
in 1.1 and strings in 1.2; ``017``, ``1e3``, ``+.5``, ``1:30``, ``2001-12-14`` differ too; tags,
anchors and merge keys are handled differently).

So the compiled parser only reads a document that is *plain*: every line is, from a small
grammar (``_LINE``), blank, a comment, or indentation (at most 200 columns), ``- `` markers (at most
32) and one entry ``key: value`` or ``value``, whose scalars are words (letter first; letters,
digits, ``_ . / + -``, single spaces inside), numbers in the forms both schemas read the same
(``12``, ``-3``, ``0.5``, ``1.0e+5``), quoted strings without escapes, or flow lists/maps of
those; no ``yes``, ``no``, ``on`` or ``off`` as a word; ASCII only; at most one ``---``, first.
Over that subset both parsers give the same values (``tests/test_yaml_plain.py`` holds them to it
on generated and mutated documents). Any other document, and any document the compiled parser
refuses, is read by PyYAML exactly as before, with its messages. Without ``yaml_rs`` installed
every document is.

A plain document is first offered to ``arklow_pulumi._plain_yaml`` (optional C, ``NATIVE`` says
whether it is in use; ``ARKLOW_PURE_PYTHON=1`` turns it off): a reader of the block style people
and ``yaml.safe_dump`` write, about four times faster than ``yaml_rs`` (bench_plain_yaml.py). It
gives exactly what ``yaml_rs`` gives wherever it reads a document (the tests hold it to that) and
declines anything it is not sure of (a key given twice, a multi-line scalar, ``- - x``, a number
as a key, ...); ``yaml_rs`` reads those as before.
"""

from __future__ import annotations

import importlib
import os
import re
from types import ModuleType
from typing import Any

try:
    import yaml_rs
except ImportError:  # pragma: no cover - a declared dependency; PyYAML reads everything then
    yaml_rs = None  # type: ignore[assignment]

__all__ = ["NATIVE", "read_plain_yaml"]


def _load_native() -> ModuleType | None:
    if os.environ.get("ARKLOW_PURE_PYTHON") == "1":
        return None
    try:  # by name: an import statement reads to import-linter as one of the package itself
        return importlib.import_module("arklow_pulumi._plain_yaml")
    except ImportError:
        return None


_native = _load_native()
NATIVE: bool = _native is not None
"""Whether plain documents are first offered to the compiled block-style reader."""

_C = "A-Za-z0-9_./+-"  # the characters of a plain word
_NOT_BOOLEAN = rf"(?!(?:yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF)(?![{_C}]))"  # YAML 1.1 booleans
_PLAIN = rf"{_NOT_BOOLEAN}[A-Za-z][{_C}]*+(?: [{_C}]++)*+"
# at most 30 digits in a row: a longer number is left to PyYAML (which refuses an integer of over
# 4,300 digits, as Python does)
_NUMBER = (
    rf"(?:[-+]?+(?:0|[1-9][0-9]{{0,29}}+)(?:\.[0-9]{{0,30}}+(?:[eE][-+][0-9]{{1,3}}+)?)?"
    rf"|\.[0-9]{{1,30}}+(?:[eE][-+][0-9]{{1,3}}+)?)(?![{_C}])"
)
_DOUBLE = r'"[ !#-\[\]-~]*+"'  # no escape, no double quote inside
_SINGLE = r"'[ -&(-~]*+'"  # no single quote inside
_SCALAR = rf"(?>{_NUMBER}|{_PLAIN}|{_DOUBLE}|{_SINGLE})"
# Flow collections of scalars; a comma after each item or the closing bracket next (YAML allows a
# trailing comma). A number may be a key: both schemas read 1 or 0.5 as the same number there.
_FLOW_LIST = rf"\[ *+(?:{_SCALAR} *+(?:,|(?=\])) *+)*+\]"
_FLOW_MAP = rf"\{{ *+(?:{_SCALAR}: ++{_SCALAR} *+(?:,|(?=\}})) *+)*+\}}"
_VALUE = rf"(?>{_SCALAR}|{_FLOW_LIST}|{_FLOW_MAP})"
_ENTRY = rf"(?>{_SCALAR})(?::(?: ++{_VALUE})?)?|{_FLOW_LIST}|{_FLOW_MAP}"
# At most 200 columns of indentation and 32 "- " markers on a line: the nesting depth stays in
# the hundreds (the compiled parser recurses, and crashes near 100,000 levels).
# A comment holds tabs and printable ASCII only: PyYAML refuses other control characters, and
# yaml_rs ends a line at a carriage return and the whole document at a NUL.
_COMMENT = r"#[\t -~]*+"
_LINE = (
    rf" {{0,200}}+(?:{_COMMENT}"  # a comment on its own
    rf"|(?:(?:- {{1,8}}+){{0,32}}+(?:{_ENTRY}|-))?(?: ++{_COMMENT}| *+))"
)

# A line's *shape*: every letter that is not in a YAML 1.1 boolean (``yes``, ``no``, ``on``,
# ``off`` in their three casings) becomes ``a`` and every nonzero digit ``1``. ``_LINE`` treats the
# characters of each class alike (a word still starts with a letter, a number keeps its leading
# zero, its ``e`` and its digit count, a boolean word is still one and no other word becomes one),
# so a line is in the grammar exactly when its shape is. A document has few distinct shapes (a
# 10,000-lane topology: under 100 of its 95,000 lines), and each is matched once.
_KEPT = "yYeEsSnNoOfF"
_FROM = "".join(c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in _KEPT)
_SHAPE = bytes.maketrans(f"{_FROM}123456789".encode(), b"a" * len(_FROM) + b"1" * 9)
_LINE_SHAPE = re.compile(_LINE.encode("ascii"))
"""One line in the grammar (possessive throughout: one pass, no backtracking)."""


def is_plain(text: str) -> bool:
    """Whether ``text`` is in the subset both schemas read alike (see the module's docstring)."""
    body = text[4:] if text.startswith("---\n") else text
    if not body.isascii():
        return False
    match = _LINE_SHAPE.fullmatch
    for shape in set(body.encode("ascii").translate(_SHAPE).split(b"\n")):
        if match(shape) is None:
            return False
    return True


def read_plain_yaml(text: str) -> tuple[bool, Any]:
    """``(True, values)`` when ``text`` is plain and the compiled parser reads it; else
    ``(False, None)``: read it with PyYAML (which also gives the message for a broken one)."""
    if not is_plain(text):
        return False, None
    if _native is not None:
        read, value = _native.loads(text)
        if read:
            return True, value
    if yaml_rs is None:
        return False, None
    try:
        value = yaml_rs.loads(
            text,
            parse_datetime=False,
            duplicate_key_policy=yaml_rs.DuplicateKeyPolicy.Error,
        )
    except (ValueError, TypeError, RecursionError, OverflowError):
        return False, None
    return True, value
