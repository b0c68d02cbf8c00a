"""One hook run on the real standard streams: what the host actually executes.

``run_stdio(host_name, event, bundle=…, block_on_debt=…)`` reads the host's
JSON from stdin (at most ``ouro.edge.HOOK_STDIN`` characters, bounded while it
is read: ``ouro.store.bounded``), runs the hook (``ouro.hooks.common.run_hook``, which fails
open), writes the one-line reasons to stderr and the host JSON, if any, to
stdout. The CLI's ``ouro hook <host> EVENT`` (``ouro.cli.hook``) calls it;
for Pi and OpenCode it first translates the shim's stdin (``ouro.hooks.pi.translate``,
``ouro.hooks.opencode.common_stdin``).
"""

from __future__ import annotations

import sys

from ouro.edge import HOOK_STDIN
from ouro.errors import OuroError
from ouro.hooks.common import Host, Options, run_hook
from ouro.hooks.handlers import HANDLERS
from ouro.store.bounded import read_stdin


def host_named(name: str) -> Host:
    """The contract of host ``name`` (one of ``ouro.cli.hook.HOSTS``)."""
    if name == "claude":
        from ouro.hooks.claude import HOST
    elif name == "codex":
        from ouro.hooks.codex import HOST
    elif name == "gemini":
        from ouro.hooks.gemini import HOST
    elif name == "pi":
        from ouro.hooks.pi import HOST
    elif name == "opencode":
        from ouro.hooks.opencode import HOST
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
    if host.name == "pi":  # the Pi shim pipes Pi's own event JSON: translate at the edge
        from ouro.hooks.pi import translate

        try:
            event, stdin_text = translate(event, stdin_text)
        except OuroError as exc:  # run_hook then names it, failing open
            sys.stderr.write(f"ouro hook pi {event}: {exc.message}\n")
            stdin_text = ""
    elif host_name == "opencode":  # the plugin pipes OpenCode's JSON: translate at the edge
        from ouro.hooks.opencode import common_stdin

        stdin_text = common_stdin(event, stdin_text)
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
