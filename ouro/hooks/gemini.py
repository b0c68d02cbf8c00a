"""Gemini CLI's hook contract (``@google/gemini-cli`` 0.61.0; docs/hooks.md, "Gemini CLI").

Read from its source (google-gemini/gemini-cli, ``packages/core/src/hooks/``,
``docs/hooks/reference.md``) and checked against the installed bundle:

- Config: ``<project>/.gemini/settings.json`` (or ``~/.gemini/settings.json``, or an
  extension's ``hooks/hooks.json``) → ``hooks.<Event>[]`` of ``{"matcher"?: …,
  "hooks": [{"type": "command", "command": …, "timeout": ms}]}``. Project hooks
  run only in a trusted folder; the first run warns once and records them in
  ``~/.gemini/trusted_hooks.json``. A lifecycle matcher is one exact string
  (``startup``, ``manual``), not a ``|`` list; ouro gives SessionStart none.
- Events, by ouro's names: ``SessionStart`` (``startup|resume|clear``),
  ``BeforeAgent`` (a user prompt: ``UserPromptSubmit``), ``PreCompress``
  (``PreCompact``), ``AfterAgent`` (``Stop``: ``prompt_response``,
  ``stop_hook_active``), ``SessionEnd``, ``BeforeTool`` / ``AfterTool`` (the
  tool events). The stdin object has ``session_id``, ``transcript_path``,
  ``cwd``, ``hook_event_name`` (Gemini's name), ``timestamp`` and the event's
  fields.
- Output: a JSON object on stdout. ``hookSpecificOutput.additionalContext`` is
  taken from SessionStart (prepended to the first prompt in a non-interactive
  run, the first history turn otherwise), BeforeAgent (appended to that
  prompt) and AfterTool (appended to the tool's result), each wrapped in
  ``<hook_context>…</hook_context>`` with ``<`` and ``>`` escaped.
  ``systemMessage`` is shown to the user. AfterAgent's ``decision: "block"``
  + ``reason`` sends the reason back as a new prompt. When stdout is empty
  Gemini parses *stderr* as the reply (plain text becomes a
  ``decision: "allow"`` system message), so ouro always prints an object.
- ``PreCompress`` fires before every model request, ahead of Gemini's own
  threshold check (``ChatCompressionService.compress``), with ``trigger``
  ``auto`` whether or not it compresses; ouro installs it for ``manual``
  (``/compress``) only. Gemini has no post-compression SessionStart.
- Caps: no length cap on ``additionalContext`` (none in the hook runner or the
  injection sites); the default timeout is 60,000 ms. ouro keeps an injection
  under 4,000 characters (the guide plus a 2,500-character packet).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from ouro.hooks.common import Host

HOST = Host(
    name="gemini",
    title="Gemini CLI",
    context_events=frozenset({"SessionStart", "UserPromptSubmit"}),
    silent_events=frozenset({"SessionEnd"}),
    context_limit=4000,
    settings_file=".gemini/settings.json",
    matchers={
        "PreCompact": "manual",
        "PostToolUse": "^run_shell_command$",
        "PreToolUse": "^(write_file|replace)$",
    },
    timeouts={
        "SessionStart": 30,
        "UserPromptSubmit": 10,
        "PreCompact": 30,
        "Stop": 10,
        "SessionEnd": 3,
        "PostToolUse": 10,
        "PreToolUse": 5,
    },
    guide_file="GEMINI.md",
    tool_events=("PostToolUse", "PreToolUse"),
    names={
        "UserPromptSubmit": "BeforeAgent",
        "PreCompact": "PreCompress",
        "Stop": "AfterAgent",
        "PostToolUse": "AfterTool",
        "PreToolUse": "BeforeTool",
    },
    timeout_scale=1000,
    always_json=True,
)

#: the extension's name (its folder under ``~/.gemini/extensions/``)
EXTENSION = "ouro"
_FILES = ("gemini-extension.json", "hooks/hooks.json", "GEMINI.md")
#: How Gemini CLI loads the folder (``link`` keeps it where it is; ``install`` copies it).
PLUGIN_INSTALL = ("gemini extensions link {dir}", "or a copy: gemini extensions install {dir}")


def write_plugin(folder: Path, *, command: str) -> list[Path]:
    """A Gemini CLI extension in ``folder``: ``gemini-extension.json`` (the
    ``ouro mcp`` server and the guide as its context file), ``hooks/hooks.json``
    (ouro's hooks, started with ``command``) and ``GEMINI.md`` (the guide).

    Writes only inside ``folder``, each file atomically; refuses a ``folder``
    that is a symbolic link. Returns the files written. Install it with
    ``gemini extensions link FOLDER`` (or ``install``).
    """
    from ouro import guide
    from ouro.errors import InvalidInput
    from ouro.hooks import install
    from ouro.store.atomic import atomic_write_text

    for path in (folder, folder / "hooks", *(folder / n for n in _FILES)):
        if path.is_symlink():  # a link could lead a write out of ``folder``
            raise InvalidInput(f"{path} is a symbolic link; ouro writes only inside {folder}")
    if folder.exists() and not folder.is_dir():
        raise InvalidInput(f"{folder} exists and is not a folder")
    argv = shlex.split(command)
    if not argv:
        raise InvalidInput("the command that starts ouro is empty")
    hooks = install.merge({}, HOST, install.commands_for(HOST, base=command), folder)
    manifest = {
        "name": EXTENSION,
        "version": _version(),
        "description": "ouro: the bundle's packet, changes, checkpoints and debt in Gemini CLI",
        "contextFileName": "GEMINI.md",
        "mcpServers": {"ouro": {"command": argv[0], "args": [*argv[1:], "mcp"]}},
    }
    files = {
        folder / "gemini-extension.json": manifest,
        folder / "hooks" / "hooks.json": hooks,
    }
    (folder / "hooks").mkdir(parents=True, exist_ok=True)
    written = []
    for path, doc in files.items():
        atomic_write_text(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        written.append(path)
    atomic_write_text(folder / "GEMINI.md", guide.render() + "\n")
    written.append(folder / "GEMINI.md")
    return written


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    for name in ("ouro-bundle", "ouro"):
        try:
            return version(name)
        except PackageNotFoundError:
            continue
    return "0.0.0"
