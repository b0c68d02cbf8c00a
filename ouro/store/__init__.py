"""File primitives: atomic writes, locked JSONL appends, tolerant JSONL reads,
front matter, locks and locators. Nothing here knows about bundles' meaning."""

from ouro.store.atomic import atomic_write_bytes, atomic_write_json, atomic_write_text
from ouro.store.jsonl import BadLine, JsonlRead, append_jsonl, read_jsonl
from ouro.store.locator import Locator
from ouro.store.lock import FileLock

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
