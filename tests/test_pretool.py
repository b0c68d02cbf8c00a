"""The PreToolUse hook warns (never blocks) before an edit of a path another agent locked."""

from __future__ import annotations

import json

from ouro import locks
from ouro.bundle import Bundle
from ouro.hooks.pretool import edited_paths
from ouro.proof.refs import repo_root
from tests.conftest import run_ouro, snapshot


def _payload(bundle: Bundle, tool: str, tool_input: dict) -> str:  # type: ignore[type-arg]
    return json.dumps(
        {
            "session_id": "s1",
            "cwd": str(bundle.root.parent),
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
        }
    )


def test_edit_of_a_path_another_agent_holds_warns_and_never_blocks(bundle: Bundle) -> None:
    root = repo_root(bundle)
    locks.take(bundle, ["src"], agent="bo", reason="splitting the lexer", ttl_seconds=600)
    stdin = _payload(bundle, "Edit", {"file_path": f"{root}/src/lex.py", "old_string": "a"})
    before = snapshot(bundle.root)
    proc = run_ouro("hook", "claude", "PreToolUse", "--bundle", str(bundle.root), input=stdin)
    assert proc.returncode == 0
    out = json.loads(proc.stdout)
    assert "src/lex.py: locked by bo (splitting the lexer) until" in out["systemMessage"]
    assert "decision" not in out and "hookSpecificOutput" not in out  # a warning only
    assert snapshot(bundle.root) == before
    # the holder itself is not warned; an unrelated path is silent
    own = run_ouro(
        "hook",
        "claude",
        "PreToolUse",
        "--bundle",
        str(bundle.root),
        input=stdin,
        env={"OURO_AGENT": "bo"},
    )
    assert (own.returncode, own.stdout) == (0, ""), own.stderr
    other = _payload(bundle, "Write", {"file_path": f"{root}/docs/x.md", "content": ""})
    quiet = run_ouro("hook", "claude", "PreToolUse", "--bundle", str(bundle.root), input=other)
    assert (quiet.returncode, quiet.stdout) == (0, "")


def test_codex_patch_paths_are_read() -> None:
    patch = "*** Begin Patch\n*** Update File: src/a.py\n@@\n*** Add File: docs/b.md\n*** End Patch"
    tool = {"tool_input": {"command": ["apply_patch", patch]}}
    assert edited_paths(tool) == ["src/a.py", "docs/b.md"]
    assert edited_paths({"tool_input": {"command": "ls"}}) == []
