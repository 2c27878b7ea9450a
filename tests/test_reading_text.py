"""The text reader: YAML gives exactly what PyYAML's safe loader gives, with a key given twice
refused and YAML 1.1's surprising numbers and booleans kept as their text (with their line);
JSON is read as JSON."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
import yaml

from arklow_pulumi.reading.text import MalformedDocument, parse_document
from arklow_pulumi.reading.yaml_values import Yaml11Scalar

ROOT = Path(__file__).resolve().parents[1]

SAME_AS_PYYAML = [
    "a: 1\nb: 0x1f\nc: 00\nd: 1_000\ne: 1.5\nf: .inf\ng: -.inf\ni: true\nj: ~\nk: '2001-12-14'\n",
    "l: !!str 5\nm: '5'\nn: '1:30'\no: -3\np: +4\nq: 0\nr: 1.0e+306\ns: 1e200\nt: 0b101\nu: 3.0\n",
    "v: 1_0.5\nw: False\nx: null\n? y\nz: |\n  lit\n  eral\n~: 3\n1: 2\n2.5: x\n'': empty\n",
    "a: 'yes'\nb: \"0o17\"\nc: '017'\n",
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
        ("a: !!float ''\n", "'' is not a valid float at line 1"),
        ("a: !!timestamp ''\n", "!!timestamp is not accepted"),
        ("k: 2001-12-14\n", "!!timestamp is not accepted"),
        ("s: !!set {gpu, cpu, mem, net, disk}\n", "!!set is not accepted"),
        ("o: !!omap [{a: 1}]\n", "!!omap is not accepted"),
        ("p: !!pairs [{a: 1}]\n", "!!pairs is not accepted"),
        ("b: !!binary aGk=\n", "!!binary is not accepted"),
        ("a: !!int ''\n", "'' is not a valid int"),
        ("a: !!bool\n", "'' is not a valid bool"),
        (
            "a: " + "7" * 4301 + "\n",
            "an integer of 4,301 digits (at most 4,300 are read) at line 1",
        ),
        ('{"a": ' + "7" * 4301 + "}", "an integer of more than 4,300 digits$"),
        ("a: !!map [1]\n", "expected a mapping node"),
        ("{[1]: 2}\n", "unhashable"),
    ],
)
def test_refused_yaml(text: str, needle: str) -> None:
    with pytest.raises(MalformedDocument, match=needle.replace("(", r"\(").replace(")", r"\)")):
        parse_document(text)


YAML_1_1 = [
    # (plain scalar, what YAML 1.1 reads, the words that say so)
    ("1:30", 90, "a number in base 60 in YAML 1.1 (90)"),
    ("-1:30:00", -5400, "a number in base 60 in YAML 1.1 (-5400)"),
    ("1:30.5", 90.5, "a number in base 60 in YAML 1.1 (90.5)"),
    ("017", 15, "octal in YAML 1.1 (15), decimal in YAML 1.2"),
    ("0o17", "0o17", "text in YAML 1.1 (15 in YAML 1.2: octal)"),
    ("yes", True, "a boolean in YAML 1.1 (true), text in YAML 1.2"),
    ("Off", False, "a boolean in YAML 1.1 (false), text in YAML 1.2"),
    ("ON", True, "a boolean in YAML 1.1 (true), text in YAML 1.2"),
]


@pytest.mark.parametrize(("scalar", "pyyaml", "reading"), YAML_1_1)
def test_yaml_1_1_surprises_are_kept_as_text_with_their_line(
    scalar: str, pyyaml: object, reading: str
) -> None:
    text = f"a: 1\nb: {scalar}\n"
    assert yaml.safe_load(text)["b"] == pyyaml  # what the plain loader would have given
    value = parse_document(text)["b"]  # type: ignore[index]
    assert isinstance(value, Yaml11Scalar)
    assert (value, value.line, value.reading) == (scalar, 2, reading)


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
