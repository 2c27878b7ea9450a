"""Controller replicas on PostgreSQL under faults, as real processes (issue 11, docs/controller-ha.md).

Every test runs ``arklow controller run`` replicas on one fresh PostgreSQL database against the
Compute API test server with 20% injected errors (429/503, some after the resize took effect), and
reads the server's request log: every resize must carry an epoch (its ``requestId``), epochs never
go back in arrival order (no resize from an older epoch after a newer one acted), and no size is
outside the target's [min, max]. Waits poll observable state; nothing asserts on timing (the
takeover times are measured by bench/soak_ha.py).
"""

from __future__ import annotations

import os
import random
import signal
import time
import urllib.error
from pathlib import Path
from typing import Any

import pytest

from tests.controller.ha_cluster import MIG_MAX, MIG_MIN, Cluster, eventually, ha_cluster
from tests.store import postgres_server

pytestmark = [pytest.mark.postgres, pytest.mark.e2e]

KILLS = int(os.environ.get("ARKLOW_HA_KILLS", "50"))
POINTS = ("describe", "resize", "resized", "publish", "renew")
CLOUD_ERRORS = {"error_rate": 0.2, "codes": [429, 503], "after_apply": 0.3}


@pytest.fixture
def store_url() -> str:
    return postgres_server.cluster().create_database()


def check_resizes(cluster: Cluster) -> list[tuple[int, int]]:
    resizes = cluster.resizes()
    assert resizes, "no resize reached the cloud"
    assert all(epoch > 0 for epoch, _ in resizes), f"a resize without its epoch: {resizes}"
    epochs = [epoch for epoch, _ in resizes]
    assert epochs == sorted(epochs), f"a resize from an older epoch after a newer one: {epochs}"
    assert all(MIG_MIN <= size <= MIG_MAX for _, size in resizes), resizes
    assert MIG_MIN <= cluster.mig_size() <= MIG_MAX
    return resizes


def armed(rng: random.Random) -> dict[str, str]:
    point = rng.choice(POINTS)
    count = rng.randint(1, 2) if point in ("resize", "resized") else rng.randint(1, 5)
    return {"ARKLOW_FAULT_POINT": f"{point}:{count}"}


def test_kill_9_of_the_leader_at_seeded_points(store_url: str, tmp_path: Path) -> None:
    rng = random.Random(11)
    with ha_cluster(store_url, tmp_path) as cluster:
        # Shorter still than the other tests: 50 take-overs, each waiting for a lease to expire.
        cluster.timing = (
            "--lease-seconds",
            "1.2",
            "--renew-deadline",
            "0.9",
            "--retry-period",
            "0.2",
        )
        cluster.interval = "0.2"
        cluster.compute.set_faults(CLOUD_ERRORS)
        for i in range(4):
            cluster.start(f"r{i}", env=armed(rng), wait=False)
        kills, started, last_kill = 0, 4, time.monotonic()
        while kills < KILLS:
            cluster.demand = rng.choice([0.0, 3.0, 9.0, 15.0, 30.0])
            for replica in list(cluster.replicas):
                if replica.process.poll() is not None and replica.name != "dead":
                    assert replica.process.returncode == -signal.SIGKILL, replica.log()
                    replica.name = "dead"
                    kills += 1
                    last_kill = time.monotonic()
                    cluster.start(f"r{started}", env=armed(rng), wait=False)
                    started += 1
            if time.monotonic() - last_kill > 90:
                pytest.fail(f"no replica hit its fault point for 90 s after {kills} kills")
            time.sleep(0.1)
        # An unarmed replica joins the (still armed) survivors: a leader is left standing.
        cluster.start("last", wait=False)
        cluster.demand = 9.0
        eventually(lambda: cluster.leaders(), "a leader after the last kill", deadline_s=120)
        resizes = check_resizes(cluster)
        assert len({epoch for epoch, _ in resizes}) > KILLS // 10  # many leaders resized, in order


def test_the_leader_cut_off_from_the_store_stops_before_its_lease_expires(
    store_url: str, tmp_path: Path
) -> None:
    with ha_cluster(store_url, tmp_path) as cluster:
        cluster.compute.set_faults(CLOUD_ERRORS)
        cut_url, proxy = cluster.proxied_url()
        first = cluster.start("cut", store_url=cut_url)
        eventually(lambda: first.leader() and first.leader()["leader"], "the first leader")  # type: ignore[index]
        # Its first tick (the cloud SDK's import: seconds on a loaded machine) done before a
        # rival starts: a leader that missed its renew deadline during it would lose the lease
        # to the rival before the cut, and the test would cut the wrong replica.
        eventually(lambda: _fresh(first), "the first leader's first published tick")
        second = cluster.start("direct")
        cluster.demand = 15.0
        eventually(lambda: cluster.mig_size() > 1, "the MIG resized by the first leader")
        old_epoch = first.get("/v1/leader")["epoch"]
        proxy.cut()
        view = eventually(
            lambda: (v := second.leader()) and v["leader"] and v, "the second replica leading"
        )
        assert view["epoch"] > old_epoch
        assert first.alive() and first.leader() == {
            "leader": False,
            "holder": None,
            "epoch": old_epoch,
        }
        assert "stopped leading" in first.log()
        cluster.demand = 30.0
        eventually(lambda: cluster.mig_size() == MIG_MAX, "the new leader resizing")
        resizes = check_resizes(cluster)
        assert {e for e, _ in resizes} == {old_epoch, view["epoch"]}
        # The deposed one, back on the store, stays a follower of the higher epoch.
        proxy.mend()
        eventually(
            lambda: (v := first.leader()) and v["epoch"] == view["epoch"] and not v["leader"],
            "the deposed replica following the new epoch",
        )


def _fresh(replica: Any) -> bool:
    """Admission served and not stale; a replica that has not read a published tick yet (503)
    is not fresh."""
    try:
        return not replica.get("/v1/admission")["stale"]
    except urllib.error.HTTPError:
        return False


def test_store_down_no_actuation_admission_stale_and_recovery(
    store_url: str, tmp_path: Path
) -> None:
    with ha_cluster(store_url, tmp_path) as cluster:
        cluster.compute.set_faults(CLOUD_ERRORS)
        a_url, a_proxy = cluster.proxied_url()
        b_url, b_proxy = cluster.proxied_url()
        a, b = cluster.start("a", store_url=a_url), cluster.start("b", store_url=b_url)
        cluster.demand = 9.0
        eventually(lambda: cluster.mig_size() > 1, "a first resize")
        for replica in (a, b):  # the follower too must have read a published tick
            eventually(lambda r=replica: _fresh(r), "fresh admission")  # type: ignore[misc]
        a_proxy.cut()
        b_proxy.cut()
        eventually(lambda: not cluster.leaders(), "no replica leading with the store down")
        before = len(cluster.resizes_log())
        for replica in (a, b):
            eventually(lambda r=replica: r.get("/v1/admission")["stale"], "stale admission")  # type: ignore[misc]
        time.sleep(3)  # a few intervals with the store down: nothing may be resized
        assert len(cluster.resizes_log()) == before
        a_proxy.mend()
        b_proxy.mend()
        eventually(lambda: len(cluster.leaders()) == 1, "a leader after the store came back")
        cluster.demand = 30.0
        eventually(lambda: cluster.mig_size() == MIG_MAX, "resizing again, without a restart")
        assert a.alive() and b.alive()
        eventually(lambda: not b.get("/v1/admission")["stale"], "fresh admission again")
        check_resizes(cluster)


@pytest.mark.parametrize("offsets", [("30", "-30")])
def test_clock_jumps_still_one_leader(
    store_url: str, tmp_path: Path, offsets: tuple[str, str]
) -> None:
    with ha_cluster(store_url, tmp_path) as cluster:
        replicas = [cluster.start(f"clock{o}", env={"ARKLOW_CLOCK_OFFSET_S": o}) for o in offsets]
        eventually(lambda: len(cluster.leaders()) == 1, "a leader")
        epochs: set[int] = set()
        for _ in range(30):
            leaders = cluster.leaders()
            assert len(leaders) <= 1, leaders
            epochs.update(e for _, e in leaders)
            time.sleep(0.1)
        assert len(epochs) == 1  # no flapping between the skewed clocks
        views = [r.leader() for r in replicas]
        assert sorted(bool(v and v["leader"]) for v in views) == [False, True]
