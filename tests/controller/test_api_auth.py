"""The tokens file: validated on load with one-line errors naming the entry and the field; bearer
tokens matched by digest; nothing secret in any rendering."""

from __future__ import annotations

from pathlib import Path

import pytest

from arklow_pulumi.controller.api.auth import Scope, TokenSet, bearer_token, is_loopback
from arklow_pulumi.core.errors import InvalidInput
from tests.tokens import token_digest

DIGEST = token_digest("s3cret-token")


def load(tmp_path: Path, text: str) -> TokenSet:
    path = tmp_path / "tokens.yaml"
    path.write_text(text)
    return TokenSet.load(path)


def test_a_valid_file(tmp_path: Path) -> None:
    tokens = load(
        tmp_path,
        f"""tokens:
  - {{name: ops, scope: admin, sha256: {DIGEST}}}
  - {{name: dash, scope: read, sha256: {token_digest("r")}}}
  - {{name: search, scope: "destination:search", sha256: {token_digest("d").upper()}}}
""",
    )
    assert len(tokens) == 3
    found = tokens.authenticate("Bearer s3cret-token")
    assert found is not None and found.name == "ops" and found.scope == Scope("admin")
    search = tokens.authenticate("bearer d")
    assert search is not None and search.scope == Scope("destination", "search")
    assert tokens.authenticate("Bearer s3cret-tokenX") is None
    assert tokens.authenticate(None) is None
    assert DIGEST not in repr(tokens) + repr(found) + str(found)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("", "tokens"),
        ("tokens: []", "tokens"),
        ("tokens: {a: 1}", "tokens"),
        ("tokens: []\nother: 1", "tokens"),
        ("tokens:\n  - just-a-string", "tokens[0]"),
        (f"tokens:\n  - {{scope: admin, sha256: {DIGEST}}}", "tokens[0]: field 'name'"),
        (f"tokens:\n  - {{name: '', scope: admin, sha256: {DIGEST}}}", "field 'name'"),
        (
            f"tokens:\n  - {{name: a, scope: root, sha256: {DIGEST}}}",
            "tokens[0] (name 'a'): field 'scope'",
        ),
        (f"tokens:\n  - {{name: a, scope: 'destination:', sha256: {DIGEST}}}", "field 'scope'"),
        (f"tokens:\n  - {{name: a, scope: 'destination:a/b', sha256: {DIGEST}}}", "field 'scope'"),
        (f"tokens:\n  - {{name: a, sha256: {DIGEST}}}", "field 'scope'"),
        ("tokens:\n  - {name: a, scope: admin, sha256: abc}", "(name 'a'): field 'sha256'"),
        ("tokens:\n  - {name: a, scope: admin}", "field 'sha256'"),
        (
            f"tokens:\n  - {{name: a, scope: admin, sha256: {DIGEST}, token: x}}",
            "(name 'a'): field '(entry)': 1 unknown field(s)",
        ),
        (
            f"tokens:\n  - {{name: a, scope: admin, sha256: {DIGEST}}}\n"
            f"  - {{name: a, scope: read, sha256: {token_digest('x')}}}",
            "tokens[1] (name 'a'): field 'name': duplicate of tokens[0]",
        ),
        (
            f"tokens:\n  - {{name: a, scope: admin, sha256: {DIGEST}}}\n"
            f"  - {{name: b, scope: read, sha256: {DIGEST}}}",
            "tokens[1] (name 'b'): field 'sha256'",
        ),
        ("tokens:\n  - {name: a, name: b}", "a key given twice (not shown"),
        ("tokens: [", "(yaml)"),
    ],
)
def test_bad_files_name_the_entry_and_field(tmp_path: Path, text: str, names: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        load(tmp_path, text)
    message = str(raised.value)
    assert names in message
    assert "\n" not in message
    assert "tokens.yaml" in message


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="tokens file"):
        TokenSet.load(tmp_path / "absent.yaml")


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc", "abc"),
        ("bearer   abc  ", "abc"),
        ("Bearer", None),
        ("Bearer a b", None),
        ("Basic abc", None),
        ("", None),
    ],
)
def test_bearer_header(header: str, token: str | None) -> None:
    assert bearer_token(header) == token


@pytest.mark.parametrize(
    ("scope", "lane", "reads", "reports"),
    [
        (Scope("admin"), "a/x", True, True),
        (Scope("read"), "a/x", True, False),
        (Scope("destination", "a"), "a/x", True, True),
        (Scope("destination", "a"), "ab/x", False, False),
        (Scope("destination", "a"), "b/a", False, False),
    ],
)
def test_scopes(scope: Scope, lane: str, reads: bool, reports: bool) -> None:
    assert scope.may_read_lane(lane) is reads
    assert scope.may_report_lane(lane) is reports


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("10.0.0.1", False),
        ("::", False),
        ("example", False),
        ("[::1", False),
        ("::1]", False),
        ("[127.0.0.1]x", False),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
