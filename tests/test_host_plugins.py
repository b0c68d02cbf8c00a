"""The plugins ``ouro hook plugin`` writes, loaded by the real hosts (marker ``host``).

Same machinery as ``tests/test_real_hosts.py`` (pinned npm hosts, a scratch
HOME, the fake model server on 127.0.0.1); here nothing is installed into the
project: the host loads ouro only through the plugin folder, and the packet
must still reach the model at session start.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from pathlib import Path

import pytest

from tests import test_real_hosts as real
from tests.fake_models import FakeModels
from tests.test_real_hosts import (
    ASK,
    HANDOFF,
    NEXT,
    Claude,
    Codex,
    World,
    _assert_no_codex_hook_warning,
    _assert_packet,
    _text,
)

# the real-host module's fixtures, shared
hosts, models, world = real.hosts, real.models, real.world

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
    # The plugin's MCP server connects and its tools are the session's (Claude
    # defers MCP tools behind ToolSearch, so they are read from the init event,
    # which each turn repeats; on a loaded machine the first may say "pending").
    inits = [e for e in claude.events if e.get("subtype") == "init"]
    if inits[-1]["mcp_servers"][0]["status"] == "pending":
        time.sleep(3)
        claude.turn("second turn")
        inits = [e for e in claude.events if e.get("subtype") == "init"]
    claude.close()
    init = inits[-1]
    assert {"name": "plugin:ouro:ouro", "status": "connected", "source": "plugin"} in init[
        "mcp_servers"
    ]
    assert "mcp__plugin_ouro_ouro__orient" in init["tools"]
    assert any(p["name"] == "ouro" and p["path"] == str(folder) for p in init["plugins"])


def test_codex_plugin_from_a_local_marketplace_delivers_the_packet(
    hosts: dict[str, Path], world: World, models: FakeModels
) -> None:
    world.readme_layout()
    folder = world.root / "ouro-plugin"
    out = world.ouro("hook", "plugin", "codex", str(folder))
    codex = Codex(hosts["codex"], world, models, trust=False)
    commands = [
        line.strip()
        for line in out.stdout.split("install it:")[1].splitlines()
        if line.strip().startswith("codex plugin")
    ]
    assert len(commands) == 2, out.stdout
    for line in commands:
        words = shlex.split(line)
        proc = subprocess.run(
            [str(hosts["codex"]), *words[1:]], cwd=world.project, env=codex.env, capture_output=True,
            text=True, timeout=120,
        )  # fmt: skip
        assert proc.returncode == 0, f"{line}: {proc.stdout}{proc.stderr}"
    assert not (world.project / ".codex").exists()  # nothing in the project
    # 'codex plugin add' does not trust the plugin's hooks: the user does, in /hooks,
    # which writes [hooks.state."<plugin id>:<hooks file>:<event>:<group>:<handler>"].
    _trust_plugin_hooks(codex, folder / "plugins/ouro/hooks/hooks.json")
    requests, events, stderr = codex.run("first turn")
    assert len(requests) == 1
    _assert_packet(requests[0], ASK, NEXT, HANDOFF)
    _assert_no_codex_hook_warning(events, stderr)


def _trust_plugin_hooks(codex: Codex, hooks_file: Path) -> None:
    """The trust /hooks writes for a plugin's hooks (codex-rs/hooks plugin_hook_key_source:
    the key starts with ``<plugin>@<marketplace>:<file relative to the plugin root>``)."""
    from ouro.hooks import codex_trust, install
    from ouro.hooks.codex import HOST, MARKETPLACE

    doc = json.loads(hooks_file.read_text())
    lines = [""]
    for event, g, h, matcher, handler in install._ours(doc, HOST):
        key = f"ouro@{MARKETPLACE}:hooks/hooks.json:{codex_trust.SNAKE[event]}:{g}:{h}"
        digest = codex_trust.entry_hash(event, matcher, handler)
        lines += [f'[hooks.state."{key}"]', f'trusted_hash = "{digest}"', ""]
    config = codex.home / "config.toml"
    config.write_text(config.read_text() + "\n".join(lines))
