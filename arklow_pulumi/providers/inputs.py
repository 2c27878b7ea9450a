"""Inputs as the engine hands them over: unknown values in preview, numbers as floats.

``check`` validates with the same spec models as ``arklow validate`` and returns every problem as
a :class:`CheckFailure` whose reason is the exact ``arklow validate`` message. A field whose value
is not known yet (preview) is left out and its problems are dropped; it is checked again at ``up``.

Unknown values come in two shapes: the SDK's provider server deserializes ``check``/``diff``
inputs with ``keep_unknowns=True``, which yields :class:`pulumi.output.Unknown` objects; older
paths (and mocks) use the string sentinel :data:`pulumi.runtime.rpc.UNKNOWN`. Both are unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from pulumi.dynamic import CheckFailure, CheckResult
from pulumi.output import Unknown
from pulumi.runtime.rpc import UNKNOWN
from pydantic import BaseModel

from arklow_pulumi.core.errors import InvalidInput, Problem
from arklow_pulumi.reading.parsing import parse_model
from arklow_pulumi.reading.spec import TopologySpec

M = TypeVar("M", bound=BaseModel)


def is_unknown(value: Any) -> bool:
    """True when ``value`` is, or contains, a value the engine does not know yet (preview)."""
    if isinstance(value, Unknown):
        return True
    if isinstance(value, str):
        return value == UNKNOWN
    if isinstance(value, Mapping):
        return any(is_unknown(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(is_unknown(v) for v in value)
    return False


def shown(value: Any) -> str:
    """``value`` as a message names it: its repr, never an Unknown object's."""
    return "(not known yet)" if is_unknown(value) else repr(value)


def integral(value: Any) -> Any:
    """The engine sends every number as a float; counts are checked as the integers they are."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def failures(problems: Iterable[Problem], inputs: Mapping[str, Any]) -> list[CheckFailure]:
    return [CheckFailure(_property(p, inputs), str(p)) for p in problems]


def _property(problem: Problem, inputs: Mapping[str, Any]) -> str:
    head = problem.field.split(".")[0]
    if ", lane " in problem.obj:
        return "lanes"
    if head == "name" and "arklow_name" in inputs:
        return "arklow_name"
    return head


def parse_in_topology(
    model: type[M], collection: str, raw: Mapping[str, Any], parent: Mapping[str, Any] | None = None
) -> M:
    """Parse one object as an element of a topology document, so its problems carry exactly the
    names ``arklow validate`` gives them (``destination 'a', lane 'x': field 'limit': ...``)."""
    if parent is None:
        document: dict[str, Any] = {collection: [dict(raw)]}
    else:
        document = {"pools": [{**parent, collection: [dict(raw)]}]}
    spec = parse_model(TopologySpec, document, "topology")
    found = getattr(spec, collection) if parent is None else spec.pools[0].scale_targets
    parsed = found[0]
    if not isinstance(parsed, model):
        raise TypeError(f"{collection} of a topology are not {model.__name__}")
    return parsed


def check_model(
    parse: Callable[[dict[str, Any]], M],
    raw: Mapping[str, Any],
    news: Mapping[str, Any],
    more: Callable[[M], Iterable[Problem]],
    normalized: Callable[[M], dict[str, Any]],
    partial: Callable[[Mapping[str, Any]], Iterable[Problem]] | None = None,
) -> CheckResult:
    """Validate the known part of ``raw`` with ``parse``, then ``more`` (rules of one object).

    ``more`` needs the whole object, so it runs only when every field is known and parses. When
    some are not, ``partial`` (if given) still checks the cross-field rules it can on the fields
    that are known and did parse, so one ``check`` reports every problem it can see.
    """
    unknown = {key for key, value in raw.items() if is_unknown(value)}
    known = {key: value for key, value in raw.items() if key not in unknown and value is not None}
    try:
        spec = parse(known)
    except InvalidInput as exc:
        problems = [p for p in exc.problems if p.field.split(".")[0] not in unknown]
        failed = {p.field.split(".")[0] for p in exc.problems}
        parsed = {key: value for key, value in known.items() if key not in failed}
        extra = list(partial(parsed)) if partial is not None else []
        return CheckResult(dict(news), failures(_merged(problems, extra), news))
    if unknown:
        extra = list(partial(known)) if partial is not None else []
        return CheckResult(dict(news), failures(extra, news))
    found = list(more(spec))
    if found:
        return CheckResult(dict(news), failures(found, news))
    return CheckResult({**news, **normalized(spec)}, [])


def _merged(first: Iterable[Problem], second: Iterable[Problem]) -> list[Problem]:
    out: list[Problem] = []
    for problem in (*first, *second):
        if problem not in out:
            out.append(problem)
    return out
