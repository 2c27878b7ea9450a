"""The root Pulumi program: declares the topology held in this stack's ``arklow:topology`` config
(``stacks/Pulumi.<stack>.yaml``). The logic lives in :mod:`arklow_pulumi.program`."""

from arklow_pulumi.program import main

main()
