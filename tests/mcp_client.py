"""Drive ``ouro mcp`` with the SDK's own stdio client (tests and bench).

``session(root)`` spawns ``python -m ouro.cli mcp --bundle ROOT`` and yields an
initialized ``ClientSession``; the server's stderr goes to ``errlog``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client


def server_params(root: Path | str, tools: str | None = "all") -> StdioServerParameters:
    """``tools``: the server's ``--tools`` set ("all" by default, so tests reach every
    tool); None starts it with no flag, as a user would (the lean set)."""
    # The SDK starts the server with a minimal environment; keep PYTHONPATH so
    # the server runs the same ouro as the test (a worktree, not the install).
    env = get_default_environment()
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "ouro.cli", "mcp", "--bundle", str(root)]
        + (["--tools", tools] if tools else []),
        env=env,
    )


@asynccontextmanager
async def session(
    root: Path | str, errlog: TextIO = sys.stderr, tools: str | None = "all"
) -> AsyncIterator[ClientSession]:
    async with (
        stdio_client(server_params(root, tools), errlog=errlog) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        yield client


def text_of(result: types.CallToolResult) -> str:
    assert len(result.content) == 1, result
    block = result.content[0]
    assert isinstance(block, types.TextContent), block
    return block.text


def json_of(result: types.CallToolResult) -> Any:
    """The JSON a successful call returned, checked against its structured twin."""
    assert not result.is_error, text_of(result)
    data = json.loads(text_of(result))
    assert result.structured_content == data
    return data
