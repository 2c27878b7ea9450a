"""The metric and label names a PromQL expression uses, read without a PromQL parser (the
expressions checked here are the project's own: tests/monitoring). Grafana's variables are
replaced first (:func:`instantiate`). ``promtool check rules`` checks the syntax separately."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
KEYWORDS = frozenset(
    {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless"}
    | {"offset", "bool", "atan2", "inf", "nan", "Inf", "NaN"}
)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_SELECTOR = re.compile(rf"({NAME})?\s*\{{([^}}]*)\}}")
_MATCHER = re.compile(rf"\s*({NAME})\s*(?:=~|!~|!=|=)\s*__S\d+__\s*")
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
_RANGE = re.compile(r"\[[^\]]*\]")
_IDENT = re.compile(rf"(?<![\w:.]){NAME}")


@dataclass
class Names:
    metrics: set[str] = field(default_factory=set)
    # label names matched in a selector, by the metric they select (None: no metric named)
    selected: dict[str | None, set[str]] = field(default_factory=dict)
    # label names in by/without/on/ignoring/group_* clauses
    grouping: set[str] = field(default_factory=set)


def instantiate(expr: str) -> str:
    """A Grafana query made plain PromQL: range variables become 5m, template variables ".*"."""
    expr = re.sub(r"\$__(rate_interval|interval|range)\b", "5m", expr)
    expr = re.sub(r"\$\{?(?:__)?[a-zA-Z_][a-zA-Z0-9_]*(?::[a-z]+)?\}?", ".*", expr)
    return expr


def names_in(expr: str) -> Names:
    found = Names()
    strings: list[str] = []

    def keep_string(match: re.Match[str]) -> str:
        strings.append(match.group(0))
        return f" __S{len(strings) - 1}__ "

    text = _STRING.sub(keep_string, expr)

    def selector(match: re.Match[str]) -> str:
        metric, body = match.group(1), match.group(2)
        labels = {m.group(1) for m in _MATCHER.finditer(body)}
        rest = _MATCHER.sub("", body).replace(",", "").strip()
        if rest:
            raise ValueError(f"cannot read the matchers {{{body}}} in {expr!r}")
        if metric in KEYWORDS:  # e.g. "or {…}": a selector without a metric name
            found.selected.setdefault(None, set()).update(labels)
            return f" {metric} "
        if metric is not None:
            found.metrics.add(metric)
        found.selected.setdefault(metric, set()).update(labels)
        return " "

    text = _SELECTOR.sub(selector, text)

    def grouping(match: re.Match[str]) -> str:
        found.grouping.update(n.strip() for n in match.group(2).split(",") if n.strip())
        return " "

    text = _GROUPING.sub(grouping, text)
    text = _RANGE.sub(" ", text)
    for match in _IDENT.finditer(text):
        name = match.group(0)
        after = text[match.end() :].lstrip()
        if name in KEYWORDS or after.startswith("(") or re.fullmatch(r"__S\d+__", name):
            continue
        found.metrics.add(name)
    return found
