"""Applying one file to the index: the row-level writes behind ``sync``.

Every function here runs inside a write transaction opened by the caller
(``ouro.index.sync``). A file is re-checked against its ``files`` row first,
so two processes applying the same file never index it twice. Rows of a
file are replaced as a whole, except facts.jsonl whose appended tail is
parsed alone when the indexed prefix is provably unchanged (``_append_start``:
inode, growth and the last indexed bytes, O(1) whatever the log's size).
Entities are derived once, by the diary writers (``entities.json``); the
index keeps only each fact's about labels (``fact_entities``) and never
parses ``entities.json``.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable
from itertools import chain, repeat
from operator import itemgetter
from stat import S_ISDIR, S_ISREG
from typing import Any

from ouro.index.extract import (
    Doc,
    Fact,
    Problem,
    extract_fact_lines,
    extract_markdown,
    shorten,
)
from ouro.index.fresh import FACTS, Seen, file_hash
from ouro.models.plain import Plain
from ouro.store import cursor as cursors
from ouro.store.bounded import (
    TORN_TAIL,
    file_bytes,
    line_pieces,
    not_regular,
    open_regular,
    overlong,
    torn_tail,
)
from ouro.store.guard import Inside
from ouro.store.stamp import RACY_NS

#: a skipped file's problem (its locator is the problem's file)
OUTSIDE = "resolves outside the bundle through a symlink; it was not read"

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
DATA_TABLES = (
    "files",
    "dirs",
    "problems",
    "docs",
    "doc_counts",  # emptied with the docs it counts
    *TABLES.values(),
    "note_tags",
    "fact_entities",
)


class SyncReport(Plain):
    __slots__ = (
        "emptied",
        "facts_added",
        "indexed",
        "moved_aside",
        "pending",
        "pending_files",
        "problems",
        "removed",
        "scanned",
        "seconds",
        "seen_files",
        "unchanged",
    )  # fmt: skip

    def __init__(self) -> None:
        self.scanned = 0
        self.indexed = 0
        self.removed = 0
        self.unchanged = 0
        self.facts_added = 0
        self.problems: list[Problem] = []
        self.seconds = 0.0
        #: where ``rebuild`` moved a damaged index (bundle-relative), if it had to
        self.moved_aside: str | None = None
        #: while ``sync`` writes a batch of files: their docs, inserted together by
        #: ``flush_docs`` at the end of the batch (None: insert each file's at once)
        self.pending: list[Doc] | None = None
        #: with ``pending``: the ``files`` rows of the batch's Markdown files, saved together
        self.pending_files: list[tuple[Any, ...]] = []
        #: set by ``rebuild`` while it loads an emptied index: no file has a row yet
        self.emptied = False
        #: set by ``rebuild`` while it loads: the scan's stat of every file (taken
        #: before any is read), so a file is not stat-ed twice
        self.seen_files: dict[str, Seen] | None = None

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
            **({"movedAside": self.moved_aside} if self.moved_aside else {}),
        }


# --- writing rows ----------------------------------------------------------


def flush_docs(conn: sqlite3.Connection, report: SyncReport) -> None:
    """Insert the docs a batch collected in ``report.pending`` (one statement per table)
    and the batch's ``files`` rows."""
    if report.pending:
        _insert_docs(conn, report.pending)
        report.pending.clear()
    if report.pending_files:
        conn.executemany(_SAVE_FILE, report.pending_files)
        report.pending_files.clear()


_COUNT = (
    "INSERT INTO doc_counts(kind, n) VALUES (?, ?) "
    "ON CONFLICT(kind) DO UPDATE SET n = n + excluded.n"
)


def count_docs(conn: sqlite3.Connection, delta: dict[str, int]) -> None:
    """Move each kind's row of ``doc_counts`` by ``delta`` (schema 6), in the
    transaction that inserts or deletes those docs: every write of docs goes
    through ``_insert_docs``, ``_insert_facts`` and ``_remove_docs``."""
    conn.executemany(_COUNT, [(kind, n) for kind, n in delta.items() if n])


def _insert_docs(conn: sqlite3.Connection, docs: list[Doc]) -> int:
    """Insert docs with fresh ids; returns the first id used."""
    first = int(conn.execute("SELECT coalesce(max(id), 0) + 1 FROM docs").fetchone()[0])
    if not docs:
        return first
    ids = range(first, first + len(docs))
    added: dict[str, int] = {}
    for d in docs:
        added[d.kind] = added.get(d.kind, 0) + 1
    count_docs(conn, added)
    conn.executemany(
        "INSERT INTO docs(id, locator, file, kind, title, updated, track) VALUES (?,?,?,?,?,?,?)",
        [
            (i, d.locator, d.locator.partition("#")[0], d.kind, d.title, d.updated, d.track)
            for i, d in zip(ids, docs, strict=True)
        ],
    )
    conn.executemany(
        "INSERT INTO docs_fts(rowid, title, body, keys) VALUES (?,?,?,?)",
        [(i, d.title, d.body, d.keys) for i, d in zip(ids, docs, strict=True)],
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
        if kind == "note":
            conn.executemany(
                "INSERT OR IGNORE INTO note_tags(note_doc, tag) VALUES (?, ?)",
                [(i, label) for i, d in items for label in d.labels],
            )
    return first


def _remove_docs(conn: sqlite3.Connection, locator: str, kind: str) -> None:
    doc_kind = DOC_KIND.get(kind, "")
    if not doc_kind:
        return
    # The docs_file index leaves out the facts (all of facts.jsonl's docs, one
    # file): they are found by kind instead, and every other file by its name.
    where: str = "kind = 'fact'" if doc_kind == "fact" else _OF_FILE
    args: tuple[str, ...] = () if doc_kind == "fact" else (locator,)
    rows = conn.execute(f"SELECT id, kind FROM docs WHERE {where}", args).fetchall()
    if not rows:
        return
    ids = [(r[0],) for r in rows]
    removed: dict[str, int] = {}
    for _id, of_kind in rows:
        removed[of_kind] = removed.get(of_kind, 0) - 1
    count_docs(conn, removed)
    conn.executemany(f"DELETE FROM {TABLES[doc_kind]} WHERE doc_id = ?", ids)
    if doc_kind == "fact":
        conn.executemany("DELETE FROM fact_entities WHERE fact_doc = ?", ids)
    if doc_kind == "note":
        conn.executemany("DELETE FROM note_tags WHERE note_doc = ?", ids)
    conn.executemany("DELETE FROM docs_fts WHERE rowid = ?", ids)
    conn.execute(f"DELETE FROM docs WHERE {where}", args)


#: the docs of one file other than facts.jsonl (the terms of the partial docs_file index)
_OF_FILE = "file = ? AND kind <> 'fact'"


def remove_file(conn: sqlite3.Connection, locator: str, report: SyncReport) -> None:
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
    mtime_ns: int,
    size: int,
    racy: bool,
    digest: str,
    indexed: int,
    lines: int = 0,
) -> None:
    conn.execute(_SAVE_FILE, (locator, kind, mtime_ns, size, int(racy), digest, indexed, lines))


_SAVE_FILE = (
    "INSERT OR REPLACE INTO files(locator, kind, mtime_ns, size, racy, hash, indexed_bytes, "
    "lines) VALUES (?,?,?,?,?,?,?,?)"
)


def unread(conn: sqlite3.Connection, locator: str, reason: str, report: SyncReport) -> None:
    """``locator`` is a file the index does not read (outside the bundle, a FIFO,
    past the size limit): whatever it held goes from the index, and ``reason`` is
    kept as its one problem (line 0), which searches report until it reads again."""
    remove_file(conn, locator, report)
    conn.execute("DELETE FROM problems WHERE file = ?", (locator,))
    _add_problems(conn, [Problem(locator, 0, reason)], report)


def _add_problems(conn: sqlite3.Connection, problems: list[Problem], report: SyncReport) -> None:
    if not problems:
        return
    conn.executemany(
        "INSERT INTO problems(file, line, reason) VALUES (?,?,?)",
        [(p.file, p.line, p.reason) for p in problems],
    )
    report.problems.extend(problems)


def _append_start(
    fd: int, st: os.stat_result, row: tuple[Any, ...] | None
) -> tuple[int, int, os.stat_result]:
    """(byte, line number, the stat to index up to) for facts.jsonl: after the
    indexed prefix when it is provably unchanged, else (0, 1, ...) for a full
    re-index.

    The ``files.hash`` of facts.jsonl is the one append-log cursor
    (``ouro.store.cursor``): O(1) whatever the log's size, only growth is
    replayed; another inode (a copy), a shorter file, a same-size file whose
    stamp moved or other bytes before the cursor re-index everything (a
    rewrite that grows the file and keeps those bytes passes as an append;
    docs/index.md).
    """
    if row is None:
        return 0, 1, st
    mtime, size, _racy, digest, indexed, lines = row
    cur = cursors.parse(digest)
    if cur is None or cur.offset != indexed or not 0 < indexed <= size:
        return 0, 1, st
    if size == st.st_size and mtime != st.st_mtime_ns:
        # A write moves mtime before size: this stat may be of an append in flight.
        # Appends hold an exclusive flock on the file for their one write
        # (ouro.store.append): look again once none is.
        st = _settled(fd, st)
    if cursors.follow(cursors.pread_of(fd), st, cur) == cursors.REWRITTEN:
        return 0, 1, st
    return indexed, lines + 1, st


#: how long a sync waits for an append in flight before it re-indexes the log whole
SETTLE_TIMEOUT = 2.0


def _settled(fd: int, st: os.stat_result) -> os.stat_result:
    """The file's stat once no append holds its lock (a shared ``flock``, taken
    and let go at once; nothing is written). ``st`` when the lock stays busy for
    ``SETTLE_TIMEOUT``: the caller then re-indexes, as for any change it cannot prove
    an append."""
    import fcntl

    deadline = time.monotonic() + SETTLE_TIMEOUT
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return st
            time.sleep(0.0005)
            continue
        try:
            return os.fstat(fd)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)


def _insert_facts(
    conn: sqlite3.Connection, facts: list[Fact], labels: dict[str, list[int]] | None = None
) -> int:
    """Insert facts with fresh doc ids (docs, docs_fts, facts, fact_entities);
    returns the first id used. With ``labels``, each entity's new fact ids are
    added to it (in id order) instead of inserted. Rows are generated, not
    listed: a chunk holds its facts and little more; their columns are taken
    by ``map``/``zip``, so no Python code runs per row but ``shorten``."""
    first = int(conn.execute("SELECT coalesce(max(id), 0) + 1 FROM docs").fetchone()[0])
    if not facts:
        return first
    ids = range(first, first + len(facts))
    count_docs(conn, {"fact": len(facts)})
    # Fact's field order: 0 id, 1 line, 2 text, 3 about, 4 keys, 5 created_at, 6 supersedes.
    fact_ids, lines, texts, abouts, keys, created, supersedes = map(itemgetter, range(7))
    conn.executemany(
        "INSERT INTO docs(id, locator, file, kind, title, updated, track) "
        f"VALUES (?, '{FACTS}#' || ?, '{FACTS}', 'fact', ?, ?, NULL)",
        zip(
            ids,
            map(fact_ids, facts),
            map(shorten, map(texts, facts)),
            map(created, facts),
            strict=True,
        ),
    )
    conn.executemany(
        "INSERT INTO docs_fts(rowid, title, body, keys) VALUES (?, '', ?, ?)",
        zip(ids, map(texts, facts), map(keys, facts), strict=True),
    )
    conn.executemany(
        "INSERT INTO facts(doc_id, line, supersedes) VALUES (?,?,?)",
        zip(ids, map(lines, facts), map(supersedes, facts), strict=True),
    )
    if labels is None:
        _insert_labels(conn, ((e, i) for i, f in zip(ids, facts, strict=True) for e in f[3]))
        return first
    get = labels.get
    for i, about in zip(ids, map(abouts, facts), strict=True):
        for entity in about:
            group = get(entity)
            if group is None:
                labels[entity] = [i]
            else:
                group.append(i)
    return first


def _insert_labels(conn: sqlite3.Connection, rows: Iterable[tuple[str, int]]) -> None:
    conn.executemany("INSERT OR IGNORE INTO fact_entities(entity, fact_doc) VALUES (?, ?)", rows)


def _insert_grouped_labels(conn: sqlite3.Connection, labels: dict[str, list[int]]) -> None:
    """``fact_entities`` rows from entity -> fact ids (ascending): in key order."""
    _insert_labels(
        conn,
        chain.from_iterable(zip(repeat(entity), labels[entity]) for entity in sorted(labels)),
    )


#: a fact's locator (and docs.locator) is this prefix and its id
_FACT_PREFIX = f"{FACTS}#"
#: the doc ids of the facts that rows ``s`` of facts supersede (through the
#: unique docs.locator: a fact's id is stored there only)
_SUPERSEDED_BY = (
    f"SELECT d.id FROM facts s JOIN docs d ON d.locator = '{_FACT_PREFIX}' || s.supersedes"
)


def _apply_facts(
    conn: sqlite3.Connection,
    path: str,
    racy: bool,
    row: tuple[Any, ...] | None,
    report: SyncReport,
) -> None:
    fd = open_regular(path)  # a FIFO or a device: NotRegularFile, reported by apply_file
    with open(fd, "rb"):  # closes fd however this ends
        st = os.fstat(fd)
        start, first_line, st = _append_start(fd, st, row)
        kept = False
        if start == 0:
            if row is not None:
                from ouro.index import semantic

                kept = semantic.keep_fact_vectors(conn)
            _remove_docs(conn, FACTS, "facts")
            conn.execute("DELETE FROM problems WHERE file = ?", (FACTS,))
        seen: set[str] = set()
        # a whole re-index inserts (entity, fact) rows once, in key order
        labels: dict[str, list[int]] | None = {} if start == 0 else None
        line, end = first_line, start
        # whole lines a piece at a time (bounded memory at any size); a line past
        # LINE_LIMIT is a problem, skipped unread
        for at, data in line_pieces(fd, start, st.st_size):
            if isinstance(data, int):
                _add_problems(conn, [Problem(FACTS, line, overlong(data))], report)
                line += 1
                end = at + data
                continue
            _apply_fact_lines(conn, data, line, bool(start), seen, report, labels)
            line += data.count(b"\n")
            end = at + len(data)
        if labels:
            _insert_grouped_labels(conn, labels)
            del labels
        # the bytes after the last newline (an append in flight, or torn):
        # blank ones are nothing; a look at their first 64 KiB says which
        rest = st.st_size - end
        torn = rest > 65536 or bool(rest and os.pread(fd, rest, end).strip())
        _torn_tail_problem(conn, start, line, end, torn, report)
        if start == 0:  # every fact is new: one pass marks each one a line supersedes
            conn.execute(
                f"UPDATE facts SET superseded = 1 WHERE doc_id IN ({_SUPERSEDED_BY} "
                "WHERE s.supersedes IS NOT NULL)"
            )
        if kept:
            semantic.restore_fact_vectors(conn)
        cur = cursors.at(cursors.pread_of(fd), end, st) if end else cursors.START
    _save_file(
        conn, FACTS, "facts", st.st_mtime_ns, st.st_size, racy, cursors.text(cur), end, line - 1
    )


def _torn_tail_problem(
    conn: sqlite3.Connection, start: int, line: int, end: int, torn: bool, report: SyncReport
) -> None:
    """The bytes after the log's last newline are not indexed until they end
    (``torn_tail``, the event log's rule), and reported meanwhile at their line:
    a fact torn at the end is never dropped silently. The report of an earlier
    sync's tail goes: those bytes were indexed (or reported) as the lines they are now."""
    if start:  # (a whole re-index has emptied facts.jsonl's problems already)
        conn.execute(
            "DELETE FROM problems WHERE file = ? AND reason LIKE ?",
            (FACTS, f"{TORN_TAIL} %"),
        )
    if torn:
        _add_problems(conn, [Problem(FACTS, line, torn_tail(end))], report)


def _apply_fact_lines(
    conn: sqlite3.Connection,
    data: bytes,
    first_line: int,
    appended: bool,
    seen: set[str],
    report: SyncReport,
    labels: dict[str, list[int]] | None = None,
) -> None:
    """Index complete lines of facts.jsonl (``first_line`` is the first one's number);
    with ``labels``, their (entity, fact) rows are added to it instead of inserted."""
    facts, problems = extract_fact_lines(data, first_line)
    ids = list(map(itemgetter(0), facts))
    if len(set(ids)) == len(ids) and seen.isdisjoint(ids):  # the usual case, in C
        seen.update(ids)
        fresh = facts
    else:
        fresh = []
        for fact in facts:
            if fact.id in seen:
                continue  # the same id twice (e.g. a git union merge): the first line wins
            seen.add(fact.id)
            fresh.append(fact)
    del facts, ids
    if appended and fresh:
        known = {
            r[0]
            for chunk in range(0, len(fresh), 500)
            for r in conn.execute(
                "SELECT locator FROM docs WHERE locator IN ({})".format(
                    ",".join("?" * len(fresh[chunk : chunk + 500]))
                ),
                [_FACT_PREFIX + f.id for f in fresh[chunk : chunk + 500]],
            )
        }
        fresh = [f for f in fresh if _FACT_PREFIX + f.id not in known]
    first_id = _insert_facts(conn, fresh, labels)
    if fresh and appended:  # (a whole re-index marks superseded facts once, at its end)
        conn.execute(
            f"UPDATE facts SET superseded = 1 WHERE superseded = 0 AND doc_id IN "
            f"({_SUPERSEDED_BY} WHERE s.doc_id >= ? AND s.supersedes IS NOT NULL)",
            (first_id,),
        )
        conn.execute(
            "UPDATE facts SET superseded = 1 WHERE doc_id >= ? AND superseded = 0 AND EXISTS "
            "(SELECT 1 FROM facts AS later WHERE later.supersedes = "
            f"(SELECT substr(d.locator, {len(_FACT_PREFIX) + 1}) FROM docs d "
            "WHERE d.id = facts.doc_id))",
            (first_id,),
        )
    _add_problems(conn, problems, report)
    report.facts_added += len(fresh)


def apply_file(
    conn: sqlite3.Connection, root: str, locator: str, kind: str, report: SyncReport
) -> None:
    """Index one file as it is now (must run inside a write transaction)."""
    path = os.path.join(root, locator)
    row = (
        None
        if report.emptied
        else conn.execute(
            "SELECT mtime_ns, size, racy, hash, indexed_bytes, lines FROM files WHERE locator = ?",
            (locator,),
        ).fetchone()
    )
    seen = report.seen_files.get(locator) if report.seen_files is not None else None
    try:
        if seen is not None and seen.kind == kind:
            # a rebuild: the scan's stat of this regular file, taken before this read
            mtime_ns, size = seen.mtime_ns, seen.size
        else:
            # a file named by a write or a folder walk, not by the scan (which
            # follows no symlink): resolved whole, never opened outside the bundle
            if not Inside(root).path(path):
                unread(conn, locator, OUTSIDE, report)
                return
            st = os.stat(path)
            if not S_ISREG(st.st_mode):
                # a FIFO, a device: never opened, reported as the scan reports it
                if S_ISDIR(st.st_mode):
                    remove_file(conn, locator, report)
                else:
                    unread(conn, locator, f"{not_regular(st.st_mode)}; it was not read", report)
                return
            mtime_ns, size = st.st_mtime_ns, st.st_size
        if row is not None and not row[2] and (row[0], row[1]) == (mtime_ns, size):
            report.unchanged += 1
            return
        racy = mtime_ns > time.time_ns() - RACY_NS
        if kind == "facts":
            report.indexed += 1
            _apply_facts(conn, path, racy, row, report)
            return
        if kind == "entities":
            # Derived from facts.jsonl; the entity rows come from the facts
            # (``_apply_facts``), so the file itself is only remembered.
            _save_file(conn, locator, kind, mtime_ns, size, racy, "-", 0)
            return
        data = file_bytes(path)  # a FIFO, a file past DOC_LIMIT: an OSError, below
    except (FileNotFoundError, NotADirectoryError):
        remove_file(conn, locator, report)
        return
    except OSError as exc:
        # what it held before is gone from the index too: a rebuild never reads it
        unread(conn, locator, f"cannot read ({exc.strerror})", report)
        return
    report.indexed += 1
    digest = file_hash(data)
    if row is not None and row[3] == digest and row[4] == len(data):
        _save_file(conn, locator, kind, mtime_ns, size, racy, digest, len(data))
        report.indexed -= 1
        report.unchanged += 1
        return
    if row is not None:
        _remove_docs(conn, locator, kind)
    if not report.emptied:  # (a rebuild starts with no problems)
        conn.execute("DELETE FROM problems WHERE file = ?", (locator,))  # an unread one's too
    docs, problems = extract_markdown(kind, locator, data)
    _add_problems(conn, problems, report)
    if report.pending is not None:
        report.pending.extend(docs)
        report.pending_files.append(
            (locator, kind, mtime_ns, size, int(racy), digest, len(data), 0)
        )
    else:
        _insert_docs(conn, docs)
        _save_file(conn, locator, kind, mtime_ns, size, racy, digest, len(data))


def set_meta(conn: sqlite3.Connection, **values: str) -> None:
    conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", list(values.items()))
