"""Codex's hook contract (https://developers.openai.com/codex/hooks and the
published schemas under ``codex-rs/hooks/schema/generated/`` in openai/codex).

- Config: ``<project>/.codex/hooks.json`` (also ``~/.codex/hooks.json`` or
  ``[hooks]`` tables in ``config.toml``) → ``hooks.<Event>[].hooks[]`` with
  ``{"type": "command", "command": …, "timeout": seconds}``; a SessionEnd
  timeout above 3 s is clamped with a warning in every session.
- Trust (three gates, see ``ouro.hooks.codex_trust``): the project must be
  trusted, each hook entry must be trusted (``[hooks.state."<file>:<event>:
  <group>:<handler>"] trusted_hash`` in ``$CODEX_HOME/config.toml``), and an
  entry whose command or timeout changes loses its trust. The feature flag is
  ``[features] hooks`` (on by default; ``codex_hooks`` is the old name).
- Input: JSON on stdin with ``session_id``, ``turn_id`` (turn-scoped events),
  ``transcript_path``, ``cwd``, ``hook_event_name``, ``model`` and per-event
  fields (``source``, ``trigger``, ``stop_hook_active``, ``prompt``).
- Output: empty stdout is always fine. ``SessionStart`` and
  ``UserPromptSubmit`` accept ``hookSpecificOutput.additionalContext``.
  ``PreCompact`` accepts only ``continue``/``stopReason``/``suppressOutput``/
  ``systemMessage`` (no additional context; unknown keys fail the hook).
  ``Stop`` must print JSON if it prints anything: ``systemMessage``, or
  ``decision: "block"`` with a non-empty ``reason`` (which Codex feeds back as
  a continuation prompt). Model-visible hook text is budgeted at 2,500 *tokens*
  of 4 bytes (Codex spills the rest to a file); ouro fits each injection to
  that (``ouro.hooks.budget``, which counts 3 bytes a token).
- Plugin (``write_plugin``, ``ouro hook plugin codex DIR``): a one-plugin local
  marketplace, installed with ``codex plugin marketplace add DIR`` and ``codex
  plugin add ouro@ouro-local``; its hooks need trust in ``/hooks`` like a
  project's (no project trust needed).
"""

from __future__ import annotations

from pathlib import Path

from ouro.hooks.common import Host

HOST = Host(
    name="codex",
    title="Codex",
    context_events=frozenset({"SessionStart", "UserPromptSubmit"}),
    silent_events=frozenset({"SessionEnd"}),
    context_limit=4000,
    settings_file=".codex/hooks.json",
    matchers={
        "SessionStart": "startup|resume|clear|compact",
        "PreCompact": "manual|auto",
        "PostToolUse": "Bash",
        "PreToolUse": "apply_patch",
    },
    # Codex clamps SessionEnd to 3 s and warns in every session when it is larger.
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

#: The marketplace ``write_plugin`` writes around the plugin (Codex installs
#: plugins from marketplaces only; a local folder is one).
MARKETPLACE = "ouro-local"
#: How Codex installs the folder: add it as a local marketplace, then the plugin.
PLUGIN_INSTALL = (
    "codex plugin marketplace add {dir}",
    f"codex plugin add ouro@{MARKETPLACE}",
    "then start codex, run /hooks and trust ouro's entries (Codex runs no untrusted hook)",
)


def write_plugin(folder: Path, *, command: str) -> list[Path]:
    """A Codex plugin inside a one-plugin local marketplace (codex-rs/core-plugins/src/
    marketplace.rs, manifest.rs): ``.agents/plugins/marketplace.json`` lists
    ``./plugins/ouro``, whose ``.codex-plugin/plugin.json`` names its hooks
    (``hooks/hooks.json``: every event ``ouro hook install codex`` installs, same
    commands and timeouts), its MCP servers (``.mcp.json``: ``ouro mcp``) and its
    skills (``skills/ouro/SKILL.md``: the operating guide)."""
    from ouro import __version__
    from ouro.hooks import plugin

    root = "plugins/ouro"
    skill = (
        "---\n"
        "name: ouro\n"
        "description: How to keep ouro's Arc current while working: record the ask, the next "
        "action, claims with checks, diary entries and the handoff (ouro MCP tools or the "
        "ouro CLI).\n"
        "---\n\n" + plugin.guide_text()
    )
    manifest = {
        "name": plugin.NAME,
        "version": __version__,
        "description": plugin.DESCRIPTION,
        "skills": "./skills/",
        "mcpServers": "./.mcp.json",
        "hooks": "./hooks/hooks.json",
        "interface": {
            "displayName": "ouro",
            "shortDescription": "Arc continuity and a Desk record for the agent",
            "developerName": "ouro",
            "category": "Productivity",
            "websiteURL": plugin.HOMEPAGE,
        },
    }
    market = {
        "name": MARKETPLACE,
        "interface": {"displayName": "ouro (local)"},
        "plugins": [
            {
                "name": plugin.NAME,
                "source": {"source": "local", "path": f"./{root}"},
                "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"},
                "category": "Productivity",
            }
        ],
    }
    return [
        plugin.put_json(folder, ".agents/plugins/marketplace.json", market),
        plugin.put_json(folder, f"{root}/.codex-plugin/plugin.json", manifest),
        plugin.put_json(folder, f"{root}/hooks/hooks.json", plugin.hooks_config(HOST, command)),
        plugin.put_json(
            folder, f"{root}/.mcp.json", {"mcpServers": {"ouro": plugin.mcp_server(command)}}
        ),
        plugin.put(folder, f"{root}/skills/ouro/SKILL.md", skill),
    ]
