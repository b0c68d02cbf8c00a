"""The operating guide: short, versioned, free of banned words, delivered once
per session with the SessionStart packet, and as a removable CLAUDE.md block."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ouro import guide
from ouro.bundle import Bundle
from ouro.hooks.claude import HOST as CLAUDE
from ouro.hooks.common import run_hook
from ouro.hooks.handlers import HANDLERS


def _registry() -> dict[str, str]:
    """MCP tool name -> CLI command, from the tool registry."""
    from ouro.registry import TOOLS, name_of

    return {name_of(t): "ouro " + " ".join(t.path) for t in TOOLS}


def test_guide_is_short_versioned_and_names_real_tools() -> None:
    for text in (guide.render(), guide.render(mcp=True), guide.render(both=False)):
        assert len(text) <= guide.MAX_CHARS
        assert f"v{guide.GUIDE_VERSION}" in text
        assert "memor" not in text.lower()
    registry = _registry()
    mcp_text = guide.render(mcp=True)
    for _moment, _what, step_names in guide.STEPS:
        for name in step_names:
            assert f"({name})" in mcp_text
            if name in guide.SEED_COMMANDS and name not in registry:
                continue  # the seed's names arrive with the new registry (issue 28.1)
            assert guide.command(name) == registry[name], name
    for word in ("ask", "next safe action", "claim", "diary entry", "handoff", "confirm"):
        assert word in mcp_text


def test_guide_names_the_tools_that_go_deeper() -> None:
    """Issue 28 measured 2: the seed's correctness path ends with "explicit tools
    let the agent consult or search deeper records"; the guide names each, with
    its CLI command, and says which record it reaches."""
    text = guide.render()
    for name, cmd, what in (
        ("consult_diary", "ouro diary consult", "consult the diary"),
        ("search_facts", "ouro facts search", "search facts by entity"),
        ("consult_notes", "ouro notes consult", "consult notes"),
        ("desk_search", "ouro desk search", "search all Desk work and record"),
    ):
        assert f"{what} ({name} | {cmd})" in text
    assert len(text) <= guide.MAX_CHARS == 1200


def _start(bundle: Bundle, source: str, session: str = "s-1") -> str:
    stdin = json.dumps(
        {
            "session_id": session,
            "cwd": str(bundle.root),
            "hook_event_name": "SessionStart",
            "source": source,
        }
    )
    out = run_hook(CLAUDE, "SessionStart", stdin, bundle_path=None, env={}, handlers=HANDLERS)
    context: str = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    return context


def test_session_start_gives_the_guide_once_per_session(bundle: Bundle) -> None:
    first = _start(bundle, "startup")
    assert first.startswith("# orient") and guide.render() in first
    assert len(first) <= CLAUDE.context_limit
    again = _start(bundle, "resume")
    assert "# orient" in again and "operating guide" not in again
    # The context was replaced: the guide comes back.
    assert guide.render() in _start(bundle, "compact")
    assert guide.render() in _start(bundle, "startup", session="s-2")


def test_guide_block_is_idempotent_and_removable(tmp_path: Path) -> None:
    path = tmp_path / "CLAUDE.md"
    path.write_text("# Project\n\nOur rules.\n")
    assert guide.write_block(path) is True
    text = path.read_text()
    assert text.startswith("# Project\n\nOur rules.\n\n" + guide.BEGIN_MARKER)
    assert guide.write_block(path) is False and path.read_text() == text
    # An older block is replaced in place, text around it kept.
    path.write_text(text.replace("keep Arc current", "old words") + "\nAfter.\n")
    assert guide.write_block(path) is True
    assert path.read_text() == text + "\nAfter.\n"
    assert guide.remove_block(path) is True
    assert path.read_text() == "# Project\n\nOur rules.\n\nAfter.\n"
    assert guide.remove_block(path) is False


def test_two_guide_blocks_are_refused(tmp_path: Path) -> None:
    from ouro.errors import CorruptFile

    path = tmp_path / "AGENTS.md"
    path.write_text(guide.block() + guide.block())
    with pytest.raises(CorruptFile, match="more than one ouro guide block"):
        guide.write_block(path)
    assert path.read_text() == guide.block() + guide.block()


def test_guide_cli_prints_writes_and_removes(tmp_path: Path) -> None:

    from tests.conftest import cli_run

    printed = cli_run(["guide"])
    assert printed.exit_code == 0 and printed.output == guide.render()
    target = tmp_path / "AGENTS.md"
    wrote = cli_run(["guide", "--file", str(target), "--json"])
    assert json.loads(wrote.output)["changed"] is True
    assert guide.BEGIN_MARKER in target.read_text()
    again = cli_run(["guide", "--file", str(target)])
    assert again.output.startswith("nothing to change in")
    removed = cli_run(["guide", "--file", str(target), "--remove"])
    assert removed.output.startswith("removed the guide from") and target.read_text() == ""
    assert cli_run(["guide", "--remove"]).exit_code == 2


def test_hook_install_guide_flag_writes_the_hosts_file(tmp_path: Path) -> None:

    from tests.conftest import cli_run

    for host, name in (("claude", "CLAUDE.md"), ("codex", "AGENTS.md")):
        result = cli_run(["hook", "install", host, "--project", str(tmp_path), "--guide", "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["guideWritten"] == str(tmp_path / name)
        assert guide.render() in (tmp_path / name).read_text()


def test_every_tool_the_guide_names_is_in_the_default_mcp_set() -> None:
    from ouro.mcp import served

    default = {tool.name for tool in served()}
    for _moment, _what, step_names in guide.STEPS:
        for name in step_names:
            assert name in default, name
