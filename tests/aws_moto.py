"""A moto server for AWS Auto Scaling on 127.0.0.1, as tests, e2e runs and benchmarks use it.

Reached only through ``AWS_ENDPOINT_URL``, exactly as a user's process (or a Pulumi provider
process) would reach AWS. Arranging state uses a raw boto3 client, never the project's code.
"""

from __future__ import annotations

import functools
import logging
import urllib.request
from typing import Any

REGION = "us-east-1"
LAUNCH_CONFIGURATION = "lc"


def start_server() -> tuple[Any, str]:
    """A started ``ThreadedMotoServer`` on a free port, and its URL."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    return server, f"http://{host}:{port}"


def reset(url: str) -> None:
    urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST"))


def aws_env(url: str) -> dict[str, str]:
    """The environment that points AWS tools at the server."""
    return {
        "AWS_ENDPOINT_URL": url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }


@functools.cache
def _session() -> Any:
    """One boto3 session for the process's raw clients: a session reads and parses botocore's
    service and endpoint models (JSON) for its first client, tens of milliseconds a test."""
    import boto3

    return boto3.session.Session()


def autoscaling_client(url: str) -> Any:
    """A raw boto3 client on the server, with the launch configuration groups are made from."""
    client = _session().client(
        "autoscaling",
        region_name=REGION,
        endpoint_url=url,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    client.create_launch_configuration(
        LaunchConfigurationName=LAUNCH_CONFIGURATION,
        ImageId="ami-12345678",
        InstanceType="t3.micro",
    )
    return client


def make_asg(client: Any, name: str, low: int, high: int, desired: int | None = None) -> None:
    client.create_auto_scaling_group(
        AutoScalingGroupName=name,
        LaunchConfigurationName=LAUNCH_CONFIGURATION,
        MinSize=low,
        MaxSize=high,
        DesiredCapacity=low if desired is None else desired,
        AvailabilityZones=[f"{REGION}a"],
    )


def add_step_policy(client: Any, group: str, name: str) -> None:
    """A simple scaling policy on ``group`` (one more instance when it fires): a group Arklow
    leaves alone unless its target overrides policies."""
    client.put_scaling_policy(
        AutoScalingGroupName=group,
        PolicyName=name,
        PolicyType="SimpleScaling",
        AdjustmentType="ChangeInCapacity",
        ScalingAdjustment=1,
    )
