"""Replacing a derived file (``entities.json``) atomically.

Contract: ``replace_derived(path, chunks)`` is ``ouro.store.atomic``'s
replace (confined to the bundle, temp file, fsync, ``os.replace``, folder
fsync, temp removed on failure and swept after a kill), so a reader (or a
machine after a power cut) sees the whole old file or the whole new one.

It takes chunks rather than one buffer: ``DiaryState`` keeps each entity's
serialized bytes, and joining them only to write them would copy the whole
file once more. Writers coalesce rewrites (see ``ouro.desk.entities``), so
the flush is paid once per batch of concurrent diary writes, not per write.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ouro.store.atomic import atomic_write_chunks


def replace_derived(path: Path, chunks: Sequence[bytes]) -> None:
    """Atomically replace ``path`` with the concatenated ``chunks``."""
    atomic_write_chunks(path, chunks)
