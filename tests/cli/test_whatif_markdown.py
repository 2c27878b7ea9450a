"""What-if's markdown keeps every name in its code span (issue 30, item 5): a backtick, a pipe,
``**``, ``![..](..)``, ``@someone`` or HTML in a name is shown as itself, never as markup.
Checked with a CommonMark parser (markdown-it-py, GFM tables on)."""

from __future__ import annotations

import pytest
from hypothesis import given
from markdown_it import MarkdownIt

from arklow_pulumi.cli.whatif import code
from tests.cli.names_strategy import TRICKY, names

HOSTILE = [
    *TRICKY,
    "a`b", "``x``", "`", "x`", "`x", "a ``` b", "@team **now** ![x](https://example.invalid/i)",
    "<img src=x onerror=alert(1)>", "a|b|c", "x\\", "\\`", "[x]: https://example.invalid",
]  # fmt: skip


def cell_contents(markdown: str) -> list[tuple[str, str]]:
    """(token type, content) of every inline token of the rendered table's body cells."""
    parser = MarkdownIt("commonmark").enable("table")
    out = []
    for token in parser.parse(markdown):
        out += [(child.type, child.content) for child in token.children or []]
    return out


def table_of(name: str) -> str:
    return f"| lane | x |\n|---|---|\n| {code(name)} | y |\n"


@pytest.mark.parametrize("name", HOSTILE)
def test_a_name_is_one_code_span_in_a_table(name: str) -> None:
    inline = cell_contents(table_of(name))
    assert ("code_inline", name) in inline
    assert all(kind in ("text", "code_inline") for kind, _ in inline), inline
    assert sum(kind == "code_inline" for kind, _ in inline) == 1


@pytest.mark.parametrize("name", HOSTILE)
def test_a_name_is_one_code_span_in_a_line(name: str) -> None:
    parser = MarkdownIt("commonmark")
    tokens = parser.parse(f"**Change:** lane {code(name, in_table=False)} removed\n")
    inline = [(c.type, c.content) for t in tokens for c in t.children or []]
    assert ("code_inline", name) in inline
    assert [k for k, _ in inline if k not in ("text", "code_inline")] == [
        "strong_open",
        "strong_close",
    ]


@given(names)
def test_any_valid_name_stays_in_its_code_span(name: str) -> None:
    inline = cell_contents(table_of(name))
    assert ("code_inline", name) in inline
    assert all(kind in ("text", "code_inline") for kind, _ in inline)
