"""Is the index still true to the files? Cheap checks, standard library only.

Two checks, both read-only:

- ``scan(root)``: a full stat-scan of ``desk/`` (every folder and every
  indexed file's mtime and size). ``sync`` compares it against the ``files``
  table; a no-change sync of a large bundle is one scan plus one table read.
- ``quick_check(conn, root)``: what search runs before answering. It stats
  every folder recorded in ``dirs`` (a file created, deleted, renamed or
  atomically replaced changes its folder's mtime), stats the files that ouro
  appends to in place (facts.jsonl, entities.json, daily reflections), and
  re-hashes the few files marked racy (modified within ``RACY_NS`` of being
  read, so an equal mtime proves nothing). Any difference means "run sync".
  An editor that rewrites an existing file in place without touching its
  folder is not seen by this check; ``ouro watch`` and ``ouro index sync``
  see it (docs/index.md, "Freshness").
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from dataclasses import dataclass

#: a file or folder modified this close to the moment we looked may change
#: again within the same mtime tick (coarse kernel clocks): trust it only
#: after re-hashing it / looking again.
RACY_NS = 50_000_000
#: file kinds that ouro appends to in place (their folder mtime does not move)
HOT_KINDS = ("facts", "entities", "daily")


@dataclass(frozen=True)
class Seen:
    mtime_ns: int
    size: int
    kind: str


def scan(root: str) -> tuple[dict[str, Seen], dict[str, int]]:
    """Every indexed file under ``desk/`` and every folder's mtime (stat before list)."""
    from ouro.index.extract import classify

    files: dict[str, Seen] = {}
    dirs: dict[str, int] = {}
    base = os.path.join(root, "")
    stack = [os.path.join(root, "desk")]
    while stack:
        folder = stack.pop()
        try:
            dirs[folder[len(base) :]] = os.stat(folder).st_mtime_ns
            entries = list(os.scandir(folder))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
                continue
            if not entry.is_file(follow_symlinks=False):
                continue
            locator = entry.path[len(base) :]
            kind = classify(locator)
            if kind is None:
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            files[locator] = Seen(st.st_mtime_ns, st.st_size, kind)
    return files, dirs


def file_hash(data: bytes | memoryview) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def quick_check(conn: sqlite3.Connection, root: str) -> str | None:
    """None when nothing visible changed since the last sync, else the reason."""
    for path, mtime in conn.execute("SELECT path, mtime_ns FROM dirs"):
        try:
            now = os.stat(os.path.join(root, path)).st_mtime_ns
        except OSError:
            return f"folder {path} is gone"
        if now != mtime:
            return f"folder {path} changed"
    if conn.execute("SELECT 1 FROM dirs LIMIT 1").fetchone() is None:
        return "the index has never been synced"
    hot = conn.execute(
        "SELECT locator, mtime_ns, size, racy, hash, indexed_bytes FROM files "
        "WHERE kind IN ('facts', 'entities', 'daily') OR racy = 1"
    )
    for locator, mtime, size, racy, digest, indexed in hot:
        path = os.path.join(root, locator)
        try:
            st = os.stat(path)
        except OSError:
            return f"{locator} is gone"
        if (st.st_mtime_ns, st.st_size) != (mtime, size):
            return f"{locator} changed"
        if racy:
            try:
                with open(path, "rb") as handle:
                    data = handle.read(indexed)
            except OSError:
                return f"{locator} is unreadable"
            if file_hash(data) != digest:
                return f"{locator} changed"
    return None
