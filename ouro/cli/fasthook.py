"""The CLI fast path for the host hook commands.

Claude Code and Codex run ``ouro hook <host> <Event>`` at every session start,
prompt, compaction, stop and session end, and kill hooks that are slow, so
start-up time is most of the cost. ``try_run(argv)`` recognises exactly::

    ouro [--bundle B] [--json] hook (claude|codex) EVENT [--bundle B] [--block-on-debt]

(options after ``hook HOST`` in any order, ``--bundle=B`` spelt either way)
and runs the hook through ``ouro.hooks.stdio.run_stdio``, the function the
click command calls, so the behaviour is the same. Anything else — ``hook
install``, ``--help``, a missing or extra argument, an unknown or repeated
option, a ``--bundle`` value click would refuse (empty, or an existing file)
— returns None and the full click CLI handles it with its standard messages.
This module imports only the standard library; the hook path it starts
imports neither click nor pydantic for UserPromptSubmit, Stop and SessionEnd
(unless a host receipt of the session is waiting for the host's transcript:
then ``run_hook`` settles it first, with the claim and task writers).
"""

from __future__ import annotations

import os

HOSTS = ("claude", "codex")


def _bundle_value(value: str) -> str | None:
    """``value`` if click's ``Path(file_okay=False)`` would accept it, else None."""
    if not value or os.path.isfile(value):
        return None
    return value


def _option(argv: list[str], i: int) -> tuple[str, str | None, int] | None:
    """(name, value, next index) of the option at ``argv[i]``; None if malformed."""
    name, eq, inline = argv[i].partition("=")
    if name == "--bundle":
        if eq:
            return name, inline, i + 1
        if i + 1 < len(argv) and not argv[i + 1].startswith("-"):
            return name, argv[i + 1], i + 2
        return None
    if name in ("--json", "--block-on-debt") and not eq:
        return name, None, i + 1
    return None


def parse(argv: list[str]) -> tuple[str, str, str | None, bool] | None:
    """``(host, event, bundle, block_on_debt)`` or None when not a plain hook run."""
    global_bundle: str | None = None
    i = 0
    seen: set[str] = set()
    while i < len(argv) and argv[i].startswith("-"):
        opt = _option(argv, i)
        if opt is None or opt[0] == "--block-on-debt" or opt[0] in seen:
            return None
        name, value, i = opt
        seen.add(name)
        if name == "--bundle":
            global_bundle = _bundle_value(value or "")
            if global_bundle is None:
                return None
    if argv[i : i + 1] != ["hook"] or i + 1 >= len(argv) or argv[i + 1] not in HOSTS:
        return None
    host = argv[i + 1]
    event: str | None = None
    bundle: str | None = None
    block = False
    seen = set()
    j = i + 2
    while j < len(argv):
        arg = argv[j]
        if not arg.startswith("-"):
            if event is not None:
                return None  # an extra argument: click says so
            event = arg
            j += 1
            continue
        opt = _option(argv, j)
        if opt is None or opt[0] == "--json" or opt[0] in seen:
            return None
        name, value, j = opt
        seen.add(name)
        if name == "--block-on-debt":
            block = True
        else:
            bundle = _bundle_value(value or "")
            if bundle is None:
                return None
    if event is None:
        return None
    return host, event, bundle or global_bundle, block


def try_run(argv: list[str]) -> int | None:
    """Run a host hook and return the exit code (always 0), or None for the full CLI."""
    parsed = parse(argv)
    if parsed is None:
        return None
    host, event, bundle, block = parsed
    from ouro.hooks.stdio import run_stdio

    run_stdio(host, event, bundle=bundle, block_on_debt=block)
    return 0
