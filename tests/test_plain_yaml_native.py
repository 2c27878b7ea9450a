"""The compiled block-style reader (``arklow_pulumi._plain_yaml``) against ``yaml_rs``.

Generated block documents (nested mappings and sequences, indentation steps of 1 to 4, sequences
at their key's column, ``- key: value`` items with 1 to 3 spaces after the marker, comments on
their own lines at any column and after values, blank lines, flow lists and maps, every scalar
form of the plain grammar, a leading ``---``) must read exactly as ``yaml_rs`` reads them, and
must be read at all when they are plain. What the reader leaves to ``yaml_rs`` is checked too.
"""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arklow_pulumi import yaml_plain
from arklow_pulumi.yaml_plain import is_plain
from tests.test_yaml_plain import _native, _same, _yaml_rs, needs_native

_WORD_CHARS = "A-Za-z0-9_./+-"
_WORDS = st.from_regex(
    rf"[A-Za-z][{_WORD_CHARS}]{{0,5}}(?: [{_WORD_CHARS}]{{1,3}}){{0,2}}", fullmatch=True
)
_SPECIAL_WORDS = st.sampled_from(
    [
        *("null", "Null", "NULL", "nULL", "true", "True", "TRUE", "tRUE"),
        *("false", "False", "FALSE", "fALSE", "inf", "nan", "NaN", "e5", "E1", "x1.5"),
        *("nulls", "true x", "null null"),
    ]
)
_NUMBERS = st.from_regex(
    r"[-+]?(?:0|[1-9][0-9]{0,29})(?:\.[0-9]{0,30}(?:[eE][-+][0-9]{1,3})?)?"
    r"|\.[0-9]{1,30}(?:[eE][-+][0-9]{1,3})?",
    fullmatch=True,
)
_DOUBLE = st.from_regex(r'"[ !#-\[\]-~]{0,6}"', fullmatch=True)
_SINGLE = st.from_regex(r"'[ -&(-~]{0,6}'", fullmatch=True)
_SCALARS = st.one_of(_WORDS, _SPECIAL_WORDS, _NUMBERS, _DOUBLE, _SINGLE)


@st.composite
def _flows(draw: st.DrawFn) -> str:
    space = draw(st.sampled_from(["", " ", "  "]))
    comma = "," + draw(st.sampled_from([" ", "  ", ""]))
    trailing = draw(st.sampled_from(["", ","]))
    if draw(st.booleans()):
        items = draw(st.lists(_SCALARS, max_size=4))
        return "[" + space + comma.join(items) + (trailing if items else "") + space + "]"
    keys = draw(st.lists(_WORDS, max_size=4, unique=True))
    pairs = [f"{k}:{draw(st.sampled_from([' ', '  ']))}{draw(_SCALARS)}" for k in keys]
    return "{" + space + comma.join(pairs) + (trailing if pairs else "") + space + "}"


# A node: ("scalar", text) (a scalar or a flow collection), ("empty",), ("map", [(key, node)]),
# ("seq", [node]); a map's keys distinct (a key given twice is checked on its own below).
_LEAVES = st.one_of(
    st.tuples(st.just("scalar"), st.one_of(_SCALARS, _flows())),
    st.just(("empty",)),
)


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    maps = st.lists(st.tuples(_WORDS, children), min_size=1, max_size=4, unique_by=lambda p: p[0])
    return st.one_of(
        st.tuples(st.just("map"), maps),
        st.tuples(st.just("seq"), st.lists(children, min_size=1, max_size=4)),
    )


_NODES = st.recursive(_LEAVES, _extend, max_leaves=20)
_LARGE = [HealthCheck.large_base_example]  # a document is a few lines at the least


def _key(word: str, rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.1:
        return f"'{word}'"
    if roll < 0.2:
        return f'"{word}"'
    return word


def _comment(rng: random.Random) -> str:
    return rng.choice(["", "", "", " # note", "  #", "   # a: [b, c] - d"])


class _Writer:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.lines: list[str] = []

    def line(self, text: str) -> None:
        rng = self.rng
        while rng.random() < 0.15:
            self.lines.append(rng.choice(["", "  ", " " * rng.randint(0, 9) + "# between"]))
        self.lines.append(text)

    def step(self) -> int:
        return self.rng.randint(1, 4)

    def value(self, prefix: str, node: Any, col: int) -> None:
        """``prefix`` (``key:`` at column ``col``) followed by ``node``."""
        if node[0] == "scalar":
            self.line(prefix + " " * self.rng.randint(1, 2) + node[1] + _comment(self.rng))
        elif node[0] == "empty":
            self.line(prefix + _comment(self.rng))
        else:
            self.line(prefix + _comment(self.rng))
            compact = node[0] == "seq" and self.rng.random() < 0.5
            self.block(node, col if compact else col + self.step())

    def block(self, node: Any, col: int) -> None:
        pad = " " * col
        if node[0] == "map":
            for word, child in node[1]:
                self.value(pad + _key(word, self.rng) + ":", child, col)
            return
        for child in node[1]:
            dash = "-" + " " * self.rng.randint(1, 3)
            if child[0] == "scalar":
                self.line(pad + dash + child[1] + _comment(self.rng))
            elif child[0] == "map" and self.rng.random() < 0.7:
                (word, first), *rest = child[1]
                item = col + len(dash)
                self.value(pad + dash + _key(word, self.rng) + ":", first, item)
                self.block(("map", rest), item)
            elif child[0] == "empty":
                self.line(pad + "-" + _comment(self.rng))
            else:
                self.line(pad + "-" + _comment(self.rng))
                self.block(child, col + self.step())


def _readable(text: str) -> bool:
    """Whether the compiled reader must read ``text``: it is plain, and no flow collection holds
    a word ending in a lone ``-`` (which yaml_rs refuses, so the reader leaves it)."""
    return is_plain(text) and re.search(r" -[,\]}]", text) is None


def _write(node: Any, rng: random.Random) -> str:
    writer = _Writer(rng)
    if rng.random() < 0.2:
        writer.lines.append("---")
    col = rng.choice([0, 0, 0, 1, 2])
    if node[0] in ("map", "seq"):
        writer.block(node, col)
    elif node[0] == "scalar":
        writer.line(" " * col + node[1] + _comment(rng))
    text = "\n".join(writer.lines)
    return text + "\n" if rng.random() < 0.8 else text


@needs_native
@settings(max_examples=700, deadline=None, suppress_health_check=_LARGE)
@given(node=_NODES, rng=st.randoms(use_true_random=False))
def test_generated_block_documents_read_as_yaml_rs_reads_them(
    node: Any, rng: random.Random
) -> None:
    text = _write(node, rng)
    read = _native(text)  # whatever it reads, it reads as yaml_rs does
    if _readable(text):
        assert read, text  # and it reads every plain one of these


@needs_native
@settings(max_examples=700, deadline=None, suppress_health_check=_LARGE)
@given(scalar=_SCALARS, rng=st.randoms(use_true_random=False))
def test_every_scalar_form_reads_as_yaml_rs_reads_it(scalar: str, rng: random.Random) -> None:
    for text in (f"k: {scalar}\n", f"- {scalar}\n", f"[{scalar}, x]\n", f"{{k: {scalar}}}\n"):
        read = _native(text)
        if _readable(text):
            assert read, text


@needs_native
@settings(max_examples=500, deadline=None, suppress_health_check=_LARGE)
@given(node=_NODES, rng=st.randoms(use_true_random=False), data=st.data())
def test_mutated_block_documents_never_read_differently(
    node: Any, rng: random.Random, data: st.DataObject
) -> None:
    chars = list(_write(node, rng))
    alphabet = [*" \n:-[]{},#'\"0.eE+a\t", "  ", "- ", ": ", "\n  ", "\n- ", "- - "]
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(chars)))
        roll = data.draw(st.integers(0, 2))
        if roll == 0 or at == len(chars):
            chars.insert(at, data.draw(st.sampled_from(alphabet)))
        elif roll == 1:
            del chars[at]
        else:
            chars[at] = data.draw(st.sampled_from(alphabet))
    _native("".join(chars))


@needs_native
@pytest.mark.parametrize(
    "text",
    [
        "a: 1\nb: 2\na: 3\n",  # a key given twice: yaml_rs raises, PyYAML words it
        "{a: 1, a: 2}\n",
        "- a: 1\n  'a': 2\n",
        "a: b\n  c\n",  # a multi-line plain scalar
        "- b\n  c\n",
        "a\nb\n",
        "a:\n  b\n",  # a scalar on the line below its key
        "- - x\n",  # several markers on one line
        "-   - x\n",
        "1: a\n",  # keys that are not strings
        "0.5: a\n",
        "null: a\n",
        "True: a\n",
        "{1: a}\n",
        "- {a: 1}\n  b: 2\n",  # errors
        "a:\n  - x\n  b: 1\n",
        "a:\n    b: 1\n  c: 2\n",
        "- a: 1\n  - x\n",
        "a: 1\n - b\n",
        "a: yes\n",  # outside the grammar
        "a: b\r\n",
        "a:\tb\n",
        "a: café\n",
        "a: [[b]]\n",
        "a: [b -, c]\n",  # yaml_rs refuses a word ending in a lone '-' before ',' ']' '}'
        "a: {b: c -}\n",
        "a: 'b''c'\n",
        'a: "b\\tc"\n',
        "a: b\n---\nc: d\n",
    ],
)
def test_what_the_compiled_reader_leaves_to_yaml_rs(text: str) -> None:
    assert yaml_plain._native is not None
    assert yaml_plain._native.loads(text) == (False, None)


@needs_native
def test_deep_nesting_is_declined_without_a_crash() -> None:
    assert yaml_plain._native is not None
    by_items = "".join(" " * i + "-\n" for i in range(5000)) + " " * 5000 + "- x\n"
    by_keys = "".join(" " * i + "k:\n" for i in range(5000)) + " " * 5000 + "k: x\n"
    by_compact = "".join(" " * (2 * i) + "- k:\n" for i in range(3000))
    for text in (by_items, by_keys, by_compact):
        assert yaml_plain._native.loads(text) == (False, None)
    shallow = "".join(" " * i + "k:\n" for i in range(100)) + " " * 100 + "k: x\n"
    read, value = yaml_plain._native.loads(shallow)
    assert read
    assert _same(value, _yaml_rs(shallow)[1])
