"""The input model of ``ouro info`` (kept apart from ``ouro.info``, which imports
no pydantic: its plain input is validated by ``ouro.models.lite``)."""

from __future__ import annotations

from ouro.models.base import ToolInput


class InfoInput(ToolInput):
    pass
