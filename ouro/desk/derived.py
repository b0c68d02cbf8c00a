"""Replacing a derived file (``entities.json``) atomically.

Contract: ``replace_derived(path, chunks)`` writes the chunks to a temp file
in the same folder, fsyncs it, ``os.replace``s it over ``path`` and fsyncs the
folder: the same discipline as ``ouro.store.atomic``, so a reader (or a
machine after a power cut) sees the whole old file or the whole new one.

It takes chunks rather than one buffer: ``DiaryState`` keeps each entity's
serialized bytes, and joining them only to write them would copy the whole
file once more. Writers coalesce rewrites (see ``ouro.desk.entities``), so
the flush is paid once per batch of concurrent diary writes, not per write.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ouro.store.atomic import fsync_dir


def replace_derived(path: Path, chunks: Sequence[bytes]) -> None:
    """Atomically replace ``path`` with the concatenated ``chunks``."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        _write_all(fd, chunks)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)  # e.g. disk full: the old file stays as it was
        raise
    os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)


def _write_all(fd: int, chunks: Sequence[bytes]) -> None:
    pending = [memoryview(c) for c in chunks if c]
    while pending:
        done = os.writev(fd, pending[:1024])  # IOV_MAX
        while done:  # drop what was written; a short write resumes mid-chunk
            if done >= len(pending[0]):
                done -= len(pending.pop(0))
            else:
                pending[0] = pending[0][done:]
                done = 0
