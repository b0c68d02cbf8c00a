"""The plugins ``ouro hook plugin`` writes, loaded by the real hosts (marker ``host``).

Same machinery as ``tests/test_real_hosts.py`` (pinned npm hosts, a scratch
HOME, the fake model server on 127.0.0.1); here nothing is installed into the
project: the host loads ouro only through the plugin folder, and the packet
must still reach the model at session start.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fake_models import FakeModels
from tests.test_real_hosts import (  # noqa: F401  (fixtures)
    ASK,
    HANDOFF,
    NEXT,
    Claude,
    World,
    _assert_packet,
    _text,
    hosts,
    models,
    world,
)

pytestmark = pytest.mark.host


def test_claude_plugin_dir_delivers_the_packet(
    hosts: dict[str, Path], world: World, models: FakeModels
) -> None:
    world.readme_layout()
    folder = world.root / "ouro-plugin"
    out = world.ouro("hook", "plugin", "claude", str(folder))
    assert f"claude --plugin-dir {folder}" in out.stdout
    assert not (world.project / ".claude").exists()  # nothing in the project

    claude = Claude(hosts["claude"], world, models, "--plugin-dir", str(folder))
    [first] = claude.turn("first turn")
    _assert_packet(first, ASK, NEXT, HANDOFF)
    starts = [e for e in claude.hook_responses() if e["hook_event"] == "SessionStart"]
    assert len(starts) == 1, starts  # the plugin's hook, once
    context = json.loads(starts[0]["stdout"])["hookSpecificOutput"]["additionalContext"]
    assert json.dumps(context, ensure_ascii=False)[1:-1] in _text(first)
    # The plugin's MCP server connected and its tools are the session's (Claude
    # defers MCP tools behind ToolSearch, so they are read from the init event).
    init = next(e for e in claude.events if e.get("subtype") == "init")
    claude.close()
    assert {"name": "plugin:ouro:ouro", "status": "connected", "source": "plugin"} in init[
        "mcp_servers"
    ]
    assert "mcp__plugin_ouro_ouro__orient" in init["tools"]
    assert any(p["name"] == "ouro" and p["path"] == str(folder) for p in init["plugins"])
