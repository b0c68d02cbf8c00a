"""Replacing a derived file (``entities.json``) atomically and cheaply.

Contract: ``replace_derived(path, data)`` writes ``data`` to a temp file in the
same folder and swaps it into place atomically, so a reader sees the old bytes
or the new bytes, never a mix. No fsync: the file is derived from a log that
is fsynced, and the next write (or a rebuild) regenerates it whole.

Why not plain ``os.replace``: on ext4 (default ``auto_da_alloc``) renaming over
an existing file starts writeback of the new file's data at once, to protect
writers that skip fsync. For a 2.4 MB ``entities.json`` rewritten on every
diary write that is ~2 ms and 2.4 MB of disk I/O per write. Linux's
``renameat2(RENAME_EXCHANGE)`` swaps the two names atomically without that
flush; the old bytes, now under the temp name, are then unlinked. Where the
exchange is unavailable (not Linux, an old kernel, a filesystem without it, or
no file yet at ``path``) it falls back to ``os.replace``.

The price: after a power loss (not a process crash) the file may be left empty
or stale; readers report an empty file as not valid JSON, and the next write or
``ouro diary rebuild-entities`` heals it.
"""

from __future__ import annotations

import errno
import os
import sys
from functools import cache
from pathlib import Path
from typing import Any

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
# errors meaning "this system cannot exchange these two names": fall back
_UNSUPPORTED = {errno.ENOENT, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EXDEV}


@cache
def _renameat2() -> Any | None:
    if sys.platform != "linux":
        return None
    import ctypes  # imported on use: keeps CLI start fast

    libc = ctypes.CDLL(None, use_errno=True)
    func = getattr(libc, "renameat2", None)
    if func is None:
        return None
    func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    func.restype = ctypes.c_int
    return func


def exchange(src: Path, dst: Path) -> bool:
    """Atomically swap the files at ``src`` and ``dst``; False if this system cannot."""
    func = _renameat2()
    if func is None:
        return False
    import ctypes

    if func(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in _UNSUPPORTED:
        return False
    raise OSError(err, os.strerror(err), str(dst))


def replace_derived(path: Path, data: bytes) -> None:
    """Atomically replace ``path`` with ``data`` (no fsync; see the module docstring)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    if exchange(tmp, path):
        os.unlink(tmp)  # it now holds the previous bytes
    else:
        os.replace(tmp, path)
