"""The main job (``arklow dev run``, what ``make run`` runs) end to end, on a coarse day (30-min
ticks) in a throwaway copy of the project: real local clouds, the real engine, the real
controller on the simulated clock. Checked on what it writes for programs (summary.json) and
people (the summary, the report with its charts)."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.pulumi_cli import ARKLOW, MISSING_ENGINE, REPO, TOOLS_BIN, VENV, engine_available

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(2400)]  # the day itself may take 1800 s

TICK_S = 1800
JOIN_S = 12 * 3600
QUIET = ("search/interactive", "summarize/default")
ROUNDED = 2e-3  # summary.json rounds every figure to 3 decimals (reporting.DIGITS)
PNG = b"\x89PNG\r\n\x1a\n"


def run_day(project: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """``arklow dev run`` in a throwaway copy of the project at ``project``, with the user's
    environment less Pulumi's, Arklow's and AWS's variables; it must succeed."""
    if not engine_available():
        pytest.fail(MISSING_ENGINE, pytrace=False)
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(REPO / name, project / name)
    shutil.copytree(REPO / "stacks", project / "stacks")
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI_", "ARKLOW_", "AWS_"))}
    env = {**base, "PATH": os.pathsep.join([str(TOOLS_BIN), str(VENV / "bin"), base["PATH"]])}
    result = subprocess.run(
        [str(ARKLOW), "dev", "run", *options],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return result


@pytest.fixture(scope="module")
def day(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    project = tmp_path_factory.mktemp("main-job")
    return project, run_day(project, "--tick", str(TICK_S))


def summary(project: Path) -> dict[str, Any]:
    return dict(json.loads((project / ".arklow" / "report" / "summary.json").read_text()))


def test_every_decision_stays_within_its_targets_bounds(day: tuple[Path, Any]) -> None:
    doc = summary(day[0])
    assert len(doc["timeline"]) == 24 * 3600 // TICK_S
    for tick in doc["timeline"]:
        assert tick["targets"], tick["t"]
        for name, target in tick["targets"].items():
            assert target["min"] <= target["desired"] <= target["max"], (tick["t"], name)


def test_the_autoscaled_group_follows_its_minimum_down(day: tuple[Path, Any]) -> None:
    """The autoscaler keeps a group above a lowered minimum for its 10-minute stabilization
    period only (here less than a tick): no tick shows it above the minimum set a tick before."""
    timeline = summary(day[0])["timeline"]
    series = [t["targets"]["video-encoders"] for t in timeline]
    assert all(s["autoscaled"] for s in series)
    assert any(b["desired"] < a["desired"] for a, b in itertools.pairwise(series))
    for before, now in itertools.pairwise(series):
        assert now["in_service"] <= max(before["desired"], now["desired"]), (before, now)


def test_the_pools_per_tick(day: tuple[Path, Any]) -> None:
    for tick in summary(day[0])["timeline"]:
        for name, pool in tick["pools"].items():
            assert set(pool) == {
                "resource",
                "capacity",
                "demand",
                "pressure",
                "state",
                "desired_replicas",
            }
            if pool["capacity"] > 0:
                ratio = pool["demand"] / pool["capacity"]  # of figures rounded to 3 decimals
                assert pool["pressure"] == pytest.approx(ratio, abs=ROUNDED)
            assert pool["state"] in {"idle", "steady", "constrained"}, name


def test_lane_figures_add_up_and_quiet_lanes_keep_their_work(day: tuple[Path, Any]) -> None:
    lanes = summary(day[0])["lanes"]
    for name, lane in lanes.items():
        assert lane["served"] + lane["held"] == pytest.approx(lane["demand"], abs=ROUNDED), name
    for name in QUIET:
        assert lanes[name]["held_pct"] < 1.0, (name, lanes[name])
    # the noisy neighbour's burst is what is held back in the shared pool
    assert lanes["search/batch"]["held"] > 10 * max(lanes[n]["held"] for n in QUIET)


def test_the_noon_pulumi_up_moves_reports_into_the_shared_pool(day: tuple[Path, Any]) -> None:
    doc = summary(day[0])
    assert [(e["t"], e["end"]) for e in doc["events"]] == [
        (3600, 5 * 3600),  # the backfill
        (10 * 3600, JOIN_S),  # the noisy neighbour's burst
        (JOIN_S, None),  # the join
    ]
    before = [t for t in doc["timeline"] if t["t"] < JOIN_S]
    after = [t for t in doc["timeline"] if t["t"] >= JOIN_S]
    assert all("reports/gpu" in t["pools"] for t in before)
    assert all("reports/gpu" not in t["pools"] for t in after)
    nightly = "reports/nightly"
    assert {tuple(t["lanes"][nightly]["pools"]) for t in before} == {("reports/gpu",)}
    assert {tuple(t["lanes"][nightly]["pools"]) for t in after} == {("shared-gpu",)}
    # alone, its 4 GPU units held part of its night work; in the shared pool nothing is held
    assert sum(t["lanes"][nightly]["held"] for t in before) > 0
    assert max(t["lanes"][nightly]["admission"] for t in before) <= 4
    assert max(t["lanes"][nightly]["admission"] for t in after) > 4


def test_summary_report_and_state_are_left(day: tuple[Path, Any]) -> None:
    project, result = day
    for heading in ("LANES", "POOLS", "EVENTS", "held %", "scale actions"):
        assert heading in result.stdout
    assert "Traceback" not in result.stderr
    report = project / ".arklow" / "report"
    index = (report / "index.html").read_text()
    for chart in ("lanes.png", "targets.png", "pools.png", "pressure.png"):
        assert chart in index
        assert (report / chart).read_bytes().startswith(PNG)
    assert (project / ".arklow" / "run" / "arklow.db").is_file()
    assert any((project / ".arklow" / "run" / "state").rglob("dev.json"))
    # the run worked on a copy: the stack config it was given is unchanged
    assert (project / "stacks" / "Pulumi.dev.yaml").read_text() == (
        REPO / "stacks" / "Pulumi.dev.yaml"
    ).read_text()


def test_the_inspect_commands_work_in_a_fresh_shell(day: tuple[Path, Any]) -> None:
    """What the run prints to look at its state, pasted into a shell that has nothing set up:
    no venv or engine on PATH, no Pulumi or Arklow variables."""
    out = day[1].stdout
    commands = out.split("Inspect the run (in any shell):\n")[1].split("\n\n")[0].splitlines()
    assert len(commands) == 2
    fresh = {"HOME": os.environ.get("HOME", "/root"), "PATH": "/usr/bin:/bin"}
    exported, shown = (
        subprocess.run(
            ["bash", "-c", command.strip()],
            env=fresh,
            cwd="/",
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        for command in commands
    )
    assert exported.returncode == 0, exported.stderr
    assert json.loads(exported.stdout)["deployment"]["resources"]
    assert shown.returncode == 0, shown.stderr
    assert "shared-gpu" in shown.stdout and "reports" in shown.stdout


def test_the_day_starts_with_the_controller_already_running(day: tuple[Path, Any]) -> None:
    """The warm-up before 00:00 (not recorded): no group starts the day at its minimum with a
    start-up pressure that the table would report as the day's peak."""
    doc = summary(day[0])
    first = doc["timeline"][0]
    for name, target in first["targets"].items():
        if name == "video-encoders":  # the night's transcode work needs more than its minimum
            assert target["in_service"] > target["min"], target
    for name, pool in doc["pools"].items():
        if pool["replicas"] is not None:  # a pool its targets scale
            assert first["pools"][name]["pressure"] < pool["peak_pressure"], name
