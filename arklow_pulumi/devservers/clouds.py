"""Local clouds for a stack: a moto server (AWS Auto Scaling) and the Compute API test server (GCP
MIGs) on loopback, holding the groups the stack's scale targets name.

The groups are made so that ``pulumi up`` of the stack passes its target checks: an ASG has
``MinSize`` 0 and ``MaxSize`` the largest ``max_replicas`` of the targets naming it, and starts at
the target's ``replicas``. A MIG has no bounds of its own; one listed under the stack config key
``arklow:devClouds: {autoscaled: [<target name>, ...]}`` gets an autoscaler (mode ON, min and max
the target's), so the binding moves the autoscaler's minimum instead of resizing it.

Beside the stack's groups, the groups of the project's examples: each
``examples/<name>/topology.yaml`` (the topology its program declares) and, for the MIGs among
them that get an autoscaler, ``examples/<name>/dev-clouds.yaml`` (``{autoscaled: [<target
name>, ...]}``, as the stack key). A
group named by the stack and by an example fits both (:func:`merge_groups`), so each example's
``pulumi up`` passes on the same clouds as the dev stack's.

Nothing here is needed against real clouds: it is what ``arklow dev clouds`` and ``make run``
start, and what the README's Pulumi section reaches through the environment it prints.
"""

from __future__ import annotations

import logging
import shlex
import socket
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arklow_pulumi.core.errors import InvalidInput
from arklow_pulumi.core.topology import ScaleTarget, Topology
from arklow_pulumi.extras import require
from arklow_pulumi.reading.files import read_document

AWS_REGION = "us-east-1"
GCP_PROJECT = "arklow-dev"
LAUNCH_CONFIGURATION = "arklow-dev"
# Credentials moto accepts; never real ones.
TEST_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}


@dataclass(frozen=True, slots=True)
class AsgSpec:
    name: str
    region: str
    max_size: int
    desired: int


@dataclass(frozen=True, slots=True)
class MigSpec:
    name: str
    project: str
    zone: str | None
    region: str | None
    size: int
    autoscaler: tuple[int, int] | None  # (min, max) of an attached autoscaler

    def admin_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"project": self.project, "name": self.name, "targetSize": self.size}
        body.update({"zone": self.zone} if self.zone else {"region": self.region})
        if self.autoscaler is not None:
            low, high = self.autoscaler
            body["autoscaler"] = {"min": low, "max": high, "mode": "ON"}
        return body


@dataclass(frozen=True, slots=True)
class StackGroups:
    """The cloud groups one stack's scale targets name."""

    asgs: tuple[AsgSpec, ...]
    migs: tuple[MigSpec, ...]


# -- reading a stack ---------------------------------------------------------------------------


def stack_config_path(project_dir: Path, stack: str) -> Path:
    return project_dir / "stacks" / f"Pulumi.{stack}.yaml"


def committed_settings(project_dir: Path, stack: str) -> tuple[str, str | None]:
    """The stack's settings file as text, and a note when it is not in the working tree.

    ``pulumi stack rm`` (which ``pulumi destroy`` suggests) deletes the stack's settings file,
    tracked or not. The main job and the local clouds read the stack's committed settings, so
    when the file is gone they take git's committed copy (``HEAD``) instead, and say so; nothing
    is written back."""
    path = stack_config_path(project_dir, stack)
    if path.is_file():
        return path.read_text(encoding="utf-8"), None
    relative = path.relative_to(project_dir).as_posix()
    try:
        shown = subprocess.run(
            ["git", "show", f"HEAD:{relative}"],
            cwd=project_dir,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        shown = None
    if shown is None or shown.returncode != 0:
        raise InvalidInput.one(f"stack '{stack}'", "(file)", f"no stack config {str(path)!r}")
    note = (
        f"{relative} is not in the working tree (`pulumi stack rm {stack}` deletes it): "
        f"using the committed one; `git checkout -- {relative}` puts it back"
    )
    return shown.stdout, note


def load_stack(
    project_dir: Path, stack: str, say: Callable[[str], None] | None = None
) -> tuple[Topology, frozenset[str]]:
    """The stack's topology (``arklow:topology``), and which targets ``arklow:devClouds``
    gives an autoscaler; from :func:`committed_settings` (``say`` gets its note)."""
    from arklow_pulumi.reading.parsing import parse_topology
    from arklow_pulumi.reading.spec import build_topology
    from arklow_pulumi.reading.text import MalformedDocument, parse_document

    path = stack_config_path(project_dir, stack)
    source = f"stack '{stack}'"
    text, note = committed_settings(project_dir, stack)
    if note is not None and say is not None:
        say(note)
    try:
        document = parse_document(text)
    except MalformedDocument as exc:
        raise InvalidInput.one(f"stack config file {str(path)!r}", "(yaml)", str(exc)) from exc
    config = document.get("config") if isinstance(document, dict) else None
    if not isinstance(config, dict) or "arklow:topology" not in config:
        raise InvalidInput.one(source, "arklow:topology", f"missing in {str(path)!r}")
    spec = parse_topology(config["arklow:topology"], f"{source} 'arklow:topology'")
    return build_topology(spec), _autoscaled(config.get("arklow:devClouds"), source)


def _autoscaled(raw: object, source: str) -> frozenset[str]:
    if raw is None:
        return frozenset()
    names = raw.get("autoscaled") if isinstance(raw, dict) else None
    extra = set(raw) - {"autoscaled"} if isinstance(raw, dict) else set()
    if not isinstance(names, list) or extra or not all(isinstance(n, str) for n in names):
        raise InvalidInput.one(
            source, "arklow:devClouds", "must be {autoscaled: [<scale target name>, ...]}"
        )
    return frozenset(names)


def stack_groups(topology: Topology, autoscaled: Iterable[str] = ()) -> StackGroups:
    """One group per distinct reference; a group named by several targets fits all of them."""
    wanted = set(autoscaled)
    targets = [t for pool in topology.pools.values() for t in pool.scale_targets]
    unknown = wanted - {t.name for t in targets if t.kind == "gcp_mig"}
    if unknown:
        raise InvalidInput.one(
            "arklow:devClouds",
            "autoscaled",
            f"no gcp_mig scale target named {sorted(unknown)[0]!r}",
        )
    by_group: dict[Any, list[ScaleTarget]] = {}
    for target in targets:
        by_group.setdefault(target.group, []).append(target)
    asgs: list[AsgSpec] = []
    migs: list[MigSpec] = []
    for ref, named in sorted(by_group.items()):
        high = max(t.max_replicas for t in named)
        start = max(t.replicas for t in named)
        if ref.kind == "aws_asg":
            asgs.append(AsgSpec(ref.name, ref.region or AWS_REGION, high, start))
            continue
        scaled = [t for t in named if t.name in wanted]
        window = (min(t.min_replicas for t in scaled), high) if scaled else None
        migs.append(
            MigSpec(ref.name, ref.project or GCP_PROJECT, ref.zone, ref.region, start, window)
        )
    return StackGroups(tuple(asgs), tuple(migs))


def example_groups(project_dir: Path) -> list[StackGroups]:
    """The groups of each example under ``project_dir/examples`` (see the module doc)."""
    from arklow_pulumi.reading.files import load_topology

    found = []
    for topology_file in sorted((project_dir / "examples").glob("*/topology.yaml")):
        extra = topology_file.with_name("dev-clouds.yaml")
        source = f"example {topology_file.parent.name!r}"
        raw = read_document(extra, "dev clouds file") if extra.is_file() else None
        found.append(stack_groups(load_topology(topology_file), _autoscaled(raw, source)))
    return found


def merge_groups(*parts: StackGroups) -> StackGroups:
    """One group per reference over ``parts``: the largest ``MaxSize``, the first part's start
    (the stack's, given first: an example never changes where the dev stack's groups start); a
    MIG's autoscaler window wide enough for every part that gives it one."""
    asgs: dict[tuple[str, str], AsgSpec] = {}
    migs: dict[tuple[str, str | None, str | None, str], MigSpec] = {}
    for part in parts:
        for a in part.asgs:
            seen = asgs.get((a.region, a.name))
            if seen is not None:
                a = AsgSpec(a.name, a.region, max(a.max_size, seen.max_size), seen.desired)
            asgs[(a.region, a.name)] = a
        for m in part.migs:
            key = (m.project, m.zone, m.region, m.name)
            seen_mig = migs.get(key)
            if seen_mig is not None:
                windows = [w for w in (m.autoscaler, seen_mig.autoscaler) if w is not None]
                window = (
                    (min(w[0] for w in windows), max(w[1] for w in windows)) if windows else None
                )
                m = MigSpec(m.name, m.project, m.zone, m.region, seen_mig.size, window)
            migs[key] = m
    return StackGroups(
        tuple(asgs[k] for k in sorted(asgs)),
        tuple(migs[k] for k in sorted(migs, key=str)),
    )


# -- the servers -------------------------------------------------------------------------------


class LocalClouds:
    """Both servers, started together and stopped together (a context manager)."""

    def __init__(self, host: str = "127.0.0.1", aws_port: int = 0, gcp_port: int = 0) -> None:
        self.host = host
        self.aws_port = aws_port
        self.gcp_port = gcp_port
        self._moto: Any = None
        self._compute: Any = None
        self.aws_url = ""
        self.gcp_url = ""

    def start(self) -> LocalClouds:
        require("local-clouds", "the local clouds (arklow dev clouds, make run)")
        from moto.server import ThreadedMotoServer

        from arklow_pulumi.devservers.compute import ComputeServer

        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        # moto's server binds in its own thread and waits for ever if that fails: check first.
        check_address(self.host, self.aws_port, "--aws-port")
        try:
            try:
                self._compute = ComputeServer(self.host, self.gcp_port).start()
            except OSError as exc:
                raise address_error(self.host, self.gcp_port, "--gcp-port", exc) from None
            self.gcp_url = self._compute.url
            self._moto = ThreadedMotoServer(ip_address=self.host, port=self.aws_port, verbose=False)
            self._moto.start()
            host, port = self._moto.get_host_and_port()
            self.aws_url = f"http://{host}:{port}"
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self._moto is not None:
            self._moto.stop()
            self._moto = None
        if self._compute is not None:
            self._compute.stop()
            self._compute = None

    def __enter__(self) -> LocalClouds:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def skip(self, seconds: float) -> None:
        """Move the Compute test server's time forward with a simulated clock (its operations,
        settling and autoscalers go by it; moto's groups have no time of their own)."""
        self._compute.skip(seconds)

    def env(self) -> dict[str, str]:
        """What a shell (or ``pulumi``, or the controller) needs to reach these clouds."""
        return {
            "AWS_ENDPOINT_URL": self.aws_url,
            **TEST_CREDENTIALS,
            "AWS_DEFAULT_REGION": AWS_REGION,
            "ARKLOW_GCP_COMPUTE_ENDPOINT": self.gcp_url,
            "GOOGLE_CLOUD_PROJECT": GCP_PROJECT,
            "NO_PROXY": f"{self.host},localhost",
            "no_proxy": f"{self.host},localhost",
        }

    def create(self, groups: StackGroups) -> None:
        """Make the groups (the servers start empty)."""
        for region in sorted({a.region for a in groups.asgs}):
            client = self._autoscaling(region)
            client.create_launch_configuration(
                LaunchConfigurationName=LAUNCH_CONFIGURATION,
                ImageId="ami-12345678",
                InstanceType="t3.micro",
            )
            for asg in (a for a in groups.asgs if a.region == region):
                client.create_auto_scaling_group(
                    AutoScalingGroupName=asg.name,
                    LaunchConfigurationName=LAUNCH_CONFIGURATION,
                    MinSize=0,
                    MaxSize=asg.max_size,
                    DesiredCapacity=asg.desired,
                    AvailabilityZones=[f"{region}a"],
                )
        for mig in groups.migs:
            self._compute.add_group(mig.admin_body())

    def _autoscaling(self, region: str) -> Any:
        import boto3

        return boto3.session.Session().client(
            "autoscaling",
            region_name=region,
            endpoint_url=self.aws_url,
            aws_access_key_id=TEST_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=TEST_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        )


def check_address(host: str, port: int, option: str) -> None:
    """Raise :class:`InvalidInput` (one line) when ``host:port`` cannot be listened on."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind((host, port))
    except (OSError, OverflowError) as exc:
        raise address_error(host, port, option, exc) from None


def address_error(host: str, port: int, option: str, exc: Exception) -> InvalidInput:
    reason = getattr(exc, "strerror", None) or str(exc)
    if port == 0:  # any port would do: the host is the problem
        option = "--host"
    message = f"cannot listen on {host}:{port}: {reason}"
    return InvalidInput.one(f"option {option}", option.lstrip("-"), message)


def export_lines(env: Mapping[str, str]) -> list[str]:
    return [f"export {key}={shlex.quote(value)}" for key, value in env.items()]


def describe_groups(groups: StackGroups) -> list[str]:
    """One line per group, for people (the CLI prints them on stderr)."""
    lines = [
        f"aws_asg {a.region}/{a.name}: size {a.desired}, max {a.max_size}" for a in groups.asgs
    ]
    for m in groups.migs:
        where = f"{m.project}/{m.zone or m.region}/{m.name}"
        scaler = f", autoscaler min {m.autoscaler[0]} max {m.autoscaler[1]}" if m.autoscaler else ""
        lines.append(f"gcp_mig {where}: size {m.size}{scaler}")
    return lines
