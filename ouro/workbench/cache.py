"""A small in-process cache of parsed files, keyed on the file's identity.

A served workbench renders the same derived files again and again
(``entities.json``, the notes manifest: megabytes of JSON at a year's scale).
``stat_cached(path, load)`` returns ``load()``'s value while the file's stamp
(``ouro.store.stamp``: size, mtime, ctime, inode, and its device) is
unchanged; a stamp in the racy window is not cached, so a change is never
missed. A missing or
unreadable file is not cached: ``load`` runs and reports it. Reads only.
``also`` names more files the value depends on (``entities.json`` as read
through ouro also depends on ``facts.jsonl`` and its stamp: ``ouro.desk.entities``);
a missing one counts as its own state, never as a reason to skip the check.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ouro.store import stamp as stamps

T = TypeVar("T")
_LOCK = threading.Lock()
_CACHE: dict[tuple[str, str], tuple[tuple[int, ...], object]] = {}


def stat_cached(path: Path, kind: str, load: Callable[[], T], also: tuple[Path, ...] = ()) -> T:
    try:
        st = os.stat(path)
    except OSError:
        return load()
    key = (str(path), kind)
    now = time.time_ns()
    ident: tuple[int, ...] = (st.st_dev, *stamps.of(st))
    trusted = not stamps.racy(st, now)
    for other in also:
        try:
            ost = os.stat(other)
            ident += (ost.st_dev, *stamps.of(ost))
            trusted = trusted and not stamps.racy(ost, now)
        except OSError:
            ident += (-1, -1, -1, -1, -1)
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None and hit[0] == ident:
        return hit[1]  # type: ignore[return-value]
    value = load()
    if trusted:  # the one racy rule: a file changed this recently may change unseen
        with _LOCK:
            _CACHE[key] = (ident, value)
    return value
