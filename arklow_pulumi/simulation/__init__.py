"""Replaying a demand trace on a simulated clock against simulated supply (``arklow simulate``,
``arklow what-if``).

Every decision comes from the controller's own :func:`arklow_pulumi.core.deciding.decide` and the
pools' scale policies; this package only builds the topologies each policy stands for
(:mod:`.policies`), keeps the simulated groups (:mod:`.supplying`), splits a topology into
independent parts (:mod:`.units`) and runs the clock (:mod:`.simulating`). The one rule of its own
is ``free-for-all``'s capacity shared in proportion to demand (:mod:`.sharing`).
"""
