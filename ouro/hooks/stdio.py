"""One hook run on the real standard streams: what the host actually executes.

``run_stdio(host_name, event, bundle=…, block_on_debt=…)`` reads the host's
JSON from stdin (at most ``ouro.edge.HOOK_STDIN`` characters, bounded while it
is read: ``ouro.store.bounded``), runs the hook (``ouro.hooks.common.run_hook``, which fails
open), writes the one-line reasons to stderr and the host JSON, if any, to
stdout. The CLI's ``ouro hook <host> EVENT`` (``ouro.cli.hook``) calls it;
for Pi and OpenCode it first translates the shim's stdin (``ouro.hooks.pi.translate``,
``ouro.hooks.opencode.common_stdin``).

Inside a habit's private session (``ouro.lane.runner_session``: the runner's
variables, which a host passes on to its hooks) the hook reads its stdin and
does nothing else: it records nothing, injects nothing and says so on stderr
only. A host that loaded ouro's hooks there anyway (from the user's own config
or a plugin; the runner keeps the project's out, ``ouro.habits.agents``) must
not write the habit's run into the main line's sentinel, hook state or
session events: the runner records the run, in its receipt.
"""

from __future__ import annotations

import sys

from ouro.edge import HOOK_STDIN
from ouro.errors import OuroError
from ouro.hooks.common import Host, Options, run_hook
from ouro.hooks.handlers import HANDLERS
from ouro.lane import runner_session
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
    inside = runner_session()
    if inside is not None:
        _inside_habit(host, event, inside)
        return
    # a stdin that cannot be read or translated is the reason run_hook fails open
    # with (its notice names it), never an empty stdin
    unreadable: OuroError | None = None
    stdin_text = ""
    try:
        stdin_text = read_stdin(limit=HOOK_STDIN, what="hook stdin")
    except OuroError as exc:
        unreadable = exc
    # the Pi shim pipes Pi's own event JSON, the OpenCode plugin OpenCode's:
    # translated at the edge
    if unreadable is None and host.name == "pi":
        from ouro.hooks.pi import translate

        try:
            event, stdin_text = translate(event, stdin_text)
        except OuroError as exc:
            unreadable = exc
    elif unreadable is None and host_name == "opencode":
        from ouro.hooks.opencode import common_stdin

        stdin_text = common_stdin(event, stdin_text)
    outcome = run_hook(
        host,
        event,
        stdin_text,
        bundle_path=bundle,
        options=Options(block_on_debt=block_on_debt, dry_run=dry_run),
        handlers=HANDLERS,
        unreadable=unreadable,
    )
    for line in outcome.stderr:
        sys.stderr.write(line + "\n")
    if outcome.stdout:
        sys.stdout.write(outcome.stdout)
    sys.stdout.flush()


def _inside_habit(host: Host, event: str, inside: tuple[str, str]) -> None:
    """A hook in a habit's session: stdin read (the host is not left writing into a
    closed pipe), nothing written but one stderr line (and ``{}`` for a host that
    needs a JSON reply)."""
    try:  # read, never used
        read_stdin(limit=HOOK_STDIN, what="hook stdin")
        unread = ""
    except OuroError as exc:
        unread = f"; its stdin: {exc.message}"
    sys.stderr.write(
        f"ouro hook {host.name} {event}: inside habit session {inside[0]} (habit {inside[1]}): "
        "ouro's hooks record and inject nothing there (the habit's runner writes its receipt)"
        f"{unread}\n"
    )
    if host.always_json:
        sys.stdout.write("{}\n")
    sys.stdout.flush()
