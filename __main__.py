"""The root Pulumi program: declares the topology held in this stack's ``arklow:topology`` config
(``stacks/Pulumi.<stack>.yaml``). The logic lives in :mod:`arklow_pulumi.program`."""

import sys

if sys.argv[0] == "" and len(sys.argv) == 2:
    # `pulumi preview --policy-pack policy` on the engine built here: its Python host (3.68)
    # starts the pack as `python "" ENGINE_ADDRESS` in this directory (docs/whatif.md).
    from arklow_pulumi.simulation.reviewing import run_project_policy_pack

    run_project_policy_pack()
else:
    from arklow_pulumi.program import main

    main()
