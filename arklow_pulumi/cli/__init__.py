"""The ``arklow`` command line: plan, simulate and inspect."""
