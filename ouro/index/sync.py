"""Bring the index in line with the files under ``desk/`` (files are the truth).

Public API (other layers call exactly these):

- ``sync(bundle, progress=None) -> SyncReport``: stat-scan ``desk/``; a file
  whose (mtime, size) match the ``files`` table (and is not racy) is skipped;
  the rest are read and hashed, and re-indexed only when the hash differs;
  files that disappeared lose their rows. Writes go in one transaction per
  batch of files; every file is re-checked inside the transaction, so
  concurrent syncs and write-throughs never double-index.
- ``rebuild(bundle, progress=None) -> SyncReport``: empty every table, then
  sync, all in one transaction (readers see the old index until the new one
  is complete).
- The other derived files are not this module's: ``ouro.derived`` iterates
  every artifact (``ouro index sync|rebuild`` call it around these).
- ``touch_paths(bundle, paths) -> None``: write-through after an ouro write;
  indexes just those paths. Never raises: on failure it leaves
  ``state/index/STALE`` so ``status`` and the next search see it.
- ``status(bundle) -> dict``: fresh | stale | missing, counts, last sync. Pure.

facts.jsonl is append-only and large: the ``files`` row remembers how many
bytes were indexed and the hash of that prefix. When the file changed and the
prefix still hashes the same, only the appended lines are parsed; otherwise
the whole file is re-indexed. An unfinished last line is left for later.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sqlite3
import time
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ouro.errors import IndexUnavailable, OuroError
from ouro.index import db
from ouro.index.apply import (
    DATA_TABLES,
    OUTSIDE,
    SyncReport,
    flush_docs,
    remove_file,
    set_meta,
    unread,
)
from ouro.index.apply import apply_file as _apply_file  # one name, patchable by drills
from ouro.index.extract import classify
from ouro.index.fresh import ENTITIES, FACTS, scan, watched
from ouro.notices import warn
from ouro.store.bounded import file_bytes, not_regular
from ouro.store.lock import FileLock
from ouro.store.stamp import RACY_NS

if TYPE_CHECKING:
    from ouro.bundle import Bundle

Progress = Callable[[int, int], None]
BATCH = 500
#: indexes a rebuild drops before loading and creates again after (in its one
#: transaction); nothing the load reads goes through them
DEFERRED_INDEXES = (
    "docs_file",
    "docs_kind_updated",
    "fact_entities_doc",
    "note_tags_doc",
    "problems_file",
    "tasks_status",
)


# --- the public API -----------------------------------------------------------


def _read_marker(root: Path) -> bytes | None:
    try:
        return file_bytes(db.stale_marker(root))
    except FileNotFoundError:
        return None
    except OSError:  # a folder or a FIFO in its place: it stays, and the index reads as stale
        return b"unreadable"


def _sync(
    conn: sqlite3.Connection,
    root: Path,
    progress: Progress | None,
    report: SyncReport,
    *,
    empty_first: bool = False,
) -> SyncReport:
    started = time.perf_counter()
    marker = _read_marker(root)
    if empty_first:
        # One transaction: readers keep the old index until the new one is
        # whole, and SQLite commits the new pages once instead of per batch.
        with db.transaction(conn):
            had_vectors = _empty(conn)
            # FTS5 flushes its pending terms as a new segment whenever they
            # pass 1 MB, and merges segments as they pile up: with 8 MB it
            # writes a third of the segments and merges less (~15% of the FTS
            # load at 100k facts, for ~8 MB of RSS). Back to the default after.
            _fts_hashsize(conn, FTS_LOAD_HASHSIZE)
            # Lookup indexes are built once at the end (a sort) rather than
            # grown row by row; the ones the load itself queries stay.
            later = conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
                f"AND name IN ({','.join('?' * len(DEFERRED_INDEXES))})",
                DEFERRED_INDEXES,
            ).fetchall()
            for name, _sql in later:
                conn.execute(f'DROP INDEX "{name}"')
            report.emptied = True
            # The load allocates ~100k small tuples and no cycle: the cyclic
            # collector would only walk them over and over.
            collecting = gc.isenabled()
            gc.disable()
            try:
                _apply_changes(conn, str(root), progress, report, batch=contextlib.nullcontext)
            finally:
                report.emptied = False
                report.seen_files = None
                if collecting:
                    gc.enable()
            _fts_hashsize(conn, FTS_HASHSIZE)
            for _name, sql in later:
                conn.execute(sql)
            if had_vectors:  # the tables and triggers again, empty: every vector is due
                from ouro.index.semantic import ensure_schema

                ensure_schema(conn)
    else:
        _apply_changes(conn, str(root), progress, report, batch=lambda: db.transaction(conn))
    if _read_marker(root) == marker:
        db.clear_stale(root)
    report.seconds = time.perf_counter() - started
    return report


#: FTS5's pending-terms limit ("hashsize"): its default, and a rebuild's
FTS_HASHSIZE = 1 << 20
FTS_LOAD_HASHSIZE = 8 << 20


def _fts_hashsize(conn: sqlite3.Connection, size: int) -> None:
    conn.execute("INSERT INTO docs_fts(docs_fts, rank) VALUES ('hashsize', ?)", (size,))


def _empty(conn: sqlite3.Connection) -> bool:
    """Empty every table; True when the index had vectors (``semantic.forget``)."""
    from ouro.index.semantic import forget  # standard library only at import

    had_vectors = forget(conn)  # every doc gets a new id; the load fires no trigger
    fts_sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'docs_fts'").fetchone()[0]
    # Dropping the FTS table is far faster than deleting its rows one by one.
    conn.execute("DROP TABLE docs_fts")
    conn.execute(fts_sql)
    for table in DATA_TABLES:
        conn.execute(f"DELETE FROM {table}")
    conn.execute("DELETE FROM meta")
    return had_vectors


def _apply_changes(
    conn: sqlite3.Connection,
    top: str,
    progress: Progress | None,
    report: SyncReport,
    batch: Callable[[], AbstractContextManager[Any]],
) -> None:
    outside: list[str] = []
    special: list[tuple[str, int]] = []
    seen, dirs = scan(top, outside, special)
    # the files left unread by the last sync are looked at again: their problems
    # are this scan's (or their next read's) to say
    conn.execute("DELETE FROM problems WHERE file NOT IN (SELECT locator FROM files)")
    # never opened: reported and kept as problems, dropped from the index
    for locator in outside:
        unread(conn, locator, OUTSIDE, report)
    for locator, mode in special:
        unread(conn, locator, f"{not_regular(mode)}; it was not read", report)
    report.scanned = len(seen)
    known = {
        loc: (mtime, size, racy)
        for loc, mtime, size, racy in conn.execute(
            "SELECT locator, mtime_ns, size, racy FROM files"
        )
    }
    todo = [
        (loc, s.kind)
        for loc, s in sorted(seen.items())
        if known.get(loc) != (s.mtime_ns, s.size, 0)
    ]
    gone = sorted(loc for loc in known if loc not in seen)
    report.unchanged += len(seen) - len(todo)
    total = len(todo) + len(gone)
    if report.emptied:
        report.seen_files = seen
    for chunk in range(0, len(todo), BATCH):
        with batch():
            report.pending = []
            try:
                for loc, kind in todo[chunk : chunk + BATCH]:
                    _apply_file(conn, top, loc, kind, report)
                flush_docs(conn, report)
            finally:
                report.pending = None
        if progress:
            progress(min(chunk + BATCH, len(todo)), total)
    if gone:
        with batch():
            for loc in gone:
                if loc in outside or not os.path.isfile(os.path.join(top, loc)):
                    remove_file(conn, loc, report)
        if progress:
            progress(total, total)
    now_ns = time.time_ns()
    dir_rows = {p: (-1 if m > now_ns - RACY_NS else m) for p, m in dirs.items()}
    stored = dict(conn.execute("SELECT path, mtime_ns FROM dirs").fetchall())
    with batch():
        if stored != dir_rows:
            conn.execute("DELETE FROM dirs")
            conn.executemany("INSERT INTO dirs(path, mtime_ns) VALUES (?, ?)", dir_rows.items())
        set_meta(conn, lastSync=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


def sync(bundle: Bundle, progress: Progress | None = None) -> SyncReport:
    """Apply every change under desk/ since the last sync (see module docstring)."""
    conn = db.open_db(bundle.root)
    try:
        report = _sync(conn, bundle.root, progress, SyncReport())
    except sqlite3.Error as exc:
        raise db.damaged(db.db_file(bundle.root), exc) from None
    finally:
        conn.close()
    return report


def rebuild(bundle: Bundle, progress: Progress | None = None) -> SyncReport:
    """Empty the index and index every file again, in one transaction (readers
    see the old index until the new one is complete).

    Always succeeds unless ``state/`` itself cannot be written: an index that
    cannot be opened or rewritten (damaged, foreign, newer, read-only,
    immutable, a folder in the way) is moved aside whole, kept as
    ``state/index.damaged-<time>/`` (never overwritten or deleted), and a new
    one is built from the files. The report names where it went (``movedAside``).
    """
    if not db.writable(bundle.root) and not db.can_move_aside(bundle.root):
        raise db.read_only(bundle.root)  # a read-only disk: nothing to move aside, say so
    try:
        return _rebuild(bundle, progress)
    except IndexUnavailable as exc:
        if db.transient(exc, db.db_file(bundle.root)):  # busy or disk full: not damage
            raise db.damaged(db.db_file(bundle.root), exc) from None
    except (OSError, sqlite3.Error) as exc:
        if db.transient(exc, db.db_file(bundle.root)):
            raise db.damaged(db.db_file(bundle.root), exc) from None
    moved = db.move_aside(bundle.root)
    report = _rebuild(bundle, progress)
    report.moved_aside = moved
    return report


def _rebuild(bundle: Bundle, progress: Progress | None) -> SyncReport:
    conn = db.open_db(bundle.root)
    try:
        # A 64 MB page cache for the bulk load (the default is 2 MB): with less,
        # SQLite reads back from the WAL pages it spilled (~0.3 s of system time
        # at 100k facts), for 64 MB more peak RSS.
        conn.execute("PRAGMA cache_size = -65536")
        # This SQLite is built with SECURE_DELETE: emptying the old index would
        # zero every freed page and write it through the WAL (~120 MB at 100k
        # facts) only for the load to overwrite it. A rebuild frees pages
        # without zeroing them (the load reuses them); ``record redact`` does
        # not rely on zeroing: it drops state/index/ whole.
        conn.execute("PRAGMA secure_delete = OFF")
        report = _sync(conn, bundle.root, progress, SyncReport(), empty_first=True)
        if db.stale_reason(bundle.root) is not None:  # a marker that cannot be cleared
            raise IndexUnavailable(f"{db.stale_file(bundle.root)} cannot be cleared")
        return report
    finally:
        conn.close()


def _locator_of(root: Path, path: Path) -> str | None:
    base = os.path.abspath(root)
    full = os.path.abspath(os.path.join(base, path))
    if full == base:
        return "."
    if not full.startswith(base.rstrip("/") + "/"):
        return None
    return full[len(base.rstrip("/")) + 1 :]


def touch_paths(bundle: Bundle, paths: Iterable[Path]) -> None:
    """Index just these paths now (after an ouro write). Never raises.

    A path may be a file or a folder (everything indexed under it is
    re-checked, so a deleted task folder loses its rows). Each parent folder's
    new mtime is recorded so the write does not look like an outside change.
    When the index does not exist yet nothing happens: the next search builds it.

    Group commit of diary writes: write-throughs queue on a flock
    (``state/locks/index-write.lock``), and whoever holds it indexes every line
    appended to facts.jsonl (and entities.json as it is) up to the moment it
    looked last. A write that only touched those two and finds the lock held
    returns at once: its line (complete before it tried the lock) is left to
    the holder. The holder re-checks both files' (mtime, size) against the
    index before releasing, and again after releasing (taking the lock again
    if they changed, unless another writer holds it now and so owes the same
    check). A writer that failed to take the
    lock failed while some holder held it, and that holder looks after its
    release, so no appended line is left unindexed.
    """
    root = bundle.root
    paths = list(paths)
    try:
        taken = db.take_writer(root)  # kept per process: a server opens the index once
    except (OuroError, OSError, sqlite3.Error) as exc:
        db.mark_stale(root, f"write-through could not open the index: {exc}")
        warn(f"written; the search index is stale ({exc}) -- 'ouro index sync' repairs it")
        return
    if taken is None:
        return  # no index yet: the next search builds it
    conn, ident = taken
    try:
        _touch(bundle, conn, paths)
    except (OuroError, OSError, sqlite3.Error) as exc:
        conn.close()
        db.mark_stale(root, f"write-through failed for {list(map(str, paths))[:5]}: {exc}")
        warn(f"written; the search index is stale ({exc}) -- 'ouro index sync' repairs it")
    except BaseException:
        conn.close()
        raise
    else:
        db.give_back(root, conn, ident)


def _touch(bundle: Bundle, conn: sqlite3.Connection, paths: list[Path]) -> None:
    root = bundle.root
    report = SyncReport()
    top = str(root)
    # Write-throughs queue on a flock (handed over the moment it frees)
    # before BEGIN IMMEDIATE: SQLite's busy handler sleeps 1..100 ms
    # between tries, and 8 writers racing on it spent most of a write asleep.
    lock = FileLock(
        bundle.lock_path("index-write"),
        timeout=db.BUSY_TIMEOUT_S,
        purpose="index write-through",
    )
    diary = {loc for loc, _kind in _DIARY}
    appends = bool(paths) and all(_locator_of(root, Path(p)) in diary for p in paths)
    if appends:
        if not lock.try_acquire():
            return  # the holder indexes this line (see touch_paths)
    else:
        lock.acquire()
    try:
        with db.transaction(conn):
            _apply_paths(conn, top, paths, report)
        _diary_caught_up(conn, top, report)
    finally:
        lock.release()
    tried = None
    while (size := _diary_behind(conn, top)) is not None and size != tried:
        tried = size
        if not lock.try_acquire():
            break  # its holder looks after it releases, as this one did
        try:
            _diary_caught_up(conn, top, report)
        finally:
            lock.release()


def _apply_paths(conn: sqlite3.Connection, top: str, paths: list[Path], report: SyncReport) -> None:
    root = Path(top)
    for path in paths:
        locator = _locator_of(root, Path(path))
        if locator is None or not locator.startswith("desk/"):
            continue
        kind = classify(locator)
        if kind is not None:
            _apply_file(conn, top, locator, kind, report)
            _record_folders(conn, top, locator.rsplit("/", 1)[0], walk=False)
            continue
        # A folder (or something deleted): re-check every indexed file under it.
        prefix = locator.rstrip("/") + "/"
        targets = dict(
            conn.execute(
                "SELECT locator, kind FROM files WHERE substr(locator, 1, ?) = ?",
                (len(prefix), prefix),
            ).fetchall()
        )
        targets.update(_files_under(top, locator))
        for loc, k in sorted(targets.items()):
            _apply_file(conn, top, loc, k, report)
        _record_folders(conn, top, locator, walk=True)


#: the diary files a write-through may leave to the index lock's holder
_DIARY = ((FACTS, "facts"), (ENTITIES, "entities"))


def _diary_behind(conn: sqlite3.Connection, top: str) -> tuple[Any, ...] | None:
    """The (mtime, size) of facts.jsonl and entities.json when either differs
    from what the index recorded, else None (both absent or indexed as they are)."""
    seen: list[tuple[int, int] | None] = []
    for locator, _kind in _DIARY:
        try:
            st = os.stat(os.path.join(top, locator))
        except OSError:
            seen.append(None)
            continue
        seen.append((st.st_mtime_ns, st.st_size))
    rows = dict(
        (loc, (mtime, size))
        for loc, mtime, size in conn.execute(
            "SELECT locator, mtime_ns, size FROM files WHERE locator IN (?, ?)",
            [loc for loc, _ in _DIARY],
        )
    )
    recorded = [rows.get(loc) for loc, _ in _DIARY]
    return None if recorded == seen else tuple(seen)


def _diary_caught_up(conn: sqlite3.Connection, top: str, report: SyncReport) -> None:
    """Index facts.jsonl and entities.json until the index has them as they are
    (under the index lock)."""
    seen = None
    while (now := _diary_behind(conn, top)) is not None and now != seen:
        seen = now
        with db.transaction(conn):
            for locator, kind in _DIARY:
                _apply_file(conn, top, locator, kind, report)


def _files_under(root: str, locator: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for dirpath, dirnames, names in os.walk(os.path.join(root, locator)):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in names:
            loc = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
            kind = classify(loc)
            if kind is not None:
                found[loc] = kind
    return found


def _record_folders(conn: sqlite3.Connection, root: str, folder: str, *, walk: bool) -> None:
    """Record the current mtime of ``folder`` (with ``walk``: and its subfolders)
    and its ancestors, so this write does not look like an outside change.
    Only watched folders (``fresh.watched``) have rows."""
    full = os.path.join(root, folder)
    if os.path.isdir(full) and not walk:
        if watched(folder):
            conn.execute(
                "INSERT OR REPLACE INTO dirs(path, mtime_ns) VALUES (?, ?)",
                (folder, os.stat(full).st_mtime_ns),
            )
    elif os.path.isdir(full):
        rows = []
        for dirpath, dirnames, _names in os.walk(full):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
            if watched(rel):
                rows.append((rel, os.stat(dirpath).st_mtime_ns))
        conn.executemany("INSERT OR REPLACE INTO dirs(path, mtime_ns) VALUES (?, ?)", rows)
    else:
        conn.execute(
            "DELETE FROM dirs WHERE path = ? OR substr(path, 1, ?) = ?",
            (folder, len(folder) + 1, folder + "/"),
        )
    parts = folder.split("/")
    for depth in range(len(parts) - 1, 0, -1):
        parent = "/".join(parts[:depth])
        if not watched(parent):
            continue
        try:
            mtime = os.stat(os.path.join(root, parent)).st_mtime_ns
        except OSError:
            continue
        conn.execute("INSERT OR REPLACE INTO dirs(path, mtime_ns) VALUES (?, ?)", (parent, mtime))


def status(bundle: Bundle) -> dict[str, Any]:
    """fresh | stale | missing, with counts per kind and the last sync. Writes nothing."""
    from ouro.index.state import index_status

    return index_status(str(bundle.root))


__all__ = ["IndexUnavailable", "SyncReport", "rebuild", "status", "sync", "touch_paths"]
