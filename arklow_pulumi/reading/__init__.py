"""Every document the project reads — topology and demand files, stack config, resource inputs,
tokens files — goes one way: text to plain values (:mod:`~arklow_pulumi.reading.text`: JSON by
the standard library, YAML by PyYAML over libyaml), plain values to the schema's models, each field
checked (:mod:`~arklow_pulumi.reading.parsing`, :mod:`~arklow_pulumi.reading.spec`), models to
core values whose cross-object rules the core checks
(:func:`~arklow_pulumi.core.building.assemble_topology`). :mod:`~arklow_pulumi.reading.files`
reads files that way.
"""
