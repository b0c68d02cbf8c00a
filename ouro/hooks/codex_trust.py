"""Codex's trust gates for project hooks, read (never written) by ``ouro hook doctor``.

Codex (0.169) runs a project's ``.codex/hooks.json`` only when

1. the project is trusted: ``[projects."<abs path>"] trust_level = "trusted"``
   in ``$CODEX_HOME/config.toml`` (default ``~/.codex``), for the folder Codex
   was started in or one of its parents (Codex writes it when you accept the
   trust prompt);
2. each hook entry is trusted: ``[hooks.state."<hooks.json path>:<event>:
   <group>:<handler>"] trusted_hash = "sha256:…"`` (Codex writes it when you
   approve the hook in ``/hooks``), where the hash covers the entry's event,
   matcher, command and timeout;
3. the entry is unchanged since it was trusted: a different command or timeout
   gives a different hash, and Codex then skips the entry (``codex exec`` says
   nothing about it).

``entry_hash`` computes the hash the way Codex does: SHA-256 over the
compact, key-sorted JSON of ``{"event_name", "matcher"?, "hooks": [{"async":
false, "command", "timeout", "type": "command"}]}``. ouro only reads these
files; trusting is the user's decision (``/hooks`` in Codex).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ouro.errors import CorruptFile

#: Codex's names for the events ouro installs
SNAKE = {
    "SessionStart": "session_start",
    "UserPromptSubmit": "user_prompt_submit",
    "PreCompact": "pre_compact",
    "Stop": "stop",
    "SessionEnd": "session_end",
    "PostToolUse": "post_tool_use",
    "PreToolUse": "pre_tool_use",
}


def codex_home(env: Mapping[str, str]) -> Path:
    home = env.get("CODEX_HOME")
    if home:
        return Path(home)
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".codex"


def entry_hash(event: str, matcher: str | None, handler: Mapping[str, Any]) -> str:
    hook: dict[str, Any] = {
        "async": bool(handler.get("async", False)),
        "command": handler.get("command"),
        "type": "command",
    }
    if "timeout" in handler:
        hook["timeout"] = handler["timeout"]
    identity: dict[str, Any] = {"event_name": SNAKE.get(event, event), "hooks": [hook]}
    if matcher is not None:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def entry_key(hooks_file: Path, event: str, group: int, handler: int) -> str:
    return f"{hooks_file}:{SNAKE.get(event, event)}:{group}:{handler}"


@dataclass
class CodexConfig:
    path: Path
    data: dict[str, Any]

    def project_trusted(self, project: Path) -> str | None:
        """The trusted folder covering ``project`` (itself or a parent), or None."""
        projects = self.data.get("projects")
        if not isinstance(projects, dict):
            return None
        for folder in (project, *project.parents):
            entry = projects.get(str(folder))
            if isinstance(entry, dict) and entry.get("trust_level") == "trusted":
                return str(folder)
        return None

    def trusted_hash(self, key: str) -> str | None:
        hooks = self.data.get("hooks")
        state = hooks.get("state") if isinstance(hooks, dict) else None
        entry = state.get(key) if isinstance(state, dict) else None
        value = entry.get("trusted_hash") if isinstance(entry, dict) else None
        return value if isinstance(value, str) else None

    def hooks_feature(self) -> bool | None:
        """``[features] hooks`` (or the old ``codex_hooks``) if set, else None (default on)."""
        features = self.data.get("features")
        if not isinstance(features, dict):
            return None
        for name in ("hooks", "codex_hooks"):
            if isinstance(features.get(name), bool):
                return bool(features[name])
        return None


def load_config(env: Mapping[str, str]) -> CodexConfig:
    """``$CODEX_HOME/config.toml`` (empty if absent); ``CorruptFile`` if unreadable."""
    import tomllib

    path = codex_home(env) / "config.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return CodexConfig(path, {})
    except (OSError, UnicodeDecodeError) as exc:
        raise CorruptFile(f"{path}: cannot read it ({exc})", hint="fix the file") from None
    try:
        return CodexConfig(path, tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise CorruptFile(f"{path}: not valid TOML ({exc})", hint="fix the file") from None


def ouro_entries(
    doc: Mapping[str, Any], is_ours: Any
) -> list[tuple[str, int, int, str | None, dict[str, Any]]]:
    """(event, group index, handler index, matcher, handler) of each ouro handler in ``doc``."""
    out: list[tuple[str, int, int, str | None, dict[str, Any]]] = []
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return out
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            continue
        for gi, group in enumerate(groups):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                continue
            matcher = group.get("matcher")
            for hi, handler in enumerate(handlers):
                if is_ours(handler, event):
                    out.append(
                        (event, gi, hi, matcher if isinstance(matcher, str) else None, handler)
                    )
    return out
