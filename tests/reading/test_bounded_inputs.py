"""Bounded inputs (issue 30, item 6): every file is a regular file of a documented size, read
without PyYAML's node tree, and YAML 1.1's surprising numbers and booleans are refused where a
number or a boolean is expected, naming the line. Each refusal is exit 2 and one line."""

from __future__ import annotations

import os
import threading
import tracemalloc
from pathlib import Path

import pytest
import yaml

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.reading.files import MAX_DOCUMENT_BYTES, MAX_TRACE_BYTES, read_document
from arklow_pulumi.reading.text import parse_document
from arklow_pulumi.simulation.tracing import read_trace
from tests.arklow_cli import Invoke, in_process

TOPOLOGY = """\
destinations:
  - name: d
    resources: [gpu]
    standalone_capacity: {gpu: 10}
    lanes:
      - {name: l, limit: LIMIT}
"""


@pytest.fixture
def arklow(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Invoke:
    return in_process(monkeypatch, capsys)


def refused(arklow: Invoke, args: list[str], *needles: str) -> str:
    result = arklow(args)
    assert result.returncode == 2, result
    assert result.stdout == ""
    line = result.stderr
    assert line.count("\n") == 1 and line.startswith("error: "), line
    for needle in needles:
        assert needle in line, line
    return line


def test_dev_zero_is_refused_before_a_byte_is_read(arklow: Invoke) -> None:
    refused(arklow, ["validate", "--topology", "/dev/zero"], "is a character device")


def test_a_fifo_is_refused_without_waiting_for_a_writer(arklow: Invoke, tmp_path: Path) -> None:
    fifo = tmp_path / "trace.csv"
    os.mkfifo(fifo)
    topology = tmp_path / "t.yaml"
    topology.write_text(TOPOLOGY.replace("LIMIT", "5"))
    done: list[str] = []
    worker = threading.Thread(
        target=lambda: done.append(
            refused(arklow, ["simulate", "--topology", str(topology), "--trace", str(fifo)])
        )
    )
    worker.start()
    worker.join(timeout=60)
    if worker.is_alive():  # unblock it before failing: open the FIFO's writing end
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("reading the FIFO waited for a writer")
    assert "is a FIFO (named pipe), not a regular file" in done[0]


def test_a_directory_is_refused(arklow: Invoke, tmp_path: Path) -> None:
    refused(arklow, ["validate", "--topology", str(tmp_path)], "is a directory")


def test_a_document_over_the_limit_is_refused(arklow: Invoke, tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as handle:  # sparse: nothing is written
        handle.truncate(MAX_DOCUMENT_BYTES + 1)
    refused(
        arklow, ["validate", "--topology", str(big)], f"{MAX_DOCUMENT_BYTES + 1:,} bytes", "32 MiB"
    )


def test_a_trace_over_the_limit_is_refused(tmp_path: Path) -> None:
    big = tmp_path / "big.csv"
    with big.open("wb") as handle:
        handle.truncate(MAX_TRACE_BYTES + 1)
    with pytest.raises(InvalidInput, match="over the limit of 1,073,741,824 bytes"):
        read_trace(big)


def test_a_document_at_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    body = TOPOLOGY.replace("LIMIT", "5")
    path.write_text(body + "#" * (MAX_DOCUMENT_BYTES - len(body)))
    assert path.stat().st_size == MAX_DOCUMENT_BYTES
    assert isinstance(read_document(path, "topology"), dict)


def test_yaml_memory_is_a_small_multiple_of_the_file() -> None:
    """PyYAML's own loader peaks at about 75× the file on this document (its node tree); the
    reader stays under 20× (about 12× measured: the values themselves)."""
    lanes = [
        {"name": f"lane-{j}", "limit": 5, "weight": 1.5, "cost": {"gpu": 2}} for j in range(10)
    ]
    destinations = [
        {"name": f"dest-{i}", "resources": ["gpu", "cpu"], "lanes": lanes} for i in range(500)
    ]
    text = yaml.safe_dump({"destinations": destinations}, default_flow_style=None)
    tracemalloc.start()
    try:
        parse_document(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * len(text), peak / len(text)


YAML_1_1 = [
    ("1:30", "'1:30' at line 6: a number in base 60 in YAML 1.1 (90)"),
    ("017", "'017' at line 6: octal in YAML 1.1 (15), decimal in YAML 1.2"),
    ("0o17", "'0o17' at line 6: text in YAML 1.1 (15 in YAML 1.2: octal)"),
    ("yes", "'yes' at line 6: a boolean in YAML 1.1 (true)"),
]


@pytest.mark.parametrize(("value", "needle"), YAML_1_1)
def test_yaml_1_1_surprises_are_refused_where_a_number_is_expected(
    arklow: Invoke, tmp_path: Path, value: str, needle: str
) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(TOPOLOGY.replace("LIMIT", value))
    line = refused(arklow, ["validate", "--topology", str(path)], "lane 'l'", "'limit'", needle)
    assert "write the number you mean" in line


def test_a_yaml_1_1_boolean_is_refused_where_a_boolean_is_expected(
    arklow: Invoke, tmp_path: Path
) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        "pools:\n  - name: p\n    resource: gpu\n    scale_targets:\n"
        "      - {kind: aws_asg, name: t, min_replicas: 0, max_replicas: 2,\n"
        "         units_per_replica: 1, override_policies: on}\n"
    )
    refused(
        arklow,
        ["validate", "--topology", str(path)],
        "'override_policies'",
        "'on' at line 6: a boolean in YAML 1.1 (true)",
        "write true or false",
    )


def test_a_yaml_1_1_scalar_is_text_where_a_name_is_expected(tmp_path: Path) -> None:
    doc = parse_document("destinations: [{name: yes, lanes: [{name: 1:30, limit: 1}]}]")
    assert doc == {"destinations": [{"name": "yes", "lanes": [{"name": "1:30", "limit": 1}]}]}


@pytest.mark.parametrize("form", ["yaml", "json"])
def test_a_huge_integer_names_no_python_internals(
    arklow: Invoke, tmp_path: Path, form: str
) -> None:
    path = tmp_path / "t.yaml"
    digits = "7" * 5000
    path.write_text(f"destinations: [{{name: d, lanes: [{{name: l, limit: {digits}}}]}}]"
                    if form == "yaml" else f'{{"destinations": [{{"name": "d", "x": {digits}}}]}}')  # fmt: skip
    line = refused(arklow, ["validate", "--topology", str(path)], "digits")
    assert "sys." not in line and "set_int_max_str_digits" not in line
