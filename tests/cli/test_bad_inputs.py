"""Every error of every ``arklow`` command: exit 2, exactly one line on stderr, nothing on stdout.

A table of hostile and mistaken inputs across all commands, against real servers (moto for AWS,
the project's Compute API server for GCP, each the session's; a closed port for an endpoint that
refuses). Each case runs the entry point ``arklow`` runs, in this process (:func:`in_process`:
the real exit code and streams without a process start, and a cloud SDK's import, a case); the
cases of :data:`REAL_PROCESS`, one or more from each part of the table, run as a real ``arklow``
process, which proves the console script too exits 2 with one line and no traceback. A line must
also name what it is about (``expect``).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests import aws_moto
from tests.arklow_cli import Result, assert_one_line_error, in_process, run

if TYPE_CHECKING:
    from arklow_pulumi.devservers.compute import ComputeServer

REGION = aws_moto.REGION
NESTED = "a: " + "[" * 5000 + "]" * 5000 + "\n"
TOPOLOGY = """\
destinations:
  - name: search
    resources: [gpu]
    lanes: [{name: interactive, limit: 8}]
pools:
  - name: gpu-pool
    resource: gpu
    members: [search]
"""


@dataclass(frozen=True)
class Case:
    id: str
    args: tuple[str, ...]
    expect: str  # a fragment the one line must hold (the object or field it names)
    env: dict[str, str] = field(default_factory=dict)
    aws: bool = False  # run with the moto server's environment
    no_aws_credentials: bool = False


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


FILES: dict[str, str | bytes] = {
    "topology.yaml": TOPOLOGY,
    "demand.yaml": "lanes:\n  search/interactive: 3\n",
    "bad.yaml": "a: [\n",
    "deep.yaml": NESTED,
    "bin.yaml": b"\xff\xfe\x00bad",
    "list.yaml": "- a\n- b\n",
    "dup.yaml": TOPOLOGY + "pools: []\n",
    "neg.yaml": TOPOLOGY.replace("limit: 8", "limit: -1"),
    "dem.yaml": "lanes:\n  nope/x: 1\n",
}


def write_files(directory: Path) -> None:
    for name, text in FILES.items():
        path = directory / name
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)


def write(directory: Path, name: str) -> str:
    """The path of one of :data:`FILES` (written by the fixture)."""
    assert name in FILES
    return str(directory / name)


def cases(d: Path, compute_url: str, moto_url: str) -> list[Case]:
    topo = write(d, "topology.yaml")
    demand = write(d, "demand.yaml")
    missing = str(d / "missing.yaml")
    closed = f"http://127.0.0.1:{closed_port()}"
    mig = ("supply", "describe", "--kind", "gcp_mig", "--endpoint", compute_url)
    asg = ("supply", "describe", "--kind", "aws_asg")
    return [
        # the command line itself
        Case("unknown command", ("nosuch",), "arklow: No such command"),
        Case("no command", (), "arklow: missing command"),
        Case("group without a command", ("supply",), "arklow supply: missing command"),
        Case("unknown option", ("--bogus",), "--bogus"),
        Case("unknown subcommand", ("topology", "shw"), "arklow topology"),
        Case("missing required option", ("allocate", "--topology", topo), "--demand"),
        Case("bad choice", ("allocate", "--topology", topo, "--demand", demand, "--format", "x"), "--format"),
        # topology and demand documents
        Case("missing file", ("validate", "--topology", missing), "missing.yaml"),
        Case("directory as file", ("validate", "--topology", str(d)), "--topology"),
        Case("malformed YAML", ("validate", "--topology", write(d, "bad.yaml")), "bad.yaml"),
        Case("deeply nested YAML", ("validate", "--topology", write(d, "deep.yaml")), "deep.yaml"),
        Case("binary file", ("validate", "--topology", write(d, "bin.yaml")), "bin.yaml"),
        Case("topology not a mapping", ("validate", "--topology", write(d, "list.yaml")), "mapping"),
        Case("duplicate key", ("validate", "--topology", write(d, "dup.yaml")), "pools"),
        Case(
            "negative limit",
            ("validate", "--topology", write(d, "neg.yaml")),
            "limit",
        ),
        Case(
            "unknown lane in demand",
            ("allocate", "--topology", topo, "--demand", write(d, "dem.yaml")),
            "nope/x",
        ),
        # the topology store
        Case("mistyped SQLite path", ("topology", "show", "--store", f"sqlite:///{d}/typo/x.db"), "store upgrade"),
        Case("SQLite URL with a user", ("topology", "show", "--store", "sqlite://u:pw@host/x.db"), "field 'username'"),
        Case("in-memory SQLite", ("store", "upgrade", "--store", "sqlite://"), "field 'path'"),
        Case("unsupported database", ("topology", "show", "--store", "mysql://u@h/db"), "only sqlite and postgresql"),
        Case("port not a number", ("topology", "show", "--store", "postgresql://u:pw@h:nan/db"), "field 'port'"),
        Case("store refused", ("topology", "show", "--store", "postgresql://u:pw@127.0.0.1:1/db"), "cannot open store"),
        Case("store upgrade refused", ("store", "upgrade", "--store", "postgresql://u@127.0.0.1:1/db"), "store"),
        Case("not a URL", ("topology", "show", "--store", "u:pw@h/db"), "not a database URL"),
        # supply: AWS
        Case("no kind", ("supply", "describe", "--name", "x"), "--kind"),
        Case("unknown kind", ("supply", "describe", "--kind", "k8s", "--name", "x"), "--kind"),
        Case("malformed AWS region", (*asg, "--name", "web", "--region", "us east!"), "field 'region'", aws=True),
        Case("ASG not found", (*asg, "--name", "nope", "--region", REGION), "aws_asg:us-east-1/nope", aws=True),
        Case(
            "no AWS credentials",
            (*asg, "--name", "web", "--region", REGION),
            "no AWS credentials",
            aws=True,
            no_aws_credentials=True,
        ),
        Case(
            "no Google credentials",
            ("supply", "describe", "--kind", "gcp_mig", "--name", "w", "--project", "p", "--zone", "z"),
            "no Google credentials",
            env={
                "ARKLOW_GCP_COMPUTE_ENDPOINT": "",
                "GOOGLE_APPLICATION_CREDENTIALS": "",
                "CLOUDSDK_CONFIG": str(d / "no-gcloud"),
                "NO_GCE_CHECK": "True",
            },
        ),
        Case(
            "HTML error page",
            (*asg, "--name", "web", "--region", REGION),
            "HTTP 404 Not Found",
            env={"AWS_ENDPOINT_URL": f"{moto_url}/not/the/api"},
            aws=True,
        ),
        Case(
            "refused endpoint",
            (*asg, "--name", "web", "--region", REGION, "--timeout", "2"),
            "aws_asg:us-east-1/web",
            env={"AWS_ENDPOINT_URL": closed},
            aws=True,
        ),
        Case("timeout zero", (*asg, "--name", "web", "--timeout", "0"), "--timeout"),
        Case("negative replicas", ("supply", "set", "--kind", "aws_asg", "--name", "w", "--replicas", "-1"), "--replicas"),
        Case(
            "min above max",
            ("supply", "set", "--kind", "aws_asg", "--name", "w", "--replicas", "1",
             "--min-replicas", "3", "--max-replicas", "2"),
            "min_replicas",
        ),
        Case(
            "replicas above the group's max",
            ("supply", "set", "--kind", "aws_asg", "--name", "web", "--region", REGION, "--replicas", "99"),
            "outside",
            aws=True,
        ),
        # supply: GCP
        Case("bad GCP zone", (*mig, "--name", "g", "--zone", "bad zone!", "--project", "p"), "field 'zone'"),
        Case("zone with a slash", (*mig, "--name", "g", "--zone", "us-central1-a/x", "--project", "p"), "field 'zone'"),
        Case("bad MIG name", (*mig, "--name", "G/1", "--zone", "us-central1-a", "--project", "p"), "field 'name'"),
        Case("zone and region", (*mig, "--name", "g", "--zone", "z-1", "--region", "r", "--project", "p"), "zone"),
        Case("no GCP project", (*mig, "--name", "g", "--zone", "us-central1-a"), "project"),
        Case("MIG not found", (*mig, "--name", "nope", "--zone", "us-central1-a", "--project", "p"), "not found"),
        Case(
            "endpoint not http",
            ("supply", "describe", "--kind", "gcp_mig", "--name", "g", "--zone", "us-central1-a",
             "--project", "p", "--endpoint", "ftp://x"),
            "endpoint",
        ),
        # the controller and orphans
        Case("controller plan on a mistyped store", ("controller", "plan", "--store", f"sqlite:///{d}/no.db"), "store upgrade"),
        Case("controller listen address", ("controller", "run", "--listen", "nonsense"), "listen"),
        Case("export-trace duration", ("controller", "export-trace", "--since", "xyz"), "since"),
        Case("orphans state file missing", ("topology", "orphans", "--stack", "dev", "--state", missing), "--state"),
        # simulation
        Case("simulate without a topology", ("simulate", "--trace", missing), "--topology"),
        Case("what-if on missing files", ("what-if", "--before", missing, "--after", missing, "--trace", missing), "missing.yaml"),
        # dev servers
        Case("port out of range", ("dev", "compute-server", "--port", "99999"), "--port"),
        Case("error codes not numbers", ("dev", "compute-server", "--error-codes", "abc"), "--error-codes"),
    ]  # fmt: skip


# One or more cases of each part of the table, each with a reason to be a real process: the
# interpreter's own recursion limit, bytes read from a real file, a refused socket, an HTML page, a
# credential search in a clean process, the controller's and the dev servers' commands.
REAL_PROCESS = frozenset(
    {
        "unknown command",
        "deeply nested YAML",
        "binary file",
        "store refused",
        "HTML error page",
        "no Google credentials",
        "controller listen address",
        "port out of range",
    }
)


@dataclass(frozen=True)
class Table:
    directory: Path
    moto_url: str
    cases: dict[str, Case]


@pytest.fixture(scope="module")
def table(
    tmp_path_factory: pytest.TempPathFactory, moto_url: str, compute_server: ComputeServer
) -> Table:
    """The table's files written, and the session's moto server holding the group ``web``."""
    directory = tmp_path_factory.mktemp("bad-inputs")
    aws_moto.reset(moto_url)
    aws_moto.make_asg(aws_moto.autoscaling_client(moto_url), "web", 1, 5, 2)
    write_files(directory)
    table = cases(directory, compute_server.url, moto_url)
    return Table(directory, moto_url, {case.id: case for case in table})


def env_for(case: Case, moto_url: str, directory: Path) -> dict[str, Any]:
    env: dict[str, str] = {"NO_PROXY": "127.0.0.1,localhost", "GOOGLE_CLOUD_PROJECT": ""}
    if case.aws:
        env.update(aws_moto.aws_env(moto_url))
    if case.no_aws_credentials:
        env.update(
            AWS_ACCESS_KEY_ID="",
            AWS_SECRET_ACCESS_KEY="",
            AWS_SHARED_CREDENTIALS_FILE=str(directory / "none"),
            AWS_CONFIG_FILE=str(directory / "none"),
            AWS_EC2_METADATA_DISABLED="true",
        )
    env.update(case.env)
    return env


CASE_IDS = [c.id for c in cases(Path("/nonexistent"), "http://x", "http://x")]


def test_the_table_is_long_enough() -> None:
    assert len(CASE_IDS) >= 30 and len(set(CASE_IDS)) == len(CASE_IDS)
    assert set(CASE_IDS) >= REAL_PROCESS


@pytest.mark.parametrize("case_id", CASE_IDS)
def test_one_line_exit_2_nothing_on_stdout(
    case_id: str,
    table: Table,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    case = table.cases[case_id]
    env = env_for(case, table.moto_url, table.directory)
    result: Result
    if case_id in REAL_PROCESS:
        result = run(list(case.args), env)
    else:
        result = in_process(monkeypatch, capsys)(list(case.args), env)
    line = assert_one_line_error(result, " ".join(case.args))
    assert case.expect in line, line
    assert "Traceback" not in line and "<html" not in line.lower()


# -- paths the table cannot reach from the command line ----------------------------------------


def test_moto_html_500_page_becomes_its_status_line(moto_url: str) -> None:
    """moto answers SetDesiredCapacity on a group it does not know with werkzeug's HTML 500
    page; the error keeps the status line, not the page."""
    from arklow_pulumi.core.topology import GroupRef
    from arklow_pulumi.supply.aws import AwsAsgSupply
    from arklow_pulumi.supply.errors import TemporarySupplyError
    from arklow_pulumi.supply.groups import GroupState
    from arklow_pulumi.supply.reconciling import reconcile_pass
    from arklow_pulumi.supply.retrying import RetryPolicy
    from arklow_pulumi.supply.routing import Described, SupplyRouter

    with pytest.MonkeyPatch.context() as patch:
        for key, value in aws_moto.aws_env(moto_url).items():
            patch.setenv(key, value)
        supply = AwsAsgSupply(REGION, moto_url, RetryPolicy(deadline=0.5), botocore_max_attempts=1)
        ref = GroupRef("aws_asg", "gone", region=REGION)  # no test makes a group of that name
        current = GroupState(ref, desired=1, in_service=1, min=0, max=5)
        with pytest.raises(TemporarySupplyError) as err:
            done = reconcile_pass(
                SupplyRouter.of(supply), {ref: 2}, observed=Described({ref: current})
            )
            done.result(ref)
    message = str(err.value)
    assert "HTTP 500 Internal Server Error" in message and "aws_asg:us-east-1/gone" in message
    assert "<" not in message and "\n" not in message


def test_a_bug_is_one_internal_error_line_exit_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import arklow_pulumi.cli.allocate as allocate_cli
    from tests.arklow_cli import in_process

    def broken(*_args: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(allocate_cli, "load_topology", broken)
    result = in_process(monkeypatch, capsys)(["validate", "--topology", "x.yaml"])
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.splitlines() == ["error: internal error (KeyError): 'a bug'"]
