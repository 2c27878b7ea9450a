"""Leader election and fencing, piece by piece, on the real PostgreSQL (and moto behind a logging
proxy for the AWS tag). The whole processes under faults are in test_ha_faults.py."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from arklow_pulumi.controller.leadership.electing import LeaseElector, LeaseTiming
from arklow_pulumi.controller.ports import LeaderCallbacks
from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.store.engine import Store, close_stores, open_store
from arklow_pulumi.store.runtime import Lease, LeaseLost, read_lease, renew_lease
from arklow_pulumi.supply import fencing
from tests import aws_moto
from tests.controller.ha_proxy import LoggingProxy
from tests.store import postgres_server

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_store() -> Iterator[Store]:
    yield open_store(postgres_server.cluster().create_database())
    close_stores()


class Ticker:
    """A monotonic clock that moves only when told."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def elector(store: Store, name: str, ticker: Ticker, events: list[str]) -> LeaseElector:
    made = LeaseElector(
        store,
        f"host:{name}:0000",
        LeaseTiming(lease_s=1.0, renew_deadline_s=0.6, retry_s=0.2),
        monotonic=ticker,
    )
    made.callbacks = LeaderCallbacks(  # what run() sets; the tests drive the rounds by hand
        started=lambda lease: events.append(f"{name} started {lease.epoch}"),
        stopped=lambda lease: events.append(f"{name} stopped {lease.epoch}"),
    )
    return made


@pytest.mark.parametrize(
    ("lease", "renew", "retry", "field"),
    [(3, 3, 1, "renew_deadline"), (3, 4, 1, "renew_deadline"), (3, 2, 2, "retry_period")],
)
def test_lease_timing_is_validated(lease: float, renew: float, retry: float, field: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        LeaseTiming(lease, renew, retry).check()
    assert f"field '{field}'" in str(caught.value) or field in str(caught.value)
    assert LeaseTiming().check() == LeaseTiming(15.0, 10.0, 2.0)


def test_bad_lease_timing_is_one_line_and_exit_2(tmp_path: Path) -> None:
    arklow = str(Path(sys.executable).with_name("arklow"))
    done = subprocess.run(
        [
            *(arklow, "controller", "run", "--store", f"sqlite:///{tmp_path / 'a.db'}"),
            *("--lease-seconds", "3", "--renew-deadline", "2", "--retry-period", "2"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1
    assert "--retry-period" in done.stderr
    assert not (tmp_path / "a.db").exists()  # nothing stored


def test_one_leader_a_missed_deadline_stops_it_and_a_take_over_bumps_the_epoch(
    pg_store: Store,
) -> None:
    events: list[str] = []
    ta, tb = Ticker(), Ticker()
    a, b = elector(pg_store, "a", ta, events), elector(pg_store, "b", tb, events)
    a._round()
    b._round()
    held = a.leading()
    assert held is not None and held.epoch == 1 and b.leading() is None
    assert b.view().holder == held.holder and not b.view().leader
    # a cannot renew in time (its monotonic clock passes the deadline): it stops at once,
    # before the lease expires by the database clock, so b cannot take it yet.
    ta.now += 0.7
    assert a.leading() is None
    assert events == ["a started 1", "a stopped 1"]
    b._round()
    assert b.leading() is None
    time.sleep(1.1)  # the lease expires by the database clock
    b._round()
    taken = b.leading()
    assert taken is not None and taken.epoch == 2
    # a's old lease is fenced: its renewal (and so any fenced write) writes nothing.
    with pytest.raises(LeaseLost):
        renew_lease(pg_store, held)
    # a, back, stays a follower while b renews; b's renewals keep it leading.
    for _ in range(3):
        tb.now += 0.3
        b._round()
        a._round()
    assert b.leading() == taken and a.leading() is None
    assert read_lease(pg_store).epoch == 2


def test_a_replica_that_stepped_down_leads_again_only_with_a_new_epoch(pg_store: Store) -> None:
    events: list[str] = []
    ticker = Ticker()
    a = elector(pg_store, "a", ticker, events)
    a._round()
    first = a.leading()
    assert first is not None
    ticker.now += 0.7  # missed its deadline
    assert a.leading() is None
    time.sleep(1.1)
    a._round()
    again = a.leading()
    assert again is not None and again.epoch == first.epoch + 1


def test_gcp_request_ids_carry_epoch_tick_group_and_count() -> None:
    token = fencing.Token(epoch=4, tick=17)
    rid = fencing.request_id(token, "gcp_mig:p/z/g", 3)
    assert uuid.UUID(rid).version == 5
    assert rid == fencing.request_id(fencing.Token(4, 17), "gcp_mig:p/z/g", 3)  # retries
    others = {
        fencing.request_id(fencing.Token(5, 17), "gcp_mig:p/z/g", 3),
        fencing.request_id(fencing.Token(4, 18), "gcp_mig:p/z/g", 3),
        fencing.request_id(token, "gcp_mig:p/z/h", 3),
        fencing.request_id(token, "gcp_mig:p/z/g", 4),
    }
    assert rid not in others and len(others) == 4


def test_aws_resizes_say_their_epoch_in_the_request_log() -> None:
    from arklow_pulumi.supply.aws import AwsAsgSupply
    from arklow_pulumi.supply.reconciling import reconcile_pass
    from arklow_pulumi.supply.routing import SupplyRouter

    server, url = aws_moto.start_server()
    proxy = LoggingProxy(url)
    try:
        client = aws_moto.autoscaling_client(url)
        aws_moto.make_asg(client, "fenced", 0, 5, 1)
        with pytest.MonkeyPatch.context() as env:
            for key, value in aws_moto.aws_env(proxy.url).items():
                env.setenv(key, value)
            supply = SupplyRouter.of(AwsAsgSupply(region=aws_moto.REGION, endpoint_url=proxy.url))
            ref = GroupRef("aws_asg", "fenced", region=aws_moto.REGION)
            with fencing.acting_under(7, 3):
                reconcile_pass(supply, {ref: 3}).result(ref)
            reconcile_pass(supply, {ref: 2}).result(ref)  # outside the controller: no tag
        sets = [e for e in proxy.log if e["action"] == "SetDesiredCapacity"]
        assert len(sets) == 2
        assert sets[0]["user_agent"].endswith(" arklow-epoch/7")
        assert "arklow-epoch" not in sets[1]["user_agent"]
        group = client.describe_auto_scaling_groups(AutoScalingGroupNames=["fenced"])
        assert group["AutoScalingGroups"][0]["DesiredCapacity"] == 2
    finally:
        proxy.stop()
        server.stop()


def test_lease_row_is_judged_by_the_database_clock(pg_store: Store) -> None:
    from arklow_pulumi.store.runtime import acquire_lease

    held = acquire_lease(pg_store, "x:1:a", 30.0)
    assert held == Lease("x:1:a", 1)
    # Another replica, whatever its own clock says, cannot take a lease renewed just now.
    assert acquire_lease(pg_store, "y:2:b", 30.0) is None
    # Expired (a negative TTL: no reliance on the clock moving between two statements).
    assert acquire_lease(pg_store, "y:2:b", -1.0) == Lease("y:2:b", 2)
