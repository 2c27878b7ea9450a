"""The wheel and the sdist, each installed with one ``pip install`` into a fresh virtualenv from a
local directory standing in for the package index (``--no-index --find-links``), work from there
with the repository nowhere on the path: the package and its compiled kernel come from the
virtualenv, ``arklow allocate``, ``arklow simulate`` and ``arklow store upgrade`` (the migrations
ship in the package) run, and ``pulumi preview`` of an example declares its resources."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.e2e.pulumi_cli import (
    MISSING_ENGINE,
    REPO,
    TOOLS_BIN,
    Stack,
    arklow_steps,
    engine_available,
)
from tests.packaging.conftest import Index, clean_env, fresh_venv, run

pytestmark = [pytest.mark.packaging, pytest.mark.e2e]

EXAMPLES = REPO / "examples"


@pytest.fixture(scope="module", params=["wheel", "sdist"])
def venv(
    request: pytest.FixtureRequest, index: Index, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A fresh virtualenv with the package installed from the wheel, or built from the sdist."""
    links = index.wheel if request.param == "wheel" else index.sdist
    root = tmp_path_factory.mktemp(f"installed-{request.param}")
    return fresh_venv(root / "venv", index, links, "arklow-pulumi")


@pytest.fixture
def away(tmp_path: Path) -> Path:
    """A working directory outside the repository."""
    assert not tmp_path.is_relative_to(REPO)
    return tmp_path


def arklow(venv: Path, cwd: Path, *args: str) -> str:
    return run([venv / "bin" / "arklow", *args], cwd, clean_env(), timeout=600).stdout


def test_the_package_and_its_kernel_come_from_the_venv(venv: Path, away: Path) -> None:
    probe = (
        "import json, importlib.metadata as m, arklow_pulumi, arklow_pulumi.core._kernel as k\n"
        "print(json.dumps([arklow_pulumi.__file__, k.__file__, k.__version__,"
        " m.version('arklow-pulumi'), [d.metadata['Name'] for d in m.distributions()]]))\n"
    )
    out = run([venv / "bin" / "python", "-c", probe], away, clean_env()).stdout
    package, kernel, kernel_version, version, names = json.loads(out)
    site = next((venv / "lib").glob("python3.*/site-packages"))
    assert Path(package).parent == site / "arklow_pulumi"
    assert Path(kernel).parent == site / "arklow_pulumi" / "core"
    assert Path(kernel).name.startswith("_kernel.abi3.")  # one build for CPython >= 3.11
    assert kernel_version == version
    assert "arklow-kernel" not in names  # one distribution
    shipped = site / "arklow_pulumi"
    for name in ("py.typed", "core/_kernel.pyi", "store/migrations/script.py.mako"):
        assert (shipped / name).is_file(), name
    tracked = run(["git", "ls-files", "arklow_pulumi"], REPO).stdout.split()
    missing = [p for p in tracked if not (site / p).is_file()]
    assert missing == []  # every file git keeps in the package is installed


def test_allocate(venv: Path, away: Path) -> None:
    out = arklow(
        venv,
        away,
        "allocate",
        "--topology",
        str(EXAMPLES / "topology.yaml"),
        "--demand",
        str(EXAMPLES / "demand.yaml"),
        "--format",
        "json",
    )
    demand = yaml.safe_load((EXAMPLES / "demand.yaml").read_text())["lanes"]
    lanes = json.loads(out)["lanes"]
    assert {name: lane["demand"] for name, lane in lanes.items() if name in demand} == demand
    assert all(0 <= lane["allocation"] <= lane["demand"] for lane in lanes.values())


def test_simulate(venv: Path, away: Path) -> None:
    traces = EXAMPLES / "traces"
    out = arklow(
        venv,
        away,
        "simulate",
        "--topology",
        str(traces / "gpu_day.yaml"),
        "--trace",
        str(traces / "gpu_day.csv"),
        "--policies",
        "arklow,static",
        "--jobs",
        "1",
        "--format",
        "json",
    )
    assert json.loads(out)  # the comparison, one entry per policy


def test_store_upgrade_on_a_fresh_sqlite_file(venv: Path, away: Path) -> None:
    store = away / "fresh.db"
    arklow(venv, away, "store", "upgrade", "--store", f"sqlite:///{store}")
    assert store.is_file()
    arklow(
        venv, away, "store", "upgrade", "--store", f"sqlite:///{store}"
    )  # at head: nothing to do


@pytest.fixture
def example(venv: Path, away: Path) -> Iterator[Stack]:
    """examples/shared_gpu_pool copied out, its virtualenv the installed one, a file backend."""
    if not engine_available():
        pytest.fail(MISSING_ENGINE, pytrace=False)
    project = away / "shared_gpu_pool"
    shutil.copytree(EXAMPLES / "shared_gpu_pool", project)
    config = yaml.safe_load((project / "Pulumi.yaml").read_text())
    config["runtime"]["options"]["virtualenv"] = str(venv)
    (project / "Pulumi.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    path = clean_env()["PATH"]
    yield Stack(project, away / "pulumi", env={"PATH": f"{TOOLS_BIN}:{venv / 'bin'}:{path}"}).init()


def test_pulumi_preview_of_an_example(example: Stack) -> None:
    planned = arklow_steps(example.preview())
    assert {(op, kind) for op, kind, _ in planned} == {
        ("create", "Pool"),
        ("create", "Destination"),
        ("create", "PoolMembership"),
    }
    assert {name for _, kind, name in planned if kind == "Destination"} == {
        "search",
        "summarize",
        "embeddings",
    }
