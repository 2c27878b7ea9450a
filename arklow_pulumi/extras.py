"""The package's optional parts (``pyproject.toml``'s extras) and the one message for a missing one.

Not everyone uses every part: GCP managed instance groups need ``google-cloud-compute`` (extra
``gcp``), a PostgreSQL store the ``psycopg`` driver (``postgres``), the charts of the main job's
report and of ``arklow simulate --chart`` matplotlib (``charts``), the local clouds of ``arklow
dev clouds`` and ``make run`` a moto server (``local-clouds``), and the policy pack (``policy/``,
``pulumi preview --policy-pack policy``) ``pulumi-policy`` (``policy``). The code that needs one
calls :func:`require` where it is about to use it, before importing it, so that a missing part is
one line naming the extra to install, not a traceback from deep inside.
"""

from __future__ import annotations

import importlib.util

from arklow_pulumi.core.errors import ArklowError

# extra -> (the module its code imports, the distribution that provides it)
EXTRAS: dict[str, tuple[str, str]] = {
    "gcp": ("google.cloud.compute_v1", "google-cloud-compute"),
    "postgres": ("psycopg", "psycopg"),
    "charts": ("matplotlib", "matplotlib"),
    "local-clouds": ("moto", "moto"),
    "policy": ("pulumi_policy", "pulumi-policy"),
}
# The extras `make run` installs (the Makefile's RUN_EXTRAS); `make test` installs every one.
MAKE_RUN_EXTRAS = frozenset({"gcp", "charts", "local-clouds", "policy"})


class MissingExtra(ArklowError):
    """An optional part of the package that this call needs is not installed."""

    def __init__(self, extra: str, needed_by: str) -> None:
        self.extra = extra
        package = EXTRAS[extra][1]
        super().__init__(
            f"{needed_by} needs {package}, which is optional: "
            f"pip install 'arklow-pulumi[{extra}]' ({_made_by(extra)})"
        )


def _made_by(extra: str) -> str:
    if extra in MAKE_RUN_EXTRAS:
        return "make run and make test install it"
    return "make test installs it"


def installed(extra: str) -> bool:
    module = EXTRAS[extra][0]
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package is missing, or blocked in sys.modules
        return False


def require(extra: str, needed_by: str) -> None:
    """Raise :class:`MissingExtra` unless ``extra`` is installed; ``needed_by`` names the caller
    the way a user knows it (``"a gcp_mig scale target"``, ``"option '--chart'"``)."""
    if not installed(extra):
        raise MissingExtra(extra, needed_by)
