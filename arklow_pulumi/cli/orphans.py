"""``arklow topology orphans``: stored objects whose owning stack no longer declares them.

Every row a Pulumi resource creates records its owner (stack and URN) and its create id, the
resource's Pulumi id (see :mod:`arklow_pulumi.store.identity`). The stack's Pulumi state is the
record of what it declares: a row of stack S is an orphan when S's state holds no resource with
the row's URN *and* create id. That is what a kill -9 or a lost connection leaves behind (the
commit landed, the state never heard of it), and what ``pulumi destroy`` cannot see. The state is
read with ``pulumi stack export --stack S`` in the current directory (the project), or from a
file that command wrote (``--state``). Rows of another project's stack of the same name, and rows
with no owner recorded, are never listed.

``--delete`` removes the orphans as their own resources' deletes would (by create id, through the
topology rules): memberships, then scale targets, then pools, then destinations; a pool that still
has scale targets is kept (T6) and reported. Do not run it while an update of the stack is in
progress: its creates are not in the state until they finish.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from arklow_pulumi.core.errors import ArklowError, InvalidInput


class StateUnavailable(ArklowError):
    """The stack's Pulumi state cannot be read."""


def _pulumi(*args: str) -> str:
    binary = shutil.which("pulumi")
    if binary is None:
        raise StateUnavailable(
            "cannot read the Pulumi state: the pulumi CLI is not on PATH (or pass --state FILE "
            "written by `pulumi stack export`)"
        )
    result = subprocess.run(
        [binary, *args, "--non-interactive"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if result.returncode != 0:
        lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
        reason = lines[-1] if lines else f"exit {result.returncode}"
        raise StateUnavailable(f"pulumi {' '.join(args)}: {reason.removeprefix('error: ')}")
    return result.stdout


def load_state(stack: str | None, state_file: Path | None) -> tuple[str, dict[str, Any]]:
    """The stack name and its exported state (``deployment`` of ``pulumi stack export``)."""
    if state_file is not None:
        try:
            text = state_file.read_text()
        except OSError as exc:
            where = f"state file {str(state_file)!r}"
            raise InvalidInput.one(where, "--state", exc.strerror or "unreadable") from None
    else:
        if stack is None:
            stack = _pulumi("stack", "--show-name").strip()
        text = _pulumi("stack", "export", "--stack", stack)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput.one("the Pulumi state", "--state", f"is not JSON ({exc.msg})") from None
    deployment = document.get("deployment") if isinstance(document, dict) else None
    if not isinstance(deployment, dict):
        raise InvalidInput.one("the Pulumi state", "deployment", "is missing")
    if stack is None:
        stack = _stack_of(deployment)
    if stack is None:
        raise InvalidInput.one("the Pulumi state", "--stack", "is required (the state is empty)")
    return stack, deployment


def _stack_of(deployment: dict[str, Any]) -> str | None:
    from arklow_pulumi.store.identity import stack_of_urn

    for resource in deployment.get("resources") or []:
        found = stack_of_urn(resource.get("urn"))
        if found is not None:
            return found[0]
    return None


def _project_of(deployment: dict[str, Any]) -> str | None:
    from arklow_pulumi.store.identity import stack_of_urn

    for resource in deployment.get("resources") or []:
        found = stack_of_urn(resource.get("urn"))
        if found is not None:
            return found[1]
    return _project_from_pulumi_yaml()


def _project_from_pulumi_yaml() -> str | None:
    from arklow_pulumi.reading.files import read_document
    from arklow_pulumi.store_location import find_project_dir

    try:
        project = read_document(find_project_dir() / "Pulumi.yaml", "project")
    except InvalidInput:
        return None
    name = project.get("name") if isinstance(project, Mapping) else None
    return name if isinstance(name, str) else None


def find_orphans(rows: list[Any], deployment: dict[str, Any]) -> list[Any]:
    """The rows (:class:`~arklow_pulumi.store.ownership.OwnedRow`) no resource in the state is."""
    from arklow_pulumi.store.identity import stack_of_urn

    declared = {
        (r.get("urn"), r.get("id")) for r in deployment.get("resources") or [] if r.get("id")
    }
    project = _project_of(deployment)
    found = []
    for row in rows:
        where = stack_of_urn(row.identity.owner_urn)
        if project is not None and where is not None and where[1] != project:
            continue  # another project's stack of the same name
        if (row.identity.owner_urn, row.identity.create_id) not in declared:
            found.append(row)
    return found


def _line(row: Any) -> dict[str, Any]:
    return {
        "kind": row.kind,
        "name": row.name,
        "stack": row.identity.owner_stack,
        "urn": row.identity.owner_urn,
        "create_id": row.identity.create_id,
    }


@click.command()
@click.option("--store", "store_url", default=None, help="Store URL (default as for `show`).")
@click.option("--stack", default=None, help="The owning stack (default: the selected stack).")
@click.option(
    "--state",
    "state_file",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="The stack's state as `pulumi stack export` wrote it (default: run that command).",
)
@click.option("--delete", is_flag=True, help="Delete the orphans (a pool with targets is kept).")
@click.option(
    "--format", "fmt", type=click.Choice(["json", "table"]), default="table", show_default=True
)
def orphans(
    store_url: str | None, stack: str | None, state_file: Path | None, delete: bool, fmt: str
) -> None:
    """List (or with --delete, remove) stored objects that the owning stack no longer declares.

    Exit 0; 1 when --delete had to keep something; 2 on bad input or an unreadable state."""
    from arklow_pulumi.store import open_store, resolve_store_url
    from arklow_pulumi.store.ownership import delete_owned, owned_rows

    stack, deployment = load_state(stack, state_file)
    url = resolve_store_url(store_url)
    store = open_store(url, read_only=not delete, create=False)
    found = find_orphans(owned_rows(store, stack), deployment)
    deleted: list[dict[str, Any]] = []
    kept: list[dict[str, Any]] = []
    if delete:
        for row in found:
            try:
                delete_owned(store, row)
            except InvalidInput as exc:  # T6: a pool with scale targets stays
                kept.append({**_line(row), "reason": str(exc)})
                continue
            deleted.append(_line(row))
    _print(stack, [_line(row) for row in found], deleted, kept, fmt, delete)
    if kept:
        raise SystemExit(1)


def _print(
    stack: str,
    found: list[dict[str, Any]],
    deleted: list[dict[str, Any]],
    kept: list[dict[str, Any]],
    fmt: str,
    delete: bool,
) -> None:
    if fmt == "json":
        document: dict[str, Any] = {"stack": stack, "orphans": found}
        if delete:
            document.update(deleted=deleted, kept=kept)
        click.echo(json.dumps(document, indent=2))
        return
    if not found:
        click.echo(f"no orphans of stack {stack!r}")
    for line in found:
        click.echo(f"{line['kind']}\t{line['name']}\t{line['stack']}\t{line['urn']}")
    for line in deleted:
        click.echo(f"deleted {line['kind']} {line['name']!r}")
    for line in kept:
        click.echo(f"kept {line['kind']} {line['name']!r}: {line['reason']}")
