"""The main job (``make run``, ``arklow dev run``): the whole product on one machine, one
simulated day.

Local clouds start (:mod:`arklow_pulumi.devservers.clouds`), ``pulumi up`` applies the dev stack
(:mod:`.stack`), and the real controller (:class:`arklow_pulumi.controller.tick.ticking.Controller`,
the same object ``arklow controller run`` runs) ticks on a simulated clock (:mod:`.clock`): each
step reports the built-in day's demand (:mod:`.day`) through the controller's own demand sink,
advances the clock by one interval and calls ``Controller.tick()`` — observe the store and the
local clouds, decide, resize the groups, publish. At noon a second ``pulumi up`` makes a
destination join the shared GPU pool. What each tick published is recorded (:mod:`.recording`)
and turned into a summary and an HTML report with charts (:mod:`.reporting`).
"""
