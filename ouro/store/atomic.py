"""Atomic replacement of whole files.

Contract: a reader sees either the whole old file or the whole new file, never
a mix, even if the writer is killed at any instruction. The target is first
confined to its bundle (``guard.confine``: resolved through symlinks, refused
if it leaves the bundle); the bytes go to a temp file
``.<name>.<pid>-<n>.tmp`` in the same folder, are fsynced, ``os.replace``d
over the target, and the folder is fsynced so the rename itself survives a
power cut. On any failure the temp file is removed and the target is left
byte-identical; OS errors become ``StorageError`` (``disk full: free space on
/x; nothing was written``). A writer killed between temp and rename leaves its
temp file; the next atomic write into that folder removes temp files whose
writer process is gone (``guard.sweep_temps``).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Sequence
from pathlib import Path

from ouro.store.guard import (
    confine,
    fsync_dir,
    make_dirs,
    note_written,
    remove_dirs,
    storage_error,
    sweep_temps,
)

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "atomic_write_bytes",
    "atomic_write_chunks",
    "atomic_write_json",
    "atomic_write_text",
    "dump_json",
    "fsync_dir",
]

_serial = itertools.count(1)


def atomic_write_bytes(
    path: Path, data: bytes, *, mode: int = 0o644, root: Path | None = None
) -> None:
    atomic_write_chunks(path, [data], mode=mode, root=root)


def atomic_write_chunks(
    path: Path, chunks: Sequence[bytes], *, mode: int = 0o644, root: Path | None = None
) -> None:
    """Replace ``path`` with the concatenated ``chunks`` (all or nothing).

    ``root``: the bundle to confine the write to, when ``path`` is not yet in
    one (``Bundle.init``); by default the nearest folder holding bundle.json.
    """
    target = confine(path, root)
    created = make_dirs(target.parent)
    sweep_temps(target.parent)
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{next(_serial)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    except OSError as exc:
        remove_dirs(created)
        raise storage_error(exc, target) from None
    try:
        try:
            _write_all(fd, chunks)
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException as exc:
        try:  # noqa: SIM105 - no contextlib import on the start-up path
            os.unlink(tmp)
        except OSError:  # already renamed, or gone
            pass
        remove_dirs(created)  # no new empty folders left behind either
        if isinstance(exc, OSError):
            raise storage_error(exc, target) from None
        raise
    note_written(target.parent)
    try:
        fsync_dir(target.parent)
    except OSError as exc:
        raise storage_error(
            exc, target.parent, outcome="the file was replaced but the folder could not be flushed"
        ) from None


def _write_all(fd: int, chunks: Sequence[bytes]) -> None:
    """Write every chunk; a short write resumes where it stopped (ENOSPC raises)."""
    pending = [memoryview(c) for c in chunks if c]
    while pending:
        done = os.writev(fd, pending[:1024])  # IOV_MAX
        if done == 0:
            raise OSError(28, os.strerror(28))  # no progress: treat as disk full
        while done:
            if done >= len(pending[0]):
                done -= len(pending.pop(0))
            else:
                pending[0] = pending[0][done:]
                done = 0


def atomic_write_text(path: Path, text: str, *, root: Path | None = None) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), root=root)


def dump_json(obj: Any) -> bytes:
    """Canonical JSON for files: sorted keys, two-space indent, trailing newline."""
    import orjson  # writers only: a one-shot reader never pays for its import

    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def atomic_write_json(path: Path, obj: Any, *, root: Path | None = None) -> None:
    atomic_write_bytes(path, dump_json(obj), root=root)
