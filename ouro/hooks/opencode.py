"""OpenCode's plugin contract (npm ``opencode-ai`` 1.18.33; docs/hooks.md "OpenCode").

OpenCode has no command hooks: it loads JavaScript/TypeScript plugins
(``*.js``/``*.ts`` in ``.opencode/plugin(s)/`` or ``~/.config/opencode/plugin(s)/``,
or listed under ``"plugin"`` in ``opencode.json``). A plugin is a function
returning hooks; each hook gets ``(input, output)`` and changes ``output`` in
place. ouro ships one thin plugin, ``opencode_plugin.js`` (package data): it
pipes each event's JSON to ``ouro hook opencode <Event>`` and hands the reply
back. Everything else is here and in the shared handlers:

- ``event`` ``session.created`` → ``SessionStart`` (source ``startup``);
  ``session.compacted`` → ``SessionStart`` (source ``compact``);
  ``session.idle`` → ``Stop``; ``session.deleted`` → ``SessionEnd``;
- ``chat.message`` → ``UserPromptSubmit``; the context (with a packet still
  pending from SessionStart) becomes a synthetic text part of the user's
  message, which OpenCode saves in the session (so a ``--continue`` later sees
  it, and gets only the changes);
- ``experimental.chat.system.transform``: a packet that has not reached a user
  message yet (after compaction, before the next prompt) is in the system
  prompt of every request meanwhile;
- ``experimental.session.compacting`` → ``PreCompact`` (the checkpoint);
- ``tool.execute.after`` for the ``bash`` tool → ``PostToolUse``.

``common_stdin`` translates the shim's OpenCode-shaped JSON into the stdin
object every host's handlers read (``ouro.hooks.common.parse_input``); the
reply is the same JSON object as for Claude Code (``systemMessage``,
``hookSpecificOutput.additionalContext``), which the shim reads.

``write_plugin`` writes an OpenCode config folder (``OPENCODE_CONFIG_DIR``, or
copied to ``~/.config/opencode``): the plugin, an ``opencode.json`` with the
``ouro mcp`` server and the guide as ``instructions``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ouro.errors import CorruptFile
from ouro.hooks.common import EVENTS, Host

#: where ``ouro hook install opencode`` puts the plugin in a project
PLUGIN_FILE = ".opencode/plugin/ouro.js"

HOST = Host(
    name="opencode",
    title="OpenCode",
    context_events=frozenset({"SessionStart", "UserPromptSubmit"}),
    silent_events=frozenset({"SessionEnd"}),
    # OpenCode does not cap a plugin's text part or system entry; ouro keeps the
    # same 4,000 characters as for the other hosts (the guide plus a packet).
    context_limit=4000,
    settings_file=PLUGIN_FILE,
    matchers={},
    # the shim kills a run after these many seconds (OpenCode itself waits for ever)
    timeouts={
        "SessionStart": 30,
        "UserPromptSubmit": 10,
        "PreCompact": 30,
        "Stop": 10,
        "SessionEnd": 3,
        "PostToolUse": 10,
    },
    guide_file="AGENTS.md",
    tool_events=("PostToolUse",),
)

#: how ``ouro hook plugin opencode DIR`` is installed (``{dir}``: the folder)
PLUGIN_INSTALL = (
    "OPENCODE_CONFIG_DIR={dir} opencode",
    "or copy {dir}/plugin/ouro.js, {dir}/ouro-guide.md and the 'mcp' and 'instructions' "
    "of {dir}/opencode.json into ~/.config/opencode/",
)

_COMMAND_LINE = re.compile(r'^const COMMAND = (".*")$', re.MULTILINE)
_TAIL = 16384


#: OpenCode's own database, in its data folder (``data_folder``): where receipts are checked
OPENCODE_DB = "opencode.db"

# Every event starts ``ouro hook opencode``: this module imports neither
# ``importlib.resources`` nor ``ouro.hooks.transcript`` (``dataclasses``) at the top.


def data_folder(env: Mapping[str, str]) -> str:
    """OpenCode's data folder as the environment names it (``$XDG_DATA_HOME/opencode``)."""
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.join(
        env.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share"), "opencode"
    )


def shim_source() -> str:
    """The plugin as shipped (``ouro/hooks/opencode_plugin.js``)."""
    from importlib import resources

    return resources.files("ouro.hooks").joinpath("opencode_plugin.js").read_text("utf-8")


def render_plugin(command: str) -> str:
    """The plugin with ``command`` as the way it starts ouro."""
    text = shim_source()
    line = f"const COMMAND = {json.dumps(command, ensure_ascii=False)}"
    return _COMMAND_LINE.sub(lambda _m: line, text, count=1)


def read_plugin(path: Path) -> tuple[str | None, dict[str, Any]]:
    """(the plugin file's text, the hook config it amounts to) for install / doctor.

    The config is the shape the other hosts' files have (``hooks.<Event>[]``),
    with ouro's command for every event when the file is the current plugin;
    an older or edited plugin amounts to no hooks (install rewrites it).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, {}
    except (OSError, UnicodeDecodeError) as exc:
        raise CorruptFile(
            f"{path}: unreadable ({exc})",
            hint="move the file, then rerun 'ouro hook install opencode'",
        ) from None
    found = _COMMAND_LINE.search(text)
    if found is None:
        return text, {}
    try:
        command = json.loads(found.group(1))
    except ValueError:
        return text, {}
    if not isinstance(command, str) or text != render_plugin(command):
        return text, {}
    hooks = {
        event: [
            {
                "hooks": [
                    {
                        "type": "command",
                        "command": f"{command} hook opencode {event}",
                        "timeout": HOST.timeouts[event],
                    }
                ]
            }
        ]
        for event in HOST.events
    }
    return text, {"hooks": hooks}


def plugin_command(doc: dict[str, Any]) -> str | None:
    """The command a (merged) hook config starts ouro with: what the plugin holds."""
    try:
        command = doc["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    except (KeyError, IndexError, TypeError):
        return None
    if not isinstance(command, str) or not command.endswith(" hook opencode SessionStart"):
        return None
    return command[: -len(" hook opencode SessionStart")]


# --- the edge: OpenCode's JSON in, the shared stdin object out --------------------


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def common_stdin(event: str, text: str, env: Mapping[str, str] | None = None) -> str:
    """The shim's JSON for ``event`` as the stdin object ``parse_input`` reads.

    Text that is not the shim's JSON object goes through unchanged (a payload
    already in the shared shape, or bad input that ``parse_input`` names).
    """
    try:
        raw = json.loads(text)
    except ValueError:
        return text
    if not isinstance(raw, dict) or "hook_event_name" in raw or "hook" not in raw:
        return text
    from ouro.hooks.common import normalize_event

    name = normalize_event(event) or event
    out: dict[str, Any] = {"hook_event_name": name}
    for key, field in (("session_id", "sessionID"), ("cwd", "directory"), ("source", "source")):
        value = _str(raw.get(field))
        if value is not None:
            out[key] = value
    if name == "SessionStart" and _str(raw.get("parentID")):
        out["source"] = "subagent"  # a task tool's child session
    if name == "SessionEnd":
        out["reason"] = _str(raw.get("reason")) or "deleted"
    if name == "PreCompact":
        out["trigger"] = "auto" if raw.get("auto") is True else "unknown"
    model = raw.get("model")
    if isinstance(model, dict) and _str(model.get("modelID")):
        provider = _str(model.get("providerID"))
        out["model"] = f"{provider}/{model['modelID']}" if provider else model["modelID"]
    if name == "PostToolUse":
        args = raw.get("args")
        if not isinstance(args, dict):
            args = {}
        tool = _str(raw.get("tool"))
        response: dict[str, Any] = {}
        output = raw.get("output")
        if isinstance(output, str):
            response["stdout"] = output[-_TAIL:]
        code = raw.get("exit")
        if isinstance(code, int) and not isinstance(code, bool):
            response["exit_code"] = code
        if raw.get("interrupted") is True:
            response["interrupted"] = True
        out["tool_name"] = "Bash" if tool == "bash" else tool
        out["tool_input"] = {"command": args.get("command")}
        out["tool_response"] = response
        if _str(raw.get("callID")):
            out["tool_use_id"] = raw["callID"]
        # OpenCode's record of the call is its own database, where the hook's
        # environment (OpenCode's) says it is: never a path from the payload
        folder = data_folder(os.environ if env is None else env)
        out["transcript_path"] = os.path.join(folder, OPENCODE_DB)
    return json.dumps(out, ensure_ascii=False)


# --- the plugin folder ----------------------------------------------------------------


def opencode_config(command: str, *, guide_file: str = "ouro-guide.md") -> dict[str, Any]:
    """The ``opencode.json`` fragment: the ``ouro mcp`` server and the guide."""
    import shlex

    argv = [*shlex.split(command), "mcp"]
    return {
        "$schema": "https://opencode.ai/config.json",
        "mcp": {"ouro": {"type": "local", "command": argv, "enabled": True}},
        "instructions": [guide_file],
    }


def write_plugin(folder: Path, *, command: str) -> list[Path]:
    """Write an OpenCode config folder into ``folder`` (atomic writes, inside it only)."""
    from ouro import guide
    from ouro.store.atomic import atomic_write_text

    if folder.is_symlink():
        from ouro.errors import InvalidInput

        raise InvalidInput(f"{folder} is a symbolic link", hint="name a real folder")
    files = {
        "plugin/ouro.js": render_plugin(command),
        "ouro-guide.md": guide.render(mcp=True) + "\n",
        "opencode.json": json.dumps(
            opencode_config(command, guide_file=str(folder.absolute() / "ouro-guide.md")),
            indent=2,
            ensure_ascii=False,
        )
        + "\n",
    }
    written = []
    for rel, text in files.items():
        target = folder / rel
        parent = target.parent
        if parent.is_symlink():
            from ouro.errors import InvalidInput

            raise InvalidInput(f"{parent} is a symbolic link", hint="name a real folder")
        parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, text)
        written.append(target)
    return written


__all__ = [
    "EVENTS",
    "HOST",
    "PLUGIN_FILE",
    "PLUGIN_INSTALL",
    "common_stdin",
    "opencode_config",
    "read_plugin",
    "render_plugin",
    "write_plugin",
]
