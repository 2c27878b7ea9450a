"""An output that is one of the command's inputs is refused (issue 30, item 5): exit 2, one
line, the input untouched. Files are compared by identity (``st_dev``, ``st_ino``), so another
spelling, a symbolic link and a hard link are caught; an output that does not exist is fine."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from arklow_pulumi.store.engine import close_stores, open_store
from tests.arklow_cli import Invoke, in_process
from tests.controller_process import store_topology

TOPOLOGY = """\
destinations:
  - name: d
    resources: [gpu]
    standalone_capacity: {gpu: 10}
    lanes: [{name: l, limit: 5}]
"""
TRACE = "time,lane,demand\n0,d/l,2\n60,d/l,3\n"


@pytest.fixture
def arklow(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Invoke:
    return in_process(monkeypatch, capsys)


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    topology, trace = tmp_path / "t.yaml", tmp_path / "trace.csv"
    topology.write_text(TOPOLOGY)
    trace.write_text(TRACE)
    return topology, trace


def _same(path: Path) -> Path:
    return path


def _spelled_otherwise(path: Path) -> Path:
    return path.parent / "." / ".." / path.parent.name / path.name


def _symlink(path: Path) -> Path:
    link = path.with_name("link-" + path.name)
    link.symlink_to(path)
    return link


def _hard_link(path: Path) -> Path:
    link = path.with_name("hard-" + path.name)
    os.link(path, link)
    return link


SPELLINGS: list[Callable[[Path], Path]] = [_same, _spelled_otherwise, _symlink, _hard_link]


@pytest.mark.parametrize("spelling", SPELLINGS, ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize(("option", "victim"), [("--ticks-csv", 1), ("--chart", 0)])
def test_simulate_refuses_to_write_over_its_inputs(
    arklow: Invoke,
    inputs: tuple[Path, Path],
    spelling: Callable[[Path], Path],
    option: str,
    victim: int,
) -> None:
    topology, trace = inputs
    target = spelling(inputs[victim])
    before = inputs[victim].read_bytes()
    result = arklow(
        ["simulate", "--topology", str(topology), "--trace", str(trace), option, str(target)]
    )
    assert result.returncode == 2, result
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    given = "--trace" if victim else "--topology"
    assert f"option {option}: field '{option[2:]}'" in result.stderr
    assert f"is the file of {given}" in result.stderr
    assert inputs[victim].read_bytes() == before


def test_simulate_writes_a_new_output(arklow: Invoke, inputs: tuple[Path, Path]) -> None:
    topology, trace = inputs
    ticks = trace.with_name("ticks.csv")
    result = arklow(["simulate", "--topology", str(topology), "--trace", str(trace),
                     "--ticks-csv", str(ticks), "--format", "json"])  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert ticks.read_text().startswith("policy,time,kind")


def test_export_trace_refuses_to_write_over_the_store(arklow: Invoke, tmp_path: Path) -> None:
    database = tmp_path / "arklow.db"
    url = store_topology(f"sqlite:///{database}", {"destinations": []})
    open_store(url)  # -wal and -shm exist while a connection is open
    try:
        for victim in (database, Path(f"{database}-wal"), _symlink(database)):
            before = database.read_bytes()
            result = arklow(["controller", "export-trace", "--store", url, "--output", str(victim)])
            assert result.returncode == 2, result
            assert "option --output: field 'output'" in result.stderr
            assert "is the file of --store" in result.stderr
            assert database.read_bytes() == before
    finally:
        close_stores()
