"""scripts/install-pulumi's first build, seen as a user sees it, and its lock on the shared cache.

The script runs in :mod:`tests.scripts.install_sandbox`'s sandbox with the part of the repository
it reads, its cache in ARKLOW_TOOLS_CACHE (a real first build takes 8 minutes). The stand-in
``go`` answers the commands the script runs (``env GOVERSION``,
``mod download``, ``install`` with ``GOBIN``, ``mod download -json``), takes FAKE_GO_SECONDS to
compile the pulumi CLI (the phase a build waits on; the language host's is at once) and logs each
call, so a test can count the builds."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.e2e.pulumi_cli import REPO
from tests.scripts.install_sandbox import (
    Sandbox,
    check_a_held_lock_is_waited_for,
    check_a_stopped_build_leaves_no_lock_and_no_half_build,
    check_two_checkouts_build_the_shared_cache_once,
    finish,
)

VERSION = "v3.260.0"
GO_ANSWERS = r"""elif args[:2] == ["mod", "download"] and "-json" in args:
    module = args[-1].split("@")
    print(json.dumps({"Path": module[0], "Version": module[1], "Dir": os.environ["FAKE_SDK"],
                      "GoMod": "/dev/null"}, indent="\t"))
elif args[:2] == ["mod", "download"]:
    time.sleep(min(1.0, float(os.environ.get("FAKE_GO_SECONDS", "0"))))
elif args[0] == "install":
    version = re.search(r"Version=(v[0-9.]+)", " ".join(args)).group(1)
    name = args[-1].rsplit("/", 1)[-1]
    if name == "pulumi":
        time.sleep(float(os.environ.get("FAKE_GO_SECONDS", "0")))
    path = os.path.join(os.environ["GOBIN"], name)
    with open(path, "w") as out:
        out.write(f'#!/bin/sh\n[ "$1" = version ] && echo {version}\nexit 0\n')
    os.chmod(path, 0o755)
"""


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    sdk = tmp_path / "sdk"
    made = Sandbox(
        tmp_path,
        "install-pulumi",
        "pulumi",
        GO_ANSWERS,
        {
            "ARKLOW_TOOLS_CACHE": str(tmp_path / "cache"),
            "PULUMI_INSTALL_HEARTBEAT": "1",
            "FAKE_SDK": str(sdk),
        },
    )
    host = Path("tools") / "pulumi-engine" / "python-host"
    (made.repo / host).mkdir(parents=True)
    shutil.copy(REPO / host / "pulumi-language-python", made.repo / host)
    for script in (
        "python/cmd/pulumi-language-python-exec",
        "python/dist/pulumi-resource-pulumi-python",
    ):
        (sdk / script).parent.mkdir(parents=True, exist_ok=True)
        (sdk / script).write_text("#!/bin/sh\n")
    return made


def test_a_first_build_shows_each_phase_and_a_heartbeat(box: Sandbox) -> None:
    code, out, err = finish(box.start(seconds=3))
    assert code == 0, err
    lines = err.splitlines()
    starts = [line for line in lines if line.startswith("install-pulumi: [")]
    assert [line.split("]")[0] for line in starts] == [
        "install-pulumi: [1/4",
        "install-pulumi: [2/4",
        "install-pulumi: [3/4",
        "install-pulumi: [4/4",
    ]
    assert "compiling the pulumi CLI" in starts[1]
    assert any("still compiling the pulumi CLI:" in line and "so far" in line for line in lines)
    assert sum("done in" in line for line in lines) == 3  # each compiled or downloaded phase
    assert out.startswith(f"install-pulumi: pulumi {VERSION}")
    assert "built from Go modules into" in out
    link = box.repo / ".tools" / "bin" / "pulumi"
    assert link.resolve() == box.cache / VERSION / "bin" / "pulumi"
    assert box.builds() == 1


def test_two_checkouts_build_the_shared_cache_once(box: Sandbox) -> None:
    check_two_checkouts_build_the_shared_cache_once(box)


def test_a_held_lock_is_waited_for_then_released(box: Sandbox) -> None:
    err = check_a_held_lock_is_waited_for(box)
    assert err.splitlines()[0].startswith(
        "install-pulumi: waiting for another install-pulumi building the shared cache"
    )


def test_a_stopped_build_leaves_no_lock_and_no_half_build(box: Sandbox) -> None:
    check_a_stopped_build_leaves_no_lock_and_no_half_build(box)


def test_a_cached_build_takes_the_lock_briefly(box: Sandbox) -> None:
    assert finish(box.start())[0] == 0
    code, out, err = finish(box.start())
    assert code == 0, err
    assert "cached build in" in out and box.builds() == 1  # no second build under the lock
    assert "waiting" not in err
    assert os.access(box.cache / ".lock", os.R_OK)
