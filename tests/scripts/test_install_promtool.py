"""scripts/install-promtool: a first build into the cache, then the cached one; its lock on the
shared cache; a cached build of another version is rebuilt; a stopped build leaves nothing.

The script runs in :mod:`tests.scripts.install_sandbox`'s sandbox, its cache in
ARKLOW_PROMTOOL_CACHE (a real first build takes 15 to 30 minutes); the stand-in ``go`` answers
``env GOVERSION`` and ``install ...promtool@VERSION`` (taking FAKE_GO_SECONDS), writing a
``promtool`` that prints the version given to ``-X ...version.Version``, and logs each call."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scripts.install_sandbox import (
    Sandbox,
    check_a_held_lock_is_waited_for,
    check_a_stopped_build_leaves_no_lock_and_no_half_build,
    check_two_checkouts_build_the_shared_cache_once,
    finish,
)

VERSION = "v0.316.0"
GO_ANSWERS = r"""elif args[0] == "install":
    assert args[-1].endswith("/cmd/promtool@" + os.environ["FAKE_WANT"]), args
    time.sleep(float(os.environ.get("FAKE_GO_SECONDS", "0")))
    version = os.environ.get("FAKE_BUILT") or re.search(r"Version=(\S+)", " ".join(args)).group(1)
    path = os.path.join(os.environ["GOBIN"], "promtool")
    with open(path, "w") as out:
        out.write(f'#!/bin/sh\necho "promtool, version {version} (branch: , revision: unknown)"\n')
    os.chmod(path, 0o755)
"""


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    return Sandbox(
        tmp_path,
        "install-promtool",
        "promtool",
        GO_ANSWERS,
        {
            "ARKLOW_PROMTOOL_CACHE": str(tmp_path / "cache"),
            "PROMTOOL_INSTALL_HEARTBEAT": "1",
            "FAKE_WANT": VERSION,
        },
    )


def test_a_first_build_says_what_it_does_then_the_cache_is_used(box: Sandbox) -> None:
    code, out, err = finish(box.start(seconds=3))
    assert code == 0, err
    lines = err.splitlines()
    assert lines[0].startswith(f"install-promtool: building promtool {VERSION} with go1.26.0")
    assert any("still downloading and compiling promtool:" in line for line in lines)
    assert "done in" in lines[-1]
    assert out.startswith(f"install-promtool: promtool {VERSION} in .tools/bin (built from Go")
    link = box.repo / ".tools" / "bin" / "promtool"
    assert link.resolve() == box.cache / VERSION / "bin" / "promtool"
    assert not list(box.cache.glob(".build.*"))
    code, out, err = finish(box.start())
    assert (code, err) == (0, "")
    assert "cached build in" in out and box.builds() == 1


def test_two_checkouts_build_the_shared_cache_once(box: Sandbox) -> None:
    check_two_checkouts_build_the_shared_cache_once(box)


def test_a_held_lock_is_waited_for(box: Sandbox) -> None:
    check_a_held_lock_is_waited_for(box)


def test_a_cached_build_of_another_version_is_rebuilt(box: Sandbox) -> None:
    code, _, err = finish(box.start(FAKE_BUILT="v0.300.0"))  # a build that reports another
    assert code == 1 and "does not report v0.316.0" in err
    stale = box.cache / VERSION / "bin" / "promtool"
    stale.parent.mkdir(parents=True)
    stale.write_text('#!/bin/sh\necho "promtool, version v0.300.0 (branch: )"\n')
    stale.chmod(0o755)
    code, out, err = finish(box.start())
    assert code == 0, err
    assert "built from Go modules" in out and box.builds() == 2


def test_a_stopped_build_leaves_no_lock_and_no_half_build(box: Sandbox) -> None:
    check_a_stopped_build_leaves_no_lock_and_no_half_build(box)
