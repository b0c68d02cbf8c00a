"""``b.index``: the ``ouro index`` commands (not agent tools)."""

from __future__ import annotations

from ouro.api._base import Namespace


class Index(Namespace):
    pass
