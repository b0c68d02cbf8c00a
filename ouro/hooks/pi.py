"""Pi's extension contract (``@mariozechner/pi-coding-agent`` 0.73.1: ``docs/
extensions.md``, ``docs/packages.md``, ``dist/core/extensions/types.d.ts``,
``dist/core/agent-session.js``; source ``packages/coding-agent/src/core/`` in
badlogic/pi-mono).

Pi has no command hooks: it loads TypeScript extensions (``.pi/extensions/
*.ts`` in the project, ``~/.pi/agent/extensions/``, or a Pi package's ``pi.
extensions`` list) that subscribe to lifecycle events. ouro ships one thin
extension, ``pi_extension.ts``: for each Pi event it pipes the event's JSON
to ``<command> hook pi <Event>`` and hands the reply back to Pi. Everything
else is here, in Python:

- ``EVENT_MAP``: which Pi event runs which ouro event (``session_start`` and
  ``session_compact`` → ``SessionStart``, ``before_agent_start`` →
  ``UserPromptSubmit``, ``session_before_compact`` → ``PreCompact``,
  ``turn_end`` of a turn that ends the work → ``Stop``, ``session_shutdown`` → ``SessionEnd``,
  ``tool_result`` of ``bash`` → ``PostToolUse`` (``PostToolUseFailure`` when
  Pi marks it an error), ``tool_call`` of ``edit``/``write`` → ``PreToolUse``);
- ``translate``: the shim's stdin (``{"pi": <Pi event name>, "event": …,
  "ctx": {sessionId, sessionFile, cwd, messages, lastUser}}``) into the hook input every
  host shares (``ouro.hooks.common.parse_input``); anything else passes through
  unchanged (``ouro hook install``'s dry check pipes the shared shape);
- the reply is the shared shape (``hookSpecificOutput.additionalContext``,
  ``systemMessage``, ``decision``/``reason``); the shim turns context into a
  Pi custom message the model sees (``before_agent_start`` → ``message``;
  ``session_start`` / ``session_compact`` → ``pi.sendMessage(…, {deliverAs:
  "nextTurn"})``, which Pi sends with the next prompt), a ``systemMessage``
  into ``ctx.ui.notify`` (stderr when Pi has no UI: print and JSON mode), and
  a Stop block into a follow-up user message (``pi.sendUserMessage(…,
  {deliverAs: "followUp"})``).

Pi keeps no cap on an extension's message (``emitBeforeAgentStart`` in
``dist/core/extensions/runner.js`` passes ``message.content`` through whole),
so ouro's own 4,000-character limit holds. Pi has no MCP client: the agent
reaches ouro through its ``bash`` tool and the ``ouro`` CLI, as the guide says.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ouro.errors import CorruptFile, InvalidInput
from ouro.hooks.common import Host
from ouro.store import jsonio

HOST = Host(
    name="pi",
    title="Pi",
    context_events=frozenset({"SessionStart", "UserPromptSubmit"}),
    silent_events=frozenset({"SessionEnd"}),
    context_limit=4000,
    settings_file=".pi/extensions/ouro.ts",
    # A matcher is tested against the event's tool name, or (turn_end) the stop reason
    # of the turn's assistant message: only a turn that ends the agent's work is a Stop.
    matchers={"PostToolUse": "bash", "PreToolUse": "edit|write", "Stop": "stop|length"},
    # Pi waits for an extension's handler as long as it runs; the shim kills the
    # command after these seconds (a hook must never hold Pi up for long).
    timeouts={
        "SessionStart": 30,
        "UserPromptSubmit": 10,
        "PreCompact": 30,
        "Stop": 10,
        "SessionEnd": 3,
        "PostToolUse": 10,
        "PreToolUse": 5,
    },
    guide_file="AGENTS.md",
    tool_events=("PostToolUse", "PreToolUse"),
)

#: Pi event → the ouro event (and so the installed command) it runs.
EVENT_MAP = {
    "session_start": "SessionStart",
    "session_compact": "SessionStart",
    "before_agent_start": "UserPromptSubmit",
    "session_before_compact": "PreCompact",
    "turn_end": "Stop",
    "session_shutdown": "SessionEnd",
    "tool_result": "PostToolUse",
    "tool_call": "PreToolUse",
}

#: the shim, shipped as package data; ``render`` fills in its one config line
TEMPLATE = Path(__file__).with_name("pi_extension.ts")
_CONFIG_LINE = re.compile(r"^const CONFIG = (?P<json>.*);$", re.MULTILINE)
_EXIT = re.compile(r"Command exited with code (-?\d+)\s*$")
#: Pi's session_start reasons → the SessionStart source every host shares
_SOURCES = {"startup": "startup", "new": "startup", "resume": "resume", "fork": "resume"}
#: the block reason starts so (``handlers.stop``); a run it started is a Stop continuation
_BLOCK_MARK = "Before stopping:"


def translate(event: str, text: str) -> tuple[str, str]:
    """(ouro event word, shared hook input text) for the shim's stdin ``text``."""
    try:
        data = jsonio.loads(text) if text.strip() else None
    except jsonio.JSONDecodeError:
        return event, text  # parse_input names what is wrong
    if not isinstance(data, dict) or not isinstance(data.get("pi"), str):
        return event, text
    pi_event = data["pi"]
    wanted = EVENT_MAP.get(pi_event)
    if wanted is None or wanted.lower() != event.replace("-", "").replace("_", "").lower():
        raise InvalidInput(
            f"the Pi event {pi_event!r:.40} does not run 'ouro hook pi {event:.40}'",
            hint="run 'ouro hook install pi' to rewrite .pi/extensions/ouro.ts",
        )
    raw_ev, raw_ctx = data.get("event"), data.get("ctx")
    ev: dict[str, Any] = raw_ev if isinstance(raw_ev, dict) else {}
    ctx: dict[str, Any] = raw_ctx if isinstance(raw_ctx, dict) else {}
    out: dict[str, Any] = {
        "hook_event_name": wanted,
        "session_id": ctx.get("sessionId"),
        "cwd": ctx.get("cwd"),
        "transcript_path": ctx.get("sessionFile"),
    }
    if pi_event == "session_start":
        reason = ev.get("reason")
        source = _SOURCES.get(reason, "resume") if isinstance(reason, str) else None
        messages = ctx.get("messages")
        if source == "startup" and isinstance(messages, int) and messages > 0:
            source = "resume"  # 'pi -c' / '--session': a session that already has turns
        out["source"] = source
    elif pi_event == "session_compact":
        out["source"] = "compact"
    # session_before_compact names no trigger (manual, threshold or overflow): unknown
    elif pi_event == "session_shutdown":
        out["reason"] = ev.get("reason")
    elif pi_event == "turn_end":
        out["stop_hook_active"] = _continued(ctx.get("lastUser"))
    elif pi_event == "tool_result":
        wanted = _tool_result(ev, out)
    elif pi_event == "tool_call":
        tool = ev.get("toolName")
        args = ev.get("input") if isinstance(ev.get("input"), dict) else {}
        out["tool_name"] = {"edit": "Edit", "write": "Write"}.get(str(tool), tool)
        out["tool_input"] = args  # Pi's edit / write name their file "path"
        out["tool_use_id"] = ev.get("toolCallId")
    out["hook_event_name"] = wanted
    return wanted, json.dumps({k: v for k, v in out.items() if v is not None})


def _tool_result(ev: dict[str, Any], out: dict[str, Any]) -> str:
    """Pi's ``bash`` result as the shared tool fields; the event it is."""
    content = ev.get("content")
    text = "\n".join(
        b["text"]
        for b in (content if isinstance(content, list) else [])
        if isinstance(b, dict) and isinstance(b.get("text"), str)
    )
    out["tool_name"] = ev.get("toolName")
    out["tool_input"] = ev.get("input") if isinstance(ev.get("input"), dict) else {}
    out["tool_use_id"] = ev.get("toolCallId")
    code = exit_code(ev.get("isError"), text)
    if code is None:
        out["is_interrupt"] = True  # aborted or timed out: no outcome (unknown)
        out["tool_response"] = {"output": text}
    else:
        out["tool_response"] = {"exit_code": code, "output": text}
    return "PostToolUseFailure" if ev.get("isError") is True else "PostToolUse"


def exit_code(is_error: Any, text: str) -> int | None:
    """The exit status Pi's bash tool reports: 0 for a result that is not an error,
    N for ``Command exited with code N`` (the last line of an error), else None."""
    if is_error is False:
        return 0
    if is_error is True:
        match = _EXIT.search(text)
        return int(match.group(1)) if match else None
    return None


def _continued(last_user: Any) -> bool:
    """Whether the session's latest user message is ouro's own Stop block: the agent
    is already continuing because of it, and blocking again could loop forever."""
    return (
        isinstance(last_user, str) and last_user.startswith("ouro: ") and _BLOCK_MARK in last_user
    )


def render(doc: dict[str, Any]) -> str:
    """The extension file: the shim with ``doc`` (the hooks) as its config line."""
    template = TEMPLATE.read_text(encoding="utf-8")
    config = {"events": EVENT_MAP, "hooks": doc.get("hooks", {})}
    line = "const CONFIG = " + json.dumps(config, ensure_ascii=False, sort_keys=True) + ";"
    if not _CONFIG_LINE.search(template):
        raise CorruptFile(f"{TEMPLATE}: no 'const CONFIG = …;' line", hint="reinstall ouro")
    return _CONFIG_LINE.sub(lambda _m: line, template, count=1)


def parse(path: Path, text: str) -> dict[str, Any]:
    """The hooks document held in an installed extension's config line."""
    match = _CONFIG_LINE.search(text)
    if match is None:
        raise CorruptFile(
            f"{path}: not ouro's Pi extension (no 'const CONFIG = …;' line)",
            hint="move the file away, then rerun 'ouro hook install pi'",
        )
    try:
        config = jsonio.loads(match.group("json"))
    except jsonio.JSONDecodeError as exc:
        raise CorruptFile(
            f"{path}: the CONFIG line is not valid JSON ({exc.msg})",
            hint="rerun 'ouro hook install pi'; ouro left it untouched",
        ) from None
    if not isinstance(config, dict) or not isinstance(config.get("hooks", {}), dict):
        raise CorruptFile(f"{path}: CONFIG must hold a 'hooks' object", hint="rerun the install")
    return {"hooks": config.get("hooks", {})}


#: How Pi loads the package (it lists it in its settings' ``packages``).
PLUGIN_INSTALL = ("pi install {dir}",)


def write_plugin(folder: Path, *, command: str) -> list[Path]:
    """A Pi package in ``folder``: ``package.json`` (name, ``keywords: ["pi-package"]``,
    ``pi.extensions``), the extension ``extensions/ouro.ts`` with ouro's hooks, and
    ``README.md`` with the operating guide. Pi loads it with ``pi install <folder>``
    (or a ``packages`` entry in its settings). Pi has no MCP client, so the package
    holds no MCP server entry: the guide tells the agent to run the ``ouro`` CLI
    through Pi's ``bash`` tool. Writes only inside ``folder`` (refused when it is a
    symbolic link), each file atomically."""
    from ouro import guide
    from ouro.hooks.install import handler_command, merge
    from ouro.store.atomic import atomic_write_text

    if folder.is_symlink():
        raise InvalidInput(f"{folder} is a symbolic link", hint="name a real folder")
    if folder.exists() and not folder.is_dir():
        raise InvalidInput(f"{folder} is not a folder", hint="name a folder")
    commands = {e: handler_command(HOST, e, base=command, block_on_debt=False) for e in HOST.events}
    doc = merge({}, HOST, commands, folder / "extensions" / "ouro.ts")
    from ouro import __version__

    manifest = {
        "name": "ouro-pi",
        "version": __version__,
        "description": "ouro for Pi: the orientation packet, deltas, checkpoints and "
        "check receipts from an ouro bundle",
        "keywords": ["pi-package"],
        "license": "MIT",
        "pi": {"extensions": ["./extensions/ouro.ts"]},
    }
    readme = (
        "# ouro for Pi\n\n"
        "Install: `pi install <this folder>` (or add the folder to `packages` in "
        "`~/.pi/agent/settings.json` or `.pi/settings.json`).\n\n"
        "The extension runs `" + command + " hook pi <Event>` for each Pi event. Pi has no "
        "MCP client: the agent uses the `ouro` CLI through Pi's `bash` tool.\n\n"
        + guide.render()
        + "\n"
    )
    files = {
        folder / "package.json": json.dumps(manifest, indent=2) + "\n",
        folder / "extensions" / "ouro.ts": render(doc),
        folder / "README.md": readme,
    }
    for path, text in files.items():
        if path.parent.is_symlink():
            raise InvalidInput(f"{path.parent} is a symbolic link", hint="name a real folder")
        atomic_write_text(path, text)
    return list(files)
