"""Issue 11: no secret of the seeded set (>= 20 shapes) reaches any render surface.

Secrets typed into Desk (task titles and bodies of the featured track,
friction, a diary fact, a note — kept as written, they are the user's record)
and through every Arc write path. Then every surface that puts text in front
of an agent is read through its real entry point: ``ouro orient`` (text and
JSON), the SessionStart and UserPromptSubmit injections and the Stop message
(real ``ouro hook`` processes), ``ouro arc resume`` (text and JSON), the MCP
``orient``, ``arc_resume``, ``consult_diary`` and ``desk_search`` results over
stdio (search snippets of the diary and Desk), and ``ouro drill`` output.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from ouro.bundle import Bundle
from ouro.sentinel.drills.secrets import _write_desk, _write_everything, seeds
from tests.conftest import run_ouro
from tests.secret_shapes import SHAPES
from tests.test_hooks import hook

LITERAL = "corp-literal-" + "7Hq2Kd9"


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Bundle:
    bundle = Bundle.init(tmp_path_factory.mktemp("sec") / "s.ouro", agent="sec")
    meta = orjson.loads(bundle.meta_path.read_bytes())
    meta["redact"] = {"literals": [LITERAL]}
    bundle.meta_path.write_bytes(orjson.dumps(meta))
    typed = seeds(LITERAL)
    blob = " | ".join(typed.values())
    _write_everything(bundle, blob)
    _write_desk(bundle, typed, blob)
    return bundle


def _mcp_texts(bundle: Bundle, tmp: Path) -> list[str]:
    from tests.mcp_client import text_of
    from tests.test_mcp import drive

    out: list[str] = []

    async def body(client: Any) -> None:
        for name, args in (
            ("orient", {}),
            ("arc_resume", {}),
            ("consult_diary", {"query": "fact"}),
            ("desk_search", {"query": "task"}),
        ):
            out.append(text_of(await client.call_tool(name, args)))

    drive(bundle.root, tmp / "server.log", body)
    return out


def surfaces(bundle: Bundle, tmp: Path) -> dict[str, str]:
    def cli(*args: str) -> str:
        proc = run_ouro(*args, bundle=bundle)
        return proc.stdout + proc.stderr

    start = hook("claude", "SessionStart", bundle, source="startup").stdout
    prompt = hook("codex", "UserPromptSubmit", bundle, session_id="fresh-session").stdout
    stop = hook("claude", "Stop", bundle).stdout
    out = {
        "orient text": cli("orient", "--budget", "20000"),
        "orient json": cli("orient", "--budget", "20000", "--format", "json"),
        "SessionStart": start,
        "UserPromptSubmit": prompt,
        "Stop": stop,
        "arc resume": cli("arc", "resume"),
        "arc resume json": cli("arc", "resume", "--json"),
        "drill": cli("drill", "erase", "secrets", "--json"),
    }
    for i, text in enumerate(_mcp_texts(bundle, tmp)):
        out[f"mcp {i}"] = text
    return out


def test_at_least_twenty_shapes_are_seeded() -> None:
    assert len(SHAPES) >= 20


def test_no_seeded_secret_on_any_render_surface(seeded: Bundle, tmp_path: Path) -> None:
    rendered = surfaces(seeded, tmp_path)
    assert "[redacted:" in rendered["orient text"]  # the secrets did reach the packet's sources
    assert json.loads(rendered["drill"])  # the drill ran and answered
    needles = {kind: needle for kind, (_typed, needle) in SHAPES.items()} | {"literal": LITERAL}
    leaks = {
        (kind, surface)
        for kind, needle in needles.items()
        for surface, text in rendered.items()
        if needle in text or json.dumps(needle)[1:-1] in text
    }
    assert leaks == set()
    # Desk keeps what the user typed: the record is theirs.
    assert any(
        needles["github_token"] in p.read_text() for p in (seeded.root / "desk").rglob("task.md")
    )
