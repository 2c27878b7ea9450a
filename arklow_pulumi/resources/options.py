"""What every Arklow resource adds to its inputs and options: the store URL, kept secret.

The URL is resolved in the Pulumi program: the resource's ``store=`` argument, else
``arklow:store`` from stack config, else ``$ARKLOW_STORE``, else ``sqlite:///<dir of
Pulumi.yaml>/.arklow/arklow.db``. It travels as a resource input (so ``delete`` and ``refresh``,
which run the provider code from state, reach the same store) and is always a secret, so a
PostgreSQL password never lands in plain state.

Every resource also passes its owner, ``owner_stack`` and ``owner_urn``: the provider records them
on the rows it creates (see :mod:`arklow_pulumi.store.identity`). They are inputs because the
provider process cannot learn them (its ``pulumi.get_stack()`` is "stack"; the SDK's ``create``
gets no URN). The URN is computed here exactly as the engine forms it, parent included.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import pulumi

from arklow_pulumi.resources import registry
from arklow_pulumi.settings import STORE
from arklow_pulumi.store_location import find_project_dir, resolve_store_url

A = TypeVar("A")


def resource_args(
    kind: str,
    resource_name: str,
    args_type: type[A],
    positional: int,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> tuple[A, pulumi.ResourceOptions | None]:
    """The ``*Args`` value and the options of one constructor call of an Arklow resource.

    The forms pulumi-aws accepts: ``Kind(name, KindArgs(...), opts)`` (each also by keyword,
    ``args=``/``opts=``) and ``Kind(name, opts=None, **fields)``; and, as this library always
    has, the first ``positional`` fields by position (``Pool("p", "gpu", capacity=4)``). Every
    other mix (fields beside an ``*Args`` value, options in a field's place, a field twice, an
    unknown name) is a :class:`TypeError` naming the argument: nothing is silently dropped.
    """
    where = f"{kind}({resource_name!r})"
    opts = kwargs.pop("opts", None)
    given = kwargs.pop("args", None)
    rest = args
    if rest and isinstance(rest[0], args_type):
        if given is not None:
            raise TypeError(f"{where}: 'args' given twice (by position and by keyword)")
        given, rest = rest[0], rest[1:]
    if given is not None:
        return _with_args(where, args_type, given, rest, kwargs, opts)
    names = [f.name for f in dataclasses.fields(args_type)]  # type: ignore[arg-type]
    if len(rest) > positional:
        extra = rest[positional]
        hint = " (pass options as opts=)" if isinstance(extra, pulumi.ResourceOptions) else ""
        raise TypeError(
            f"{where}: takes at most {positional} field(s) by position, got {len(rest)}{hint}"
        )
    for name, value in zip(names, rest, strict=False):
        if name in kwargs:
            raise TypeError(f"{where}: argument {name!r} given twice (by position and by keyword)")
        kwargs[name] = value
    unknown = [key for key in kwargs if key not in names]
    if unknown:
        raise TypeError(f"{where}: unexpected argument {unknown[0]!r}")
    for name, value in kwargs.items():
        if isinstance(value, pulumi.ResourceOptions):
            raise TypeError(f"{where}: argument {name!r} is a ResourceOptions (pass it as opts=)")
    required = [
        f.name
        for f in dataclasses.fields(args_type)  # type: ignore[arg-type]
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    missing = [name for name in required if kwargs.get(name) is None]
    if missing:
        raise TypeError(f"{where}: argument {missing[0]!r} is required")
    given_fields = {k: v for k, v in kwargs.items() if v is not None}  # None: the default
    return args_type(**given_fields), _checked_opts(where, opts)


def _with_args(
    where: str,
    args_type: type[A],
    given: Any,
    rest: tuple[Any, ...],
    kwargs: dict[str, Any],
    opts: Any,
) -> tuple[A, pulumi.ResourceOptions | None]:
    name = args_type.__name__
    if not isinstance(given, args_type):
        raise TypeError(f"{where}: argument 'args' must be a {name}, got {type(given).__name__}")
    if kwargs:
        first = next(iter(kwargs))
        raise TypeError(f"{where}: argument {first!r} given beside a {name}: set it on the {name}")
    if len(rest) > 1:
        raise TypeError(f"{where}: after a {name} only the options may follow, got {len(rest)}")
    if rest:
        if opts is not None:
            raise TypeError(f"{where}: argument 'opts' given twice (by position and by keyword)")
        opts = rest[0]
    return given, _checked_opts(where, opts)


def _checked_opts(where: str, opts: Any) -> pulumi.ResourceOptions | None:
    if opts is not None and not isinstance(opts, pulumi.ResourceOptions):
        raise TypeError(
            f"{where}: argument 'opts' must be a pulumi.ResourceOptions, got {type(opts).__name__}"
        )
    return opts


def store_input(explicit: pulumi.Input[str] | None) -> pulumi.Output[str]:
    if explicit is not None:
        return pulumi.Output.secret(explicit)
    configured = pulumi.Config("arklow").get_secret(STORE.short)
    if configured is not None:
        return configured
    return pulumi.Output.secret(resolve_store_url(project_dir=_project_dir()))


def owner_inputs(
    kind: str, resource_name: str, opts: pulumi.ResourceOptions | None
) -> dict[str, Any]:
    """``owner_stack`` and ``owner_urn`` of the Arklow resource ``kind`` named ``resource_name``."""
    parent = opts.parent if opts is not None else None
    urn = pulumi.create_urn(resource_name, f"pulumi-python:dynamic/arklow:{kind}", parent)
    return {"owner_stack": pulumi.get_stack(), "owner_urn": urn}


def _project_dir() -> Path:
    try:
        root = pulumi.get_root_directory()
    except Exception:  # not running under the engine (unit tests with mocks)
        root = ""
    return Path(root) if root else find_project_dir()


def options(
    opts: pulumi.ResourceOptions | None, depends_on: Sequence[pulumi.Resource] = ()
) -> pulumi.ResourceOptions:
    ours = pulumi.ResourceOptions(additional_secret_outputs=["store"], depends_on=list(depends_on))
    return pulumi.ResourceOptions.merge(opts, ours)


def reference(
    value: Any, attribute: str = "arklow_name", kind: str = "pool"
) -> tuple[Any, list[pulumi.Resource]]:
    """A name given as a string, an Output, or the resource itself (then also a dependency).

    A plain name of a resource declared earlier in the same program is a dependency too: a pool
    name its ``Pool`` (``<d>/<r>``, a standalone pool, the ``Destination`` ``d``), a destination
    name its ``Destination``. Without it the engine could create the reference before the
    object it names, or delete them in the wrong order."""
    if isinstance(value, pulumi.CustomResource):
        return getattr(value, attribute), [value]
    name = registry.plain(value)
    if name is None:
        return value, []
    if kind == "destination":
        entry = registry.named("Destination", name)
        return value, [entry.resource] if entry is not None else []
    return value, registry.dependencies([name])
