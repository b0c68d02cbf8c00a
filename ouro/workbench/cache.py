"""A small in-process cache of parsed files, keyed on the file's identity.

A served workbench renders the same derived files again and again
(``entities.json``, the notes manifest: megabytes of JSON at a year's scale).
``stat_cached(path, load)`` returns ``load()``'s value while the file's
(inode, size, mtime) is unchanged; every ouro write replaces these files by
rename (a new inode) or grows them, so a change is never missed. A missing or
unreadable file is not cached: ``load`` runs and reports it. Reads only.
``also`` names more files the value depends on (``entities.json`` as read
through ouro also depends on ``facts.jsonl`` and its stamp: ``ouro.desk.entities``);
a missing one counts as its own state, never as a reason to skip the check.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
_LOCK = threading.Lock()
_CACHE: dict[tuple[str, str], tuple[tuple[int, ...], object]] = {}


def stat_cached(path: Path, kind: str, load: Callable[[], T], also: tuple[Path, ...] = ()) -> T:
    try:
        st = os.stat(path)
    except OSError:
        return load()
    key = (str(path), kind)
    ident: tuple[int, ...] = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    for other in also:
        try:
            ost = os.stat(other)
            ident += (ost.st_dev, ost.st_ino, ost.st_size, ost.st_mtime_ns)
        except OSError:
            ident += (-1, -1, -1, -1)
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None and hit[0] == ident:
        return hit[1]  # type: ignore[return-value]
    value = load()
    with _LOCK:
        _CACHE[key] = (ident, value)
    return value
