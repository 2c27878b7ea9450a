"""The shared topology documents: one shape per value, read back to the same value."""

from __future__ import annotations

import json

from arklow_pulumi.core.policy import ScalePolicy
from arklow_pulumi.core.topology import Destination, GroupRef, Lane, Pool, ScaleTarget
from arklow_pulumi.reading.spec import policy_from_document
from arklow_pulumi.topology_documents import (
    destination_document,
    lane_document,
    lane_from_document,
    pool_document,
    target_document,
)


def test_lanes_read_back_as_they_were_written_through_json() -> None:
    lanes = [Lane("d", "a", 16.0, weight=3.0), Lane("d", "b", 2.5, cost={"gpu": 2.0})]
    for lane in lanes:
        doc = json.loads(json.dumps(lane_document(lane)))
        assert lane_from_document("d", doc) == lane
    assert lane_document(lanes[0])["cost"] is None  # no cost is None, never {}


def test_destination_document_holds_its_lanes_and_standalone_capacity() -> None:
    dest = Destination("d", ("gpu",), (Lane("d", "a", 4.0),), standalone_capacity={"gpu": 2.0})
    assert destination_document(dest) == {
        "resources": ["gpu"],
        "lanes": [{"name": "a", "limit": 4.0, "weight": 1.0, "cost": None}],
        "standalone_capacity": {"gpu": 2.0},
    }


def test_pool_document_keeps_only_the_policy_fields_that_differ() -> None:
    assert pool_document(Pool("p", "gpu"))["scale_policy"] is None
    policy = ScalePolicy(max_step_up=2, tolerance=0.2)
    doc = pool_document(Pool("p", "gpu", capacity=3.0, scale_policy=policy))
    assert doc == {
        "resource": "gpu",
        "capacity": 3.0,
        "headroom": 0.1,
        "scale_policy": {"max_step_up": 2, "tolerance": 0.2},
    }
    assert policy_from_document(doc["scale_policy"]) == policy


def test_target_document_names_its_group_in_full() -> None:
    group = GroupRef("gcp_mig", "mig", zone="us-central1-a", project="p1")
    doc = target_document(ScaleTarget("t", group, 1, 5, 8.0, 2))
    assert doc["group"] == {
        "kind": "gcp_mig",
        "name": "mig",
        "region": None,
        "zone": "us-central1-a",
        "project": "p1",
    }
    assert (doc["min_replicas"], doc["max_replicas"], doc["replicas"]) == (1, 5, 2)
