"""A SQLite store is private to its owner (issue 30, item 8): the database, its -wal and -shm
files and the controller's lock file are created 0600, missing directories 0700; ``arklow
controller run`` creates no missing directory, it names it (exit 2, one line)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from sqlalchemy import text

from arklow_pulumi.controller.leadership.leasing import lock_path, take_leadership
from arklow_pulumi.store.engine import StoreError, close_stores, open_store, writing
from tests.arklow_cli import run


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def loose_umask() -> object:
    """The usual umask (022) would let 0644 through: the modes must come from the code."""
    old = os.umask(0o022)
    yield
    os.umask(old)
    close_stores()


def test_store_files_and_directories_are_private(tmp_path: Path) -> None:
    database = tmp_path / "a" / "b" / "arklow.db"
    store = open_store(f"sqlite:///{database}")
    with writing(store) as conn:
        conn.execute(text("SELECT 1"))
    elector = take_leadership(store)
    try:
        files = [database, Path(f"{database}-wal"), Path(f"{database}-shm"), lock_path(store)]
        assert {f.name: oct(mode(f)) for f in files} == {f.name: "0o600" for f in files}
        assert oct(mode(tmp_path / "a")) == oct(mode(tmp_path / "a" / "b")) == "0o700"
    finally:
        elector.release()


def test_an_existing_directory_is_left_as_it_is(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    open_store(f"sqlite:///{tmp_path / 'arklow.db'}")
    assert mode(tmp_path) == 0o755
    assert mode(tmp_path / "arklow.db") == 0o600


def test_without_directories_a_missing_directory_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such"
    with pytest.raises(StoreError, match=f"the directory '{missing}' does not exist"):
        open_store(f"sqlite:///{missing / 'arklow.db'}", directories=False)
    assert not (tmp_path / "no").exists()


def test_controller_run_names_a_missing_directory_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "dir"
    result = run(["controller", "run", "--store", f"sqlite:///{missing / 'arklow.db'}",
                  "--listen", "127.0.0.1:0"])  # fmt: skip
    assert result.returncode == 2, result
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert f"the directory '{missing}' does not exist" in result.stderr
    assert not (tmp_path / "typo").exists()
