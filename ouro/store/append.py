"""Locked appends that either land whole or leave the file byte-identical.

Contract: ``append_bytes(path, build)`` confines ``path`` to its bundle
(``guard.confine``), opens it ``O_APPEND`` (never through a symlink at the
last step), takes an exclusive ``flock``, asks ``build(size, ends_nl)`` for the
bytes to add (``size`` = the file's size now, ``ends_nl`` = whether it ends in
a newline), and writes them in one ``write()`` followed by ``fsync``. On any
error -- disk full, quota, I/O error, a short write, a failed fsync -- the
file is truncated back to ``size`` before the error is raised as a
``StorageError`` saying nothing was written, so a failed append never leaves
a torn or partial record behind (a file the failed append created is removed
again, under the lock; a writer that then finds its file unlinked reopens it). ``sync=False`` leaves the fsync to the
caller (``fsync_path``), who must not report success before it.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path

from ouro.store.guard import confine, make_dirs, remove_dirs, storage_error
from ouro.store.lock import lock_fd


def append_bytes(
    path: Path,
    build: Callable[[int, bool], bytes],
    *,
    timeout: float = 10.0,
    sync: bool = True,
) -> int:
    """Append ``build(size, ends_nl)`` in one locked write; returns bytes written."""
    target = confine(path)
    new_dirs = make_dirs(target.parent)
    try:
        return _append(target, build, timeout, sync)
    except BaseException:
        remove_dirs(new_dirs)  # only if still empty: no new empty folders left behind
        raise


def _append(target: Path, build: Callable[[int, bool], bytes], timeout: float, sync: bool) -> int:
    while True:
        fd, created = _open(target)
        try:
            lock_fd(fd, target, timeout)
            try:
                if os.fstat(fd).st_nlink == 0:
                    continue  # a failed first append removed the file meanwhile: reopen
                try:
                    return _append_locked(fd, target, build, sync)
                except BaseException:
                    if created and os.fstat(fd).st_size == 0:
                        os.unlink(target)  # leave no empty file behind (we hold the lock)
                    raise
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def _open(target: Path) -> tuple[int, bool]:
    """(fd, whether this call created the file); never follows a final symlink."""
    flags = os.O_RDWR | os.O_APPEND | os.O_NOFOLLOW
    try:
        try:
            return os.open(target, flags), False
        except FileNotFoundError:
            pass
        try:
            return os.open(target, flags | os.O_CREAT | os.O_EXCL, 0o644), True
        except FileExistsError:
            return os.open(target, flags), False
    except OSError as exc:
        raise storage_error(exc, target, action="opening") from None


def _append_locked(fd: int, target: Path, build: Callable[[int, bool], bytes], sync: bool) -> int:
    size = os.fstat(fd).st_size
    ends_nl = size == 0 or os.pread(fd, 1, size - 1) == b"\n"
    payload = build(size, ends_nl)
    if not payload:
        return 0
    try:
        written = os.write(fd, payload)
        if written != len(payload):
            # A short write (disk nearly full, file size limit) would tear the record.
            raise OSError(28, f"short write ({written} of {len(payload)} bytes)")
        if sync:
            os.fsync(fd)
    except OSError as exc:
        _take_back(fd, size)
        raise storage_error(exc, target, action="appending to") from None
    except BaseException:
        _take_back(fd, size)
        raise
    return len(payload)


def _take_back(fd: int, size: int) -> None:
    """Cut the file back to its size before this append (best effort, then fsync)."""
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    except OSError:
        pass  # the error being raised already says the append failed


def fsync_path(path: Path) -> None:
    """Flush everything written to ``path`` so far (by any process) to disk."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        raise storage_error(
            exc, path, action="flushing", outcome="the write may not be durable"
        ) from None
