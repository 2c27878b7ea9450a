"""The plain-YAML route against PyYAML: same values wherever it is taken, PyYAML elsewhere.

The compiled parser reads YAML 1.2 and PyYAML 1.1; :mod:`arklow_pulumi.yaml_plain` takes the
compiled route only for documents in a grammar where both read the same. These tests hold it to
that on the scalars where the two schemas differ, on generated documents, and on thousands of
random mutations of a topology (any mutation the route accepts must read exactly as PyYAML reads
it); and they make sure the route is actually taken for what people and ``yaml.safe_dump`` write.

The compiled block-style reader (``arklow_pulumi._plain_yaml``) is held, wherever it reads a
document, to what ``yaml_rs`` and PyYAML read: in every comparison here, and on generated block
documents of its own (nested maps and lists, odd indentation, comments, blank lines, flow items).
"""

from __future__ import annotations

import importlib.machinery
import math
import os
import random
import re
import subprocess
import sys
from typing import Any

import pytest
import yaml
import yaml_rs
from hypothesis import given, settings
from hypothesis import strategies as st

from arklow_pulumi import yaml_plain
from arklow_pulumi.documents import MalformedDocument, parse_document
from arklow_pulumi.yaml_plain import is_plain, read_plain_yaml

TOPOLOGY = """\
# a topology as people write it
destinations:
  - name: train
    resources: [gpu, cpu]
    lanes:
      - name: batch
        limit: 40
        weight: 2.0
        cost: {gpu: 1.5, cpu: 1}
      - name: urgent   # small, weighted up
        limit: 8.5
        weight: 1.0e+1
  - name: serve
    resources:
      - gpu
    lanes:
      - {name: online, limit: 12}
pools:
  - name: gpu-pool
    resource: gpu
    capacity: 0
    headroom: .2
    members: [train, "serve"]
    scale_targets:
      - kind: aws_asg
        name: gpu-asg
        region: eu-west-1
        min_replicas: 1
        max_replicas: 10
        units_per_replica: 4
        override_policies: true
    scale_policy:
      tolerance: 0.05
      scale_down_window_s: -0.0
  - name: 'cpu pool'
    resource: cpu
    members:
    -   train
    note: null
"""


def _same(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float):
        return math.copysign(1, a) == math.copysign(1, b) and (a == b or (a != a and b != b))
    return bool(a == b)


def _pyyaml(text: str) -> tuple[bool, Any]:
    try:
        return True, yaml.load(text, Loader=yaml.CSafeLoader)
    except yaml.YAMLError:
        return False, None


def _yaml_rs(text: str) -> tuple[bool, Any]:
    try:
        return True, yaml_rs.loads(
            text, parse_datetime=False, duplicate_key_policy=yaml_rs.DuplicateKeyPolicy.Error
        )
    except (ValueError, TypeError, RecursionError, OverflowError):
        return False, None


FORCED_PURE = os.environ.get("ARKLOW_PURE_PYTHON") == "1"
needs_native = pytest.mark.skipif(FORCED_PURE, reason="ARKLOW_PURE_PYTHON=1 forces yaml_rs")


def _native(text: str) -> bool:
    """True when the compiled reader reads ``text``; it must then read as yaml_rs does."""
    if yaml_plain._native is None:
        return False
    read, value = yaml_plain._native.loads(text)
    if read:
        ok, expected = _yaml_rs(text)
        assert ok, f"the compiled reader read what yaml_rs refuses: {text!r}"
        assert _same(value, expected), f"{text!r}: {value!r} != {expected!r}"
    else:
        assert value is None
    return bool(read)


def _check(text: str) -> bool:
    """True when the plain route took ``text``; it must then read as PyYAML does (and the
    compiled reader, where it reads it, as yaml_rs and PyYAML do)."""
    taken, value = read_plain_yaml(text)
    if taken:
        ok, expected = _pyyaml(text)
        assert ok, f"the plain route read what PyYAML refuses: {text!r}"
        assert _same(value, expected), f"{text!r}: {value!r} != {expected!r}"
    if is_plain(text):
        _native(text)
    return taken


def test_a_hand_written_topology_takes_the_plain_route_and_reads_the_same() -> None:
    assert _check(TOPOLOGY)
    assert _check("---\n" + TOPOLOGY)
    assert _check("")
    assert _check("# only a comment\n")


@needs_native
def test_the_compiled_reader_is_loaded_and_reads_the_hand_written_topology() -> None:
    assert yaml_plain.NATIVE
    from arklow_pulumi import _plain_yaml

    assert _plain_yaml.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    for text in (TOPOLOGY, "---\n" + TOPOLOGY, "", "# only a comment\n"):
        assert _native(text), text


def test_the_compiled_reader_is_turned_off_by_the_environment() -> None:
    code = "import arklow_pulumi.yaml_plain as y; print(y.NATIVE)"
    env = {**os.environ, "ARKLOW_PURE_PYTHON": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    "scalar",
    # every form where YAML 1.1 (PyYAML) and 1.2 read a plain scalar differently, and neighbours
    [
        *[
            "yes",
            "Yes",
            "YES",
            "no",
            "No",
            "NO",
            "on",
            "On",
            "ON",
            "off",
            "Off",
            "OFF",
            "y",
            "n",
            "true",
            "True",
            "TRUE",
            "tRue",
            "null",
            "Null",
            "~",
        ],
        *[
            "017",
            "0o17",
            "0x1F",
            "0X1F",
            "0b101",
            "1_000",
            "1:30",
            "1e3",
            "1E3",
            "1e+3",
            "1.0e5",
            "+.5",
            "-.5",
            ".5",
            "1.",
            "00",
            "-0",
            "+1",
        ],
        *[
            ".inf",
            "-.inf",
            ".Inf",
            ".nan",
            ".NaN",
            "2001-12-14",
            "2001-12-14t21:59:43.10-05:00",
            "<<",
            "=",
            "_0",
            "_x",
        ],
        "12345678901234567890123",
        "1.7976931348623157e+308",
        "3.14159265358979323846",
        "a b",
        "a:b",
        "'yes'",
        '"017"',
        '"a\\tb"',
        "it's",
    ],
)
def test_scalars_where_the_schemas_differ_are_read_as_pyyaml_reads_them(scalar: str) -> None:
    for text in (f"k: {scalar}\n", f"- {scalar}\n", f"k: [{scalar}, x]\n", f"{scalar}: 1\n"):
        _check(text)


def test_numbers_in_the_agreed_forms_take_the_plain_route() -> None:
    for scalar in ("0", "12", "-3", "+4", "0.5", "-0.0", "1.0e+5", "2.5E-3", ".25", "10."):
        assert _check(f"k: {scalar}\n"), scalar
    for scalar in ("yes", "017", "1e3", "+.5", "1_000", "2001-12-14", "<<"):
        assert not is_plain(f"k: {scalar}\n"), scalar


_WORDS = st.from_regex(r"[a-z][a-z0-9_./-]{0,6}", fullmatch=True)
_SCALARS = st.one_of(
    _WORDS,
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
    st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=8),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_WORDS, inner, max_size=4)
    ),
    max_leaves=25,
)


@settings(max_examples=400, deadline=None)
@given(value=st.dictionaries(_WORDS, _VALUES, max_size=5), flow=st.sampled_from([False, None]))
def test_what_safe_dump_writes_reads_back_the_same(
    value: dict[str, Any], flow: bool | None
) -> None:
    text = yaml.safe_dump(value, sort_keys=False, default_flow_style=flow)
    _check(text)
    assert _same(parse_document(text), yaml.safe_load(text))
    # the compiled reader reads every plain text safe_dump writes, but for a list in a list
    # (``- - x``: several markers on a line, which it leaves to yaml_rs)
    if yaml_plain.NATIVE and is_plain(text) and not re.search(r"^ *- +-(?: |$)", text, re.M):
        assert _native(text), text


def test_random_mutations_of_a_topology_never_read_differently() -> None:
    rng = random.Random(20261130)
    alphabet = [*" \n:-[]{},#'\"0123456789.eE+abyesno", "  ", "- ", ": ", "\n  "]
    taken = native = 0
    for _ in range(3000):
        chars = list(TOPOLOGY)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(chars))
            roll = rng.random()
            if roll < 0.4:
                chars.insert(at, rng.choice(alphabet))
            elif roll < 0.7:
                del chars[at]
            else:
                chars[at] = rng.choice(alphabet)
        text = "".join(chars)
        taken += _check(text)
        native += _native(text)  # plain or not: whatever it reads, it reads as yaml_rs does
    assert taken > 300  # the route is taken for many mutations, and every one read the same
    assert native > 300 or not yaml_plain.NATIVE


def test_deep_nesting_is_left_to_pyyaml() -> None:
    deep = "- " * 100_000 + "x\n"
    assert not is_plain(deep)  # the compiled parser would overflow its stack
    with pytest.raises(MalformedDocument):
        parse_document(deep)
    assert is_plain("- " * 32 + "x\n")


def test_a_key_given_twice_is_refused_with_pyyaml_s_message() -> None:
    with pytest.raises(MalformedDocument, match="duplicate key 'a'"):
        parse_document("a: 1\nb: 2\na: 3\n")


@pytest.mark.parametrize("code", [*range(10), *range(11, 32), 127])
def test_control_characters_in_comments_are_left_to_pyyaml(code: int) -> None:
    # PyYAML refuses most (a tab is read; a carriage return ends a line); yaml_rs ends a line at
    # a carriage return and the whole document at a NUL: PyYAML reads these documents
    char = chr(code)
    for text in (f"# a{char}b\nk: 1\n", f"k: 1 # a{char}b\n", f"k:\n  # {char}\n  j: 1\n"):
        if code == 9:
            assert _check(text)
            assert _native(text) or not yaml_plain.NATIVE
            continue
        assert not is_plain(text)
        assert not _native(text)
        ok, expected = _pyyaml(text)  # PyYAML reads it, with its messages
        if ok:
            assert _same(parse_document(text), expected)
        else:
            with pytest.raises(MalformedDocument):
                parse_document(text)


def test_non_ascii_and_tabs_are_left_to_pyyaml() -> None:
    for text in ("name: café\n", "a: b\r\n"):
        assert not is_plain(text)
        assert _same(parse_document(text), yaml.safe_load(text))
    assert not is_plain("a:\tb\n")  # libyaml reads a tab after the colon; the grammar has none
    assert parse_document("a:\tb\n") == _pyyaml("a:\tb\n")[1] == {"a": "b"}


# The grammar applied to the whole text at once (as the check was first written): the shape check
# (each distinct line's shape matched once) must decide every text exactly as it does.
_WHOLE_TEXT = re.compile(rf"(?:{yaml_plain._LINE}\n)*+(?:{yaml_plain._LINE})?")

_SHAPE_ALPHABET = "yesnofYESNOFaAzZqQ0123456789 -:#.,+_/[]{}'\"\n\t"


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=_SHAPE_ALPHABET, max_size=60))
def test_shapes_decide_as_the_grammar_on_the_whole_text(text: str) -> None:
    body = text[4:] if text.startswith("---\n") else text
    assert is_plain(text) == (_WHOLE_TEXT.fullmatch(body) is not None)


@pytest.mark.parametrize(
    "line",
    ["k: yes", "k: Off", "- ON", "[no, x]", "{a: on}", "k: 017", "k: 1e3", "k: 00", "k: 1.0e+5"],
)
def test_shapes_keep_what_the_grammar_tells_apart(line: str) -> None:
    for text in (line, f"name: abc\n{line}\n", f"x: 1\n{line.replace('k:', 'kk:')}"):
        body = text
        assert is_plain(text) == (_WHOLE_TEXT.fullmatch(body) is not None), text
