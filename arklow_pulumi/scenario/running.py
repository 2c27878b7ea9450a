"""The main job, start to end (see the package docstring)."""

from __future__ import annotations

import importlib.metadata
import logging
import math
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from arklow_pulumi.controller.ports import DemandReport
from arklow_pulumi.scenario.charts import clock as _clock
from arklow_pulumi.scenario.clock import SimulatedClock
from arklow_pulumi.scenario.day import EPISODES, JOIN_AT_S, JOINING, WARM_UP_S, Day, Event
from arklow_pulumi.scenario.progress import Progress
from arklow_pulumi.scenario.recording import (
    Layout,
    Recording,
    lane_figures,
    layout_of,
    pool_figures,
)
from arklow_pulumi.scenario.reporting import Provenance, summary_text, write_report
from arklow_pulumi.scenario.stack import DevStack

if TYPE_CHECKING:
    from arklow_pulumi.devservers.clouds import LocalClouds

# The simulated day (a Monday); the clock the controller reads starts here.
DAY_START = datetime(2026, 1, 5, tzinfo=UTC).timestamp()


@dataclass(frozen=True, slots=True)
class RunOptions:
    repo: Path
    out: Path  # .arklow
    tick_s: float = 300.0
    stack: str = "dev"


@dataclass(frozen=True, slots=True)
class RunResult:
    summary: str
    report: Path
    seconds: float


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run(options: RunOptions) -> RunResult:
    from arklow_pulumi.devservers.clouds import LocalClouds, load_stack, stack_groups

    started = time.monotonic()
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
    topology, autoscaled = load_stack(options.repo, options.stack, say=say)
    groups = stack_groups(topology, autoscaled)
    say("starting local clouds (moto for AWS, the Compute test server for GCP)")
    with LocalClouds() as clouds:
        clouds.create(groups)
        # The controller's supply bindings (boto3, the GCP binding) read their endpoints and
        # test credentials from this process's environment, as `arklow controller run` does.
        os.environ.update(clouds.env())
        stack = DevStack(options.repo, options.out / "run", clouds.env(), options.stack)
        say(f"pulumi up of the {options.stack} stack (state and store in {stack.work})")
        begun = time.monotonic()
        stack.prepare()
        stack.up()
        say(f"pulumi up done in {time.monotonic() - begun:.0f}s; the controller starts at 00:00")
        recording = _day(options, stack, clouds)
    say("local clouds stopped")
    lanes, pools = lane_figures(recording), pool_figures(recording)
    summary = summary_text(recording, lanes, pools)
    notes = _notes(stack)
    source = _provenance(options)
    report = write_report(recording, lanes, pools, options.out / "report", notes, source)
    inspect = "Inspect the run (in any shell):\n" + "\n".join(f"  {n}" for n in notes)
    return RunResult(summary + "\n\n" + inspect, report, time.monotonic() - started)


def _day(options: RunOptions, stack: DevStack, clouds: LocalClouds) -> Recording:
    """The day, tick by tick: a driver of :meth:`Controller.tick` on the simulated clock, not a
    loop of its own. Each simulated tick first does what the day holds at that time (the
    mid-day ``pulumi up``, the lanes' demand reports), then one tick, then records what it
    published; a tick that fails ends the run (a service's loop would log it and go on). The
    Compute test server's clock moves with the simulated one (its autoscaler's 10-minute
    stabilization is two ticks). It holds the store's controller lock (SQLite's elector) for the
    whole day, as `arklow controller run` would."""
    from arklow_pulumi.controller.leadership.leasing import take_leadership
    from arklow_pulumi.controller.tick.ticking import Controller, TickSettings
    from arklow_pulumi.store.engine import close_stores, open_store
    from arklow_pulumi.supply.routing import router_from_env

    day = Day(tick_s=options.tick_s)
    warm_ticks = math.ceil(WARM_UP_S / options.tick_s)
    clock = SimulatedClock(DAY_START - warm_ticks * options.tick_s)
    recording = Recording(options.tick_s)
    recording.layout(0.0, _layout(stack))
    for episode in EPISODES:
        recording.event(episode)
    store = open_store(stack.store_url)
    leadership = take_leadership(store)
    try:
        controller = Controller(
            store,
            router_from_env(),
            leadership.lease,
            settings=TickSettings(interval_s=options.tick_s),
            clock=clock,
            say=say,
        )
        controller.restore()
        sink = controller.demand_sink()
        for _ in range(warm_ticks):  # running before the day (the day module's doc)
            known = set(sink.known_lanes())
            sink.accept([DemandReport(ln, d) for ln, d in day.at_start().items() if ln in known])
            controller.tick()
            clock.advance(options.tick_s)
            clouds.skip(options.tick_s)
        progress = Progress(day.ticks)
        joined = False
        for i in range(day.ticks):
            t = i * options.tick_s
            if not joined and t >= JOIN_AT_S:
                joined = True
                destination, pool = JOINING
                progress.interrupt(f"{_clock(t)}  pulumi up: {destination} joins {pool}")
                begun = time.monotonic()
                stack.join(destination, pool)
                stack.up()
                progress.interrupt(f"pulumi up done in {time.monotonic() - begun:.0f}s")
                recording.event(Event(t, None, f"pulumi up: {destination} joins {pool}", "join"))
                recording.layout(t, _layout(stack))
            known = set(sink.known_lanes())
            demand = day.demand(t)
            sink.accept([DemandReport(lane, d) for lane, d in demand.items() if lane in known])
            outcome = controller.tick()
            recording.add(t, outcome.published)
            clock.advance(options.tick_s)
            clouds.skip(options.tick_s)
            progress.update(i + 1, f"simulated {_clock(t + options.tick_s)} of 24:00")
    finally:
        leadership.release()
        close_stores()
    return recording


def _layout(stack: DevStack) -> Layout:
    """The layout of the stack's config as the last ``pulumi up`` applied it."""
    from arklow_pulumi.devservers.clouds import load_stack

    return layout_of(*load_stack(stack.project, stack.stack))


def _notes(stack: DevStack) -> list[str]:
    """Commands that read what the run left, with full paths: they work in any shell."""
    state = (stack.work / "state").resolve()
    pulumi = str(stack.pulumi)
    arklow = Path(sys.executable).with_name("arklow")
    q = shlex.quote
    return [
        f"PULUMI_BACKEND_URL={q(f'file://{state}')} PULUMI_CONFIG_PASSPHRASE= "
        f"{q(pulumi)} stack export --stack {q(stack.stack)} --cwd {q(str(stack.project))}",
        f"{q(str(arklow))} topology show --store {q(stack.store_url)}",
    ]


def _provenance(options: RunOptions) -> Provenance:
    return Provenance(
        day=datetime.fromtimestamp(DAY_START, UTC),
        generated=datetime.now(UTC),
        version=importlib.metadata.version("arklow-pulumi"),
        commit=_git(options.repo, "rev-parse", "--short", "HEAD"),
        modified=bool(_git(options.repo, "status", "--porcelain", "--untracked-files=no")),
        stack=options.stack,
        topology_file=f"stacks/Pulumi.{options.stack}.yaml",
    )


def _git(repo: Path, *args: str) -> str | None:
    """A git command's output in ``repo``; ``None`` when it is not a checkout or git is absent."""
    try:
        result = subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() if result.returncode == 0 else None
