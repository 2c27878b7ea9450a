"""Entry point of ``arklow``. Command groups live in their own modules and load on first use, so
``arklow allocate`` does not pay for importing cloud SDKs or Pulumi.

Every failure ends here as one line on stderr, ``error: <what>: <why>``, with nothing on stdout,
no traceback and no chained exception text, scrubbed of passwords
(:func:`arklow_pulumi.redaction.scrub`):

- exit 2: the input or the environment is wrong and the user can fix it: an
  :class:`~arklow_pulumi.core.errors.ArklowError` (bad input, a refused rule, a store or cloud
  error), a click usage error (unknown command or option, a bad value), input nested too deeply
  (``RecursionError``), a file that cannot be read or decoded (``OSError``, ``UnicodeError``);
- exit 1: anything else is a bug in arklow, reported as ``error: internal error (<type>): <text>``
  so it can be quoted in a report; set ``ARKLOW_DEBUG=1`` to see its traceback instead;
- exit 130 on Ctrl-C, and a quiet exit 1 when stdout is closed early (``arklow ... | head``).
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import os
import sys
from typing import NoReturn

import click

from arklow_pulumi.core.errors import ArklowError
from arklow_pulumi.settings import DEBUG_ENV

# command name -> "module:attribute"
COMMANDS: dict[str, str] = {
    "allocate": "arklow_pulumi.cli.allocate:allocate",
    "validate": "arklow_pulumi.cli.allocate:validate",
    "topology": "arklow_pulumi.cli.topology:topology",
    "store": "arklow_pulumi.cli.store:store",
    "supply": "arklow_pulumi.cli.supply:supply",
    "dev": "arklow_pulumi.cli.dev:dev",
    "simulate": "arklow_pulumi.cli.simulate:simulate",
    "what-if": "arklow_pulumi.cli.whatif:what_if",
    "controller": "arklow_pulumi.cli.controller:controller",
}
USAGE = 2
INTERNAL = 1
INTERRUPTED = 130
# One-shot commands that hold nothing to clean up at exit (no child process, file lock, server or
# buffered log): the process ends as soon as their output is flushed, without tearing down every
# object they built (a tenth of a second for 100,000 lanes).
QUICK_EXIT = frozenset({"allocate", "validate"})


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


def one_line(text: str) -> str:
    """``text`` on one line, scrubbed of passwords: line breaks and tabs become spaces, other
    control characters are escaped (a name holding one cannot break the line)."""
    from arklow_pulumi.redaction import scrub

    flat = " ".join(scrub(text).split())
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in flat)


def fail(message: str, code: int = USAGE) -> NoReturn:
    """One line on stderr, nothing on stdout, a non-zero exit."""
    click.echo(f"error: {one_line(message)}", err=True)
    sys.exit(code)


def describe_usage_error(exc: click.ClickException) -> str:
    """A click usage error as ``<command path>: <message>`` (the message names the option). A
    group run without a command (click would print its whole help) names the commands instead."""
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else "arklow"
    if isinstance(exc, click.exceptions.NoArgsIsHelpError) and ctx is not None:
        group = ctx.command
        names = group.list_commands(ctx) if isinstance(group, click.Group) else []
        return f"{where}: missing command (one of: {', '.join(names)}); see `{where} --help`"
    return f"{where}: {exc.format_message()}"


def main() -> NoReturn:
    try:
        code = cli.main(standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:  # usage errors and click.BadParameter from callbacks
        fail(describe_usage_error(exc))
    except (click.Abort, KeyboardInterrupt):
        fail("interrupted", INTERRUPTED)
    except ArklowError as exc:
        fail(str(exc))
    except RecursionError:
        fail("input: nested too deeply to read")
    except UnicodeEncodeError as exc:  # the output: stdout's encoding cannot hold a name
        encoding = getattr(sys.stdout, "encoding", None) or "?"
        fail(
            f"output: cannot be written in this terminal's encoding ({encoding}): {exc.reason}"
            f" for {exc.object[exc.start : exc.end]!r}; set PYTHONIOENCODING=utf-8"
            " (or use --format json, which escapes it)"
        )
    except UnicodeError as exc:
        fail(f"input: not readable as text: {exc}")
    except BrokenPipeError:
        _silence_stdout()
        sys.exit(INTERNAL)
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        fail(f"{where}{exc.strerror or exc}")
    except Exception as exc:
        if DEBUG_ENV.get():
            raise
        fail(f"internal error ({type(exc).__name__}): {exc}", INTERNAL)
    sys.exit(code if isinstance(code, int) else 0)


def run() -> NoReturn:
    """The ``arklow`` console script: :func:`main`, then for a :data:`QUICK_EXIT` command an
    immediate exit once stdout and stderr are flushed."""
    if len(sys.argv) < 2 or sys.argv[1] not in QUICK_EXIT:
        main()
    # The cyclic collector stays off to the end: the command turns it off while it works anyway
    # (see arklow_pulumi.cli.allocate), and turning it back on would make the next allocation
    # scan every object built so far (0.7 s for 100,000 lanes) just before the process ends.
    gc.disable()
    try:
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if isinstance(exc.code, str):
            sys.stderr.write(f"{exc.code}\n")
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _silence_stdout()
            code = code or INTERNAL
        sys.stderr.flush()
        os._exit(code)


def _silence_stdout() -> None:
    """The reader went away: point stdout at /dev/null so flushing it at exit raises nothing."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
