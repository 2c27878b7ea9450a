"""A replay in bounded memory (issue 30): the per-tick totals are folded a chunk at a time, the
chart's series keep at most ``CHART_POINTS`` points, every figure stays exact, and
``--max-memory`` refuses a run estimated over it.

Structural checks first (what is kept, and that it does not change a figure), then one measure
of peak memory in real processes (a generous factor, no timing).
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.topology import Topology
from arklow_pulumi.reading.files import load_topology
from arklow_pulumi.simulation import aggregating, simulating
from arklow_pulumi.simulation.aggregating import CHART_POINTS, bucketed
from arklow_pulumi.simulation.budgeting import MiB, parse_size
from arklow_pulumi.simulation.forking import WorkerFailed, stream_forked
from arklow_pulumi.simulation.policies import POLICIES, build
from arklow_pulumi.simulation.simulating import run
from arklow_pulumi.simulation.tracing import Trace, parse_trace
from tests.hypothesis_profiles import examples
from tests.simulation.long_replays import FIVE, TICK, noisy_rows, three_rows
from tests.simulation.replay_checks import figures_text, forks
from tests.simulation.running import ARKLOW, arklow, assert_one_line_error, write_topology


@pytest.fixture(scope="module")
def five(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Topology]:
    path = write_topology(tmp_path_factory.mktemp("five") / "five.yaml", FIVE)
    return path, load_topology(path)


# The replays in this process keep POINTS points a series and fold CHUNK ticks a chunk: the
# module's own figures under the `ci` profile, an eighth of them under `dev` (the same ratio, so
# every relation checked here holds: buckets of 3 ticks, several chunks, buckets across them).
POINTS = examples(CHART_POINTS, dev=CHART_POINTS // 8)
CHUNK = examples(aggregating.CHUNK_TICKS, dev=aggregating.CHUNK_TICKS // 8)


@pytest.fixture(scope="module")
def long_trace() -> Iterator[Trace]:
    """More ticks than the series keep points, in several chunks (POINTS and CHUNK in force)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(aggregating, "CHART_POINTS", POINTS)
        patch.setattr(aggregating, "CHUNK_TICKS", CHUNK)
        yield parse_trace(noisy_rows(2 * POINTS + 123))


def _policies(topo: Topology) -> dict[str, tuple[Topology, str]]:
    return {name: build(name, topo) for name in POLICIES}


def _plain(column: list[float], bucket: int) -> tuple[list[float], list[float]]:
    """Each bucket's mean and highest, one bucket at a time."""
    parts = [column[j : j + bucket] for j in range(0, len(column), bucket)]
    return [sum(p) / len(p) for p in parts], [max(p) for p in parts]


def test_long_replay_keeps_bounded_series_and_exact_figures(
    five: tuple[Path, Topology], long_trace: Trace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The series of a replay longer than CHART_POINTS ticks are buckets of the per-tick
    totals (mean and highest), at most CHART_POINTS points; every other figure is the one a
    replay keeping every tick gives, whatever the chunk size."""
    topo = five[1]
    ticks = long_trace.tick_count(TICK)
    got = run(_policies(topo), long_trace, TICK, 120.0, jobs=1)
    monkeypatch.setattr(aggregating, "CHUNK_TICKS", 2)  # a bucket of 3 across two chunks
    tiny = run(_policies(topo), long_trace, TICK, 120.0, jobs=1)
    monkeypatch.setattr(aggregating, "CHUNK_TICKS", 7)  # many small chunks, buckets across them
    small = run(_policies(topo), long_trace, TICK, 120.0, jobs=1)
    monkeypatch.setattr(aggregating, "CHART_POINTS", ticks)  # every tick kept, chunks of 7
    full_small = run(_policies(topo), long_trace, TICK, 120.0, jobs=1)
    monkeypatch.setattr(aggregating, "CHUNK_TICKS", 4096)
    full = run(_policies(topo), long_trace, TICK, 120.0, jobs=1)
    assert (
        figures_text(got) == figures_text(small) == figures_text(full) == figures_text(full_small)
    )
    assert figures_text(tiny) == figures_text(got)
    assert repr([r.series for r in small.values()]) == repr([r.series for r in got.values()])
    assert repr([r.series for r in tiny.values()]) == repr([r.series for r in got.values()])
    assert repr([r.series for r in full_small.values()]) == repr([r.series for r in full.values()])
    bucket = math.ceil(ticks / POINTS)
    assert bucket == 3
    for name, r in got.items():
        every = full[name].series
        assert every.bucket == 1 and len(every.times) == ticks
        s = r.series
        assert s.bucket == bucket and s.highs is not None
        assert len(s.times) == math.ceil(ticks / bucket) <= POINTS
        assert list(s.times) == list(every.times[::bucket])
        for field in ("demand", "served", "capacity", "replicas"):
            means, highs = _plain(list(getattr(every, field)), bucket)
            assert list(getattr(s, field)) == means
            assert list(getattr(s.highs, field)) == highs
        for resource, rs in s.resources.items():
            for field in ("replicas", "below_max", "constrained"):
                means, highs = _plain(list(getattr(every.resources[resource], field)), bucket)
                assert list(getattr(rs, field)) == means
                assert list(getattr(s.highs.resources[resource], field)) == highs


def test_the_clock_hands_chunks_and_keeps_none(
    five: tuple[Path, Topology], long_trace: Trace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each scenario's totals reach the folding in chunks of at most chunk_ticks ticks, every
    tick once and in order; the folding keeps points only."""
    seen: list[tuple[int, int]] = []
    real = aggregating.Folding.add

    def spy(self: aggregating.Folding, ticks: int, chunk: Any) -> None:
        seen.append((self.scenario, ticks))
        for index, width, _blocks in self.parts:
            part = chunk[index].get(self.scenario)
            assert part is None or len(part) == ticks * width
        real(self, ticks, chunk)

    monkeypatch.setattr(aggregating.Folding, "add", spy)
    ticks = long_trace.tick_count(TICK)
    results = run(_policies(five[1]), long_trace, TICK, 120.0, jobs=1)
    limit = aggregating.chunk_ticks(ticks)
    for s in range(len(POLICIES)):
        counts = [n for scenario, n in seen if scenario == s]
        assert sum(counts) == ticks and max(counts) <= limit and len(counts) > 1
    for r in results.values():
        assert len(r.series.times) == len(r.series.demand) <= POINTS
        for rs in r.series.resources.values():
            assert len(rs.replicas) == len(r.series.times)


def test_workers_stream_the_same_bytes(
    five: tuple[Path, Topology], long_trace: Trace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two worker processes sending their chunks as they go give every figure and series
    point of one process."""
    monkeypatch.setattr(simulating, "other_threads_running", lambda: False)
    started = forks(monkeypatch)
    one = run(_policies(five[1]), long_trace, TICK, 120.0, jobs=1)
    two = run(_policies(five[1]), long_trace, TICK, 120.0, jobs=2, parallel_min=0)
    assert figures_text(one) == figures_text(two)
    assert repr([r.series for r in one.values()]) == repr([r.series for r in two.values()])
    if len(os.sched_getaffinity(0)) >= 2:
        assert started == [2]


@given(
    st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=200),
    st.integers(1, 40),
)
def test_bucketed_is_each_buckets_mean_and_highest(column: list[float], bucket: int) -> None:
    assert bucketed(column, bucket) == _plain(column, bucket)


def _parts(i: int, emit: Any) -> int:
    for k in range(3):
        emit((i, k))
    return 10 + i


def _fails_after_one(i: int, emit: Any) -> int:
    emit((i, 0))
    if i == 1:
        raise ValueError("worker 2 failed")
    emit((i, 1))
    return i


def _uneven(i: int, emit: Any) -> int:
    for k in range(2 + i):
        emit(k)
    return i


def test_stream_forked_hands_rounds_in_order() -> None:
    rounds: list[list[Any]] = []
    assert stream_forked(_parts, 2, rounds.append) == [10, 11]
    assert rounds == [[(0, k), (1, k)] for k in range(3)]


def test_stream_forked_failures_reach_the_caller() -> None:
    with pytest.raises(ValueError, match="worker 2 failed"):
        stream_forked(_fails_after_one, 2, lambda parts: None)
    with pytest.raises(WorkerFailed, match="different numbers of parts"):
        stream_forked(_uneven, 2, lambda parts: None)


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("4G", 4096 * MiB),
        ("512M", 512 * MiB),
        ("1.5GiB", 1536 * MiB),
        ("2048k", 2 * MiB),
        ("100MB", 100 * MiB),
        (" 3 g ", 3072 * MiB),
        ("1048576", MiB),
    ],
)
def test_sizes(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["0", "1000", "x", "-1G", "4X", "", "1e9", "G"])
def test_bad_sizes(text: str) -> None:
    with pytest.raises(InvalidInput, match="--max-memory"):
        parse_size(text)


def _estimate(proc: subprocess.CompletedProcess[str]) -> float:
    """MiB in a --max-memory refusal."""
    assert_one_line_error(proc, "option '--max-memory'", "need about")
    found = re.search(r"need about ([\d,.]+) (MiB|GiB)", proc.stderr)
    assert found is not None, proc.stderr
    value = float(found.group(1).replace(",", ""))
    return value * (1024 if found.group(2) == "GiB" else 1)


def test_over_the_budget_is_refused_at_once(five: tuple[Path, Topology], tmp_path: Path) -> None:
    trace = tmp_path / "trace.csv"
    trace.write_text(three_rows(10_000_000), encoding="utf-8")
    ticks = tmp_path / "ticks.csv"
    proc = arklow(
        "simulate", "--topology", five[0], "--trace", trace, "--max-memory", "20M",
        "--ticks-csv", ticks,
    )  # fmt: skip
    assert _estimate(proc) > 20
    assert not ticks.exists()  # refused before anything is written
    proc = arklow(
        "what-if", "--before", five[0], "--after", five[0], "--trace", trace,
        "--max-memory", "20M",
    )  # fmt: skip
    assert _estimate(proc) > 20
    bad = arklow("simulate", "--topology", five[0], "--trace", trace, "--max-memory", "lots")
    assert_one_line_error(bad, "option '--max-memory'", "lots")


def test_the_estimate_stops_growing_with_ticks(five: tuple[Path, Topology], tmp_path: Path) -> None:
    """A 10,000,000-tick replay of a few lanes (the issue's three-row trace at the defaults)
    fits the default budget: its estimate is that of any run past CHART_POINTS ticks."""
    estimates = []
    for ticks in (100_000, 10_000_000):
        trace = tmp_path / f"trace{ticks}.csv"
        trace.write_text(three_rows(ticks), encoding="utf-8")
        proc = arklow("simulate", "--topology", five[0], "--trace", trace, "--max-memory", "1M")
        estimates.append(_estimate(proc))
    assert estimates[0] == estimates[1] < 4096 / 8


# Started from a small launcher: a child's peak counts the memory of the process it was forked
# from up to its exec, so one started from the test process would read the test's own size.
PEAK_LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_pid, status, usage = os.wait4(child.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


def _peak_mib(*args: str | Path) -> float:
    """Peak resident memory of one ``arklow`` process (and of any worker it waited for)."""
    proc = subprocess.run(
        [sys.executable, "-c", PEAK_LAUNCHER, *ARKLOW, *(str(a) for a in args)],
        capture_output=True,
        text=True,
        check=False,
    )
    code, kib = proc.stdout.split()
    assert code == "0", proc.stderr
    return int(kib) / 1024


def test_peak_memory_does_not_grow_with_ticks(five: tuple[Path, Topology], tmp_path: Path) -> None:
    """N and 10 N ticks in real processes: the same peak within a generous factor (before,
    about 2.85 KB a tick: 200,000 ticks would have added some 500 MB), and under the
    estimate."""
    peaks = []
    for ticks in (20_000, 200_000):
        trace = tmp_path / f"trace{ticks}.csv"
        trace.write_text(three_rows(ticks), encoding="utf-8")
        args = ("simulate", "--topology", five[0], "--trace", trace, "--format", "json")
        peaks.append(_peak_mib(*args))
        refused = arklow(*args, "--max-memory", "1M")
        assert peaks[-1] <= _estimate(refused)
    assert peaks[1] <= 1.25 * peaks[0] + 8, peaks
