"""No password in any output: a table of store URL forms against the redaction function, every
``arklow`` command that takes a store (real processes), and the Pulumi providers' error paths.

Each form plants a password made of two distinctive halves; neither half may appear anywhere in
what the user sees (a raw ``@`` in a password used to leave the tail in the "host" of a driver
message). Every form gets its own password, so a secret remembered from one case cannot hide a
leak in another.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest

from arklow_pulumi.redaction import redact_url, remember_url, scrub, url_secrets
from tests.arklow_cli import Invoke, Result, assert_one_line_error, in_process, run

CLOSED = "127.0.0.1:1"  # nothing listens on port 1: connecting is refused at once


@dataclass(frozen=True)
class Form:
    name: str
    template: str  # {pw} is the password as written in the URL

    def password(self, index: int) -> tuple[str, str]:
        """Two halves of this form's password (both must stay hidden)."""
        return f"Sekr{index}t", f"Ta{index}lq"

    def url(self, index: int) -> str:
        head, tail = self.password(index)
        return self.template.format(head=head, tail=tail)


FORMS = [
    Form("userinfo", "postgresql://arklow:{head}{tail}@" + CLOSED + "/db"),
    Form("postgres scheme", "postgres://arklow:{head}{tail}@" + CLOSED + "/db?sslmode=disable"),
    Form("driver in scheme", "postgresql+psycopg://arklow:{head}{tail}@" + CLOSED + "/db"),
    Form("query password", "postgresql://arklow@" + CLOSED + "/db?password={head}{tail}"),
    Form(
        "query after other keys", "postgresql://arklow@" + CLOSED + "/db?a=1&password={head}{tail}"
    ),
    Form("raw @ in password", "postgresql://arklow:{head}@{tail}@" + CLOSED + "/db"),
    Form("two raw @", "postgresql://arklow:{head}@@{tail}@" + CLOSED + "/db"),
    Form("percent-encoded @", "postgresql://arklow:{head}%40{tail}@" + CLOSED + "/db"),
    Form("raw / in password", "postgresql://arklow:{head}/{tail}@" + CLOSED + "/db"),
    Form("raw ? in password", "postgresql://arklow:{head}?{tail}@" + CLOSED + "/db"),
    Form("raw : in password", "postgresql://arklow:{head}:{tail}@" + CLOSED + "/db"),
    Form("bad port", "postgresql://arklow:{head}{tail}@127.0.0.1:notaport/db"),
    Form("sqlite with user", "sqlite://arklow:{head}{tail}@host/x.db"),
    Form("unsupported scheme", "mysql://arklow:{head}{tail}@" + CLOSED + "/db"),
    Form("no scheme", "arklow:{head}{tail}@" + CLOSED + "/db"),
    Form("sslpassword", "postgresql://arklow@" + CLOSED + "/db?sslpassword={head}{tail}"),
]
CASES = [pytest.param(form, index, id=form.name) for index, form in enumerate(FORMS)]


def assert_hidden(text: str, form: Form, index: int) -> None:
    for half in form.password(index):
        assert half not in text, f"{form.name}: {half!r} shown in {text!r}"


# -- the function ------------------------------------------------------------------------------


@pytest.mark.parametrize(("form", "index"), CASES)
def test_redact_url_hides_every_form(form: Form, index: int) -> None:
    shown = redact_url(form.url(index))
    assert_hidden(shown, form, index)
    assert shown  # something is shown: never an empty message


@pytest.mark.parametrize(("form", "index"), CASES)
def test_url_secrets_find_the_whole_password(form: Form, index: int) -> None:
    head, tail = form.password(index)
    assert any(head in s and tail in s for s in url_secrets(form.url(index)))


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:pw@h:5432/db", "postgresql://u:***@h:5432/db"),
        ("postgresql://u:p@ss@h/db", "postgresql://u:***@h/db"),
        (
            "postgresql://u@h/db?password=x&sslmode=require",
            "postgresql://u@h/db?password=***&sslmode=require",
        ),
        ("postgresql://h/db?application_name=a@b", "postgresql://h/db?application_name=a@b"),
        ("sqlite:////tmp/a@b/x.db", "sqlite:////tmp/a@b/x.db"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
        ("u:pw@h/db", "<store URL hidden: not a URL>"),
    ],
)
def test_what_stays_visible(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_scrub_cleans_driver_text() -> None:
    remember_url("postgresql://u:Zq9long@h/db")
    text = scrub(
        'connection to "h" failed: password=Zq9long, dsn postgresql://u:other@h/db; '
        "conninfo password='a b' user=u, then Zq9long again"
    )
    assert "Zq9long" not in text and "other" not in text and "'a b'" not in text
    assert 'connection to "h" failed' in text


def test_a_short_secret_is_scrubbed_only_where_it_stands_alone() -> None:
    remember_url("postgresql://u:op@h/db")
    assert scrub("psycopg.OperationalError: op") == "psycopg.OperationalError: ***"


# -- every command that takes a store ----------------------------------------------------------

# Commands that serve until stopped are left out: they are not one-shot reads.
SERVERS = {("controller", "run")}


def store_commands() -> list[tuple[str, ...]]:
    """Every ``arklow`` command path with a ``--store`` option."""
    from arklow_pulumi.cli.main import cli

    found: list[tuple[str, ...]] = []

    def walk(command: click.Command, path: tuple[str, ...]) -> None:
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                if sub is not None:
                    walk(sub, (*path, name))
        elif any("--store" in p.opts for p in command.params if isinstance(p, click.Option)):
            found.append(path)

    walk(cli, ())
    return [path for path in found if path not in SERVERS]


def extra_args(path: tuple[str, ...], tmp_path: Path) -> list[str]:
    """What a command needs besides the store to reach the store."""
    if path == ("topology", "orphans"):
        state = tmp_path / "state.json"
        state.write_text('{"deployment": {"resources": []}}')
        return ["--stack", "dev", "--state", str(state)]
    return []


@pytest.fixture
def arklow(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Invoke:
    return in_process(monkeypatch, capsys)


def test_the_table_covers_the_store_commands() -> None:
    paths = store_commands()
    assert ("topology", "show") in paths and ("store", "upgrade") in paths


def assert_one_line_without_secret(result: Result, form: Form, index: int, what: str) -> None:
    assert_hidden(f"{what}: {result.stdout}{result.stderr}", form, index)
    assert_one_line_error(result, what)


@pytest.mark.parametrize(("form", "index"), CASES)
def test_no_command_shows_the_password(
    form: Form, index: int, tmp_path: Path, arklow: Invoke
) -> None:
    url = form.url(index)
    for path in store_commands():
        result = arklow([*path, "--store", url, *extra_args(path, tmp_path)])
        assert_one_line_without_secret(result, form, index, " ".join(path))
    from_env = arklow(["topology", "show"], env={"ARKLOW_STORE": url})
    assert_one_line_without_secret(from_env, form, index, "ARKLOW_STORE")


REAL_PROCESS = ["raw @ in password", "query password", "bad port", "sqlite with user"]


@pytest.mark.parametrize(
    ("form", "index"),
    [pytest.param(f, i, id=f.name) for i, f in enumerate(FORMS) if f.name in REAL_PROCESS],
)
@pytest.mark.parametrize("path", [("topology", "show"), ("store", "upgrade")])
def test_no_command_shows_the_password_real_process(
    form: Form, index: int, path: tuple[str, ...]
) -> None:
    result = run([*path, "--store", form.url(index)])
    assert_one_line_without_secret(result, form, index, " ".join(path))


# -- the Pulumi providers' error paths ---------------------------------------------------------


def provider_calls(url: str) -> Iterator[tuple[str, Any]]:
    """(label, thunk) for each provider call that opens the store at ``url``."""
    from arklow_pulumi.providers.destinations import DestinationProvider
    from arklow_pulumi.providers.pools import PoolProvider

    dest = DestinationProvider()
    news = {"arklow_name": "d", "resources": ["gpu"], "lanes": [], "store": url}
    checked = dict(dest.check({}, news).inputs)
    yield "destination create", lambda: dest.create(checked)
    yield "destination read", lambda: dest.read("d", checked)
    yield "destination delete", lambda: dest.delete("d", checked)
    pool = PoolProvider()
    pool_news = {"arklow_name": "p", "resource": "gpu", "store": url}
    pool_checked = dict(pool.check({}, pool_news).inputs)
    yield "pool create", lambda: pool.create(pool_checked)
    yield "pool read", lambda: pool.read("p", pool_checked)


@pytest.mark.parametrize(("form", "index"), CASES)
def test_provider_errors_hide_the_password(form: Form, index: int) -> None:
    """What the provider server sends the engine: ``traceback.format_exc()`` of the error."""
    from arklow_pulumi.core.errors import ArklowError

    for label, call in provider_calls(form.url(index)):
        try:
            call()
        except ArklowError:
            report = traceback.format_exc()
        else:
            pytest.fail(f"{form.name}: {label} reached an unreachable store")
        assert_hidden(report, form, index)
        assert len(report.strip().splitlines()) == 1, f"{label}: {report}"
    if hasattr(sys, "tracebacklimit"):
        del sys.tracebacklimit


def test_log_records_are_scrubbed() -> None:
    import io
    import logging

    from arklow_pulumi.redaction import ScrubbingFilter

    remember_url("postgresql://u:LogSecret1@h/db")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(ScrubbingFilter())
    logger = logging.getLogger("arklow.test.redaction")
    logger.addHandler(handler)
    try:
        logger.error("store %s down", "postgresql://u:LogSecret1@h/db")
        try:
            raise RuntimeError("dsn password=LogSecret1")
        except RuntimeError:
            logger.exception("tick failed")
    finally:
        logger.removeHandler(handler)
    written = stream.getvalue()
    assert "LogSecret1" not in written
    assert "store postgresql://u:***@h/db down" in written and "RuntimeError" in written
