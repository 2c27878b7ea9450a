"""The AWS binding against a moto server reached through AWS_ENDPOINT_URL."""

from __future__ import annotations

import pickle
from functools import partial
from typing import Any

import dill
import pytest
from botocore.awsrequest import AWSResponse

from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.supply import aws
from arklow_pulumi.supply.aws import AwsAsgSupply, map_aws_error
from arklow_pulumi.supply.errors import (
    GroupNotFound,
    OutOfBounds,
    PermanentSupplyError,
    PolicyConflict,
    TemporarySupplyError,
)
from arklow_pulumi.supply.groups import ReplicaLimits
from arklow_pulumi.supply.retrying import Retrier, RetryPolicy
from tests import aws_moto
from tests.supply.conftest import REGION, FakeClock, count_calls, make_asg, set_size


def ref(name: str) -> GroupRef:
    return GroupRef("aws_asg", name, region=REGION)


def desired_of(client: Any, name: str) -> int:
    groups = client.describe_auto_scaling_groups(AutoScalingGroupNames=[name])
    return int(groups["AutoScalingGroups"][0]["DesiredCapacity"])


def busy_response() -> tuple[AWSResponse, dict[str, Any]]:
    """What botocore would have parsed from a ScalingActivityInProgress reply."""
    error = {"Code": "ScalingActivityInProgress", "Message": "an activity is in progress"}
    meta = {"HTTPStatusCode": 400}
    return AWSResponse("", 400, {}, None), {"Error": error, "ResponseMetadata": meta}


def fast() -> AwsAsgSupply:
    return AwsAsgSupply(REGION, retry=RetryPolicy(deadline=2.0, base=0.01, cap=0.05))


def test_uses_aws_endpoint_url_from_the_environment(asg: Any, aws_env: dict[str, str]) -> None:
    supply = fast()
    assert supply._client(REGION).meta.endpoint_url == aws_env["AWS_ENDPOINT_URL"]


def test_describe_reports_sizes_bounds_policies_and_protection(asg: Any) -> None:
    make_asg(asg, "web", 1, 5, 2)
    make_asg(asg, "batch", 0, 10, 0)
    asg.put_scaling_policy(
        AutoScalingGroupName="web",
        PolicyName="cpu50",
        PolicyType="TargetTrackingScaling",
        TargetTrackingConfiguration={
            "PredefinedMetricSpecification": {"PredefinedMetricType": "ASGAverageCPUUtilization"},
            "TargetValue": 50.0,
        },
    )
    asg.put_scheduled_update_group_action(
        AutoScalingGroupName="batch",
        ScheduledActionName="nightly",
        Recurrence="0 2 * * *",
        DesiredCapacity=3,
    )
    instances = asg.describe_auto_scaling_groups(AutoScalingGroupNames=["web"])
    ids = [i["InstanceId"] for i in instances["AutoScalingGroups"][0]["Instances"]]
    asg.set_instance_protection(
        AutoScalingGroupName="web", InstanceIds=ids, ProtectedFromScaleIn=True
    )

    states = fast().describe([ref("web"), ref("batch"), ref("missing")])

    web, batch = states[ref("web")], states[ref("batch")]
    assert ref("missing") not in states
    assert (web.desired, web.in_service, web.pending, web.min, web.max) == (2, 2, 0, 1, 5)
    assert web.policies == ("cpu50",) and web.scheduled_actions == ()
    assert web.scale_in_protected and web.stable and not web.autoscaler
    assert (batch.desired, batch.min, batch.max, batch.policies) == (0, 0, 10, ())
    assert batch.scheduled_actions == ("nightly",) and not batch.scale_in_protected


def test_describe_batches_100_names_per_call(asg: Any) -> None:
    for k in range(230):
        make_asg(asg, f"g{k:03d}", 0, 3, 0)
    supply = fast()
    calls = count_calls(supply._client(REGION))
    states = supply.describe([ref(f"g{k:03d}") for k in range(230)], detail=False)
    assert len(states) == 230
    assert calls == {"DescribeAutoScalingGroups": 3}


def test_set_changes_desired_only_when_it_differs(asg: Any) -> None:
    make_asg(asg, "web", 1, 5, 2)
    supply = fast()
    calls = count_calls(supply._client(REGION))

    result = set_size(supply, ref("web"), 4)
    assert (result.previous, result.desired, result.method) == (2, 4, "set_desired_capacity")
    assert desired_of(asg, "web") == 4
    assert calls["SetDesiredCapacity"] == 1

    again = set_size(supply, ref("web"), 4)
    assert again.method == "unchanged" and not again.changed
    assert calls["SetDesiredCapacity"] == 1


@pytest.mark.parametrize(
    ("replicas", "limits", "whose"),
    [
        (6, None, "group's"),  # above MaxSize 5
        (0, None, "group's"),  # below MinSize 1
        (4, ReplicaLimits(1, 3), "target's"),  # inside the group, outside the target
        (1, ReplicaLimits(2, 5), "target's"),
    ],
)
def test_out_of_bounds_is_refused_without_a_write(
    asg: Any, replicas: int, limits: ReplicaLimits | None, whose: str
) -> None:
    make_asg(asg, "web", 1, 5, 2)
    supply = fast()
    calls = count_calls(supply._client(REGION))
    with pytest.raises(OutOfBounds, match=whose):
        set_size(supply, ref("web"), replicas, limits=limits)
    assert calls["SetDesiredCapacity"] == 0
    assert desired_of(asg, "web") == 2


def test_moto_alone_would_accept_out_of_bounds(asg: Any) -> None:
    """Why the project enforces bounds: the fake (like a lax API) takes any value."""
    make_asg(asg, "web", 1, 5, 2)
    asg.set_desired_capacity(AutoScalingGroupName="web", DesiredCapacity=50)
    assert desired_of(asg, "web") == 50


def test_group_with_policies_is_a_conflict_unless_overridden(asg: Any) -> None:
    make_asg(asg, "web", 1, 5, 2)
    aws_moto.add_step_policy(asg, "web", "step-up")
    supply = fast()
    calls = count_calls(supply._client(REGION))
    with pytest.raises(PolicyConflict, match="step-up"):
        set_size(supply, ref("web"), 3)
    assert calls["SetDesiredCapacity"] == 0

    result = set_size(supply, ref("web"), 3, ReplicaLimits(override_policies=True))
    assert result.method == "set_desired_capacity"
    assert any("step-up" in w for w in result.warnings)
    assert desired_of(asg, "web") == 3


def test_missing_group_is_group_not_found(asg: Any) -> None:
    with pytest.raises(GroupNotFound):
        set_size(fast(), ref("nope"), 1)


def test_scaling_activity_in_progress_is_retried_until_it_clears(asg: Any) -> None:
    make_asg(asg, "web", 1, 5, 2)
    supply = fast()
    client = supply._client(REGION)
    failures = {"left": 2}

    def busy(model: Any, **_: Any) -> Any:
        if model.name == "SetDesiredCapacity" and failures["left"]:
            failures["left"] -= 1
            return busy_response()
        return None

    client.meta.events.register("before-call", busy)
    result = set_size(supply, ref("web"), 3)
    assert result.desired == 3 and failures["left"] == 0
    assert supply.api_calls["set_desired_capacity"] == 3
    assert desired_of(asg, "web") == 3


def test_retries_stop_at_the_deadline_and_chain_the_sdk_error(
    asg: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_asg(asg, "web", 1, 5, 2)
    # The attempts' cap is far past what 0.2 s of sleeps of at most 0.05 s allow: the deadline
    # is what stops the retries (counted, not timed).
    # Its clock moves only by the retries' sleeps, however long each call to moto takes.
    policy = RetryPolicy(deadline=0.2, base=0.05, cap=0.05, max_attempts=1000)
    clock = FakeClock()
    monkeypatch.setattr(aws, "Retrier", partial(Retrier, clock=clock, sleep=clock.sleep))
    supply = AwsAsgSupply(REGION, retry=policy)
    client = supply._client(REGION)

    def always_busy(model: Any, **_: Any) -> Any:
        if model.name == "SetDesiredCapacity":
            return busy_response()
        return None

    client.meta.events.register("before-call", always_busy)
    with pytest.raises(TemporarySupplyError) as info:
        set_size(supply, ref("web"), 3)
    from botocore.exceptions import ClientError

    assert isinstance(info.value.__cause__, ClientError)
    assert 2 <= supply.api_calls["set_desired_capacity"] < policy.max_attempts
    assert (
        clock.now <= policy.deadline
        and len(clock.sleeps) == supply.api_calls["set_desired_capacity"] - 1
    )
    assert desired_of(asg, "web") == 2


def test_error_mapping() -> None:
    from botocore.exceptions import ClientError, EndpointConnectionError

    def client_error(code: str, status: int) -> ClientError:
        return ClientError(
            {
                "Error": {"Code": code, "Message": "m"},
                "ResponseMetadata": {"HTTPStatusCode": status},
            },
            "SetDesiredCapacity",
        )

    r = ref("web")
    assert isinstance(map_aws_error(client_error("Throttling", 400), r), TemporarySupplyError)
    assert isinstance(map_aws_error(client_error("InternalFailure", 500), r), TemporarySupplyError)
    assert isinstance(map_aws_error(client_error("AccessDenied", 403), r), PermanentSupplyError)
    not_found = ClientError(
        {"Error": {"Code": "ValidationError", "Message": "AutoScalingGroup name not found"}},
        "SetDesiredCapacity",
    )
    assert isinstance(map_aws_error(not_found, r), GroupNotFound)
    unreachable = EndpointConnectionError(endpoint_url="http://127.0.0.1:1")
    assert isinstance(map_aws_error(unreachable, r), TemporarySupplyError)


def test_supply_pickles_with_dill_without_its_client(asg: Any) -> None:
    make_asg(asg, "web", 1, 5, 2)
    supply = fast()
    supply.describe([ref("web")])
    assert len(supply._clients) == 1
    copy = dill.loads(dill.dumps(supply))
    assert len(copy._clients) == 0 and copy.region == REGION
    assert copy.describe([ref("web")])[ref("web")].desired == 2
    assert pickle.loads(pickle.dumps(supply)).region == REGION
