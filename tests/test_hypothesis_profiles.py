"""The hypothesis profiles: ``ci`` keeps each test's own count, ``dev`` caps it, and a profile name
that is neither is refused (a typo would otherwise run the full counts unnoticed)."""

from __future__ import annotations

import pytest
from hypothesis import settings

from tests import hypothesis_profiles as profiles


@pytest.mark.parametrize(
    ("env", "asked", "runs"),
    [
        (None, 3000, 3000),  # unset: ci
        ("ci", 3000, 3000),
        ("ci", 40, 40),
        ("dev", 3000, profiles.DEV_EXAMPLES),
        ("dev", 40, 40),  # never more than the test asks for
        (" dev ", 500, profiles.DEV_EXAMPLES),
    ],
)
def test_examples_follow_the_profile(
    monkeypatch: pytest.MonkeyPatch, env: str | None, asked: int, runs: int
) -> None:
    if env is None:
        monkeypatch.delenv(profiles.PROFILE_ENV, raising=False)
    else:
        monkeypatch.setenv(profiles.PROFILE_ENV, env)
    assert profiles.examples(asked) == runs


def test_a_test_with_slow_examples_runs_fewer_under_dev(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(profiles.PROFILE_ENV, "dev")
    assert profiles.examples(100, dev=10) == 10
    monkeypatch.setenv(profiles.PROFILE_ENV, "ci")
    assert profiles.examples(100, dev=10) == 100


def test_an_unknown_profile_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(profiles.PROFILE_ENV, "quick")
    with pytest.raises(ValueError, match="HYPOTHESIS_PROFILE='quick': expected 'ci' or 'dev'"):
        profiles.profile()


def test_neither_profile_has_a_deadline() -> None:
    for name in (profiles.CI, profiles.DEV):
        assert settings.get_profile(name).deadline is None
    assert settings.get_profile(profiles.DEV).max_examples == profiles.DEV_EXAMPLES
