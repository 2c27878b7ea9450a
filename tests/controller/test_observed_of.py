"""What the tick observes of a group: in service and pending, and for a group with its own
autoscaler the minimum Arklow set, which is the count the scale policy moves."""

from __future__ import annotations

from arklow_pulumi.controller.tick.observing import observed_of
from arklow_pulumi.core.deciding import Observed
from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.supply.groups import GroupState

MIG = GroupRef(kind="gcp_mig", name="video-encoders", project="p", region="europe-west1")


def test_a_plain_group_is_moved_from_what_it_runs() -> None:
    seen = observed_of(GroupState(MIG, desired=7, in_service=5, min=0, max=None))
    assert seen == Observed(5, 2) and seen.current == 7 and seen.supply == 7


def test_an_autoscaled_group_is_moved_from_its_minimum() -> None:
    state = GroupState(MIG, desired=7, in_service=7, min=6, max=12, autoscaler=True)
    seen = observed_of(state)
    assert (seen.current, seen.supply, seen.asked) == (6, 7, 6)
    assert observed_of(state, seen) is seen  # a steady group makes no new value
    assert observed_of(GroupState(MIG, 7, 7, min=5, max=12, autoscaler=True), seen).asked == 5
