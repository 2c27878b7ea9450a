"""The text reader: YAML gives exactly what PyYAML's safe loader gives, with a key given twice
refused; JSON is read as JSON."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
import yaml

from arklow_pulumi.reading.text import MalformedDocument, parse_document

ROOT = Path(__file__).resolve().parents[1]

SAME_AS_PYYAML = [
    "a: 1\nb: 0x1f\nc: 010\nd: 1_000\ne: 1.5\nf: .inf\ng: -.inf\ni: yes\nj: ~\nk: '2001-12-14'\n",
    "l: !!str 5\nm: '5'\nn: 1:30\no: -3\np: +4\nq: 0\nr: 1.0e+306\ns: 1e200\nt: 0b101\nu: 3.0\n",
    "v: 1_0.5\nw: Off\nx: null\n? y\nz: |\n  lit\n  eral\n~: 3\n1: 2\n2.5: x\n'': empty\n",
    "base: &b {x: 1, y: 2}\nuse:\n  <<: *b\n  z: 3\nlist: [*b, *b]\n",
    "a: &s 5\nb: *s\n",
    "",
    "# only a comment\n",
    "--- 5\n",
    "- 1\n- [2, [3, {a: b}]]\n",
    "{a: 1, b: [x, y]}\n",
    'key: "quoted \\t text"\nfolded: >\n  one\n  two\n',
]


@pytest.mark.parametrize("text", SAME_AS_PYYAML)
def test_same_values_as_pyyaml(text: str) -> None:
    assert repr(parse_document(text)) == repr(yaml.safe_load(text))


@pytest.mark.parametrize(
    "path", ["examples/topology.yaml", "examples/demand.yaml", "stacks/Pulumi.dev.yaml"]
)
def test_project_documents_read_the_same(path: str) -> None:
    text = (ROOT / path).read_text()
    assert parse_document(text) == yaml.safe_load(text)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("a: 1\na: 2\n", "duplicate key 'a' (first at line 1)"),
        ("x:\n  - {a: 1, a: 2}\n", "duplicate key 'a' (first at line 2)"),
        ("a: !!python/object:os.system x\n", "could not determine a constructor"),
        ("a: 1\n---\nb: 2\n", "expected a single document"),
        ("a: *nope\n", "undefined alias"),
        ("a: !!float ''\n", "tagged value"),
        ("a: !!timestamp ''\n", "!!timestamp is not accepted"),
        ("k: 2001-12-14\n", "!!timestamp is not accepted"),
        ("s: !!set {gpu, cpu, mem, net, disk}\n", "!!set is not accepted"),
        ("o: !!omap [{a: 1}]\n", "!!omap is not accepted"),
        ("p: !!pairs [{a: 1}]\n", "!!pairs is not accepted"),
        ("b: !!binary aGk=\n", "!!binary is not accepted"),
        ("a: !!int ''\n", "invalid literal|tagged value"),
        ("a: !!bool\n", "tagged value|expected"),
        ("a: !!map [1]\n", "expected a mapping node"),
        ("{[1]: 2}\n", "unhashable"),
    ],
)
def test_refused_yaml(text: str, needle: str) -> None:
    with pytest.raises(MalformedDocument, match=needle.replace("(", r"\(").replace(")", r"\)")):
        parse_document(text)


def test_json_is_read_as_json() -> None:
    assert parse_document('{"a": [1e3, 2]}') == {"a": [1000.0, 2]}
    with pytest.raises(MalformedDocument, match="duplicate key 'a'"):
        parse_document('{"a": 1, "a": 2}')


def test_merged_keys_may_be_overridden() -> None:
    assert parse_document("b: &b {x: 1}\nc:\n  <<: *b\n  x: 2\n") == {"b": {"x": 1}, "c": {"x": 2}}


def test_collector_state_is_restored() -> None:
    assert gc.isenabled()
    parse_document("a: [1, 2]\n")
    assert gc.isenabled()


def test_failures_are_one_line() -> None:
    for text in ("a: " + "[" * 3000, "[" * 100_000 + "]" * 100_000, "a: " + "9" * 5000, "\ta: b"):
        with pytest.raises(MalformedDocument) as info:
            parse_document(text)
        assert "\n" not in str(info.value) and str(info.value)
