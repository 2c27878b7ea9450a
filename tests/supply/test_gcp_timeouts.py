"""A read timeout is one thing however requests reports it: ``ReadTimeout``, or a
``ConnectionError`` around urllib3's ``ReadTimeoutError`` (wrapped in a ``MaxRetryError`` when the
transport has retries configured). An operation ``wait`` held past its call's timeout means the
operation is still running; reported as "cannot reach the Compute API" it failed a resize that
was merely slow (seen in CI under load: ``test_an_operation_never_done_is_reported_at_the_deadline``)."""

from __future__ import annotations

import pytest
import requests
from urllib3.exceptions import MaxRetryError, ReadTimeoutError

from arklow_pulumi.core.topology import GroupRef
from arklow_pulumi.supply.errors import TemporarySupplyError
from arklow_pulumi.supply.gcp_errors import is_read_timeout, map_gcp_error

REF = GroupRef("gcp_mig", "web", zone="us-central1-a", project="p")


def read_timeout() -> ReadTimeoutError:
    return ReadTimeoutError(None, "/wait", "Read timed out.")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "exc",
    [
        requests.exceptions.ReadTimeout("Read timed out."),
        requests.exceptions.ConnectionError(read_timeout()),
        requests.exceptions.ConnectionError(MaxRetryError(None, "/wait", read_timeout())),  # type: ignore[arg-type]
    ],
    ids=["ReadTimeout", "ConnectionError(ReadTimeoutError)", "ConnectionError(MaxRetryError)"],
)
def test_every_form_of_a_read_timeout_is_one(exc: Exception) -> None:
    assert is_read_timeout(exc)
    mapped = map_gcp_error(exc, REF)
    assert isinstance(mapped, TemporarySupplyError)
    assert "no answer from the Compute API in time" in str(mapped)


@pytest.mark.parametrize(
    "exc",
    [
        requests.exceptions.ConnectionError("refused"),
        requests.exceptions.ConnectionError(MaxRetryError(None, "/wait", None)),  # type: ignore[arg-type]
        requests.exceptions.ConnectTimeout("connect timed out"),
        ValueError("no"),
        None,
    ],
)
def test_other_failures_are_not_read_timeouts(exc: Exception | None) -> None:
    assert not is_read_timeout(exc)
