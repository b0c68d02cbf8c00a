"""Desk: the agent's durable work (tracks, tasks, iterations, friction, tips,
featured) and the record it keeps (diary facts, entities, daily reflections,
notes). The file formats are specified in ``docs/record.md``.

Layering: every module here is domain code that imports only ``ouro.store``,
``ouro.models`` and ``ouro.bundle`` -- except the two interface-edge modules
``api.py`` / ``record_api.py`` (the registry's tool functions) and
``hooks.py`` (the index write-through), which may reach the index layer.
"""
