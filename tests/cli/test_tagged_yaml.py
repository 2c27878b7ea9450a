"""Tagged and odd YAML in a topology or demand file: exit 2 with one line naming the file, the same
on every run (a !!set was read as a list whose order followed PYTHONHASHSEED; empty !!float,
!!int, !!bool and !!timestamp scalars were an internal error)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.arklow_cli import run

TOPOLOGY = "destinations:\n  - name: a\n    resources: {resources}\n    lanes: [{{name: x, limit: {limit}}}]\n"
TAGS = ["!!float ''", "!!int ''", "!!bool ''", "!!timestamp ''", "!!map [1]", "!!binary aGk="]


@pytest.mark.parametrize("tag", TAGS)
@pytest.mark.parametrize("where", ["topology", "demand"])
def test_a_tag_the_schema_cannot_hold_is_one_line(tmp_path: Path, tag: str, where: str) -> None:
    topo, demand = tmp_path / "t.yaml", tmp_path / "d.yaml"
    limit = tag if where == "topology" else "3"
    topo.write_text(TOPOLOGY.format(resources="[gpu]", limit=limit))
    demand.write_text(f"lanes: {{a/x: {tag if where == 'demand' else 1}}}\n")
    result = run(["allocate", "--topology", str(topo), "--demand", str(demand)])
    assert result.returncode == 2, result.stderr
    assert result.stdout == "" and len(result.stderr.splitlines()) == 1
    assert f"{where} file" in result.stderr and "internal error" not in result.stderr


def test_a_set_is_refused_whatever_the_hash_seed(tmp_path: Path) -> None:
    topo = tmp_path / "t.yaml"
    topo.write_text(TOPOLOGY.format(resources="!!set {gpu, cpu, mem, net, disk}", limit=3))
    answers = {
        run(["validate", "--topology", str(topo)], env={"PYTHONHASHSEED": seed}).stderr
        for seed in ("1", "2", "3")
    }
    (answer,) = answers
    assert "!!set is not accepted" in answer and "write a list" in answer
