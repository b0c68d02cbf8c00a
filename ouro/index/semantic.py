"""Search by meaning: the optional vectors of the index (``ouro-bundle[semantic]``).

Contract:

- A doc's vector is the embedding of its text (``ouro.embedding``: without the
  extra, ``available()`` is False and every caller keeps to lexical search);
  the text of a doc is its FTS5 title, body (first ``MAX_CHARS``) and keys, so
  a vector is a pure function of what the index already holds.
- Vectors live in the index file, table ``vectors(doc_id, vec)`` (float16,
  ``DIM`` values), created on first use together with triggers: one drops a
  doc id's vector when the id is given to a new doc, one drops a vector with
  its doc, one queues every new doc of ``KINDS`` in ``vectors_todo`` (a
  vector's insert takes it off). A search reads one row of that queue and
  skips the catch-up (and its write transaction) when it is empty.
  ``catch_up`` embeds queued docs (and with ``prune`` drops vectors whose doc
  is gone); ``ouro index sync`` / ``rebuild`` run it to the end, a search runs
  the queue itself only when it holds at most ``SEARCH_BUDGET`` docs (what an
  agent's writes since its last search add); a longer queue (a bundle whose
  vectors were never built, a bulk import) is left whole to ``ouro index
  sync`` and the answer says ``catching up`` with how many. A diary write (write-through) never embeds.
- Every change to ``vectors`` is logged by triggers in ``vectors_log``
  (position, doc id); ``vectors_logged.since`` says up to where the log was
  dropped. ``vectors_gen`` holds the index's random epoch (and a change
  counter). ``state/index/vectors.f32`` holds the vectors at one log position:
  header (model, dim, coarse, epoch, log position, count), int64 doc ids
  (ascending), float16 rows, the coarse stage (``COARSE`` directions, float32,
  a scale per direction, int8 codes per row), written atomically under
  ``vectors.f32.lock``. A scan of more than ``2 * CANDIDATES`` file rows scores
  every row on its code, then the ``CANDIDATES`` best exactly. A process maps
  it only for this epoch and model, whole, and when the log covers it
  (position >= since), and adds the logged changes since (``Vectors``): exact
  at every log position, O(changes) per write. Else it reads the table.
  ``ouro index sync`` / ``rebuild`` write the file (and drop the log up to
  it); a search that finds it missing, or of another index, and no doc
  without a vector writes it too (``heal_file``: a read may heal a
  machine-local cache, atomically and under its lock), so the next process
  maps it instead of reading every row of the table. A search never rewrites
  a file that belongs to this index: the changes since are in the log. The
  file is derived, never the truth.
- ``rebuild`` drops ``vectors``, the other ``vectors*`` tables and their
  triggers (``forget``) before emptying the other tables and creates them again
  empty after loading, so a rebuilt index and an incrementally maintained one
  hold the same vectors for the same docs, and the bulk load fires no trigger.
- Continuity (orient, resume, the sentinel, drills) never imports this module.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3

from ouro.embedding import DIM, MODEL, available, load_numpy, model
from ouro.store import jsonio
from ouro.store.bounded import open_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


KINDS = ("fact", "note", "task", "friction", "tip")
_KIND_SQL = ",".join(f"'{k}'" for k in KINDS)
MAX_CHARS = 4000
#: the longest queue a search embeds itself before answering (a read heals the
#: vectors, a machine-local cache); a longer one is not touched by a search (None:
#: every doc without one, whatever the queue). The model costs ~10-30 ms a doc on
#: 2 cores, so a search embeds what an agent's writes since the last search add
#: and leaves a bulk import, or a corpus never embedded, to ``ouro index sync``
SEARCH_BUDGET: int | None = 128
#: docs embedded per write transaction (a killed build loses at most one batch)
BATCH = 256

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors (doc_id INTEGER PRIMARY KEY, vec BLOB NOT NULL)",
    # a doc id reused by a new doc (ids restart after the highest is deleted)
    # must not inherit the old doc's vector
    "CREATE TRIGGER IF NOT EXISTS docs_vector_reuse AFTER INSERT ON docs "
    "BEGIN DELETE FROM vectors WHERE doc_id = new.id; END",
)
#: the vectors' generation: a random epoch (new with each index file) and a
#: counter every change to ``vectors`` moves; the vector file carries the pair
#: it was written at and is used only while the pair is unchanged
_GEN_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors_gen "
    "(one INTEGER PRIMARY KEY CHECK (one = 1), epoch TEXT NOT NULL, n INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO vectors_gen VALUES (1, lower(hex(randomblob(8))), 0)",
    "CREATE TRIGGER IF NOT EXISTS vectors_gen_ins AFTER INSERT ON vectors "
    "BEGIN UPDATE vectors_gen SET n = n + 1; END",
    "CREATE TRIGGER IF NOT EXISTS vectors_gen_upd AFTER UPDATE ON vectors "
    "BEGIN UPDATE vectors_gen SET n = n + 1; END",
    "CREATE TRIGGER IF NOT EXISTS vectors_gen_del AFTER DELETE ON vectors "
    "BEGIN UPDATE vectors_gen SET n = n + 1; END",
)
#: the derived vector file beside the index database (see ``write_file``)
VECTOR_FILE = "vectors.f32"
_MAGIC = b"OUROVEC2"
#: the coarse stage of a scan: each vector projected on the ``COARSE`` leading
#: directions of the index's vectors (an SVD of up to ``SAMPLE`` of them, made
#: when the file is written), stored as int8 with a scale per direction; a
#: search scores every doc on these, then the ``CANDIDATES`` best exactly.
#: Measured on the year corpus (115k vectors; bench/semantic.py ``two_stage``):
#: of the exact top 10 scores, 64 directions x 1000 candidates find 0.77,
#: 96 x 1000 0.94, 128 x 1000 0.97, 128 x 3000 1.0 (at twice the time)
COARSE = 128
CANDIDATES = 1000
#: rows of codes converted to float32 at a time by a first scan (512 kB)
PIECE = 1024
SAMPLE = 20_000
#: a doc's vector goes with it, so every vector belongs to a doc: equal counts
#: of vectors and of docs of ``KINDS`` then mean no doc lacks one (the cheap
#: check a search makes before the full one)
_DROP_TRIGGER = "docs_vector_drop"
_DROP = (
    f"CREATE TRIGGER {_DROP_TRIGGER} AFTER DELETE ON docs "
    "BEGIN DELETE FROM vectors WHERE doc_id = old.id; END"
)


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the vectors tables and their triggers (inside the caller's transaction)."""
    for statement in (*_SCHEMA, *_GEN_SCHEMA):
        conn.execute(statement)
    if not _has_drop_trigger(conn):
        # vectors of docs deleted before the trigger existed would upset the counts
        conn.execute("DELETE FROM vectors WHERE doc_id NOT IN (SELECT id FROM docs)")
        conn.execute(_DROP)
    if not _has_trigger(conn, _TODO_TRIGGER):
        # The queue and the log start here, exact from now on: the queue holds
        # every doc of KINDS without a vector (one scan, once), the log starts
        # empty and no vector file written before it is trusted.
        for statement in _LOG_SCHEMA:
            conn.execute(statement)
        conn.execute("DELETE FROM vectors_todo")
        conn.execute(
            f"INSERT INTO vectors_todo SELECT d.id FROM docs d WHERE d.kind IN ({_KIND_SQL}) "
            "AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.doc_id = d.id)"
        )
        conn.execute("DELETE FROM vectors_log")
        conn.execute(
            "INSERT OR REPLACE INTO vectors_logged VALUES "
            "(1, coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'vectors_log'), 0))"
        )
        for statement in _QUEUE_TRIGGERS:
            conn.execute(statement)


def forget(conn: sqlite3.Connection) -> bool:
    """Drop every vector and what is derived with them (the ``vectors*`` tables
    and the triggers on docs and vectors), inside the caller's transaction.

    ``rebuild`` calls it before emptying the index: every doc gets a new id, so
    every vector is computed again anyway, and without the triggers emptying
    and loading docs costs no per-row trigger. ``ensure_schema`` creates them
    again (with a new epoch, so an old vector file is never trusted); returns
    whether there was a vectors table (then the rebuild creates it again, empty)."""
    triggers = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' "
        "AND (tbl_name = 'docs' OR tbl_name = 'vectors' OR tbl_name GLOB 'vectors_*')"
    ).fetchall()
    for (name,) in triggers:
        conn.execute(f'DROP TRIGGER "{name}"')
    tables = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' "
        "AND (name = 'vectors' OR name GLOB 'vectors_*')"
    ).fetchall()
    for (name,) in tables:
        conn.execute(f'DROP TABLE "{name}"')
    return any(name == "vectors" for (name,) in tables)


def _has_trigger(conn: sqlite3.Connection, name: str) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?", (name,)
    ).fetchone()
    return row is not None


def _has_drop_trigger(conn: sqlite3.Connection) -> bool:
    return _has_trigger(conn, _DROP_TRIGGER)


def none_missing(conn: sqlite3.Connection) -> bool:
    """The cheap check: True only when every doc of ``KINDS`` surely has a vector
    (the queue of docs without one is empty: one row read, no write); False
    means "look properly"."""
    if not _has_trigger(conn, _TODO_TRIGGER):
        return False
    return conn.execute("SELECT 1 FROM vectors_todo LIMIT 1").fetchone() is None


def has_table(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vectors'"
    ).fetchone()
    return row is not None


def doc_text(title: str | None, body: str | None, keys: str | None) -> str:
    return " ".join(part for part in (title, (body or "")[:MAX_CHARS], keys) if part)


def keep_fact_vectors(conn: sqlite3.Connection) -> bool:
    """Before facts.jsonl is indexed again whole (another inode: a copy, a
    clone; or a rewrite): set the facts' vectors aside with the text each was
    computed from, so ``restore_fact_vectors`` gives them back to the same facts
    under their new doc ids, instead of every fact queueing to be embedded
    again (115k docs: minutes). Inside the caller's transaction; False when
    there are no vectors."""
    if not has_table(conn):
        return False
    conn.execute("DROP TABLE IF EXISTS temp.kept_vectors")
    conn.execute(
        "CREATE TEMP TABLE kept_vectors AS SELECT d.locator AS locator, f.title AS title, "
        "f.body AS body, f.keys AS keys, v.vec AS vec FROM docs d "
        "JOIN vectors v ON v.doc_id = d.id JOIN docs_fts f ON f.rowid = d.id "
        "WHERE d.kind = 'fact'"
    )
    return True


def restore_fact_vectors(conn: sqlite3.Connection) -> None:
    """The vectors ``keep_fact_vectors`` set aside, each to the fact of the same
    locator whose text is unchanged (any other is embedded again, as usual)."""
    conn.execute("CREATE INDEX temp.kept_vectors_locator ON kept_vectors(locator)")
    conn.execute(
        "INSERT OR REPLACE INTO vectors(doc_id, vec) SELECT d.id, k.vec FROM docs d "
        "JOIN kept_vectors k ON k.locator = d.locator JOIN docs_fts f ON f.rowid = d.id "
        "WHERE d.kind = 'fact' AND f.title IS k.title AND f.body IS k.body AND f.keys IS k.keys"
    )
    conn.execute("DROP TABLE temp.kept_vectors")


def missing(conn: sqlite3.Connection) -> int:
    """How many docs of ``KINDS`` have no vector yet."""
    if _has_trigger(conn, _TODO_TRIGGER):
        return int(conn.execute("SELECT count(*) FROM vectors_todo").fetchone()[0])
    if not has_table(conn):
        return int(
            conn.execute(f"SELECT count(*) FROM docs WHERE kind IN ({_KIND_SQL})").fetchone()[0]
        )
    return int(
        conn.execute(
            f"SELECT count(*) FROM docs d WHERE d.kind IN ({_KIND_SQL}) "
            "AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.doc_id = d.id)"
        ).fetchone()[0]
    )


def _prepare(conn: sqlite3.Connection, *, prune: bool) -> None:
    """The schema, vectors of another ouro version dropped (their docs queued
    again), and with ``prune`` vectors whose doc is gone dropped (a scan)."""
    from ouro.index import db

    with db.transaction(conn):
        ensure_schema(conn)
        size = conn.execute("SELECT length(vec) FROM vectors LIMIT 1").fetchone()
        if size is not None and size[0] != DIM * 2:  # written by another ouro version
            conn.execute("DELETE FROM vectors")
            conn.execute(
                f"INSERT OR IGNORE INTO vectors_todo SELECT id FROM docs WHERE kind IN ({_KIND_SQL})"
            )
        if prune:
            conn.execute("DELETE FROM vectors WHERE doc_id NOT IN (SELECT id FROM docs)")


def catch_up(conn: sqlite3.Connection, budget: int | None = None, *, prune: bool = True) -> int:
    """Embed docs without a vector (at most ``budget``); returns how many remain.
    ``prune`` also drops vectors whose doc is gone (a scan: sync and rebuild do it)."""
    from ouro.index import db

    size = (
        conn.execute("SELECT length(vec) FROM vectors LIMIT 1").fetchone()
        if has_table(conn)
        else None
    )
    foreign = size is not None and size[0] != DIM * 2  # written by another ouro version
    if prune or foreign or not _has_trigger(conn, _TODO_TRIGGER):
        _prepare(conn, prune=prune)
    done, last = 0, 0
    while budget is None or done < budget:
        take = BATCH if budget is None else min(BATCH, budget - done)
        with db.transaction(conn):
            # the queue of docs without a vector, walked by id: each batch starts after the last
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT doc_id FROM vectors_todo WHERE doc_id > ? ORDER BY doc_id LIMIT ?",
                    (last, take),
                )
            ]
            if not ids:
                return 0
            texts = [
                doc_text(*conn.execute(
                    "SELECT title, body, keys FROM docs_fts WHERE rowid = ?", (i,)
                ).fetchone() or (None, None, None))
                for i in ids
            ]  # fmt: skip
            vecs = model().embed(texts, kept=True)
            conn.executemany(
                "INSERT OR REPLACE INTO vectors(doc_id, vec) VALUES (?, ?)",
                [(i, vec.astype("<f2").tobytes()) for i, vec in zip(ids, vecs, strict=True)],
            )
        done += len(ids)
        last = ids[-1]
        if len(ids) < take:
            return 0
    return missing(conn)


# --- the vectors of an index, kept in memory ----------------------------------

_LOG_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS vectors_todo (doc_id INTEGER PRIMARY KEY)",
    "CREATE TABLE IF NOT EXISTS vectors_log "
    "(n INTEGER PRIMARY KEY AUTOINCREMENT, doc_id INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS vectors_logged "
    "(one INTEGER PRIMARY KEY CHECK (one = 1), since INTEGER NOT NULL)",
)
_TODO_TRIGGER = "docs_vector_todo"
_QUEUE_TRIGGERS = (
    f"CREATE TRIGGER {_TODO_TRIGGER} AFTER INSERT ON docs WHEN new.kind IN ({_KIND_SQL}) "
    "BEGIN INSERT OR IGNORE INTO vectors_todo VALUES (new.id); END",
    "CREATE TRIGGER docs_vector_todo_drop AFTER DELETE ON docs "
    "BEGIN DELETE FROM vectors_todo WHERE doc_id = old.id; END",
    "CREATE TRIGGER vectors_todo_done AFTER INSERT ON vectors "
    "BEGIN DELETE FROM vectors_todo WHERE doc_id = new.doc_id; END",
    "CREATE TRIGGER vectors_log_ins AFTER INSERT ON vectors "
    "BEGIN INSERT INTO vectors_log(doc_id) VALUES (new.doc_id); END",
    "CREATE TRIGGER vectors_log_upd AFTER UPDATE ON vectors "
    "BEGIN INSERT INTO vectors_log(doc_id) VALUES (new.doc_id), (old.doc_id); END",
    "CREATE TRIGGER vectors_log_del AFTER DELETE ON vectors "
    "BEGIN INSERT INTO vectors_log(doc_id) VALUES (old.doc_id); END",
)

#: database file -> the vectors this process last read from it
_LOADED: dict[str, Vectors] = {}
#: database file -> (connection, its version when no doc lacked a vector)
_CAUGHT_UP: dict[str, tuple[sqlite3.Connection, tuple[int, int]]] = {}


def _version(conn: sqlite3.Connection) -> tuple[int, int]:
    """Changes by other connections (data_version) and by this one (total_changes)."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0]), conn.total_changes


def _stamp(conn: sqlite3.Connection) -> tuple[str, int] | None:
    """The vectors' (epoch, generation), None when the index has no stamp yet."""
    try:
        row = conn.execute("SELECT epoch, n FROM vectors_gen").fetchone()
    except sqlite3.OperationalError:  # no such table: an index without vectors yet
        return None
    return (str(row[0]), int(row[1])) if row else None


def _log_state(conn: sqlite3.Connection) -> tuple[str, int, int] | None:
    """(epoch, since, position) of the vectors' change log: every change after
    ``since`` up to ``position`` is in ``vectors_log``. None before the log exists."""
    try:
        row = conn.execute(
            "SELECT g.epoch, l.since, (SELECT max(n) FROM vectors_log) "
            "FROM vectors_gen g, vectors_logged l"
        ).fetchone()
    except sqlite3.OperationalError:  # no such table: an index without the log yet
        return None
    if row is None:
        return None
    return str(row[0]), int(row[1]), max(int(row[1]), int(row[2] or 0))


def _from_table(conn: sqlite3.Connection) -> tuple[Any, Any]:
    import numpy as np

    if not has_table(conn):
        return np.zeros(0, dtype=np.int64), np.zeros((0, DIM), dtype=np.float32)
    rows = conn.execute("SELECT doc_id, vec FROM vectors ORDER BY doc_id").fetchall()
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    blob = b"".join(r[1] for r in rows)
    return ids, np.frombuffer(blob, dtype="<f2").reshape(len(rows), DIM).astype(np.float32)


def _rows_of(blobs: list[bytes]) -> Any:
    import numpy as np

    return np.frombuffer(b"".join(blobs), dtype="<f2").reshape(len(blobs), DIM).astype(np.float32)


class Vectors:
    """The vectors of one index as this process holds them, exact at the log
    position ``logpos``: the vector file's rows (``base``, sorted by doc id,
    mapped) less those the log names (``dead``), plus the named ones that
    exist now (``side``). Never changed once made (threads may share one)."""

    __slots__ = ("base_ids", "base_rows", "coarse", "conn", "dead", "epoch", "logpos",
                 "side", "side_ids", "side_rows", "version")  # fmt: skip

    def __init__(self, epoch: str | None, logpos: int, base_ids: Any, base_rows: Any,
                 side: dict[int, bytes | None] | None = None,
                 coarse: tuple[Any, Any, Any, list[Any]] | None = None) -> None:  # fmt: skip
        import numpy as np

        #: (basis DIM x COARSE, scale per direction, int8 codes, [their float32
        #: copy once made]) from the file, shared by the Vectors that follow
        self.coarse = coarse
        self.epoch = epoch
        self.logpos = logpos
        self.base_ids = base_ids
        self.base_rows = base_rows
        self.side = side or {}
        self.conn: sqlite3.Connection | None = None
        self.version = (-1, -1)
        present = sorted(i for i, v in self.side.items() if v is not None)
        self.side_ids = np.asarray(present, dtype=np.int64)
        self.side_rows = _rows_of([self.side[i] for i in present])  # type: ignore[misc]
        self.dead = np.zeros(0, dtype=np.int64)
        if self.side and len(base_ids):
            keys = np.fromiter(self.side, dtype=np.int64, count=len(self.side))
            pos = np.searchsorted(base_ids, keys)
            inside = pos < len(base_ids)
            pos, keys = pos[inside], keys[inside]
            self.dead = pos[base_ids[pos] == keys]

    def __len__(self) -> int:
        return len(self.base_ids) - len(self.dead) + len(self.side_ids)

    def advanced(self, conn: sqlite3.Connection, logpos: int) -> Vectors:
        """These vectors with the changes logged after ``self.logpos`` (O(changes))."""
        if logpos == self.logpos:
            return self
        changed = [
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT doc_id FROM vectors_log WHERE n > ? AND n <= ?",
                (self.logpos, logpos),
            )
        ]
        side = dict(self.side)
        for start in range(0, len(changed), 500):
            part = changed[start : start + 500]
            found = dict(
                conn.execute(
                    f"SELECT doc_id, vec FROM vectors WHERE doc_id IN ({','.join('?' * len(part))})",
                    part,
                ).fetchall()
            )
            side.update((i, found.get(i)) for i in part)
        return Vectors(self.epoch, logpos, self.base_ids, self.base_rows, side, self.coarse)

    def scores(self, q: Any) -> tuple[Any, Any, Any]:
        """Cosine of every vector with the unit vector ``q``: (base rows, with
        -inf for the dead ones; side rows; the base rows scored exactly, in
        order, or None when all were). A base row outside the exact ones holds
        its coarse score shifted below every cosine."""
        import numpy as np

        if self.coarse is None or len(self.base_ids) <= 2 * CANDIDATES:
            base = self.base_rows.astype(np.float32, copy=False) @ q
            exact = None
        else:
            base, exact = self._two_stage(q)
        if len(self.dead):
            base[self.dead] = -np.inf
        return base, self.side_rows @ q, exact

    def _two_stage(self, q: Any) -> tuple[Any, Any]:
        """Every base row scored on the coarse codes (shifted below every
        cosine, -3 - 1 at worst), then the ``CANDIDATES`` best exactly:
        (the scores, the rows scored exactly, in order)."""
        import numpy as np

        assert self.coarse is not None
        basis, scale, codes, kept = self.coarse
        projected = (q @ basis) * scale
        if kept and kept[0] is not None:  # float32 codes (one BLAS call a query)
            approx = kept[0] @ projected
        else:
            # A process's first scan converts the codes in pieces and keeps
            # nothing (a CLI search scans once); its second makes the float32
            # copy, shared by the Vectors that follow these after writes.
            # Pieces of ``PIECE`` rows through one buffer that stays in cache:
            # 2.6 ms for 115k codes, against 8.8 ms in pieces of 16,384 rows
            approx = np.empty(len(codes), dtype=np.float32)
            buffer = np.empty((min(PIECE, len(codes)), codes.shape[1]), dtype=np.float32)
            for at in range(0, len(codes), PIECE):
                piece = buffer[: len(codes[at : at + PIECE])]
                np.copyto(piece, codes[at : at + PIECE], casting="unsafe")
                np.matmul(piece, projected, out=approx[at : at + len(piece)])
            if kept:
                kept[0] = codes.astype(np.float32)
            else:
                kept.append(None)
        best = _top(approx, CANDIDATES)
        best.sort()  # the exact rows read in file order
        base = approx - np.float32(4.0)
        # astype: numpy widens float16 with the CPU's F16C/AVX-512 (1,000 rows
        # 0.45 ms here, against 3.4 ms in integer passes; under valgrind numpy
        # dispatches without them, so instruction counts said otherwise)
        base[best] = self.base_rows[best].astype(np.float32) @ q
        return base, best

    def merged(self) -> tuple[Any, Any]:
        """(ids, rows) of every live vector, sorted by doc id."""
        import numpy as np

        if not self.side:
            return self.base_ids, self.base_rows
        keep = np.ones(len(self.base_ids), dtype=bool)
        keep[self.dead] = False
        ids = np.concatenate((self.base_ids[keep], self.side_ids))
        rows = np.concatenate((self.base_rows[keep], self.side_rows))
        order = np.argsort(ids, kind="stable")
        return ids[order], rows[order]


def vector_file(path: str) -> str:
    return os.path.join(os.path.dirname(path), VECTOR_FILE)


def _header(epoch: str, logpos: int, count: int) -> bytes:
    meta = json.dumps(
        {
            "model": MODEL,
            "dim": DIM,
            "coarse": COARSE,
            "epoch": epoch,
            "log": logpos,
            "count": count,
        },
        sort_keys=True,
    ).encode()
    size = -(-(len(_MAGIC) + 8 + len(meta)) // 64) * 64  # ids and rows start aligned
    return (_MAGIC + (size - 16).to_bytes(8, "little") + meta).ljust(size, b" ")


def _valid_header(handle: Any, epoch: str) -> tuple[int, int, int] | None:
    """(count, log position, data offset) of an open vector file whose header
    names this model and index (``epoch``) and whose size fits it, else None."""
    head = handle.read(16)
    if len(head) < 16 or head[:8] != _MAGIC:
        return None
    size = int.from_bytes(head[8:], "little")
    meta = jsonio.loads(handle.read(size))
    if not isinstance(meta, dict):
        return None
    expected = {"model": MODEL, "dim": DIM, "coarse": COARSE, "epoch": epoch}
    if any(meta.get(k) != v for k, v in expected.items()):
        return None
    count, log = meta.get("count"), meta.get("log")
    if not isinstance(count, int) or not isinstance(log, int):
        return None
    start = 16 + size
    if os.fstat(handle.fileno()).st_size != start + _body_size(count):
        return None
    return count, log, start


def _body_size(count: int) -> int:
    """ids, float16 rows, the basis and scales (float32), the int8 codes."""
    return count * 8 + count * DIM * 2 + (DIM + 1) * COARSE * 4 + count * COARSE


def _file_log(path: str, epoch: str) -> int:
    """The log position of the vector file on disk when it is whole and belongs
    to this index (``epoch``) and model, else -1."""
    try:
        with open(open_regular(vector_file(path)), "rb") as handle:
            found = _valid_header(handle, epoch)
    except (OSError, ValueError):
        return -1
    return -1 if found is None else found[1]


def _from_file(path: str, epoch: str, since: int) -> tuple[Any, Any, int, Any] | None:
    """The vector file's (ids, rows, log position, coarse stage), mapped read-only, or None
    unless it is whole, names this model and index (``epoch``) and a log
    position from which the log is complete (``>= since``)."""
    import mmap

    import numpy as np

    try:
        with open(open_regular(vector_file(path)), "rb") as handle:
            found = _valid_header(handle, epoch)
            if found is None or found[1] < since:
                return None
            count, log, start = found
            if not count:
                return np.zeros(0, dtype=np.int64), np.zeros((0, DIM), dtype=np.float32), log, None
            # the header and the rows from one open file (a rename cannot come between)
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # absent, unreadable or torn: the table answers
        return None
    ids = np.frombuffer(mapped, dtype="<i8", count=count, offset=start)
    at = start + count * 8
    rows = np.frombuffer(mapped, dtype="<f2", count=count * DIM, offset=at)
    at += count * DIM * 2
    basis = np.frombuffer(mapped, dtype="<f4", count=DIM * COARSE, offset=at)
    at += DIM * COARSE * 4
    scale = np.frombuffer(mapped, dtype="<f4", count=COARSE, offset=at)
    at += COARSE * 4
    codes = np.frombuffer(mapped, dtype="i1", count=count * COARSE, offset=at)
    kept: list[Any] = []
    coarse = (basis.reshape(DIM, COARSE), scale, codes.reshape(count, COARSE), kept)
    return ids, rows.reshape(count, DIM), log, coarse


def _coarse(rows: Any) -> list[bytes]:
    """The coarse stage of ``rows``: the basis (the leading right singular
    vectors of a sample), a scale per direction and the int8 codes."""
    import numpy as np

    rows = np.asarray(rows, dtype=np.float32)
    basis = np.zeros((DIM, COARSE), dtype=np.float32)
    if len(rows):
        step = max(1, len(rows) // SAMPLE)
        _u, _s, vt = np.linalg.svd(rows[::step], full_matrices=False)
        take = min(COARSE, vt.shape[0])
        basis[:, :take] = vt[:take].T
    projected = rows @ basis
    peak = np.abs(projected).max(axis=0) if len(rows) else np.zeros(COARSE, dtype=np.float32)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    codes = np.clip(np.rint(projected / scale), -127, 127).astype(np.int8)
    return [basis.astype("<f4").tobytes(), scale.astype("<f4").tobytes(), codes.tobytes()]


def _replace(target: str, chunks: list[bytes]) -> None:
    """Replace ``target`` with ``chunks``, all or nothing (temp, fsync, rename).
    Not ``ouro.store``: that package loads orjson, which a cold search need not."""
    tmp = f"{target}.tmp"  # one writer at a time (the caller holds the lock)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    try:
        try:
            for chunk in chunks:
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write(conn: sqlite3.Connection, path: str, held: Vectors) -> None:
    """Write ``held`` as the vector file (atomically, under ``vectors.f32.lock``
    beside it, unless the file on disk is as new), then drop the log up to its
    position. Raises OSError or sqlite3.Error when it cannot."""
    import fcntl

    from ouro.index import db

    assert held.epoch is not None
    ids, rows = held.merged()
    target = vector_file(path)
    lock = os.open(target + ".lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another writer of the file: a second at most
        if _file_log(path, held.epoch) < held.logpos:
            _replace(target, [_header(held.epoch, held.logpos, len(ids)),
                              ids.astype("<i8").tobytes(), rows.astype("<f2").tobytes(),
                              *_coarse(rows)])  # fmt: skip
        with db.transaction(conn):
            conn.execute("DELETE FROM vectors_log WHERE n <= ?", (held.logpos,))
            conn.execute("UPDATE vectors_logged SET since = max(since, ?)", (held.logpos,))
    finally:
        os.close(lock)


def write_file(conn: sqlite3.Connection, path: str) -> None:
    """Write the vector file beside the index: a 64-byte-aligned JSON header
    (model, dim, the index's epoch, the log position, count), the doc ids
    (int64) and the rows (float32), atomically; derived from the table and
    trusted only with the log from its position on."""
    from pathlib import Path

    from ouro.store.guard import storage_error

    with db_read(conn):
        state = _log_state(conn)
        if state is None:
            return
        ids, rows = _from_table(conn)
    try:
        _write(conn, path, Vectors(state[0], state[2], ids, rows))
    except OSError as exc:
        raise storage_error(exc, Path(vector_file(path))) from None


def heal_file(conn: sqlite3.Connection, path: str) -> bool:
    """Write the vector file when a search finds none that belongs to this index
    (missing, torn, another index's or model's) and every doc has its vector.
    Returns whether it wrote; raises OSError or sqlite3.Error when it cannot."""
    state = _log_state(conn)
    if state is None or _file_log(path, state[0]) >= 0 or not none_missing(conn):
        return False
    write_file(conn, path)
    return True


def db_read(conn: sqlite3.Connection) -> Any:
    """One read transaction (the stamp and the rows seen together)."""

    @contextlib.contextmanager
    def read() -> Any:
        conn.execute("BEGIN")
        try:
            yield
        finally:
            conn.execute("ROLLBACK")

    return read()


def vectors(conn: sqlite3.Connection, path: str) -> Vectors:
    """Every vector of the index, as of now: held per process and brought
    forward by the log (O(changes) after a write); read from the vector file
    when it belongs to this index and the log covers it, else from the table.
    Writes nothing: only sync and rebuild write the vector file."""
    version = _version(conn)
    held = _LOADED.get(path)
    if held is not None and held.conn is conn and held.version == version:
        return held
    with db_read(conn):
        state = _log_state(conn)
        if state is None:  # no log yet (read-only old index): the table, every time
            ids, rows = _from_table(conn)
            held = Vectors(None, 0, ids, rows)
        else:
            epoch, since, position = state
            if held is None or held.epoch != epoch or not since <= held.logpos <= position:
                found = _from_file(path, epoch, since)
                if found is not None:
                    held = Vectors(epoch, found[2], found[0], found[1], coarse=found[3])
                else:
                    ids, rows = _from_table(conn)
                    held = Vectors(epoch, position, ids, rows)
            held = held.advanced(conn, position)
    held.conn, held.version = conn, version
    _LOADED[path] = held
    return held


def matrix(conn: sqlite3.Connection, path: str) -> tuple[Any, Any]:
    """(doc ids, float32 matrix) of every vector in the index, sorted by id."""
    return vectors(conn, path).merged()


def catch_up_once(conn: sqlite3.Connection, path: str, budget: int | None) -> int:
    """``catch_up`` for a search: skipped while nothing changed since the last
    one found every doc with its vector."""
    seen = _CAUGHT_UP.get(path)
    if seen is not None and seen[0] is conn and seen[1] == _version(conn):
        return 0
    if none_missing(conn):  # no write transaction, no scan for docs without a vector
        _CAUGHT_UP[path] = (conn, _version(conn))
        return 0
    if budget is not None and _has_trigger(conn, _TODO_TRIGGER):
        over = conn.execute("SELECT 1 FROM vectors_todo LIMIT 1 OFFSET ?", (budget,)).fetchone()
        if over is not None:  # more than a search embeds: left to 'ouro index sync'
            return missing(conn)
    remaining = catch_up(conn, budget, prune=False)
    if not remaining:
        _CAUGHT_UP[path] = (conn, _version(conn))
    return remaining


def _top(scores: Any, take: int) -> Any:
    """The positions of the ``take`` highest ``scores`` (< len), in no order:
    a partial sort of those at or above a threshold from every 16th score
    that leaves at least ``take`` (2x expected), else of all of them. The
    same set either way, up to ties at the last place (which a partial sort
    breaks as it goes); a third of the time of one over 115k coarse scores."""
    import numpy as np

    step = 16
    sample = scores[::step]
    want = take // (2 * step)
    if want >= 1 and len(sample) > 2 * want:
        edge = np.partition(sample, len(sample) - want)[len(sample) - want]
        pool = np.flatnonzero(scores >= edge)
        if len(pool) >= take:
            return pool[np.argpartition(-scores[pool], take - 1)[:take]]
    return np.argpartition(-scores, take - 1)[:take]


def _best(held: Vectors, base: Any, side: Any, take: int, exact: Any = None) -> tuple[Any, Any]:
    """(ids, scores) of at least the ``take`` best vectors, best first, ties by id:
    the ``take`` best base rows (a partial sort; among the ``exact`` rows when
    there are that many: every other row scores below them) and every side row."""
    import numpy as np

    if exact is not None and take < len(exact):
        part = exact[np.argpartition(-base[exact], take - 1)[:take]]
        ids, scores = held.base_ids[part], base[part]
    elif take < len(base):
        part = np.argpartition(-base, take - 1)[:take]
        ids, scores = held.base_ids[part], base[part]
    else:
        ids, scores = held.base_ids, base
    if len(side):
        ids, scores = np.concatenate((ids, held.side_ids)), np.concatenate((scores, side))
    order = np.lexsort((ids, -scores))
    return ids[order], scores[order]


def ranked(
    conn: sqlite3.Connection, path: str, query: str, allowed: Any, depth: int
) -> list[tuple[int, float]]:
    """The ``depth`` nearest docs to ``query`` as (doc id, cosine), best first, ties by id.

    ``allowed(ids) -> set`` keeps the ids that pass the search's filters.
    """
    np = load_numpy()
    held = vectors(conn, path)
    if not len(held):
        return []
    q = model().embed([query])[0]
    if not q.any():
        return []
    base, side, exact = held.scores(q)
    total = len(base) + len(side)
    out: list[tuple[int, float]] = []
    window = max(depth * 4, 200)
    start = 0
    ids: Any = None
    scores: Any = None
    while len(out) < depth and start < total:
        end = min(total, start + window)
        if ids is None or (end > len(ids) and len(ids) < total):
            ids, scores = _best(held, base, side, end * 2, exact)
        chunk = [
            (int(i), float(s))
            for i, s in zip(ids[start:end], scores[start:end], strict=True)
            if s != -np.inf  # a dead row: its doc changed or is gone
        ]
        keep = allowed([c[0] for c in chunk])
        out.extend(c for c in chunk if c[0] in keep)
        start = end
        window *= 4
    return out[:depth]


#: docs embedded between two progress reports of ``embed_bundle``
PROGRESS_STEP = 4 * BATCH


def embed_bundle(
    root: str | os.PathLike[str], progress: Callable[[int, int], None] | None = None
) -> dict[str, Any] | None:
    """Compute every missing vector of the bundle's index (``ouro index sync`` and
    ``rebuild`` call this after the files are indexed), ``BATCH`` docs per
    transaction, reporting ``progress(done, total)`` every ``PROGRESS_STEP``;
    then write the vector file. None without the extra."""
    import time

    from ouro.index import db

    if not available():
        return None
    started = time.perf_counter()
    conn = db.open_db(root)
    try:
        before = missing(conn)
        remaining = catch_up(conn, PROGRESS_STEP)  # prunes vectors of deleted docs first
        while remaining:
            if progress:
                progress(max(0, before - remaining), max(before, remaining))
            remaining = catch_up(conn, PROGRESS_STEP, prune=False)
        if progress and before:
            progress(before, before)
        write_file(conn, db.db_file(root))
    except sqlite3.Error as exc:
        raise db.damaged(db.db_file(root), exc) from None
    finally:
        conn.close()
    return {
        "state": "fresh",
        "embedded": before,
        "seconds": round(time.perf_counter() - started, 3),
    }


def pending(root: str | os.PathLike[str]) -> dict[str, Any] | None:
    """``{"state": "not computed", "missing": n}`` for a rebuild told not to
    embed (``--no-vectors``); None without the extra."""
    from ouro.index import db

    if not available():
        return None
    conn = db.open_db(root)
    try:
        return {"state": "not computed", "missing": missing(conn)}
    except sqlite3.Error as exc:
        raise db.damaged(db.db_file(root), exc) from None
    finally:
        conn.close()
