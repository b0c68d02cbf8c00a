"""``PreToolUse``: warn when the agent is about to edit a path another agent locked.

Reads the file paths an editing tool is about to change from the host's tool
input — Claude Code ``Edit``/``Write``/``MultiEdit`` (``file_path``),
``NotebookEdit`` (``notebook_path``), and a Codex ``apply_patch`` command
(its ``*** Add/Update/Delete File:`` lines) — and looks them up in the path
locks (``ouro.locks.holders_of``: live locks of *other* agents that overlap).
The acting agent is the ``agent`` setting (``ouro.desk.tasks.acting_agent``);
when none is set every lock counts as another's.

Advisory: the reply is a warning (``systemMessage`` for the user, and a line
on stderr); it never blocks the tool. Pure: it writes nothing.
"""

from __future__ import annotations

import re
from typing import Any

from ouro.bundle import Bundle
from ouro.errors import OuroError
from ouro.hooks.common import HookInput, Host, Options, Reply
from ouro.models.clock import utc_now

_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.MULTILINE)
MAX_PATHS = 50


def edited_paths(tool: Any) -> list[str]:
    """The paths an editing tool call is about to change (none for other tools)."""
    if not isinstance(tool, dict) or not isinstance(tool.get("tool_input"), dict):
        return []
    args: dict[str, Any] = tool["tool_input"]
    found = [
        args[k] for k in ("file_path", "notebook_path", "path") if isinstance(args.get(k), str)
    ]
    command = args.get("command") or args.get("input") or args.get("patch")
    if isinstance(command, list):
        command = "\n".join(str(c) for c in command)
    if isinstance(command, str) and "*** Begin Patch" in command:
        found.extend(m.strip() for m in _PATCH_FILE.findall(command))
    return list(dict.fromkeys(p for p in found if p))[:MAX_PATHS]


def pre_tool_use(bundle: Bundle, host: Host, inp: HookInput, options: Options) -> Reply:
    from ouro.locks import holders_of

    reply = Reply()
    paths = edited_paths(inp.tool)
    if not paths:
        return reply
    try:
        from ouro.desk.tasks import acting_agent

        me: str | None = acting_agent(bundle, None)
    except OuroError:
        me = None
    now = utc_now()
    lines = []
    for path in paths:
        try:
            held = holders_of(bundle, path, agent=me, now=now)
        except OuroError as exc:
            reply.warnings.append(f"path locks not checked for {path}: {exc.message}")
            continue
        for lk in held:
            why = f" ({lk.reason})" if lk.reason else ""
            lines.append(f"{path}: locked by {lk.agent}{why} until {lk.expires_at}")
    if lines:
        text = (
            "ouro: about to edit a path another agent holds — "
            + "; ".join(lines)
            + ". Ask the holder (ouro message send AGENT ... --kind question) or wait; "
            "'ouro lock list' shows every lock."
        )
        reply.system_message = text
        reply.warnings.append(text)
    return reply
