"""The main job (``arklow dev run``) on its own 5-minute day, as ``make run`` runs it: no scale
target turns around within its pool's ``scale_down_window_s`` of its last move, except a
scale-up for held work (docs/scale-policy.md). The autoscaled MIG (``video-encoders``, whose
decision is its autoscaler's minimum) is where this once failed: the policy moved from what the
autoscaler ran, not from the minimum it had set, so the minimum went 7 → 6 → 7 on
consecutive ticks."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

from arklow_pulumi.core.policy import DEFAULT_POLICY
from tests.devservers.test_main_job import run_day

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def summary(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    project = tmp_path_factory.mktemp("main-job-day")
    run_day(project)  # the day of `make run`: 5-minute ticks
    return dict(json.loads((project / ".arklow" / "report" / "summary.json").read_text()))


def reversals(timeline: list[dict[str, Any]], name: str, window: float) -> list[tuple[Any, ...]]:
    """Moves of the target's desired count that turn its previous move around at most
    ``window`` seconds after it, other than a scale-up while its pool holds work."""
    pool = timeline[0]["targets"][name]["pool"]
    moves = []
    for a, b in itertools.pairwise(timeline):
        before, after = a["targets"][name]["desired"], b["targets"][name]["desired"]
        if after != before:
            held = b["pools"][pool]["state"] == "constrained"
            moves.append((b["t"], 1 if after > before else -1, held))
    return [
        (m0, m1)
        for m0, m1 in itertools.pairwise(moves)
        if m1[1] != m0[1] and m1[0] - m0[0] <= window and not (m1[1] > 0 and m1[2])
    ]


def test_no_target_turns_around_inside_the_window(summary: dict[str, Any]) -> None:
    timeline = summary["timeline"]
    assert summary["tick_s"] == 300 and len(timeline) == 288
    names = list(timeline[0]["targets"])
    assert "video-encoders" in names and timeline[0]["targets"]["video-encoders"]["autoscaled"]
    window = DEFAULT_POLICY.scale_down_window_s  # the dev stack's pools keep the default
    for name in names:
        assert reversals(timeline, name, window) == [], name


def test_every_decision_stays_within_its_targets_bounds(summary: dict[str, Any]) -> None:
    for tick in summary["timeline"]:
        for name, target in tick["targets"].items():
            assert target["min"] <= target["desired"] <= target["max"], (tick["t"], name)
