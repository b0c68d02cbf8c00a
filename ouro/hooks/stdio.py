"""One hook run on the real standard streams: what the host actually executes.

``run_stdio(host_name, event, bundle=…, block_on_debt=…)`` reads the host's
JSON from stdin (at most ``ouro.edge.HOOK_STDIN`` characters, bounded while it
is read: ``ouro.store.bounded``), runs the hook (``ouro.hooks.common.run_hook``, which fails
open), writes the one-line reasons to stderr and the host JSON, if any, to
stdout. The CLI's ``ouro hook claude|codex|gemini EVENT`` (``ouro.cli.hook``) calls it.
"""

from __future__ import annotations

import sys

from ouro.edge import HOOK_STDIN
from ouro.errors import OuroError
from ouro.hooks.common import Host, Options, run_hook
from ouro.hooks.handlers import HANDLERS
from ouro.store.bounded import read_stdin


def host_named(name: str) -> Host:
    """The contract of host ``name`` ("claude", "codex" or "gemini")."""
    if name == "claude":
        from ouro.hooks.claude import HOST
    elif name == "codex":
        from ouro.hooks.codex import HOST
    elif name == "gemini":
        from ouro.hooks.gemini import HOST
    else:
        raise ValueError(f"unknown hook host {name!r}")
    return HOST


def run_stdio(
    host_name: str, event: str, *, bundle: str | None, block_on_debt: bool, dry_run: bool = False
) -> None:
    host = host_named(host_name)
    try:
        stdin_text = read_stdin(limit=HOOK_STDIN, what="hook stdin")
    except OuroError as exc:  # fail open: one line, then the hook runs without input
        stdin_text = ""
        sys.stderr.write(f"ouro hook {host_name} {event}: {exc.message}\n")
    outcome = run_hook(
        host,
        event,
        stdin_text,
        bundle_path=bundle,
        options=Options(block_on_debt=block_on_debt, dry_run=dry_run),
        handlers=HANDLERS,
    )
    for line in outcome.stderr:
        sys.stderr.write(line + "\n")
    if outcome.stdout:
        sys.stdout.write(outcome.stdout)
    sys.stdout.flush()
