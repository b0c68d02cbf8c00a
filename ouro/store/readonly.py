"""Writes refused by the disk or the permissions: say so, name the path.

A bundle may be read where it cannot be written: a read-only mount, a copy on
read-only media, a reviewer's checkout owned by someone else. Every read still
answers there; a write is refused by the operating system (``EROFS``, or
``EACCES``/``EPERM``). ``not_writable`` turns that refusal into the
``StorageError`` every write primitive raises (through
``ouro.store.guard.storage_error``): "the bundle is on a read-only disk" or
"the bundle is not writable here", the path, what was (not) written, and what
to do. ``on_read_only_disk`` tells the two apart (``statvfs``'s read-only flag
of the nearest folder that exists). Standard library only.
"""

from __future__ import annotations

import errno
import os

from ouro.errors import StorageError

#: errno values that mean "this path may not be written here"
REFUSED = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def _existing(path: str) -> str:
    folder = path
    while not os.path.exists(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return folder


def on_read_only_disk(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` (or the nearest folder above it that exists) is on a file
    system mounted read-only."""
    try:
        return bool(os.statvfs(_existing(os.fspath(path))).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def not_writable(
    code: int | None, path: str | os.PathLike[str], *, action: str, outcome: str
) -> StorageError:
    """The error for a write to ``path`` that the disk (``EROFS``) or the permissions
    (``EACCES``/``EPERM``) refused."""
    where = os.fspath(path)
    if code == errno.EROFS or on_read_only_disk(where):
        return StorageError(
            f"the bundle is on a read-only disk: cannot write {where} ({action}); {outcome}",
            hint="reads (orient, arc resume, search, claim list, sentinel status) still answer "
            "here; to write, remount the disk read-write or work on a writable copy of the bundle",
        )
    return StorageError(
        f"the bundle is not writable here: permission denied while {action} {where}; {outcome}",
        hint=f"reads still answer; to write, check the owner and permissions of {where} and "
        "its folder (and 'lsattr' for an immutable flag), or work on a writable copy",
    )
