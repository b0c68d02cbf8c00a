"""``ouro hook plugin <host> DIR``: what it writes, and where it refuses to write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ouro.errors import InvalidInput
from ouro.hooks import plugin
from ouro.hooks.claude import HOST as CLAUDE
from ouro.hooks.codex import HOST as CODEX
from ouro.hooks.install import plan
from tests.conftest import run_ouro

CLAUDE_FILES = [
    ".claude-plugin/plugin.json",
    "hooks/hooks.json",
    ".mcp.json",
    "skills/ouro/SKILL.md",
    plugin.MARKER,
]
CODEX_FILES = [
    ".agents/plugins/marketplace.json",
    "plugins/ouro/.codex-plugin/plugin.json",
    "plugins/ouro/hooks/hooks.json",
    "plugins/ouro/.mcp.json",
    "plugins/ouro/skills/ouro/SKILL.md",
    plugin.MARKER,
]


def _json(path: Path) -> dict[str, object]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def test_claude_plugin_holds_the_hooks_the_mcp_server_and_the_guide(tmp_path: Path) -> None:
    out = run_ouro("hook", "plugin", "claude", str(tmp_path / "p"), "--json", check=True)
    result = json.loads(out.stdout)
    assert result["files"] == CLAUDE_FILES
    assert result["install"][0] == f"claude --plugin-dir {tmp_path / 'p'}"
    root = tmp_path / "p"
    # the same hooks 'ouro hook install claude' writes into a project, every event
    assert (
        _json(root / "hooks/hooks.json")["hooks"]
        == plan(CLAUDE, tmp_path, base="ouro").new_doc["hooks"]
    )
    assert _json(root / ".mcp.json") == {
        "mcpServers": {"ouro": {"command": "ouro", "args": ["mcp"]}}
    }
    assert _json(root / ".claude-plugin/plugin.json")["name"] == "ouro"
    skill = (root / "skills/ouro/SKILL.md").read_text(encoding="utf-8")
    assert skill.startswith("---\nname: ouro\n") and plugin.guide_text() in skill
    assert "wrote the claude plugin" in run_ouro("hook", "plugin", "claude", str(root)).stdout


def test_codex_plugin_is_a_local_marketplace(tmp_path: Path) -> None:
    root = tmp_path / "p"
    written = plugin.write("codex", root, command="'/opt/my ouro/bin/ouro'")  # a shell word
    assert [str(p.relative_to(root)) for p in written.files] == CODEX_FILES
    market = _json(root / ".agents/plugins/marketplace.json")
    assert market["plugins"] == [
        {
            "name": "ouro",
            "source": {"source": "local", "path": "./plugins/ouro"},
            "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"},
            "category": "Productivity",
        }
    ]
    manifest = _json(root / "plugins/ouro/.codex-plugin/plugin.json")
    assert (manifest["hooks"], manifest["mcpServers"], manifest["skills"]) == (
        "./hooks/hooks.json",
        "./.mcp.json",
        "./skills/",
    )
    hooks = _json(root / "plugins/ouro/hooks/hooks.json")["hooks"]
    assert isinstance(hooks, dict) and set(hooks) == set(CODEX.events)
    assert _json(root / "plugins/ouro/.mcp.json") == {
        "mcpServers": {"ouro": {"command": "/opt/my ouro/bin/ouro", "args": ["mcp"]}}
    }
    assert written.install[:2] == [
        f"codex plugin marketplace add {root}",
        "codex plugin add ouro@ouro-local",
    ]


@pytest.mark.parametrize("host", ["claude", "codex"])
def test_refuses_anything_but_a_new_empty_or_own_folder(tmp_path: Path, host: str) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    with pytest.raises(InvalidInput, match="holds other things"):
        plugin.write(host, taken)
    assert sorted(p.name for p in taken.iterdir()) == ["notes.txt"]  # nothing written

    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(InvalidInput, match="symbolic link"):
        plugin.write(host, link)
    assert list(real.iterdir()) == []

    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(InvalidInput, match="is a file"):
        plugin.write(host, afile)

    other = "codex" if host == "claude" else "claude"
    plugin.write(other, tmp_path / "theirs")
    with pytest.raises(InvalidInput, match=f"ouro's {other} plugin"):
        plugin.write(host, tmp_path / "theirs")

    # a previous ouro plugin for this host is rewritten in place
    first = plugin.write(host, tmp_path / "mine")
    again = plugin.write(host, tmp_path / "mine")
    assert first.files == again.files


def test_never_writes_through_a_symlink_inside_the_folder(tmp_path: Path) -> None:
    root = tmp_path / "p"
    plugin.write("claude", root)
    outside = tmp_path / "outside"
    outside.mkdir()
    hooks = root / "hooks"
    for child in hooks.iterdir():
        child.unlink()
    hooks.rmdir()
    hooks.symlink_to(outside)
    with pytest.raises(InvalidInput, match="not a plain folder"):
        plugin.write("claude", root)
    assert list(outside.iterdir()) == []


def test_unknown_host_and_blank_command_are_refused(tmp_path: Path) -> None:
    bad = run_ouro("hook", "plugin", "nosuch", str(tmp_path / "p"))
    assert bad.returncode == 2 and "nosuch" in bad.stderr
    with pytest.raises(InvalidInput, match="--command"):
        plugin.write("claude", tmp_path / "q", command=" ")
    assert not (tmp_path / "q").exists()


def test_a_host_without_a_plugin_form_names_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import types

    bare = types.SimpleNamespace(PLUGIN_NONE="it loads hooks from its settings file only")
    monkeypatch.setattr(plugin, "module_for", lambda host: bare)
    with pytest.raises(InvalidInput) as caught:
        plugin.write("codex", tmp_path / "p")
    assert "it loads hooks from its settings file only" in caught.value.message
    assert caught.value.hint == "run 'ouro hook install codex' instead"
    assert not (tmp_path / "p").exists()
