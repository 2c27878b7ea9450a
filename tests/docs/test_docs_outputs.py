"""Every output README.md and docs/*.md show after a ``<!-- docs-output -->`` marker is what its
commands print (tools/docs_outputs.py runs them; ``make docs-outputs`` rewrites them)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.e2e.pulumi_cli import MISSING_ENGINE, engine_available

REPO = Path(__file__).resolve().parents[2]


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "docs_outputs", REPO / "tools" / "docs_outputs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


tool = _tool()
BLOCKS = [block for path in tool.documents() for block in tool.blocks(path)]


def test_there_are_shown_outputs_to_check() -> None:
    assert len(BLOCKS) >= 5


# a block with a set-up brings a stack up with the real engine on the local clouds
PARAMS = [
    pytest.param(block, marks=[pytest.mark.e2e] if block.setup else [], id=block.name)
    for block in BLOCKS
]


@pytest.mark.parametrize("block", PARAMS)
def test_shown_output_is_what_the_commands_print(block: Any) -> None:
    if block.setup and not engine_available():
        pytest.fail(MISSING_ENGINE, pytrace=False)
    printed = tool.run_block(block)
    assert tool.differences(block, printed) == [], "\n".join(tool.differences(block, printed))


@pytest.mark.parametrize(
    ("shown", "printed", "same"),
    [
        (["a", "b"], ["a", "b"], True),
        (["a", "b"], ["a", "c"], False),
        (["a", "…", "z"], ["a", "b", "c", "z"], True),
        (["a", "…", "z"], ["a", "z"], True),
        (["a", "…"], ["b"], False),
        (['{"store": "sqlite:///…/new.db"}'], ['{"store": "sqlite:////tmp/x/new.db"}'], True),
        (["x 1.0"], ["x 1.0 "], False),
    ],
)
def test_ellipsis_matching(shown: list[str], printed: list[str], same: bool) -> None:
    assert tool.matches(shown, printed) is same


def test_rewriting_keeps_elisions_and_replaces_shown_lines() -> None:
    shown = ["policy  served", "arklow  87.40%", "…"]
    printed = ["policy  served", "arklow  83.09%", "standalone  94%", "static  79%"]
    assert tool.rewritten(shown, printed) == ["policy  served", "arklow  83.09%", "…"]
    assert tool.rewritten(["a"], ["b", "c"]) == ["b", "c"]
