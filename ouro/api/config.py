"""``b.config``: the ``ouro config`` commands (not agent tools)."""

from __future__ import annotations

from ouro.api._base import Namespace


class Config(Namespace):
    pass
