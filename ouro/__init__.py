"""ouro: a durable place to stand for AI agents.

A bundle is a folder of plain JSON, JSONL and Markdown. Arc holds live
continuity; Desk holds durable work and the maintained record. Files are the
truth; the SQLite index under ``state/index/`` is a rebuildable cache.

The library (``ouro.api``, docs/python-api.md)::

    import ouro

    b = ouro.open()  # the bundle the CLI would find from here
    b.diary.write("the release train leaves on Fridays", about=["release"])

``ouro.open``, ``ouro.init``, ``ouro.Bundle`` and ``ouro.call`` are loaded on
first use, so ``import ouro`` stays cheap.
"""

from __future__ import annotations

TYPE_CHECKING = False  # no typing at run time: the CLI fast paths import this package
if TYPE_CHECKING:
    from typing import Any

    from ouro.api import Bundle, call, init, open

__version__ = "0.1.0"
__all__ = ["Bundle", "__version__", "call", "init", "open"]

_LAZY = frozenset({"Bundle", "call", "init", "open"})


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import ouro.api

        return getattr(ouro.api, name)
    raise AttributeError(f"module 'ouro' has no attribute {name!r}")
