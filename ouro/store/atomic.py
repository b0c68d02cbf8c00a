"""Atomic replacement of whole files.

Contract: a reader sees either the whole old file or the whole new file, never
a mix, even if the writer is killed at any instruction. The bytes go to a temp
file in the same folder, are fsynced, ``os.replace``d over the target, and the
folder is fsynced so the rename itself survives a power cut.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import orjson


def fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_bytes(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fchmod(fd, mode)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def dump_json(obj: Any) -> bytes:
    """Canonical JSON for files: sorted keys, two-space indent, trailing newline."""
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def atomic_write_json(path: Path, obj: Any) -> None:
    atomic_write_bytes(path, dump_json(obj))
