"""Applying one file to the index: the row-level writes behind ``sync``.

Every function here runs inside a write transaction opened by the caller
(``ouro.index.sync``). A file is re-checked against its ``files`` row first,
so two processes applying the same file never index it twice. Rows of a
file are replaced as a whole, except facts.jsonl whose appended tail is
parsed alone when the indexed prefix still hashes the same.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass, field
from typing import Any

from ouro.index.extract import (
    Doc,
    Problem,
    extract_entities,
    extract_fact_lines,
    extract_markdown,
)
from ouro.index.fresh import FACTS, RACY_NS, file_hash

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
    #: while ``sync`` writes a batch of files: their docs, inserted together by
    #: ``flush_docs`` at the end of the batch (None: insert each file's at once)
    pending: list[Doc] | None = field(default=None, repr=False, compare=False)

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


def flush_docs(conn: sqlite3.Connection, report: SyncReport) -> None:
    """Insert the docs a batch collected in ``report.pending`` (one statement per table)."""
    if report.pending:
        _insert_docs(conn, report.pending)
        report.pending.clear()


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
        label_table = {
            "fact": "fact_entities(fact_doc, entity)",
            "note": "note_tags(note_doc, tag)",
        }
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
                "SELECT id FROM facts WHERE id IN ({})".format(
                    ",".join("?" * len(fresh[chunk : chunk + 500]))
                ),
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


def apply_file(
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
        remove_file(conn, locator, report)
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
        if report.pending is not None:
            report.pending.extend(docs)
        else:
            _insert_docs(conn, docs)
    _add_problems(conn, problems, report)
    _save_file(conn, locator, kind, st, racy, digest, len(data))


def set_meta(conn: sqlite3.Connection, **values: str) -> None:
    conn.executemany("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", list(values.items()))
