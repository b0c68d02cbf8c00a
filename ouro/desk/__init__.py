"""Desk: the agent's durable work (tracks, tasks, iterations, friction, tips,
featured) and the record it keeps (diary facts, entities, daily reflections,
notes). The file formats are specified in ``docs/record.md``.

Layering: Desk is the lowest domain: its modules import only the layers below
the domains (``ouro.store``, ``ouro.models``, ``ouro.bundle``, ``ouro.config``,
``ouro.orient_types``), never another domain, the index or a front end; the
library (``ouro.api``) keeps derived state current after a write through
``ouro.derived.after_write``. ``tests/test_layers.py`` checks it and lists, with
the reason, the edges still to remove.
"""
