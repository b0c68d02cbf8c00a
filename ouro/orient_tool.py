"""``ouro orient``: the rendering of ``b.orient()`` (``ouro.api``) and its old CLI input model.

The result is ``Packet.to_json()``: ``text`` (what a model reads), ``chars``,
``budget``, ``items`` (each with its locator) and ``dropped`` (per section, what
the budget left out).

Transitional: the pydantic input models here only build the old click CLI
(``ouro.cli.gen``) until the new CLI reads ``ouro.spec``; each verb's one home is its
library method (``ouro.api``).
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
