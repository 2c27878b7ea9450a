"""Shards stepped in worker processes give the same bytes as one process, for any worker count;
``--jobs`` is checked; a worker that raises, dies or is interrupted ends the command with the
usual one-line error, no hang and no child process left.

The parallel route is forced on small inputs with ``parallel_min=0`` (in-process calls) rather
than with a huge trace. The fleet case is a 30-minute slice of the benchmark's 1,000-lane fleet
(20 batches, 8 shards); the example trace has 4 batches.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from arklow_pulumi.cli.simulate import simulate_document
from arklow_pulumi.cli.whatif import whatif_document
from arklow_pulumi.core.topology import Topology
from arklow_pulumi.reading.files import load_topology
from arklow_pulumi.simulation import simulating
from arklow_pulumi.simulation.batching import batches
from arklow_pulumi.simulation.policies import FAIR, POLICIES, build
from arklow_pulumi.simulation.sharding import assign, shard
from arklow_pulumi.simulation.simulating import Scenario, run
from arklow_pulumi.simulation.stepping import UnitRun
from arklow_pulumi.simulation.tracing import Trace, read_trace
from arklow_pulumi.simulation.units import split
from arklow_pulumi.simulation.whatif import what_if
from tests.simulation.example_traces import TRACES
from tests.simulation.replay_checks import figures_text, forks
from tests.simulation.running import ARKLOW, arklow, arklow_process, assert_one_line_error

ROOT = Path(__file__).resolve().parents[2]
SLICE_S = 1800


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """The benchmark fleet (before and after a one-member move) and a 30-minute trace slice."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from bench_simulate import write_move_files
    finally:
        sys.path.remove(str(ROOT / "bench"))
    tmp = tmp_path_factory.mktemp("fleet")
    files = write_move_files(tmp, days=1)
    lines = files.trace.read_text(encoding="utf-8").splitlines()
    trace = tmp / "slice.csv"
    kept = [lines[0], *(line for line in lines[1:] if int(line.split(",")[0]) <= SLICE_S)]
    trace.write_text("\n".join(kept) + "\n", encoding="utf-8")
    return files.before, files.after, trace


def _four(topo: Topology) -> dict[str, tuple[Topology, str]]:
    return {name: build(name, topo) for name in POLICIES}


REAL_THREAD_CHECK = simulating.other_threads_running


@pytest.fixture(autouse=True)
def _alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads other tests left behind (idle pool workers of earlier controllers) would keep every
    run here in-process; these tests are about the parallel route, so it is taken regardless."""
    monkeypatch.setattr(simulating, "other_threads_running", lambda: False)


def _cases(fleet: tuple[Path, Path, Path]) -> list[tuple[Topology, Trace]]:
    out = []
    for topology, trace in ((TRACES / "fleet.yaml", TRACES / "fleet.csv"), (fleet[0], fleet[2])):
        topo = load_topology(topology)
        out.append((topo, read_trace(trace, topo.lanes_by_key)))
    return out


def test_worker_count_does_not_change_a_bit(
    fleet: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    started = forks(monkeypatch)
    for topo, trace in _cases(fleet):
        one = run(_four(topo), trace, 60.0, 120.0, jobs=1, parallel_min=0)
        want_figures, want_json = figures_text(one, series=True), json.dumps(simulate_document(one))
        for jobs in (2, 3):
            got = run(_four(topo), trace, 60.0, 120.0, jobs=jobs, parallel_min=0)
            assert figures_text(got, series=True) == want_figures
            assert json.dumps(simulate_document(got)) == want_json
    if len(os.sched_getaffinity(0)) >= 2:
        assert started == [2, 2, 2, 2]  # two cores here at most: --jobs 3 runs two workers


def test_what_if_worker_count_does_not_change_a_bit(
    fleet: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    before_path, after_path, trace_path = fleet
    before, after = load_topology(before_path), load_topology(after_path)
    trace = read_trace(trace_path, {**before.lanes_by_key, **after.lanes_by_key})
    sides = {"before": (before, FAIR), "after": (after, FAIR)}
    one = run(sides, trace, 60.0, 120.0, jobs=1, parallel_min=0)
    two = run(sides, trace, 60.0, 120.0, jobs=2, parallel_min=0)
    assert figures_text(one, series=True) == figures_text(two, series=True)
    # what_if itself (default jobs and threshold) gives the same document
    doc = whatif_document(what_if(before, after, trace, 60.0, 120.0, jobs=1))
    assert whatif_document(what_if(before, after, trace, 60.0, 120.0, jobs=2)) == doc


def test_change_at_worker_count_does_not_change_a_bit(
    fleet: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The switched side's new runs take over groups stepped by other batches: they are tied
    into one shard, so workers give the same figures as one process."""
    started = forks(monkeypatch)
    before_path, after_path, trace_path = fleet
    before, after = load_topology(before_path), load_topology(after_path)
    trace = read_trace(trace_path, {**before.lanes_by_key, **after.lanes_by_key})
    sides = {"before": Scenario(before), "after": Scenario(before, then=after, at=900.0)}
    one = run(sides, trace, 60.0, 120.0, jobs=1, parallel_min=0)
    two = run(sides, trace, 60.0, 120.0, jobs=2, parallel_min=0)
    assert figures_text(one, series=True) == figures_text(two, series=True)
    assert one["after"].lanes != one["before"].lanes  # the change moved something
    if len(os.sched_getaffinity(0)) >= 2:
        assert started == [2]


def test_tied_batches_share_a_shard(fleet: tuple[Path, Path, Path]) -> None:
    topo = load_topology(fleet[0])
    groups = batches(
        [UnitRun(u, 60.0, 120.0) for u in split(topo)], 64
    )  # small batches: several shards
    assert len(groups) >= 4
    free = shard(groups)
    tied = shard(groups, [(0, len(groups) - 1), (1, 2)])
    assert [len(s.batches) for s in free] != [] and len(tied) <= len(free)
    home = {id(b): s.index for s in tied for b in s.batches}
    assert home[id(groups[0])] == home[id(groups[-1])]
    assert home[id(groups[1])] == home[id(groups[2])]
    assert sorted(id(b) for s in tied for b in s.batches) == sorted(id(b) for b in groups)


def test_partition_is_fixed_by_the_inputs(
    fleet: tuple[Path, Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shards come from the batches alone; workers only group whole shards."""
    topo = load_topology(fleet[0])
    scenarios = _four(topo)
    trace = read_trace(fleet[2], topo.lanes_by_key)
    layouts = []
    for _ in range(2):
        groups: list[Any] = []
        real = simulating.shard

        def keep(
            batches: Any, ties: Any = (), *, groups: list[Any] = groups, real: Any = real
        ) -> Any:
            out = real(batches, ties)
            groups.extend(out)
            return out

        monkeypatch.setattr(simulating, "shard", keep)
        run(scenarios, trace, 60.0, 120.0, jobs=1)
        monkeypatch.undo()
        layouts.append([[r.unit.signature for r in s.runs] for s in groups])
        assert len(groups) == 8
        for workers in (1, 2, 3, 8):
            parts = assign(groups, workers)
            assert sorted(s.index for part in parts for s in part) == list(range(8))
    assert layouts[0] == layouts[1]
    assert shard([]) == []


@pytest.mark.parametrize(
    ("jobs", "shards", "work", "want"),
    [
        (None, 8, 10**9, 4),  # default: the usable cores
        (3, 8, 10**9, 3),
        (16, 8, 10**9, 4),  # never more than the cores
        (None, 2, 10**9, 2),  # nor than the shards
        (1, 8, 10**9, 1),  # in-process
        (None, 8, 10, 1),  # too little work to pay for forking
        (None, 0, 0, 1),
    ],
)
def test_worker_count(
    monkeypatch: pytest.MonkeyPatch, jobs: int | None, shards: int, work: int, want: int
) -> None:
    monkeypatch.setattr(simulating, "usable_cores", lambda: 4)
    assert simulating.worker_count(jobs, shards, work, 1000) == want


def test_one_usable_core_runs_in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(simulating, "usable_cores", lambda: 1)
    assert simulating.worker_count(None, 8, 10**9, 0) == 1


def test_no_fork_while_other_threads_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """As inside the policy pack's gRPC server: stepped in this process."""
    monkeypatch.setattr(simulating, "usable_cores", lambda: 4)
    monkeypatch.setattr(simulating, "other_threads_running", REAL_THREAD_CHECK)
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert simulating.worker_count(None, 8, 10**9, 0) == 1
    finally:
        release.set()
        other.join()
    # alone again (unless an earlier test left a thread running in this process)
    alone = threading.active_count() == 1
    assert simulating.worker_count(None, 8, 10**9, 0) == (4 if alone else 1)


def test_cli_jobs_give_identical_output(fleet: tuple[Path, Path, Path]) -> None:
    """The example fleet takes the parallel route by itself (above the threshold)."""
    common = ("simulate", "--topology", TRACES / "fleet.yaml", "--trace", TRACES / "fleet.csv")
    outputs = set()
    for jobs in ("1", "2"):
        proc = arklow_process(*common, "--format", "json", "--jobs", jobs)  # its own workers
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        outputs.add(proc.stdout)
    assert len(outputs) == 1
    before, after, trace = fleet
    whatif = ("what-if", "--before", before, "--after", after, "--trace", trace)
    docs = set()
    for jobs in ("1", "2"):
        proc = arklow_process(*whatif, "--jobs", jobs)
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
        docs.add(proc.stdout)
    assert len(docs) == 1


@pytest.mark.parametrize("value", ["0", "-2", "two", "1.5", ""])
@pytest.mark.parametrize("command", ["simulate", "what-if"])
def test_bad_jobs(command: str, value: str) -> None:
    example = (TRACES / "gpu_day.yaml", TRACES / "gpu_day.csv")
    if command == "simulate":
        args: tuple[str | Path, ...] = ("--topology", example[0], "--trace", example[1])
    else:
        args = ("--before", example[0], "--after", example[0], "--trace", example[1])
    proc = arklow(command, *args, "--jobs", value)
    assert_one_line_error(proc, "--jobs")


# A real ``arklow`` process whose workers fail on purpose: the hook wraps Batch.step so that,
# in a worker only, the batch holding the given lane raises or kills its own process.
DRIVER = """
import os, signal, sys
from arklow_pulumi.simulation import batching, simulating
parent, lane, how = os.getpid(), sys.argv[1], sys.argv[2]
real = batching.Batch.step
def step(self, k, now):
    if os.getpid() != parent and k == 5 and any(lane in r.unit.lane_keys for r in self.runs):
        if how == "raise":
            raise ValueError("boom in a worker")
        os.kill(os.getpid(), signal.SIGKILL)
    return real(self, k, now)
batching.Batch.step = step
simulating.run.__kwdefaults__["parallel_min"] = 0
from arklow_pulumi.cli.main import main
sys.argv = ["arklow", *sys.argv[3:]]
try:
    main()
finally:
    with open(os.environ["CHILDREN_FILE"], "w") as out:
        out.write(open(f"/proc/{parent}/task/{parent}/children").read())
"""


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")
@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("raise", "error: internal error (ValueError): boom in a worker"),
        ("kill", "error: internal error (WorkerLost): simulation worker * ended without a result"),
    ],
)
def test_failing_worker_is_one_line(tmp_path: Path, how: str, message: str) -> None:
    children = tmp_path / "children"
    topo = load_topology(TRACES / "fleet.yaml")
    lane = list(topo.lanes_by_key)[-1]
    args = ("simulate", "--topology", TRACES / "fleet.yaml", "--trace", TRACES / "fleet.csv")
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, lane, how, *(str(a) for a in args), "--jobs", "2"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CHILDREN_FILE": str(children)},
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    head, _, tail = message.partition("*")
    assert lines[0].startswith(head) and tail in lines[0], lines[0]
    if how == "kill":
        assert lines[0].endswith("(killed by SIGKILL)")
    assert children.read_text().split() == []  # every worker joined before the exit


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")
def test_ctrl_c_ends_the_workers() -> None:
    """Ctrl-C reaches the whole process group, as from a terminal: exit 130, one line, and
    the workers are gone. A quarter-second tick on the example fleet runs for over ten seconds
    (a 1-second tick ended before the signal on a loaded machine once the engine got faster)."""
    args = ("simulate", "--topology", TRACES / "fleet.yaml", "--trace", TRACES / "fleet.csv")
    proc = subprocess.Popen(
        [*ARKLOW, *(str(a) for a in args), "--tick", "0.25", "--jobs", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # as from a terminal: Ctrl-C at its default, whatever this process inherited (a
        # background job starts with SIGINT ignored, and an ignored signal stays ignored in
        # the child, which then never sees the Ctrl-C)
        preexec_fn=_default_sigint,
    )
    workers: list[int] = []
    while proc.poll() is None and len(workers) < 2:
        workers = _children(proc.pid)
        time.sleep(0.01)
    assert len(workers) == 2, "the run ended before its workers were seen"
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert out == ""
    # click ends the ^C line with a newline first, as for every command
    assert [line for line in err.splitlines() if line] == ["error: interrupted"]
    for pid in workers:  # ended and reaped by the command itself (not left as zombies)
        assert not Path(f"/proc/{pid}").exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel ends the orphans")
def test_workers_end_with_a_killed_command() -> None:
    """A command killed outright (SIGKILL: no handler runs) takes its workers with it."""
    args = ("simulate", "--topology", TRACES / "fleet.yaml", "--trace", TRACES / "fleet.csv")
    proc = subprocess.Popen(
        [*ARKLOW, *(str(a) for a in args), "--tick", "0.25", "--jobs", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: list[int] = []
    while proc.poll() is None and len(workers) < 2:
        workers = _children(proc.pid)
        time.sleep(0.01)
    assert len(workers) == 2, "the run ended before its workers were seen"
    proc.kill()
    proc.wait(timeout=60)
    for pid in workers:  # gone, or a zombie left to whoever adopted it: not stepping on
        for _ in range(6000):
            if _state(pid) in ("", "Z"):
                break
            time.sleep(0.01)
        assert _state(pid) in ("", "Z")


def _state(pid: int) -> str:
    """A process's state letter (R, S, Z, ...), or "" when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[0]
    except (OSError, IndexError):
        return ""
