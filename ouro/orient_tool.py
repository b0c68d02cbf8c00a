"""``ouro orient`` / ``orient`` (MCP): the start-of-turn packet as a registry tool.

The same packet the host hooks inject at SessionStart (``ouro.orient``), with
the same ``budget``; pure (writes nothing). The result is ``Packet.to_json()``:
``text`` (what a model reads), ``chars``, ``budget``, ``items`` (each with its
locator) and ``dropped`` (per section, what the budget left out).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ouro.models.base import ToolInput

DEFAULT_BUDGET = 2500


class OrientInput(ToolInput):
    budget: int = Field(DEFAULT_BUDGET, ge=200, description="Most characters the packet may take.")


def render_orient(result: dict[str, Any]) -> str:
    return str(result["text"])
