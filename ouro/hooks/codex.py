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
  (Codex spills the rest to a file), so ouro keeps an injection under 4,000
  characters (the guide plus a 2,500-character packet).
"""

from __future__ import annotations

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
