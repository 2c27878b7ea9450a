"""``arklow what-if --stack``: the stack file (after) against a store filled through the store's
rules (before), replayed on the store's demand history (see :mod:`tests.whatif.stacking`)."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from arklow_pulumi.store.engine import close_stores
from tests.arklow_cli import Result, call
from tests.simulation.running import assert_one_line_error, write_topology, write_trace
from tests.whatif.stacking import BEFORE, HISTORY, fill_history, fill_store, moved, write_project

ARKLOW = [sys.executable, "-m", "arklow_pulumi.cli"]


def arklow(project: Path, *args: str | Path, real: bool = False) -> Result:
    """``arklow ARGS`` in the project directory (the store is found beside its Pulumi.yaml),
    through its entry point in this process, or as a real process where ``real``."""
    argv = [str(a) for a in args]
    if not real:
        return call(argv, cwd=project, cleared=("ARKLOW_STORE",))
    return subprocess.run(
        [*ARKLOW, *argv],
        capture_output=True,
        text=True,
        check=False,
        cwd=project,
        env={k: v for k, v in os.environ.items() if k != "ARKLOW_STORE"},
    )


@pytest.fixture
def project(tmp_path: Path) -> Any:
    """A project whose store holds BEFORE and two hours of history; the stack file says BEFORE."""
    directory = write_project(tmp_path / "project", "dev", BEFORE)
    store = fill_store(f"sqlite:///{directory / '.arklow' / 'arklow.db'}", BEFORE)
    fill_history(store, HISTORY)
    yield directory
    close_stores()


def what_if(project: Path, topology: dict[str, Any], *extra: str | Path) -> dict[str, Any]:
    write_project(project, "dev", topology)
    proc = arklow(project, "what-if", "--stack", "dev", *extra)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def test_membership_move_that_starves_a_lane_is_flagged(project: Path) -> None:
    doc = what_if(project, moved())
    assert doc["flagged"][0] == "quiet/q"
    quiet = doc["lanes"]["quiet/q"]
    assert quiet["held_before"] == 0
    # 10 units shared by q (8) and n (100): fair share 5 each, q held 3 of 8 every tick.
    assert quiet["held_after"] / quiet["demand"] == pytest.approx(3 / 8, abs=1e-9)
    assert doc["pools"]["quiet/cpu"]["replica_hours_after"] is None  # gone after the move


def test_markdown_lists_flagged_lanes_first_and_says_what_changed(project: Path) -> None:
    write_project(project, "dev", moved())
    args = ("what-if", "--stack", "dev", "--format", "markdown", "--fail-on-flag")
    proc = arklow(project, *args, real=True)  # exit 3 from a real process
    assert proc.returncode == 3, proc.stderr
    text = proc.stdout
    assert text.startswith("### Arklow what-if: 2 lanes flagged")
    assert "`quiet` moved from pool `quiet/cpu` to `busy` for `cpu`" in text
    assert text.index("`quiet/q` | **flagged** | 0.00% → 37.50%") < text.index("#### Pools")
    assert "| `busy` | 4.0 → 4.0 | 2 → 2 |" in text


def test_stack_file_equal_to_the_store_reports_zero_deltas(project: Path) -> None:
    # The stack file does not state replicas (runtime state): the store's count carries over.
    same = copy.deepcopy(BEFORE)
    del same["pools"][0]["scale_targets"][0]["replicas"]
    doc = what_if(project, same)
    assert doc["flagged"] == []
    assert doc["new_lanes"] == [] and doc["removed_lanes"] == []
    for lane in doc["lanes"].values():
        assert lane["held_before"] == lane["held_after"]
    for pool in doc["pools"].values():
        assert pool["replica_hours_before"] == pool["replica_hours_after"]
        assert pool["peak_replicas_before"] == pool["peak_replicas_after"]


def test_raising_the_pool_max_removes_the_flag(project: Path) -> None:
    assert "quiet/q" in what_if(project, moved(max_replicas=2))["flagged"]
    doc = what_if(project, moved(max_replicas=4))
    assert doc["flagged"] == []
    assert doc["pools"]["busy"]["peak_replicas_after"] == 4


def test_lane_only_in_the_stack_file_is_new(project: Path) -> None:
    after = copy.deepcopy(BEFORE)
    after["destinations"].append(
        {"name": "fresh", "resources": ["cpu"], "lanes": [{"name": "f", "limit": 4}]}
    )
    after["pools"][0]["members"].append("fresh")
    doc = what_if(project, after)
    assert doc["new_lanes"] == ["fresh/f"]
    assert doc["lanes"]["fresh/f"]["held_before"] is None
    assert "fresh/f" not in doc["flagged"]


def test_given_trace_replaces_the_store_history(project: Path, tmp_path: Path) -> None:
    # Only noisy has demand in this trace: moving quiet costs nothing, nothing is flagged.
    trace = write_trace(tmp_path / "t.csv", [(0, "noisy/n", 100), (3600, "noisy/n", 100)])
    doc = what_if(project, moved(), "--trace", trace)
    assert doc["flagged"] == []
    assert doc["lanes"]["quiet/q"]["demand"] == 0


def test_empty_history_without_trace_exits_2(tmp_path: Path) -> None:
    directory = write_project(tmp_path / "p", "dev", moved())
    fill_store(f"sqlite:///{directory / '.arklow' / 'arklow.db'}", BEFORE)
    close_stores()
    proc = arklow(directory, "what-if", "--stack", "dev")
    assert_one_line_error(proc, "store demand history", "--trace")


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--stack", "nope"], ("stack 'nope'", "no such stack file")),
        (["--stack", "../dev"], ("stack '../dev'", "not a stack name")),
        (["--stack", "dev", "--before", "x.yaml"], ("--stack", "replaces --before")),
        (["--stack", "dev", "--since", "soon"], ("--since", "7d")),
        (["--after", "x.yaml", "--trace", "t.csv"], ("--before", "required without --stack")),
        (["--store", "sqlite:///x.db", "--before", "a", "--after", "b"], ("--store",)),
    ],
)
def test_bad_stack_input_exits_2_with_one_line(
    project: Path, args: list[str], needles: tuple[str, ...]
) -> None:
    assert_one_line_error(arklow(project, "what-if", *args), *needles)


@pytest.mark.parametrize(
    ("rows", "needles"),
    [
        ("time,lane\n0,quiet/q\n", ("line 1", "header")),
        ([(0, "elsewhere/x", 1)], ("line 2", "lane", "no such lane")),
        ([(5, "quiet/q", 1), (0, "quiet/q", 1)], ("line 3", "sorted")),
        ([(0, "quiet/q", -1)], ("line 2", "demand")),
        ("time,lane,demand\n", ("no rows",)),
    ],
)
def test_bad_trace_with_stack_exits_2_with_one_line(
    project: Path, tmp_path: Path, rows: Any, needles: tuple[str, ...]
) -> None:
    write_project(project, "dev", moved())
    trace = write_trace(tmp_path / "bad.csv", rows)
    assert_one_line_error(arklow(project, "what-if", "--stack", "dev", "--trace", trace), *needles)


def test_unreadable_stack_topology_exits_2_naming_the_field(project: Path) -> None:
    broken = copy.deepcopy(BEFORE)
    broken["pools"][0]["members"] = ["nobody"]
    write_topology(project / "stacks" / "Pulumi.dev.yaml", {"config": {"arklow:topology": broken}})
    assert_one_line_error(arklow(project, "what-if", "--stack", "dev"), "nobody")


def test_missing_store_exits_2_and_never_prints_a_password(project: Path, tmp_path: Path) -> None:
    missing = f"sqlite:///{tmp_path / 'nowhere' / 'arklow.db'}"
    assert_one_line_error(arklow(project, "what-if", "--stack", "dev", "--store", missing), "store")
    assert not (tmp_path / "nowhere").exists()
    unreachable = "postgresql://arklow:pl4nted-pw@127.0.0.1:1/arklow"
    proc = arklow(project, "what-if", "--stack", "dev", "--store", unreachable, real=True)
    assert_one_line_error(proc, "store")
    assert "pl4nted-pw" not in proc.stderr
