"""Entry point of ``arklow``. Command groups live in their own modules and load on first use, so
``arklow allocate`` does not pay for importing cloud SDKs or Pulumi."""

from __future__ import annotations

import importlib
import importlib.util
import sys

import click

from arklow_pulumi.core.errors import ArklowError

# command name -> "module:attribute"
COMMANDS: dict[str, str] = {
    "allocate": "arklow_pulumi.cli.allocate:allocate",
    "validate": "arklow_pulumi.cli.allocate:validate",
    "topology": "arklow_pulumi.cli.topology:topology",
    "supply": "arklow_pulumi.cli.supply:supply",
    "dev": "arklow_pulumi.cli.dev:dev",
    "controller": "arklow_pulumi.cli.controller:controller",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in COMMANDS if _spec_exists(COMMANDS[name]))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None or not _spec_exists(target):
            return None
        module_name, attr = target.split(":")
        command = getattr(importlib.import_module(module_name), attr)
        assert isinstance(command, click.Command)
        return command


def _spec_exists(target: str) -> bool:
    return importlib.util.find_spec(target.split(":")[0]) is not None


@click.group(cls=LazyGroup)
@click.version_option(package_name="arklow-pulumi")
def cli() -> None:
    """Arklow capacity pools: fair allocation, topology and supply."""


def fail(message: str, code: int = 2) -> None:
    """One line on stderr, nothing on stdout, a non-zero exit."""
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def main() -> None:
    try:
        cli(standalone_mode=True)
    except ArklowError as exc:
        fail(str(exc))
