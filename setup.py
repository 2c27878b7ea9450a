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

STRICT_FP = ["-ffp-contract=off", "-fno-fast-math"]  # the floating-point operations as written


def optional(module: str, *flags: str) -> Extension:
    """The C extension ``module`` from its ``.c`` file beside where it is imported from."""
    source = module.replace(".", "/") + ".c"
    return Extension(
        module, [source], extra_compile_args=["-O2", *flags, "-std=c99"], optional=True
    )


setup(
    ext_modules=[
        optional("arklow_pulumi.core._filling", *STRICT_FP),
        optional("arklow_pulumi.core._reading"),
        optional("arklow_pulumi.cli._render", *STRICT_FP),
        optional("arklow_pulumi._plain_yaml"),
    ]
)
