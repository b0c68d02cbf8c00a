"""Schemas for every record ouro writes (pydantic v2, camelCase on disk).

The names below are re-exported lazily: importing a light submodule such as
``ouro.models.clock`` or ``ouro.models.hashing`` must not pay for pydantic,
because every CLI start imports them (and ``ouro.models.meta``, the shape
of ``bundle.json``); this module imports
neither ``typing`` nor ``importlib`` until a name is asked for.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ouro.models.base import Record
    from ouro.models.clock import format_time, parse_time, utc_now, utc_now_iso
    from ouro.models.hashing import content_hash, hash_file
    from ouro.models.ids import new_id

_HOME = {
    "Record": "ouro.models.base",
    "content_hash": "ouro.models.hashing",
    "format_time": "ouro.models.clock",
    "hash_file": "ouro.models.hashing",
    "new_id": "ouro.models.ids",
    "parse_time": "ouro.models.clock",
    "utc_now": "ouro.models.clock",
    "utc_now_iso": "ouro.models.clock",
}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        import importlib

        return getattr(importlib.import_module(_HOME[name]), name)
    raise AttributeError(f"module 'ouro.models' has no attribute {name!r}")


__all__ = [
    "Record",
    "content_hash",
    "format_time",
    "hash_file",
    "new_id",
    "parse_time",
    "utc_now",
    "utc_now_iso",
]
