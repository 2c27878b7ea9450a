"""Group commit of demand batches: one sink write at a time, concurrent batches written together,
each answered on its own, a failure shared by the group it happened in."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest

from arklow_pulumi.controller.api.committing import GroupCommitter
from arklow_pulumi.controller.ports import DemandReport


class SlowSink:
    """Blocks its first write until released, so later batches queue up behind it."""

    def __init__(self) -> None:
        self.calls: list[list[tuple[str, float]]] = []
        self.inside = threading.Event()
        self.release = threading.Event()
        self.active = 0
        self.most_active = 0
        self.fail_on: str | None = None
        self._lock = threading.Lock()

    def known_lanes(self) -> set[str]:
        return set()

    def accept(self, reports: Sequence[DemandReport]) -> int:
        with self._lock:
            self.active += 1
            self.most_active = max(self.most_active, self.active)
        try:
            if not self.calls:
                self.inside.set()
                self.release.wait()
            self.calls.append([(r.lane, r.demand) for r in reports])
            if self.fail_on and any(r.lane == self.fail_on for r in reports):
                raise ConnectionError("store down")
            return len(reports)
        finally:
            with self._lock:
                self.active -= 1


def batch(lane: str, demand: float) -> list[DemandReport]:
    return [DemandReport(lane, demand)]


def start(
    committer: GroupCommitter, reports: list[DemandReport], results: dict[str, object]
) -> threading.Thread:
    def run() -> None:
        try:
            results[reports[0].lane + str(reports[0].demand)] = committer.write(reports)
        except ConnectionError as exc:
            results[reports[0].lane + str(reports[0].demand)] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def wait_queued(committer: GroupCommitter, n: int) -> None:
    while len(committer._queue) < n:
        threading.Event().wait(0.001)


def test_batches_arriving_during_a_write_go_together_in_the_next() -> None:
    sink = SlowSink()
    committer = GroupCommitter(lambda: sink)
    results: dict[str, object] = {}
    first = start(committer, batch("a/x", 1), results)
    sink.inside.wait()
    others = [start(committer, batch(f"a/{lane}", 2), results) for lane in ("y", "z", "x")]
    wait_queued(committer, 3)
    sink.release.set()
    for t in [first, *others]:
        t.join()
    assert sink.most_active == 1
    assert len(sink.calls) == 2
    assert sink.calls[0] == [("a/x", 1.0)]
    assert sorted(sink.calls[1]) == [("a/x", 2.0), ("a/y", 2.0), ("a/z", 2.0)]
    assert results == {"a/x1": 1, "a/y2": 1, "a/z2": 1, "a/x2": 1}


def test_a_failure_fails_its_group_only() -> None:
    sink = SlowSink()
    sink.fail_on = "a/bad"
    committer = GroupCommitter(lambda: sink)
    results: dict[str, object] = {}
    first = start(committer, batch("a/x", 1), results)
    sink.inside.wait()
    grouped = [start(committer, batch(lane, 2), results) for lane in ("a/bad", "a/y")]
    wait_queued(committer, 2)
    sink.release.set()
    for t in [first, *grouped]:
        t.join()
    assert results["a/x1"] == 1
    assert isinstance(results["a/bad2"], ConnectionError)
    assert isinstance(results["a/y2"], ConnectionError)
    assert committer.write(batch("a/y", 3)) == 1  # the next group is written normally


def test_an_empty_batch_writes_nothing() -> None:
    sink = SlowSink()
    sink.release.set()
    assert GroupCommitter(lambda: sink).write([]) == 0
    assert sink.calls == []


@pytest.mark.parametrize("writers", [1, 8])
def test_every_report_lands_exactly_once(writers: int) -> None:
    sink = SlowSink()
    sink.release.set()
    committer = GroupCommitter(lambda: sink)

    def run(w: int) -> None:
        for i in range(50):
            committer.write([DemandReport(f"w{w}/l{i}", float(i))])

    threads = [threading.Thread(target=run, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    written = [pair for call in sink.calls for pair in call]
    assert sorted(written) == sorted(
        (f"w{w}/l{i}", float(i)) for w in range(writers) for i in range(50)
    )
    assert sink.most_active == 1
