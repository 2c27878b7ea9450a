"""examples/ci/capacity-what-if.yml, run step by step (tests/packaging/workflow.py) in a copy of
this repository whose dev stack file is a pull request's change that starves a lane, against a
local directory standing in for the package index: its install step (one ``pip install`` of the
checkout with the ``gcp``, ``postgres`` and ``policy`` extras, the kernel compiled by cargo), the
preview with the policy pack under the real engine (file backend), ``arklow what-if`` with each
exit code it handles (3: lanes flagged, 0: nothing flagged, 2: not computed) and the comment it
builds. No cloud is called: the stack's group is on an AWS endpoint that refuses at once."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from arklow_pulumi.store.engine import close_stores
from tests.e2e.pulumi_cli import MISSING_ENGINE, PULUMI, REPO, engine_available
from tests.packaging.conftest import Index, base_python, run
from tests.packaging.workflow import Job
from tests.whatif.stacking import BEFORE, HISTORY, fill_history, fill_store, moved

pytestmark = [pytest.mark.packaging, pytest.mark.e2e]

WORKFLOW = REPO / "examples" / "ci" / "capacity-what-if.yml"
QUIET = "lane quiet/q: held share 0.00% -> 37.50%"
ACTIONS = [
    "actions/checkout@v4",
    "actions/setup-python@v5",
    "actions/setup-go@v5",
    "actions/github-script@v7",
]


def copy_checkout(target: Path) -> Path:
    """What actions/checkout gives: the repository's files (this working tree's)."""
    listed = run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"], REPO
    ).stdout.splitlines()
    for name in listed:
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def write_stack(checkout: Path, stack: str, topology: dict[str, Any]) -> None:
    (checkout / "stacks" / f"Pulumi.{stack}.yaml").write_text(
        yaml.safe_dump({"config": {"arklow:topology": topology}}, sort_keys=False)
    )


class Runner:
    """The job's machine: the checkout, the runner's environment, the secrets."""

    def __init__(self, index: Index, root: Path) -> None:
        if not engine_available():
            pytest.fail(MISSING_ENGINE, pytrace=False)
        self.root = root
        self.checkout = copy_checkout(root / "checkout")
        write_stack(self.checkout, "dev", moved())  # the pull request: quiet moved into busy
        write_stack(self.checkout, "same", BEFORE)  # a stack the pull request leaves alone
        (root / "state").mkdir()
        (root / "pulumi-home").mkdir()
        setup_python = root / "setup-python"  # what actions/setup-python puts on PATH
        setup_python.mkdir()
        (setup_python / "python").symlink_to(base_python())
        env = index.pip_env()
        self.env = {
            **env,
            "PATH": f"{setup_python}:{env['PATH']}",
            "PULUMI_HOME": str(root / "pulumi-home"),
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            # the stack's group is on AWS, which is not reached: an endpoint refusing at once
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
            "NO_PROXY": "127.0.0.1,localhost",
        }
        self.secrets = {
            "secrets.PULUMI_BACKEND_URL": f"file://{root / 'state'}",
            "secrets.PULUMI_CONFIG_PASSPHRASE": "",
            "github.event.pull_request.number": "7",
        }
        for stack in ("dev", "same"):  # the stacks exist in the backend, as in a real project
            run(
                [PULUMI, "stack", "init", stack, "--non-interactive"],
                self.checkout,
                {
                    **self.env,
                    "PULUMI_BACKEND_URL": self.secrets["secrets.PULUMI_BACKEND_URL"],
                    "PULUMI_CONFIG_PASSPHRASE": "",
                },
            )
        self.jobs = 0
        self.document = yaml.safe_load(WORKFLOW.read_text())
        (self.job_document,) = self.document["jobs"].values()

    def store(self, name: str, history: bool) -> str:
        """A store holding the topology before the change, and a week of history or none."""
        url = f"sqlite:///{self.root / name}.db"
        store = fill_store(url, BEFORE)
        if history:
            fill_history(store, HISTORY)
        close_stores()
        return url

    def job(self, stack: str, store: str) -> Job:
        values = {**self.secrets, "secrets.ARKLOW_STORE_READONLY": store, "matrix.stack": stack}
        for name in ("whatif.md", "whatif.err", "comment.md"):  # preview.txt: the last preview's
            (self.checkout / name).unlink(missing_ok=True)
        self.jobs += 1
        return Job(
            self.job_document, self.checkout, self.root / f"job-{self.jobs}", values, self.env
        )

    def read(self, name: str) -> str:
        return (self.checkout / name).read_text()


@pytest.fixture(scope="module")
def runner(index: Index, tmp_path_factory: pytest.TempPathFactory) -> Runner:
    return Runner(index, tmp_path_factory.mktemp("ci"))


@pytest.fixture(scope="module")
def flagged(runner: Runner) -> tuple[Job, list[str]]:
    """The whole job on the pull request's dev stack, the store holding a week of history."""
    job = runner.job("dev", runner.store("flagged", history=True))
    return job, job.run(runner.job_document["steps"])


def test_every_step_runs_and_the_actions_are_githubs(flagged: tuple[Job, list[str]]) -> None:
    job, used = flagged
    assert used == ACTIONS
    outcomes = {key: step.outcome for key, step in job.steps.items()}
    assert outcomes == {
        "Install the project and the engine": "success",
        "preview": "success",
        "whatif": "success",
        "Build the comment": "success",
        "Fail when the preview failed": "skipped",
    }, "\n".join(f"--- {k}\n{s.stdout[-6000:]}\n{s.stderr[-3000:]}" for k, s in job.steps.items())
    assert not job.failed


def test_the_install_step_is_one_pip_install_of_the_package_with_its_kernel(
    runner: Runner, flagged: tuple[Job, list[str]]
) -> None:
    python = runner.checkout / ".venv" / "bin" / "python"
    probe = (
        "import arklow_pulumi.core._kernel as k, pulumi_policy, psycopg, google.cloud.compute_v1"
    )
    run([python, "-c", probe], runner.root, runner.env)
    check = subprocess.run(
        [python, "-m", "pip", "check"],
        capture_output=True,
        text=True,
        env=runner.env,
        timeout=120,
        check=False,
    )
    assert check.returncode == 0, check.stdout


def test_the_preview_reports_the_starved_lane(
    runner: Runner, flagged: tuple[Job, list[str]]
) -> None:
    preview = runner.read("preview.txt")
    assert "capacity-what-if" in preview and QUIET in preview, preview[-3000:]


def test_whatif_exit_3_the_report_and_the_comment(
    runner: Runner, flagged: tuple[Job, list[str]]
) -> None:
    job, _ = flagged
    assert job.steps["whatif"].outputs == {"code": "3"}
    report = runner.read("whatif.md")
    assert report.startswith("### Arklow what-if: ") and report.split("\n")[0].endswith(" flagged")
    assert "quiet/q" in report
    comment = runner.read("comment.md")
    assert comment.startswith("<!-- arklow-what-if:dev -->\n**Stack `dev`**\n")
    assert report in comment
    assert "<summary>pulumi preview (outcome: success)</summary>" in comment
    assert QUIET in comment


WHATIF_STEPS = {"arklow what-if", "Build the comment"}


def test_whatif_exit_0_when_nothing_is_flagged(
    runner: Runner, flagged: tuple[Job, list[str]]
) -> None:
    job = runner.job("same", runner.store("unchanged", history=True))
    job.path = flagged[0].path  # the install step's additions to PATH, and the preview's outcome
    job.steps["preview"] = flagged[0].steps["preview"]
    job.run(runner.job_document["steps"], only=WHATIF_STEPS)
    assert job.steps["whatif"].outputs == {"code": "0"}
    assert runner.read("whatif.md").startswith("### Arklow what-if: no lane flagged\n")
    assert runner.read("comment.md").startswith("<!-- arklow-what-if:same -->\n")


def test_whatif_exit_2_is_one_line_in_the_comment(
    runner: Runner, flagged: tuple[Job, list[str]]
) -> None:
    job = runner.job("dev", runner.store("no-history", history=False))
    job.path = flagged[0].path
    job.steps["preview"] = flagged[0].steps["preview"]
    job.run(runner.job_document["steps"], only=WHATIF_STEPS)
    assert job.steps["whatif"].outputs == {"code": "2"}
    (reason,) = runner.read("whatif.err").splitlines()
    assert reason.startswith("error: ")
    report = runner.read("whatif.md")
    assert report == f"### Arklow what-if: not computed\n\n```\n{reason}\n```\n"
    assert report in runner.read("comment.md")
