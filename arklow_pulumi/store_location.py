"""Where the topology store is: its URL, from an argument, config, the environment or the default.

Standard library only, so the Pulumi program can resolve the URL without importing SQLAlchemy or
Alembic (that import costs every program and provider process most of a second).
"""

from __future__ import annotations

from pathlib import Path

from arklow_pulumi.settings import STORE_ENV

ENV_VAR = STORE_ENV.name
DEFAULT_RELATIVE = Path(".arklow") / "arklow.db"


def find_project_dir(start: Path | None = None) -> Path:
    """The nearest directory holding ``Pulumi.yaml``, from ``start`` (default: cwd) upwards."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        if (directory / "Pulumi.yaml").is_file():
            return directory
    return here


def default_store_url(project_dir: Path | None = None) -> str:
    directory = project_dir if project_dir is not None else find_project_dir()
    return f"sqlite:///{(directory / DEFAULT_RELATIVE).resolve()}"


def resolve_store_url(
    explicit: str | None = None, configured: str | None = None, project_dir: Path | None = None
) -> str:
    """Explicit argument > ``arklow:store`` config > ``$ARKLOW_STORE`` > the default SQLite file."""
    for candidate in (explicit, configured, STORE_ENV.get()):
        if candidate:
            return candidate
    return default_store_url(project_dir)
