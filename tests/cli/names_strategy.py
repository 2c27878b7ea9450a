"""Valid names for the round-trip tests: anything the one name rule accepts, with the names that
broke a reader or a writer before weighted in (spreadsheet formulas, markdown, YAML 1.1
scalars, quotes and commas, look-alike Unicode)."""

from __future__ import annotations

import unicodedata
from typing import Any

from hypothesis import strategies as st

from arklow_pulumi.core.limits import name_problem

TRICKY = [
    "=1+1", "+x", "-x", "@SUM(A1)", "'=x", "''@y", "'plain", "a,b", 'say "hi"', "back`tick",
    "``", "a|b", "**bold**", "![i](https://example.invalid/x.png)", "@octocat", "<b>x</b>",
    "_em_", "[l](x)", "yes", "on", "1:30", "0o17", "017", "~", "null", "#x", "*a", "&a", "!t",
    "%x", "é", "Å", "a b", "x:", "- x", "[x]", "{x}", "\\", "'", '"', "x\\|y", "1e3", "<<",
]  # fmt: skip


def valid(name: str) -> bool:
    return name_problem(name) is None and "/" not in name


names: st.SearchStrategy[str] = st.one_of(
    st.sampled_from(TRICKY),
    st.text(min_size=1, max_size=12).map(lambda s: unicodedata.normalize("NFC", s).strip(" ")),
).filter(valid)


@st.composite
def topologies(draw: Any) -> dict[str, Any]:
    """1 to 4 destinations of valid names, each with 1 or 2 lanes of valid names, in their
    standalone pools (capacity 10 each)."""
    destinations = draw(st.lists(names, min_size=1, max_size=4, unique=True))
    return {
        "destinations": [
            {
                "name": d,
                "resources": ["gpu"],
                "standalone_capacity": {"gpu": 10},
                "lanes": [
                    {"name": lane, "limit": 5}
                    for lane in draw(st.lists(names, min_size=1, max_size=2, unique=True))
                ],
            }
            for d in destinations
        ]
    }


def lane_keys(document: dict[str, Any]) -> list[str]:
    return [f"{d['name']}/{lane['name']}" for d in document["destinations"] for lane in d["lanes"]]
