"""The hypothesis profiles, one chosen by the ``HYPOTHESIS_PROFILE`` environment variable
(tests/conftest.py loads it before any test module is read):

- ``ci`` (the default, and ``make test``): every property test runs the examples it asks for with
  :func:`examples` (the counts the allocator's and the kernel's invariants were given), the others
  hypothesis's usual 100.
- ``dev`` (``make check``): at most :data:`DEV_EXAMPLES` for any test (fewer where a test says its
  examples are each slow), so the whole fast loop runs in minutes; a failure found in ``ci`` is
  replayed from the example database either way.

Neither profile has a deadline: a test never fails because the machine was busy."""

from __future__ import annotations

import os

from hypothesis import settings

PROFILE_ENV = "HYPOTHESIS_PROFILE"
CI, DEV = "ci", "dev"
DEV_EXAMPLES = 100

settings.register_profile(CI, deadline=None, print_blob=True)
settings.register_profile(DEV, deadline=None, max_examples=DEV_EXAMPLES)


def profile() -> str:
    """The profile the environment asks for: ``ci`` unless it names ``dev``; another name is an
    error (a typo would otherwise run the full counts unnoticed)."""
    name = os.environ.get(PROFILE_ENV, "").strip() or CI
    if name not in (CI, DEV):
        raise ValueError(f"{PROFILE_ENV}={name!r}: expected {CI!r} or {DEV!r}")
    return name


def load() -> None:
    settings.load_profile(profile())


def examples(count: int, dev: int = DEV_EXAMPLES) -> int:
    """A test's own example count: ``count`` under ``ci``; under ``dev`` at most ``dev``
    (:data:`DEV_EXAMPLES`, or fewer for a test whose every example takes seconds)."""
    return count if profile() == CI else min(count, dev)
