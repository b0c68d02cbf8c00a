"""Habits: scheduled private sessions that leave Arc run receipts.

Files this package owns:

- ``habits/<name>.yaml``: definitions, read only (``definition``);
- ``state/habits/<name>.json``: runtime state of each habit (``state``);
- ``state/sessions/<sessionId>/``: a run's private scratch, deleted after the
  run unless kept (``session``);
- ``state/locks/habit-<name>.lock``: one run of a habit at a time (``runner``);
- ``arc/flight-recorder/habit-receipts/<runId>.json``: one version-2 receipt
  per run (``receipt``), plus a ``habit_run`` flight-recorder event;
- ``arc/outbox/pending.jsonl``: surfaced messages queued to the main line,
  ``arc/outbox/acks.jsonl``: which were acknowledged (``surface``).

Modules: ``cron`` and ``cadence`` (schedules, due rules), ``definition``,
``config`` (bundle.json settings), ``policy`` (tool policy, envelope, the
tool gate), ``session``, ``outcome`` (derived from the bundle diff),
``runner`` (one run), ``body`` (a bounded process), ``agents`` (a habit
done by an agent: prompt, per-host launch, ouro's MCP server), ``schedule``
(due + tick), ``surface``, ``orientation`` (the main packet's habit lines), ``install``
(cron/launchd/systemd), ``api`` (tools and reads), ``schema``.
See docs/habits.md.
"""
