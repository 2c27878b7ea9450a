"""``python -m arklow_pulumi.scenario [--tick S]``: the same as ``arklow dev run``."""

import sys

from arklow_pulumi.cli.main import main

sys.argv = ["arklow", "dev", "run", *sys.argv[1:]]
main()
