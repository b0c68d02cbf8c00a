"""Claude Code's hook contract (https://code.claude.com/docs/en/hooks).

- Config: ``<project>/.claude/settings.json`` → ``hooks.<Event>[].hooks[]``
  with ``{"type": "command", "command": …, "timeout": seconds}``; a
  ``matcher`` filters ``SessionStart`` by source and ``PreCompact`` by trigger.
- Input: JSON on stdin with ``session_id``, ``transcript_path``, ``cwd``,
  ``hook_event_name`` and per-event fields (``source``, ``trigger``,
  ``reason``, ``stop_hook_active``, ``prompt``).
- Output: exit 0 with a JSON object on stdout. ``SessionStart`` and
  ``UserPromptSubmit`` accept ``hookSpecificOutput.additionalContext``;
  ``Stop`` accepts ``decision: "block"`` + ``reason``; ``PreToolUse`` (edits:
  ``Edit|Write|MultiEdit|NotebookEdit``) gets a path-lock warning as
  ``systemMessage`` and never a permission decision; every event accepts
  ``systemMessage`` (shown to the user). ``SessionEnd`` output is not shown to
  anyone, so ouro prints nothing there; all SessionEnd hooks share a 1.5 s
  budget, so ouro installs SessionEnd with a 1 s timeout. Exit 2 is a blocking error; ouro never
  uses it.
  Over 10,000 characters of ``additionalContext`` Claude Code saves the text to
  a file and shows the model a 2 KB preview; ouro fits each injection to that
  (``ouro.hooks.budget``; the packet itself is packed to 2,500 characters).
- Plugin (``write_plugin``, ``ouro hook plugin claude DIR``): ``.claude-plugin/
  plugin.json``, ``hooks/hooks.json``, ``.mcp.json`` and a skill, loaded with
  ``claude --plugin-dir DIR`` or from a marketplace.
"""

from __future__ import annotations

from pathlib import Path

from ouro.hooks.common import Host

HOST = Host(
    name="claude",
    title="Claude Code",
    context_events=frozenset({"SessionStart", "UserPromptSubmit"}),
    silent_events=frozenset({"SessionEnd"}),
    context_limit=4000,
    settings_file=".claude/settings.json",
    matchers={
        "SessionStart": "startup|resume|clear|compact",
        "PreCompact": "manual|auto",
        "PostToolUse": "Bash",
        "PostToolUseFailure": "Bash",
        "PreToolUse": "Edit|Write|MultiEdit|NotebookEdit",
    },
    # SessionEnd hooks share a 1.5 s budget (CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS).
    timeouts={
        "SessionStart": 30,
        "UserPromptSubmit": 10,
        "PreCompact": 30,
        "Stop": 10,
        "SessionEnd": 1,
        "PostToolUse": 10,
        "PostToolUseFailure": 10,
        "PreToolUse": 5,
    },
    guide_file="CLAUDE.md",
    tool_events=("PostToolUse", "PostToolUseFailure", "PreToolUse"),
)

#: How Claude Code loads the folder (``--plugin-dir`` for one session; a
#: marketplace for good: docs/hooks.md, "Claude Code plugin").
PLUGIN_INSTALL = (
    "claude --plugin-dir {dir}",
    "or for good: /plugin marketplace add <a marketplace listing {dir}>, then /plugin install ouro",
)


def write_plugin(folder: Path, *, command: str) -> list[Path]:
    """A Claude Code plugin (https://code.claude.com/docs/en/plugins-reference):
    ``.claude-plugin/plugin.json`` (the manifest), ``hooks/hooks.json`` (every
    event ``ouro hook install claude`` installs, same commands and timeouts),
    ``.mcp.json`` (the ``ouro mcp`` server) and ``skills/ouro/SKILL.md`` (the
    operating guide, as a skill the model reads when it works with ouro)."""
    from ouro import __version__
    from ouro.hooks import plugin

    hooks = {"description": "ouro's lifecycle hooks", **plugin.hooks_config(HOST, command)}
    skill = (
        "---\n"
        "name: ouro\n"
        "description: How to keep ouro's Arc current while working: record the ask, the next "
        "action, claims with checks, diary entries and the handoff (ouro MCP tools or the "
        "ouro CLI).\n"
        "---\n\n" + plugin.guide_text()
    )
    return [
        plugin.put_json(
            folder,
            ".claude-plugin/plugin.json",
            {
                "name": plugin.NAME,
                "version": __version__,
                "description": plugin.DESCRIPTION,
                "author": {"name": "ouro"},
                "homepage": plugin.HOMEPAGE,
                "license": "MIT",
            },
        ),
        plugin.put_json(folder, "hooks/hooks.json", hooks),
        plugin.put_json(folder, ".mcp.json", {"mcpServers": {"ouro": plugin.mcp_server(command)}}),
        plugin.put(folder, "skills/ouro/SKILL.md", skill),
    ]
