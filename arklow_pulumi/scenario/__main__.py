"""``python -m arklow_pulumi.scenario``: the same as ``arklow dev run``."""

from arklow_pulumi.cli.main import cli

cli(["dev", "run"])
