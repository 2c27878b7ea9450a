"""The Compute API test server's autoscaler acts as Compute Engine's does within its bounds:
scale-out to its recommendation at once, scale-in only as far as the highest recommendation of the
last 10 minutes. Pure tests of the model on a fake clock, then one through the real HTTP server
and the real GCP binding."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.devservers.compute import ComputeServer
from arklow_pulumi.devservers.compute_model import STABILIZATION_S, World
from arklow_pulumi.devservers.compute_values import ApiError
from arklow_pulumi.supply.gcp import GcpMigSupply
from arklow_pulumi.supply.groups import ReplicaLimits
from arklow_pulumi.supply.retrying import RetryPolicy
from tests.supply.conftest import set_size

P, R = "arklow-dev", "regions/europe-west1"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def world_with_group(size: int, low: int, high: int, mode: str = "ON") -> tuple[World, Clock]:
    clock = Clock()
    world = World(op_delay=0.0, settle_delay=0.0, clock=clock)
    world.add_group(P, R, "video", size, {"min": low, "max": high, "mode": mode})
    return world, clock


def window(world: World, low: int, high: int | None = None) -> None:
    """Move the autoscaler's bounds as the GCP binding does (a PATCH of minNumReplicas)."""
    policy = {"minNumReplicas": low} | ({} if high is None else {"maxNumReplicas": high})
    world.patch_autoscaler(P, R, "video-autoscaler", {"autoscalingPolicy": policy}, None)


def size_at(world: World, clock: Clock, after_s: float) -> int:
    clock.now += after_s
    world.autoscale()
    return world.mig(P, R, "video").target_size


def test_a_raised_minimum_scales_out_at_once() -> None:
    world, _ = world_with_group(2, 2, 12)
    window(world, 7)
    assert world.mig(P, R, "video").target_size == 7


def test_a_lowered_minimum_scales_in_after_the_stabilization_period() -> None:
    """The dev day's autoscaled group: Arklow moves the minimum 7 -> 6; the group keeps 7 for
    10 minutes, then goes to 6 (it never stays above a minimum that is no longer wanted)."""
    world, clock = world_with_group(2, 2, 12)
    window(world, 7)
    clock.now += 60
    window(world, 6)
    assert size_at(world, clock, 0) == 7
    assert size_at(world, clock, STABILIZATION_S - 1) == 7
    assert size_at(world, clock, 1) == 6


@pytest.mark.parametrize(
    ("minimums", "sizes"),
    [
        # minimum 8 at 0 s, 5 at 300 s, 3 at 600 s: each step down shows 10 minutes after the
        # higher minimum stopped being in force
        ([(0, 8), (300, 5), (600, 3)], [(600, 8), (899, 8), (900, 5), (1199, 5), (1200, 3)]),
        # a brief dip does not scale in: the window still holds the higher recommendation
        ([(0, 6), (120, 4), (240, 6)], [(240, 6), (719, 6), (720, 6), (2000, 6)]),
        # a rise during a pending scale-in is followed at once
        ([(0, 8), (60, 3), (120, 10)], [(120, 10), (719, 10), (720, 10)]),
    ],
)
def test_scale_in_takes_the_highest_recommendation_of_the_last_10_minutes(
    minimums: list[tuple[float, int]], sizes: list[tuple[float, int]]
) -> None:
    world, clock = world_with_group(2, 2, 12)
    start = clock.now
    for at, low in minimums:
        clock.now = start + at
        window(world, low)
    seen = [(at, size_at(world, clock, start + at - clock.now)) for at, _ in sizes]
    assert seen == sizes


def test_the_size_it_was_attached_at_counts_as_a_recommendation() -> None:
    world, clock = world_with_group(5, 2, 12)  # idle VMs: it recommends its minimum, 2
    assert size_at(world, clock, STABILIZATION_S - 1) == 5
    assert size_at(world, clock, 1) == 2


def test_the_signal_is_followed_within_the_bounds() -> None:
    world, clock = world_with_group(2, 2, 6)
    world.set_signal(P, R, "video-autoscaler", 4)
    assert world.mig(P, R, "video").target_size == 4
    world.set_signal(P, R, "video-autoscaler", 50)
    assert world.mig(P, R, "video").target_size == 6  # never above max
    world.set_signal(P, R, "video-autoscaler", 0)
    assert size_at(world, clock, STABILIZATION_S) == 2  # never below min
    with pytest.raises(ApiError, match="size"):
        world.set_signal(P, R, "video-autoscaler", -1)


def test_a_lowered_maximum_applies_at_once() -> None:
    world, _ = world_with_group(2, 2, 12)
    window(world, 9)
    window(world, 2, 4)
    assert world.mig(P, R, "video").target_size == 4


@pytest.mark.parametrize(("mode", "want"), [("ONLY_SCALE_OUT", 7), ("OFF", 7)])
def test_modes_that_never_scale_in(mode: str, want: int) -> None:
    world, clock = world_with_group(2, 2, 12)
    window(world, 7)
    world.patch_autoscaler(P, R, "video-autoscaler", {"autoscalingPolicy": {"mode": mode}}, None)
    window(world, 3)
    assert size_at(world, clock, 2 * STABILIZATION_S) == want


def test_the_history_keeps_only_the_window() -> None:
    world, clock = world_with_group(2, 1, 50)
    for low in range(2, 40):
        clock.now += 60
        window(world, low)
    scaler = world.autoscaler_of(world.mig(P, R, "video"))
    assert scaler is not None and len(scaler.history) <= STABILIZATION_S / 60 + 1


def test_skip_moves_time_forward_only() -> None:
    world, clock = world_with_group(2, 2, 12)
    world.skip(30)
    assert world.now() == clock.now + 30
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ApiError):
            world.skip(bad)


# -- through the HTTP server and the GCP binding ---------------------------------------------


def admin(server: ComputeServer, path: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        f"{server.url}{path}",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def test_scale_in_through_the_server_and_the_binding() -> None:
    server = ComputeServer(port=0, op_delay=0.01, settle_delay=0.05).start()
    try:
        server.add_group(
            {
                "project": P,
                "region": "europe-west1",
                "name": "video",
                "targetSize": 2,
                "autoscaler": {"min": 2, "max": 12},
            }
        )
        ref = GroupRef("gcp_mig", "video", region="europe-west1", project=P)
        supply = GcpMigSupply(server.url, RetryPolicy(deadline=5.0, base=0.01, cap=0.05))
        limits = ReplicaLimits(2, 12)

        def described() -> tuple[int, int, int | None]:
            admin(server, "/_admin/clock", {"skip": 1})  # past the settling
            state = supply.describe([ref])[ref]
            return state.desired, state.in_service, state.min

        assert set_size(supply, ref, 7, limits).method == "autoscaler_window"
        assert described() == (7, 7, 7)
        set_size(supply, ref, 6, limits)
        assert described() == (7, 7, 6)  # the autoscaler keeps 7 for its stabilization period
        admin(server, "/_admin/clock", {"skip": STABILIZATION_S - 60})
        assert described() == (7, 7, 6)
        admin(server, "/_admin/clock", {"skip": 60})
        assert described() == (6, 6, 6)
        answer = admin(
            server,
            "/_admin/signal",
            {"project": P, "region": "europe-west1", "name": "video-autoscaler", "size": 9},
        )
        assert answer == {"name": "video-autoscaler", "recommendation": 9}
        assert described() == (9, 9, 6)  # its own signal runs it above Arklow's minimum
    finally:
        server.stop()
