"""The one name rule in ``pulumi preview`` (issue 30, item 4): the resources' ``check`` refuses
a name with a space at either end, or not in Unicode NFC, with ``arklow validate``'s words."""

from __future__ import annotations

from typing import Any

import pytest

from arklow_pulumi.providers.destinations import DestinationProvider
from arklow_pulumi.providers.pools import PoolProvider
from tests.providers.test_checks import reasons, validate_messages

BAD = [
    {"name": "search ", "resources": ["gpu"], "lanes": []},
    {"name": " search", "resources": ["gpu"], "lanes": []},
    {"name": "cafe\u0301", "resources": ["gpu"], "lanes": []},
    {"name": "a", "resources": ["gpu"], "lanes": [{"name": "x ", "limit": 1}]},
    {"name": "a", "resources": ["gpu\u0308"], "lanes": []},
]


@pytest.mark.parametrize("raw", BAD)
def test_destination_check_refuses_names_validate_refuses(raw: dict[str, Any]) -> None:
    news = {"arklow_name": raw["name"], "resources": raw["resources"], "lanes": raw["lanes"]}
    result = DestinationProvider().check({}, news)
    expected = validate_messages({"destinations": [raw]})
    assert expected and any("space" in m or "NFC" in m for m in expected)
    assert {r.split(": field ", 1)[-1] for r in reasons(result)} == {
        m.split(": field ", 1)[-1] for m in expected
    }


def test_pool_check_refuses_a_look_alike_name() -> None:
    result = PoolProvider().check({}, {"arklow_name": "gro\u0308up", "resource": "gpu"})
    assert any("must be in Unicode NFC" in r and "U+00F6" in r for r in reasons(result))
