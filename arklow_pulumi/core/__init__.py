"""The pure core of Arklow: the topology model, its rules, fair allocation and scale decisions.

Nothing in this package performs I/O or imports a cloud SDK, Pulumi, a database driver or an HTTP
library; adapters around it do. An import-linter contract (``pyproject.toml``) keeps it so.
"""
