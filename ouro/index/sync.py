"""Bring the index in line with the files under ``desk/`` (files are the truth).

Public API (other layers call exactly these):

- ``sync(bundle, progress=None) -> SyncReport``: stat-scan ``desk/``; a file
  whose (mtime, size) match the ``files`` table (and is not racy) is skipped;
  the rest are read and hashed, and re-indexed only when the hash differs;
  files that disappeared lose their rows. Writes go in one transaction per
  batch of files; every file is re-checked inside the transaction, so
  concurrent syncs and write-throughs never double-index.
- ``rebuild(bundle, progress=None) -> SyncReport``: empty every table, then sync.
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

import os
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ouro.errors import IndexUnavailable, OuroError
from ouro.index import db
from ouro.index.extract import (
    ENTITIES,
    FACTS,
    Doc,
    Problem,
    classify,
    extract_entities,
    extract_fact_lines,
    extract_markdown,
)
from ouro.index.fresh import RACY_NS, file_hash, quick_check, scan

if TYPE_CHECKING:
    from ouro.bundle import Bundle

Progress = Callable[[int, int], None]
BATCH = 500
#: doc kind -> structured table
TABLES = {
    "track": "tracks",
    "task": "tasks",
    "iteration": "iterations",
    "friction": "friction",
    "tip": "tips",
    "note": "notes",
    "daily": "daily",
    "fact": "facts",
}
#: file kind -> doc kind
DOC_KIND = {"facts": "fact", "entities": ""} | {k: k for k in TABLES if k != "fact"}
_DATA_TABLES = (
    "files",
    "dirs",
    "problems",
    "docs",
    *TABLES.values(),
    "note_tags",
    "fact_entities",
    "entities",
)


@dataclass
class SyncReport:
    scanned: int = 0
    indexed: int = 0
    removed: int = 0
    unchanged: int = 0
    facts_added: int = 0
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "state": "fresh",
            "scanned": self.scanned,
            "indexed": self.indexed,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "factsAdded": self.facts_added,
            "problems": [
                {"locator": p.file, "line": p.line, "reason": p.reason} for p in self.problems
            ],
            "seconds": round(self.seconds, 3),
        }


# --- writing rows ----------------------------------------------------------


def _insert_docs(conn: sqlite3.Connection, docs: list[Doc]) -> int:
    """Insert docs with fresh ids; returns the first id used."""
    first = int(conn.execute("SELECT coalesce(max(id), 0) + 1 FROM docs").fetchone()[0])
    if not docs:
        return first
    ids = range(first, first + len(docs))
    conn.executemany(
        "INSERT INTO docs(id, locator, file, kind, title, updated, track) VALUES (?,?,?,?,?,?,?)",
        [
            (i, d.locator, d.locator.partition("#")[0], d.kind, d.title, d.updated, d.track)
            for i, d in zip(ids, docs, strict=True)
        ],
    )
    conn.executemany(
        "INSERT INTO docs_fts(rowid, title, body, keys) VALUES (?,?,?,?)",
        [
            (i, "" if d.kind == "fact" else d.title, d.body, d.keys)
            for i, d in zip(ids, docs, strict=True)
        ],
    )
    by_kind: dict[str, list[tuple[int, Doc]]] = {}
    for i, d in zip(ids, docs, strict=True):
        by_kind.setdefault(d.kind, []).append((i, d))
    for kind, items in by_kind.items():
        columns = list(items[0][1].row)
        conn.executemany(
            f"INSERT INTO {TABLES[kind]}(doc_id, {', '.join(columns)}) "
            f"VALUES (?{', ?' * len(columns)})",
            [(i, *(d.row[c] for c in columns)) for i, d in items],
        )
        label_table = {"fact": "fact_entities(fact_doc, entity)", "note": "note_tags(note_doc, tag)"}
        if kind in label_table:
            conn.executemany(
                f"INSERT OR IGNORE INTO {label_table[kind]} VALUES (?, ?)",
                [(i, label) for i, d in items for label in d.labels],
            )
    return first


def _remove_docs(conn: sqlite3.Connection, locator: str, kind: str) -> None:
    doc_kind = DOC_KIND.get(kind, "")
    if kind == "entities":
        conn.execute("DELETE FROM entities")
    if not doc_kind:
        return
    ids = [(r[0],) for r in conn.execute("SELECT id FROM docs WHERE file = ?", (locator,))]
    if not ids:
        return
    conn.executemany(f"DELETE FROM {TABLES[doc_kind]} WHERE doc_id = ?", ids)
    if doc_kind == "fact":
        conn.executemany("DELETE FROM fact_entities WHERE fact_doc = ?", ids)
    if doc_kind == "note":
        conn.executemany("DELETE FROM note_tags WHERE note_doc = ?", ids)
    conn.executemany("DELETE FROM docs_fts WHERE rowid = ?", ids)
    conn.execute("DELETE FROM docs WHERE file = ?", (locator,))


def _remove_file(conn: sqlite3.Connection, locator: str, report: SyncReport) -> None:
    row = conn.execute("SELECT kind FROM files WHERE locator = ?", (locator,)).fetchone()
    if row is None:
        return
    _remove_docs(conn, locator, row[0])
    conn.execute("DELETE FROM problems WHERE file = ?", (locator,))
    conn.execute("DELETE FROM files WHERE locator = ?", (locator,))
    report.removed += 1


def _save_file(
    conn: sqlite3.Connection,
    locator: str,
    kind: str,
    st: os.stat_result,
    racy: bool,
    digest: str,
    indexed: int,
    lines: int = 0,
) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO files(locator, kind, mtime_ns, size, racy, hash, indexed_bytes, "
        "lines) VALUES (?,?,?,?,?,?,?,?)",
        (locator, kind, st.st_mtime_ns, st.st_size, int(racy), digest, indexed, lines),
    )


def _add_problems(conn: sqlite3.Connection, problems: list[Problem], report: SyncReport) -> None:
    conn.executemany(
        "INSERT INTO problems(file, line, reason) VALUES (?,?,?)",
        [(p.file, p.line, p.reason) for p in problems],
    )
    report.problems.extend(problems)


def _apply_facts(
    conn: sqlite3.Connection,
    data: bytes,
    st: os.stat_result,
    racy: bool,
    row: tuple[Any, ...] | None,
    report: SyncReport,
) -> None:
    import hashlib

    end = data.rfind(b"\n") + 1
    view = memoryview(data)
    digest = hashlib.sha256()
    start, first_line = 0, 1
    if row is not None and 0 < row[4] <= end:
        digest.update(view[: row[4]])
        if "sha256:" + digest.copy().hexdigest() == row[3]:
            start, first_line = row[4], row[5] + 1
        else:
            digest = hashlib.sha256()
    if start == 0 and row is not None:
        _remove_docs(conn, FACTS, "facts")
        conn.execute("DELETE FROM problems WHERE file = ?", (FACTS,))
    digest.update(view[start:end])
    docs, problems = extract_fact_lines(data[start:end], first_line)
    seen: set[str] = set()
    fresh: list[Doc] = []
    for doc in docs:
        fact_id = doc.row["id"]
        if fact_id in seen:
            continue  # the same id twice (e.g. a git union merge): the first line wins
        seen.add(fact_id)
        fresh.append(doc)
    if start and fresh:
        known = {
            r[0]
            for chunk in range(0, len(fresh), 500)
            for r in conn.execute(
                "SELECT id FROM facts WHERE id IN (%s)"
                % ",".join("?" * len(fresh[chunk : chunk + 500])),
                [d.row["id"] for d in fresh[chunk : chunk + 500]],
            )
        }
        fresh = [d for d in fresh if d.row["id"] not in known]
    first_id = _insert_docs(conn, fresh)
    if fresh:
        conn.execute(
            "UPDATE facts SET superseded = 1 WHERE superseded = 0 AND id IN "
            "(SELECT supersedes FROM facts WHERE doc_id >= ? AND supersedes IS NOT NULL)",
            (first_id,),
        )
        conn.execute(
            "UPDATE facts SET superseded = 1 WHERE doc_id >= ? AND superseded = 0 AND EXISTS "
            "(SELECT 1 FROM facts AS later WHERE later.supersedes = facts.id)",
            (first_id,),
        )
    _add_problems(conn, problems, report)
    lines = first_line - 1 + data.count(b"\n", start, end)
    _save_file(conn, FACTS, "facts", st, racy, "sha256:" + digest.hexdigest(), end, lines)
    report.facts_added += len(fresh)


def _apply_file(
    conn: sqlite3.Connection, root: str, locator: str, kind: str, report: SyncReport
) -> None:
    """Index one file as it is now (must run inside a write transaction)."""
    path = os.path.join(root, locator)
    row = conn.execute(
        "SELECT mtime_ns, size, racy, hash, indexed_bytes, lines FROM files WHERE locator = ?",
        (locator,),
    ).fetchone()
    try:
        st = os.stat(path)
        if not os.path.isfile(path):
            raise FileNotFoundError(path)
        if row is not None and not row[2] and (row[0], row[1]) == (st.st_mtime_ns, st.st_size):
            report.unchanged += 1
            return
        with open(path, "rb") as handle:
            data = handle.read()
    except (FileNotFoundError, NotADirectoryError):
        _remove_file(conn, locator, report)
        return
    except OSError as exc:
        report.problems.append(Problem(locator, 0, f"cannot read ({exc.strerror})"))
        return
    racy = st.st_mtime_ns > time.time_ns() - RACY_NS
    report.indexed += 1
    if kind == "facts":
        _apply_facts(conn, data, st, racy, row, report)
        return
    digest = file_hash(data)
    if row is not None and row[3] == digest and row[4] == len(data):
        _save_file(conn, locator, kind, st, racy, digest, len(data))
        report.indexed -= 1
        report.unchanged += 1
        return
    if row is not None:
        _remove_docs(conn, locator, kind)
        conn.execute("DELETE FROM problems WHERE file = ?", (locator,))
    if kind == "entities":
        rows, problems = extract_entities(data)
        conn.executemany("INSERT OR REPLACE INTO entities VALUES (?,?,?)", rows)
    else:
        docs, problems = extract_markdown(kind, locator, data)
        _insert_docs(conn, docs)
    _add_problems(conn, problems, report)
    _save_file(conn, locator, kind, st, racy, digest, len(data))


def _set_meta(conn: sqlite3.Connection, **values: str) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", list(values.items())
    )


# --- the public API -----------------------------------------------------------


def _read_marker(root: Path) -> bytes | None:
    try:
        return db.stale_marker(root).read_bytes()
    except FileNotFoundError:
        return None


def _sync(
    conn: sqlite3.Connection, root: Path, progress: Progress | None, report: SyncReport
) -> SyncReport:
    started = time.perf_counter()
    marker = _read_marker(root)
    top = str(root)
    seen, dirs = scan(top)
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
    done = 0
    for chunk in range(0, len(todo), BATCH):
        with db.transaction(conn):
            for loc, kind in todo[chunk : chunk + BATCH]:
                _apply_file(conn, top, loc, kind, report)
        done = min(chunk + BATCH, len(todo))
        if progress:
            progress(done, total)
    if gone:
        with db.transaction(conn):
            for loc in gone:
                if not os.path.isfile(os.path.join(top, loc)):
                    _remove_file(conn, loc, report)
        if progress:
            progress(total, total)
    now_ns = time.time_ns()
    dir_rows = {p: (-1 if m > now_ns - RACY_NS else m) for p, m in dirs.items()}
    stored = dict(conn.execute("SELECT path, mtime_ns FROM dirs").fetchall())
    with db.transaction(conn):
        if stored != dir_rows:
            conn.execute("DELETE FROM dirs")
            conn.executemany("INSERT INTO dirs(path, mtime_ns) VALUES (?, ?)", dir_rows.items())
        _set_meta(conn, lastSync=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    if _read_marker(root) == marker:
        db.clear_stale(root)
    report.seconds = time.perf_counter() - started
    return report


def sync(bundle: Bundle, progress: Progress | None = None) -> SyncReport:
    """Apply every change under desk/ since the last sync (see module docstring)."""
    conn = db.open_db(bundle.root)
    try:
        return _sync(conn, bundle.root, progress, SyncReport())
    finally:
        conn.close()


def rebuild(bundle: Bundle, progress: Progress | None = None) -> SyncReport:
    """Empty the index and index every file again. A foreign or newer database
    is refused (``IndexUnavailable``), never overwritten."""
    conn = db.open_db(bundle.root)
    try:
        with db.transaction(conn):
            fts_sql = conn.execute(
                "SELECT sql FROM sqlite_master WHERE name = 'docs_fts'"
            ).fetchone()[0]
            # Dropping the FTS table is far faster than deleting its rows one by one.
            conn.execute("DROP TABLE docs_fts")
            conn.execute(fts_sql)
            for table in _DATA_TABLES:
                conn.execute(f"DELETE FROM {table}")
            conn.execute("DELETE FROM meta")
        return _sync(conn, bundle.root, progress, SyncReport())
    finally:
        conn.close()


def _locator_of(root: Path, path: Path) -> str | None:
    full = path if path.is_absolute() else root / path
    try:
        rel = Path(os.path.abspath(full)).relative_to(os.path.abspath(root))
    except ValueError:
        return None
    return rel.as_posix()


def touch_paths(bundle: Bundle, paths: Iterable[Path]) -> None:
    """Index just these paths now (after an ouro write). Never raises.

    A path may be a file or a folder (everything indexed under it is
    re-checked, so a deleted task folder loses its rows). Each parent folder's
    new mtime is recorded so the write does not look like an outside change.
    When the index does not exist yet nothing happens: the next search builds it.
    """
    root = bundle.root
    try:
        if not db.db_path(root).is_file():
            return
        conn = db.open_db(root)
    except (OuroError, OSError, sqlite3.Error) as exc:
        db.mark_stale(root, f"write-through could not open the index: {exc}")
        return
    try:
        report = SyncReport()
        top = str(root)
        with db.transaction(conn):
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
    except (OuroError, OSError, sqlite3.Error) as exc:
        db.mark_stale(root, f"write-through failed for {list(map(str, paths))[:5]}: {exc}")
    finally:
        conn.close()


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
    and its ancestors, so this write does not look like an outside change."""
    full = os.path.join(root, folder)
    if os.path.isdir(full) and not walk:
        conn.execute(
            "INSERT OR REPLACE INTO dirs(path, mtime_ns) VALUES (?, ?)",
            (folder, os.stat(full).st_mtime_ns),
        )
    elif os.path.isdir(full):
        rows = []
        for dirpath, dirnames, _names in os.walk(full):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
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
        try:
            mtime = os.stat(os.path.join(root, parent)).st_mtime_ns
        except OSError:
            continue
        conn.execute("INSERT OR REPLACE INTO dirs(path, mtime_ns) VALUES (?, ?)", (parent, mtime))


def status(bundle: Bundle) -> dict[str, Any]:
    """fresh | stale | missing, with counts per kind and the last sync. Writes nothing."""
    from ouro.index.state import index_status

    return index_status(str(bundle.root))


__all__ = ["SyncReport", "rebuild", "status", "sync", "touch_paths", "IndexUnavailable"]
