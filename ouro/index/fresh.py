"""Is the index still true to the files? Cheap checks, standard library only.

Two checks, both read-only:

- ``scan(root)``: a full stat-scan of ``desk/`` (every indexed file's mtime
  and size, and the mtimes of the *watched* folders). ``sync`` compares it
  against the ``files`` table; a no-change sync of a large bundle is one scan
  plus one table read.
- ``quick_check(conn, root)``: what search runs before answering. It costs a
  few dozen ``stat`` calls whatever the bundle's size:

  * every watched folder recorded in ``dirs`` — ``desk/``, each folder
    directly in it (every track, ``_friction``, ``_meta``, ``_record``),
    ``_meta/tips``, ``_record/notes``, ``_record/diary`` and
    ``_record/diary/daily``, and every folder under ``_record/notes``. A file or folder created, deleted, renamed or
    atomically replaced *directly in* one of them moves its mtime: a new,
    removed or renamed track, task folder, note, friction entry, tip or day
    file, and every rename-save of a note, tip, friction entry, track.md,
    facts.jsonl or entities.json;
  * the files ouro appends to in place: ``facts.jsonl`` and ``entities.json``
    (mtime and size against the indexed row) and the newest daily reflection.

  Any difference means "run sync". Not seen by this check, by design: an
  in-place edit of an existing Markdown file, and anything inside a task
  folder (``task.md`` rewritten or rename-saved, an iteration added) as long
  as the task folder itself stays. Every ouro write indexes itself
  (write-through), ``ouro watch`` applies outside edits as they happen, and
  ``ouro index sync`` catches everything (docs/index.md, "Freshness").
"""

from __future__ import annotations

import os
import sqlite3
from stat import S_IFLNK

#: watched folders deeper than ``desk/<name>`` (see ``watched``)
DEEP_WATCHED = frozenset(
    {"desk/_meta/tips", "desk/_record/notes", "desk/_record/diary", "desk/_record/diary/daily"}
)
#: notes may sit in subfolders (migrated journal entries: notes/journal/): all watched
NOTES_PREFIX = "desk/_record/notes/"
FACTS = "desk/_record/diary/facts.jsonl"
ENTITIES = "desk/_record/diary/entities.json"
DAILY_PREFIX = "desk/_record/diary/daily/"


class Seen:
    """A file as the scan saw it. (Not a dataclass: this module is on the CLI
    fast path, and ``dataclasses`` costs a cold start ~5 ms.)"""

    __slots__ = ("kind", "mtime_ns", "size")

    def __init__(self, mtime_ns: int, size: int, kind: str) -> None:
        self.mtime_ns = mtime_ns
        self.size = size
        self.kind = kind


def watched(folder: str) -> bool:
    """Is ``folder`` (bundle-relative) one whose mtime the pre-search check compares?"""
    return folder.count("/") <= 1 or folder in DEEP_WATCHED or folder.startswith(NOTES_PREFIX)


def scan(
    root: str, outside: list[str] | None = None, special: list[tuple[str, int]] | None = None
) -> tuple[dict[str, Seen], dict[str, int]]:
    """Every indexed file under ``desk/`` and each watched folder's mtime (stat before list).

    Symlinks are neither followed nor indexed; one to a folder or to a file
    that would be indexed, resolving outside the bundle (or ``desk/`` itself,
    resolved once), is added to ``outside`` by locator: only a symlink pays a
    ``realpath``. A FIFO, a socket, a device or a symlink inside the bundle where
    an indexed file would be is never opened and added to ``special`` as
    ``(locator, st_mode)``, for the sync to report (never skipped silently, as
    if the file held nothing)."""
    from ouro.index.extract import classify
    from ouro.store.guard import Inside, is_dir

    files: dict[str, Seen] = {}
    dirs: dict[str, int] = {}
    base = os.path.join(root, "")
    inside = Inside(root)
    stack = [os.path.join(root, "desk")]
    if inside.folder(stack[0]) is None:
        if outside is not None:
            outside.append("desk")
        return files, dirs
    while stack:
        folder = stack.pop()
        rel = folder[len(base) :]
        try:
            if watched(rel):
                dirs[rel] = os.stat(folder).st_mtime_ns
            entries = list(os.scandir(folder))
        except (FileNotFoundError, NotADirectoryError):
            dirs.pop(rel, None)
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
                continue
            if not entry.is_file(follow_symlinks=False):
                if not entry.is_symlink():
                    if special is not None and classify(entry.path[len(base) :]) is not None:
                        try:
                            mode = entry.stat(follow_symlinks=False).st_mode
                        except FileNotFoundError:
                            continue
                        special.append((entry.path[len(base) :], mode))
                elif (
                    outside is not None
                    and (classify(entry.path[len(base) :]) is not None or is_dir(entry))
                    and not inside.entry(entry, folder)
                ):
                    outside.append(entry.path[len(base) :])
                elif special is not None and classify(entry.path[len(base) :]) is not None:
                    # a symlink to a file inside the bundle: still not followed, but said
                    special.append((entry.path[len(base) :], S_IFLNK))
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
    import hashlib

    return "sha256:" + hashlib.sha256(data).hexdigest()


_HOT_FILES = (
    "SELECT locator, mtime_ns, size FROM files WHERE locator IN (?, ?) UNION ALL "
    "SELECT * FROM (SELECT locator, mtime_ns, size FROM files "
    "WHERE locator > ? AND locator < ? ORDER BY locator DESC LIMIT 1)"
)


def quick_check(conn: sqlite3.Connection, root: str) -> str | None:
    """None when nothing the cheap check watches changed since the last sync, else the reason."""
    base = os.path.join(root, "")
    stat = os.stat
    rows = conn.execute("SELECT path, mtime_ns FROM dirs").fetchall()
    if not rows:
        return "the index has never been synced"
    for path, mtime in rows:
        try:
            now = stat(base + path).st_mtime_ns
        except OSError:
            return f"folder {path} is gone"
        if now != mtime:
            return f"folder {path} changed"
    # The newest day file stands for the daily reflections: ouro appends only
    # to today's, and a new day's file moves the daily folder's mtime.
    hot = conn.execute(_HOT_FILES, (FACTS, ENTITIES, DAILY_PREFIX, DAILY_PREFIX[:-1] + "0"))
    for locator, mtime, size in hot:
        try:
            st = stat(base + locator)
        except OSError:
            return f"{locator} is gone"
        # Appends always grow the file, so size and mtime suffice (no re-hash
        # of a 40 MB facts.jsonl before every search).
        if st.st_mtime_ns != mtime or st.st_size != size:
            return f"{locator} changed"
    return None
