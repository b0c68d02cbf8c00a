"""Desk: the agent's durable work (tracks, tasks, iterations, friction, tips,
featured) and the record it keeps (diary facts, entities, daily reflections,
notes). The file formats are specified in ``docs/record.md``.

Layering: every module here is domain code that imports only ``ouro.store``,
``ouro.models`` and ``ouro.bundle`` -- except ``hooks.py`` (the index
write-through the library calls after a write, ``ouro.api._after``), which may
reach the index layer. ``api.py`` / ``record_inputs.py`` hold the old CLI's
input models only (transitional).
"""
