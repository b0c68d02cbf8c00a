"""File primitives: atomic writes, locked JSONL appends, tolerant JSONL reads,
bounded reads of outside input, the JSON reader, front matter, locks, locators
and the pinned ``git`` command line (``ouro.store.git``: sync and remote peers
replicate through it). Nothing here knows about bundles' meaning.

The names below are re-exported lazily: the CLI fast paths import
``ouro.store.bounded`` and ``ouro.store.jsonio`` and must not pay for
``pathlib`` and the writers on the way in.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ouro.store.atomic import atomic_write_bytes, atomic_write_json, atomic_write_text
    from ouro.store.jsonl import BadLine, JsonlRead, append_jsonl, read_jsonl
    from ouro.store.locator import Locator
    from ouro.store.lock import FileLock

_HOME = {
    "BadLine": "ouro.store.jsonl",
    "FileLock": "ouro.store.lock",
    "JsonlRead": "ouro.store.jsonl",
    "Locator": "ouro.store.locator",
    "append_jsonl": "ouro.store.jsonl",
    "atomic_write_bytes": "ouro.store.atomic",
    "atomic_write_json": "ouro.store.atomic",
    "atomic_write_text": "ouro.store.atomic",
    "read_jsonl": "ouro.store.jsonl",
}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        import importlib

        return getattr(importlib.import_module(_HOME[name]), name)
    raise AttributeError(f"module 'ouro.store' has no attribute {name!r}")


__all__ = [
    "BadLine",
    "FileLock",
    "JsonlRead",
    "Locator",
    "append_jsonl",
    "atomic_write_bytes",
    "atomic_write_json",
    "atomic_write_text",
    "read_jsonl",
]
