"""``b.sync``: the ``ouro sync`` commands (not agent tools)."""

from __future__ import annotations

from ouro.api._base import Namespace


class Sync(Namespace):
    pass
