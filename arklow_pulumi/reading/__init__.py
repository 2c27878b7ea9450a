"""Every document the project reads — topology and demand files, stack config, tokens files,
resource inputs, ``POST /v1/demand`` bodies — goes one way: text to plain values
(:mod:`~arklow_pulumi.reading.text`: JSON by the standard library, YAML by PyYAML over libyaml,
a key given twice refused in both), plain values to the schema's models with each field checked
by the rules of :mod:`arklow_pulumi.core.limits` (:mod:`~arklow_pulumi.reading.parsing`,
:mod:`~arklow_pulumi.reading.spec`), models to core values whose cross-object rules the core
checks (:func:`~arklow_pulumi.core.rules.assemble_topology`).
:mod:`~arklow_pulumi.reading.files` reads files that way.

In this project a *document* is always a value as plain JSON-ready data (dicts, lists, strings,
numbers, booleans, ``None``): what a file or a body parses to here, and what
:mod:`arklow_pulumi.topology_documents` and :mod:`arklow_pulumi.controller.tick.documents` write.
"""
