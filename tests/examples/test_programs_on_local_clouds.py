"""Every Python program under examples/ comes up on the local clouds as ``arklow dev clouds``
serves them (started from the repository, as a user would), with nothing made by hand: up,
changed (one edit of the program, up again), refreshed, destroyed. One test per example: each
cycle is a few engine runs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.devservers.clouds_process import CloudsProcess, clouds
from tests.e2e.pulumi_cli import MISSING_ENGINE, REPO, Stack, engine_available, write_project

EXAMPLES = REPO / "examples"
PROGRAMS = sorted(p.parent.name for p in EXAMPLES.glob("*/__main__.py"))

Check = Callable[[dict[str, Any]], None]


def _lane(doc: dict[str, Any], destination: str, lane: str) -> dict[str, Any]:
    return dict(doc["destinations"][destination]["lanes"][lane])


def _target(doc: dict[str, Any], pool: str) -> dict[str, Any]:
    (target,) = doc["pools"][pool]["scale_targets"]
    return dict(target)


# example -> (the edit: text in __main__.py and its replacement, what the store holds before,
# what it holds after)
CHANGES: dict[str, tuple[tuple[str, str], Check, Check]] = {
    "gpu_pool_asg": (
        ("max_replicas=16", "max_replicas=12"),
        lambda doc: _assert(_target(doc, "shared-gpu")["max_replicas"] == 16),
        lambda doc: _assert(_target(doc, "shared-gpu")["max_replicas"] == 12),
    ),
    "mig_autoscaler": (
        ('Lane("backfill", limit=120)', 'Lane("backfill", limit=100)'),
        lambda doc: _assert(_lane(doc, "ingest", "backfill")["limit"] == 120),
        lambda doc: _assert(_lane(doc, "ingest", "backfill")["limit"] == 100),
    ),
    "shared_gpu_pool": (
        ("capacity=64", "capacity=96"),
        lambda doc: _assert(doc["pools"]["shared-gpu"]["capacity"] == 64),
        lambda doc: _assert(doc["pools"]["shared-gpu"]["capacity"] == 96),
    ),
}


def _assert(condition: bool) -> None:
    assert condition


def test_every_program_has_a_change() -> None:
    assert sorted(CHANGES) == PROGRAMS


@pytest.fixture(scope="module")
def local_clouds() -> Iterator[CloudsProcess]:
    with clouds() as running:
        yield running


@pytest.mark.e2e
@pytest.mark.parametrize("example", PROGRAMS)
def test_program_up_change_refresh_destroy(
    example: str, local_clouds: CloudsProcess, tmp_path: Path
) -> None:
    if not engine_available():
        pytest.fail(MISSING_ENGINE, pytrace=False)
    (old, new), before, after = CHANGES[example]
    source = (EXAMPLES / example / "__main__.py").read_text()
    assert source.count(old) == 1, old
    name = example.replace("_", "-")
    project = write_project(tmp_path / "project", main_source=source, name=name)
    stack = Stack(project, tmp_path, name="example", env=local_clouds.env).init()

    stack.up()
    created = {r["urn"] for r in stack.resources()}
    before(stack.topology())

    (project / "__main__.py").write_text(source.replace(old, new))
    stack.up()
    after(stack.topology())
    assert {r["urn"] for r in stack.resources()} == created  # updated in place

    refreshed = stack.refresh()
    changes = (refreshed.get("summary") or {}).get("resourceChanges") or {}
    assert set(changes) <= {"same"}, changes  # the store holds what state says
    after(stack.topology())

    stack.destroy()
    assert stack.resources() == []
    assert stack.topology() == {"destinations": {}, "pools": {}}
