"""Four MCP clients, four ``ouro mcp`` processes, one bundle, writing at once:
every diary entry lands exactly once and the file stays well formed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from ouro.bundle import Bundle
from ouro.store.jsonl import read_jsonl
from tests.mcp_client import json_of, session

CLIENTS = 4
FACTS_EACH = 12


@pytest.mark.slow
def test_four_clients_write_concurrently_and_nothing_is_lost(
    bundle: Bundle, tmp_path: Path
) -> None:
    written: dict[str, str] = {}  # fact id -> text, as each server reported it
    sent: set[str] = set()
    ready = anyio.Event()
    connected = 0

    async def client(n: int, log: Any) -> None:
        nonlocal connected
        async with session(bundle.root, errlog=log) as mcp:
            connected += 1
            if connected == CLIENTS:
                ready.set()
            await ready.wait()  # all four servers are up: the writes overlap
            for i in range(FACTS_EACH):
                text = f"client {n} observed event {i} (marker c{n}e{i})"
                sent.add(text)
                result = json_of(await mcp.call_tool("diary_write", {"text": text}))
                assert result["duplicate"] is False
                written[result["fact"]["id"]] = result["fact"]["text"]

    async def main() -> None:
        with anyio.fail_after(90), (tmp_path / "servers.log").open("w") as log:
            async with anyio.create_task_group() as tg:
                for n in range(CLIENTS):
                    tg.start_soon(client, n, log)

    anyio.run(main)

    assert len(written) == CLIENTS * FACTS_EACH
    assert set(written.values()) == sent
    facts = read_jsonl(bundle.record / "diary" / "facts.jsonl")
    assert facts.bad == []
    on_disk = [(r["id"], r["text"]) for r in facts.records]
    assert len(on_disk) == len(set(on_disk)), "a fact was written twice"
    assert dict(on_disk) == written
