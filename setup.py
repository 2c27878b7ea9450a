"""The compiled progressive-filling kernel (``arklow_pulumi.core._filling``).

Everything else about the package is in ``pyproject.toml``. The extension is optional: without
a C compiler the install still succeeds and :mod:`arklow_pulumi.core.filling` runs its Python
reference (``filling.NATIVE`` says which is in use). The flags keep the floating-point
operations exactly those written (no fused multiply-add, no reassociation), so the kernel is
bit-identical to the Python one.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "arklow_pulumi.core._filling",
            sources=["arklow_pulumi/core/_filling.c"],
            extra_compile_args=["-O2", "-ffp-contract=off", "-fno-fast-math", "-std=c99"],
            optional=True,
        )
    ]
)
