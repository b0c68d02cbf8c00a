"""The old CLI input model of ``ouro info`` (``b.info()``, ``ouro.api``).

Transitional: the pydantic input models here only build the old click CLI
(``ouro.cli.gen``) until the new CLI reads ``ouro.spec``; each verb's one home is its
library method (``ouro.api``).
"""

from __future__ import annotations

from ouro.models.base import ToolInput


class InfoInput(ToolInput):
    pass
