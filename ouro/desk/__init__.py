"""Desk: the agent's durable work (tracks, tasks, iterations, friction, tips,
featured) and the record it keeps (diary facts, entities, daily reflections,
notes). The file formats are specified in ``docs/record.md``.

Layering: every module here is domain code that imports only ``ouro.store``,
``ouro.models`` and ``ouro.bundle``; the library (``ouro.api``) keeps derived
state current after a write through ``ouro.derived.after_write``.
``api.py`` / ``record_inputs.py`` hold the old CLI's input models only
(transitional).
"""
