"""A name the terminal's encoding cannot hold is an output problem, reported as one: one line on
stderr naming the output and the encoding, nothing on stdout, exit 2 (it was reported as input
that is "not readable as text"). JSON escapes it and works."""

from __future__ import annotations

import json
from pathlib import Path

from tests.arklow_cli import run

TOPOLOGY = """\
destinations:
  - name: 日本
    resources: [gpu]
    standalone_capacity: {gpu: 4}
    lanes: [{name: a, limit: 3}]
"""


def test_a_name_the_terminal_cannot_encode(tmp_path: Path) -> None:
    topo = tmp_path / "t.yaml"
    topo.write_text(TOPOLOGY, encoding="utf-8")
    demand = tmp_path / "d.yaml"
    demand.write_text('lanes: {"日本/a": 2}\n', encoding="utf-8")
    args = ["allocate", "--topology", str(topo), "--demand", str(demand)]
    env = {"PYTHONIOENCODING": "latin-1"}
    table = run([*args, "--format", "table"], env=env)
    assert table.returncode == 2
    assert table.stdout == ""
    lines = table.stderr.splitlines()
    assert len(lines) == 1, table.stderr
    assert lines[0].startswith("error: output: ")
    assert "iso8859-1" in lines[0] and "PYTHONIOENCODING=utf-8" in lines[0]
    assert "input" not in lines[0]
    answer = run([*args, "--format", "json"], env=env)
    assert answer.returncode == 0, answer.stderr
    assert json.loads(answer.stdout)["lanes"]["日本/a"]["allocation"] == 2
