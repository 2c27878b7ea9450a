"""The compiled progressive-filling kernel (``arklow_pulumi.core._filling``), the compiled lane
loop of the fast document reader (``arklow_pulumi.core._reading``) and the compiled lane
rendering of ``arklow allocate`` (``arklow_pulumi.cli._render``).

Everything else about the package is in ``pyproject.toml``. The extensions are optional: without
a C compiler the install still succeeds, :mod:`arklow_pulumi.core.filling` runs its Python
reference (``filling.NATIVE`` says which is in use) and :mod:`arklow_pulumi.cli.rendering` its
own (``rendering.NATIVE``). The flags keep the floating-point operations exactly those written
(no fused multiply-add, no reassociation), so the kernel is bit-identical to the Python one.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "arklow_pulumi.core._filling",
            sources=["arklow_pulumi/core/_filling.c"],
            extra_compile_args=["-O2", "-ffp-contract=off", "-fno-fast-math", "-std=c99"],
            optional=True,
        ),
        Extension(
            "arklow_pulumi.core._reading",
            sources=["arklow_pulumi/core/_reading.c"],
            extra_compile_args=["-O2", "-std=c99"],
            optional=True,
        ),
        Extension(
            "arklow_pulumi.cli._render",
            sources=["arklow_pulumi/cli/_render.c"],
            extra_compile_args=["-O2", "-ffp-contract=off", "-fno-fast-math", "-std=c99"],
            optional=True,
        ),
        Extension(
            "arklow_pulumi._plain_yaml",
            sources=["arklow_pulumi/_plain_yaml.c"],
            extra_compile_args=["-O2", "-std=c99"],
            optional=True,
        ),
    ]
)
