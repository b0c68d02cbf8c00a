"""The caps in ``ouro.hooks.budget.BUDGETS``, held against the real hosts (marker ``host``).

A scratch hook answers SessionStart with an ``additionalContext`` of a known
size; the fake model logs what reached it. At the cap the text arrives whole;
one character (byte) over it the host replaces it (Claude Code: "Output too large" and
a preview; Codex: a head, a tail and the path of the spilled file). If a new
host version moves its cap, these fail and the table must change.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ouro.hooks import codex_trust
from ouro.hooks.budget import BUDGETS
from tests import test_real_hosts as real
from tests.fake_models import FakeModels
from tests.test_real_hosts import Claude, Codex, World, _text

pytestmark = pytest.mark.host

hosts, models, world = real.hosts, real.models, real.world
END = "END-OF-CONTEXT-3e9b"


def _hook(world: World, size: int) -> str:
    """A hook command answering SessionStart with ``size`` characters (ASCII, so
    characters, bytes and Codex's bytes/4 tokens are known) ending with END."""
    body = ("x" * 99 + "\n") * (size // 100 + 1)
    body = body[: size - len(END) - 1] + "\n" + END
    assert len(body) == size
    (world.root / "body.txt").write_text(body)
    script = world.root / "hook.py"
    script.write_text(
        "import json, sys\nsys.stdin.read()\n"
        f"text = open({str(world.root / 'body.txt')!r}).read()\n"
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'SessionStart', "
        "'additionalContext': text}}))\n"
    )
    return f"{sys.executable} {script}"


def _config(command: str) -> dict[str, object]:
    handler = {"type": "command", "command": command, "timeout": 30}
    return {"hooks": {"SessionStart": [{"hooks": [handler]}]}}


@pytest.mark.parametrize(("over", "whole"), [(0, True), (1, False)])
def test_claude_takes_10000_characters(
    hosts: dict[str, Path], world: World, models: FakeModels, over: int, whole: bool
) -> None:
    cap = BUDGETS[("claude", "SessionStart")]
    assert (cap.limit, cap.unit) == (10_000, "chars")
    settings = world.project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(_config(_hook(world, cap.limit + over))))
    claude = Claude(hosts["claude"], world, models)
    [request] = claude.turn("hello")
    claude.close()
    text = _text(request)
    assert (END in text) is whole
    assert ("Output too large" in text) is not whole


@pytest.mark.parametrize(("over", "whole"), [(0, True), (1, False)])
def test_codex_takes_2500_tokens_of_4_bytes(
    hosts: dict[str, Path], world: World, models: FakeModels, over: int, whole: bool
) -> None:
    cap = BUDGETS[("codex", "SessionStart")]
    assert (cap.limit, cap.unit) == (2_500, "tokens")
    hooks_file = world.project / ".codex" / "hooks.json"
    hooks_file.parent.mkdir()
    config = _config(_hook(world, cap.limit * 4 + over))
    hooks_file.write_text(json.dumps(config))
    codex = Codex(hosts["codex"], world, models, trust=False)  # trust: written below
    handler = config["hooks"]["SessionStart"][0]["hooks"][0]  # type: ignore[index]
    key = codex_trust.entry_key(hooks_file, "SessionStart", 0, 0)
    digest = codex_trust.entry_hash("SessionStart", None, handler)
    extra = (
        f'\n[projects."{world.project}"]\ntrust_level = "trusted"\n\n'
        f'[hooks.state."{key}"]\ntrusted_hash = "{digest}"\n'
    )
    config_toml = codex.home / "config.toml"
    config_toml.write_text(config_toml.read_text() + extra)
    requests, _events, _stderr = codex.run("hello")
    text = _text(requests[0])
    assert "x" * 99 in text  # the hook ran and its text reached the model
    body = (world.root / "body.txt").read_text()
    assert (json.dumps(body)[1:-1] in text) is whole
    assert ("Full hook output saved to" in text) is not whole  # Codex's spill footer
