"""The optional compiled modules and the switch that turns them off.

Four small C extensions are built at install (``setup.py``): the allocation engine's kernel
(``core/_filling.c``), the fast reader's lane loop (``core/_reading.c``), the block-YAML reader
(``_plain_yaml.c``) and the lane lines of ``arklow allocate``'s output (``cli/_render.c``). Each
stands in for code kept beside it as the reference, which runs when the module was not built (no
compiler at install) or when ``ARKLOW_PURE_PYTHON=1`` is set. The core and the CLI load theirs
here; :mod:`arklow_pulumi.yaml_plain` loads its own the same way (it sits beside the core in the
layers, so it does not import it).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

__all__ = ["load_compiled"]


def load_compiled(name: str) -> ModuleType | None:
    """The compiled module ``name`` (dotted), or ``None`` when it is missing or
    ``ARKLOW_PURE_PYTHON=1`` asks for the references. Imported by name: an import statement of a
    module directly under ``arklow_pulumi`` reads to import-linter as one of the package itself."""
    if os.environ.get("ARKLOW_PURE_PYTHON") == "1":
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None
