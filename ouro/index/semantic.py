"""Search by meaning: the optional embedding side of the index (``ouro[semantic]``).

Contract:

- The model is wordllama 0.4.0.post1's ``l2_supercat_256`` static embedding
  (MIT), read from the files *inside the installed wheel* (its
  ``weights/*.safetensors`` and ``tokenizers/*.json``) with numpy and
  tokenizers. Nothing is downloaded, ever: wordllama's own loader (which may
  fall back to the network) is never imported. Without the extra,
  ``available()`` is False and every caller keeps to lexical search.
- A text's vector is the mean of its tokens' embeddings, cut to the first
  ``DIM`` (128) dimensions and scaled to unit length; the text of a doc is its FTS5
  title, body (first ``MAX_CHARS``) and keys, so a vector is a pure function
  of what the index already holds.
- Vectors live in the index file, table ``vectors(doc_id, vec)`` (float16,
  ``DIM`` values), created on first use together with a trigger that drops a
  doc id's vector when the id is given to a new doc. Only docs of the kinds
  in ``KINDS`` get one; a second trigger drops a vector with its doc, so a
  search first compares two counts and skips the catch-up (and its write
  transaction) when they are equal. ``catch_up`` embeds the docs that have none (and
  drops vectors whose doc is gone); ``ouro index sync`` / ``rebuild`` run it
  to the end, a search runs it for at most ``SEARCH_BUDGET`` docs and
  otherwise says ``catching up``. A diary write (write-through) never embeds.
- ``vectors_gen`` holds the vectors' stamp (a random epoch, a counter that
  triggers move on every change to ``vectors``). ``embed_bundle`` (sync,
  rebuild) writes ``state/index/vectors.f32`` atomically: header (model, dim,
  stamp, count), int64 doc ids, float32 rows. A search maps it only while its
  stamp is the index's, else reads the table; it is derived, never the truth.
- ``rebuild`` empties ``vectors`` with the other tables, so a rebuilt index
  and an incrementally maintained one hold the same vectors for the same docs.
- Continuity (orient, resume, the sentinel, drills) never imports this module.
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    import numpy as np
    from numpy.typing import NDArray

MODEL = "wordllama-0.4.0.post1/l2_supercat_256"
#: the model's dimensions, and the first DIM of them that ouro keeps: the model is
#: trained to be truncated (Matryoshka); 128 ranked the labelled set better than
#: 256 (51 vs 46 paraphrases in the top 5) and halves the scan per query
MODEL_DIM = 256
DIM = 128
KINDS = ("fact", "note", "task", "friction", "tip")
MAX_CHARS = 4000
#: docs a search embeds itself before answering (~0.1 s); more is left to sync
SEARCH_BUDGET = 4000
BATCH = 2000
ENABLE_HINT = "install the optional embedding model: pip install 'ouro[semantic]'"

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
_MAGIC = b"OUROVEC1"
#: a doc's vector goes with it, so every vector belongs to a doc: equal counts
#: of vectors and of docs of ``KINDS`` then mean no doc lacks one (the cheap
#: check a search makes before the full one)
_DROP_TRIGGER = "docs_vector_drop"
_DROP = (
    f"CREATE TRIGGER {_DROP_TRIGGER} AFTER DELETE ON docs "
    "BEGIN DELETE FROM vectors WHERE doc_id = old.id; END"
)


@functools.cache
def package_dir() -> str | None:
    """The installed wordllama package folder, found without importing it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("wordllama")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = next(iter(spec.submodule_search_locations))
    files = (_weights_file(folder), _tokenizer_file(folder))
    return folder if all(os.path.isfile(f) for f in files) else None


def _weights_file(folder: str) -> str:
    return os.path.join(folder, "weights", "l2_supercat_256.safetensors")


def _tokenizer_file(folder: str) -> str:
    return os.path.join(folder, "tokenizers", "l2_supercat_tokenizer_config.json")


def available() -> bool:
    """Whether the extra is installed (numpy, tokenizers and the model files)."""
    import importlib.util

    if package_dir() is None:
        return False
    return all(importlib.util.find_spec(m) is not None for m in ("numpy", "tokenizers"))


def require() -> None:
    from ouro.errors import InvalidInput

    if not available():
        raise InvalidInput(f"mode: search by meaning is not installed; {ENABLE_HINT}")


class Model:
    """Token embeddings and the tokenizer, loaded once per process."""

    def __init__(self, folder: str) -> None:
        import numpy as np
        from tokenizers import Tokenizer

        with open(_weights_file(folder), "rb") as handle:
            size = int.from_bytes(handle.read(8), "little")
            header = json.loads(handle.read(size))
        meta = header["embedding.weight"]
        start, end = meta["data_offsets"]
        rows, dims = meta["shape"]
        if meta["dtype"] != "F16" or dims != MODEL_DIM or end - start != rows * dims * 2:
            from ouro.errors import OuroError

            raise OuroError(
                f"{_weights_file(folder)} is not the expected model ({meta})",
                hint="reinstall with pip install 'ouro[semantic]'",
            )
        # mapped, not read: a query touches only its tokens' rows
        self.raw = np.memmap(
            _weights_file(folder),
            dtype="<f2",
            mode="r",
            offset=8 + size + start,
            shape=tuple(meta["shape"]),
        )
        self._table: NDArray[np.float32] | None = None
        self.tokenizer = Tokenizer.from_file(_tokenizer_file(folder))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()

    @property
    def table(self) -> NDArray[np.float32]:
        """The first ``DIM`` dimensions of every token, as float32 (made once)."""
        import numpy as np

        if self._table is None:
            self._table = np.ascontiguousarray(self.raw[:, :DIM], dtype=np.float32)
        return self._table

    def _rows(self, table: NDArray[np.float32] | None, ids: Any) -> NDArray[np.float32]:
        import numpy as np

        if table is not None:
            rows: NDArray[np.float32] = table[ids]
            return rows
        return np.asarray(self.raw[ids][:, :DIM], dtype=np.float32)

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        """Unit vectors, one row per text (a text without tokens: all zeros)."""
        import numpy as np

        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        encoded = self.tokenizer.encode_batch(texts, add_special_tokens=False)
        # one text (a query) before the table is made: read only its tokens'
        # rows (the same float32 values, summed in the same order)
        table = self.table if len(texts) > 1 or self._table is not None else None
        last = self.raw.shape[0] - 1
        # One text at a time: gathering every token row of a batch at once
        # builds a (tokens x 256) temporary that costs far more than the sums.
        for row, enc in enumerate(encoded):
            if not enc.ids:
                continue
            ids = np.minimum(np.asarray(enc.ids, dtype=np.int64), last)
            if len(ids) > 64:  # long text: each distinct token once, times its count
                unique, counts = np.unique(ids, return_counts=True)
                total = counts.astype(np.float32) @ self._rows(table, unique)
            else:
                total = self._rows(table, ids).sum(axis=0)
            norm = float(np.linalg.norm(total))
            if norm:
                out[row] = total / norm
        return out


@functools.cache
def model() -> Model:
    require()
    folder = package_dir()
    assert folder is not None
    return Model(folder)


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the vectors table and its trigger (inside the caller's transaction)."""
    for statement in (*_SCHEMA, *_GEN_SCHEMA):
        conn.execute(statement)
    if not _has_drop_trigger(conn):
        # vectors of docs deleted before the trigger existed would upset the counts
        conn.execute("DELETE FROM vectors WHERE doc_id NOT IN (SELECT id FROM docs)")
        conn.execute(_DROP)


def _has_drop_trigger(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?", (_DROP_TRIGGER,)
    ).fetchone()
    return row is not None


def none_missing(conn: sqlite3.Connection) -> bool:
    """The cheap check: True only when every doc of ``KINDS`` surely has a vector
    (two counts, no join, no write); False means "look properly"."""
    if not _has_drop_trigger(conn):
        return False
    docs = conn.execute(f"SELECT count(*) FROM docs WHERE kind IN ({_KIND_SQL})").fetchone()[0]
    vectors = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    return bool(docs == vectors)


def has_table(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vectors'"
    ).fetchone()
    return row is not None


def doc_text(title: str | None, body: str | None, keys: str | None) -> str:
    return " ".join(part for part in (title, (body or "")[:MAX_CHARS], keys) if part)


_KIND_SQL = ",".join(f"'{k}'" for k in KINDS)


def missing(conn: sqlite3.Connection) -> int:
    """How many docs of ``KINDS`` have no vector yet."""
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


def catch_up(conn: sqlite3.Connection, budget: int | None = None, *, prune: bool = True) -> int:
    """Embed docs without a vector (at most ``budget``); returns how many remain.
    ``prune`` also drops vectors whose doc is gone (a scan: sync and rebuild do it)."""
    from ouro.index import db

    with db.transaction(conn):
        ensure_schema(conn)
        size = conn.execute("SELECT length(vec) FROM vectors LIMIT 1").fetchone()
        if size is not None and size[0] != DIM * 2:  # written by another ouro version
            conn.execute("DELETE FROM vectors")
        if prune:
            conn.execute("DELETE FROM vectors WHERE doc_id NOT IN (SELECT id FROM docs)")
    done, last = 0, 0
    while budget is None or done < budget:
        take = BATCH if budget is None else min(BATCH, budget - done)
        with db.transaction(conn):
            # docs the outer loop, walked by id: each batch starts after the last
            ids = [
                r[0]
                for r in conn.execute(
                    f"SELECT d.id FROM docs d WHERE d.id > ? AND d.kind IN ({_KIND_SQL}) "
                    "AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.doc_id = d.id) "
                    "ORDER BY d.id LIMIT ?",
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
            vecs = model().embed(texts)
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

#: database file -> (connection, its version, doc ids, unit vectors); the
#: connection object is kept so that a new one is never taken for it
_LOADED: dict[str, tuple[sqlite3.Connection, tuple[int, int], Any, Any]] = {}
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


def _from_table(conn: sqlite3.Connection) -> tuple[Any, Any]:
    import numpy as np

    if not has_table(conn):
        return np.zeros(0, dtype=np.int64), np.zeros((0, DIM), dtype=np.float32)
    rows = conn.execute("SELECT doc_id, vec FROM vectors ORDER BY doc_id").fetchall()
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    blob = b"".join(r[1] for r in rows)
    return ids, np.frombuffer(blob, dtype="<f2").reshape(len(rows), DIM).astype(np.float32)


def vector_file(path: str) -> str:
    return os.path.join(os.path.dirname(path), VECTOR_FILE)


def _header(stamp: tuple[str, int], count: int) -> bytes:
    meta = json.dumps(
        {"model": MODEL, "dim": DIM, "epoch": stamp[0], "n": stamp[1], "count": count},
        sort_keys=True,
    ).encode()
    size = -(-(len(_MAGIC) + 8 + len(meta)) // 64) * 64  # ids and rows start aligned
    return (_MAGIC + (size - 16).to_bytes(8, "little") + meta).ljust(size, b" ")


def _from_file(path: str, stamp: tuple[str, int] | None) -> tuple[Any, Any] | None:
    """The vector file's (ids, rows), mapped read-only, or None unless its
    header names exactly this model and the index's current stamp."""
    import numpy as np

    if stamp is None:
        return None
    name = vector_file(path)
    try:
        with open(name, "rb") as handle:
            head = handle.read(16)
            if len(head) < 16 or head[:8] != _MAGIC:
                return None
            size = int.from_bytes(head[8:], "little")
            meta = json.loads(handle.read(size))
            total = os.fstat(handle.fileno()).st_size
    except (OSError, ValueError):  # absent, unreadable or torn: the table answers
        return None
    count = meta.get("count")
    expected = {"model": MODEL, "dim": DIM, "epoch": stamp[0], "n": stamp[1]}
    if any(meta.get(k) != v for k, v in expected.items()) or not isinstance(count, int):
        return None
    start = 16 + size
    if total != start + count * 8 + count * DIM * 4:
        return None
    if not count:
        return np.zeros(0, dtype=np.int64), np.zeros((0, DIM), dtype=np.float32)
    ids = np.memmap(name, dtype="<i8", mode="r", offset=start, shape=(count,))
    rows = np.memmap(name, dtype="<f4", mode="r", offset=start + count * 8, shape=(count, DIM))
    return np.asarray(ids), np.asarray(rows)  # plain arrays over the same mapping


def write_file(conn: sqlite3.Connection, path: str) -> None:
    """Write the vector file beside the index: a 64-byte-aligned JSON header
    (model, dim, the stamp, count), the doc ids (int64) and the rows (float32),
    atomically; derived from the table and trusted only at the same stamp."""
    from pathlib import Path

    from ouro.store.atomic import atomic_write_chunks

    with db_read(conn):
        stamp = _stamp(conn)
        if stamp is None:
            return
        ids, rows = _from_table(conn)
    atomic_write_chunks(
        Path(vector_file(path)),
        [_header(stamp, len(ids)), ids.astype("<i8").tobytes(), rows.astype("<f4").tobytes()],
        root=Path(path).parent.parent.parent,
    )


def db_read(conn: sqlite3.Connection) -> Any:
    """One read transaction (the stamp and the rows seen together)."""
    import contextlib

    @contextlib.contextmanager
    def read() -> Any:
        conn.execute("BEGIN")
        try:
            yield
        finally:
            conn.execute("ROLLBACK")

    return read()


def matrix(conn: sqlite3.Connection, path: str) -> tuple[Any, Any]:
    """(doc ids, float32 matrix) of every vector in the index, cached per connection
    until the database changes: from the vector file when its stamp is the
    index's, else from the table."""
    version = _version(conn)
    cached = _LOADED.get(path)
    if cached is not None and cached[0] is conn and cached[1] == version:
        return cached[2], cached[3]
    found = _from_file(path, _stamp(conn))
    ids, mat = found if found is not None else _from_table(conn)
    _LOADED[path] = (conn, version, ids, mat)
    return ids, mat


def catch_up_once(conn: sqlite3.Connection, path: str, budget: int) -> int:
    """``catch_up`` for a search: skipped while nothing changed since the last
    one found every doc with its vector."""
    seen = _CAUGHT_UP.get(path)
    if seen is not None and seen[0] is conn and seen[1] == _version(conn):
        return 0
    if none_missing(conn):  # no write transaction, no scan for docs without a vector
        _CAUGHT_UP[path] = (conn, _version(conn))
        return 0
    remaining = catch_up(conn, budget, prune=False)
    if not remaining:
        _CAUGHT_UP[path] = (conn, _version(conn))
    return remaining


def ranked(
    conn: sqlite3.Connection, path: str, query: str, allowed: Any, depth: int
) -> list[tuple[int, float]]:
    """The ``depth`` nearest docs to ``query`` as (doc id, cosine), best first, ties by id.

    ``allowed(ids) -> set`` keeps the ids that pass the search's filters.
    """
    import numpy as np

    ids, mat = matrix(conn, path)
    if not len(ids):
        return []
    q = model().embed([query])[0]
    if not q.any():
        return []
    scores = mat @ q
    out: list[tuple[int, float]] = []
    window = max(depth * 4, 200)
    start = 0
    order = None
    while len(out) < depth and start < len(ids):
        end = min(len(ids), start + window)
        if order is None or end > len(order):
            take = min(len(ids), end * 2)
            if take >= len(ids):
                order = np.lexsort((ids, -scores))
            else:
                part = np.argpartition(-scores, take - 1)[:take]
                order = part[np.lexsort((ids[part], -scores[part]))]
        chunk = [(int(ids[i]), float(scores[i])) for i in order[start:end]]
        keep = allowed([c[0] for c in chunk])
        out.extend(c for c in chunk if c[0] in keep)
        start = end
        window *= 4
    return out[:depth]


def embed_bundle(root: str | os.PathLike[str]) -> dict[str, Any] | None:
    """Compute every missing vector of the bundle's index (``ouro index sync`` and
    ``rebuild`` call this after the files are indexed). None without the extra."""
    import time

    from ouro.index import db

    if not available():
        return None
    started = time.perf_counter()
    conn = db.open_db(root)
    try:
        before = missing(conn)
        catch_up(conn)
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


# --- near-duplicate facts by meaning (diary_write, setting diary.near = meaning) ---

#: a new fact whose cosine with an active fact sharing an ``about`` entity is at
#: least this restates it (measured on bench/data/near_duplicates.tsv: 25 of 40
#: restatements caught, 0 of 40 different facts about the same thing refused)
NEAR_COSINE = 0.8
#: the most recent facts of the entities compared with a new fact
NEAR_CANDIDATES = 2000


def near_fact(text: str, candidates: list[tuple[str, str]]) -> tuple[str, float] | None:
    """The first candidate ``(fact id, text)`` with the highest cosine >= ``NEAR_COSINE``."""
    if not candidates:
        return None
    candidates = candidates[-NEAR_CANDIDATES:]
    vecs = model().embed([text, *(t for _fid, t in candidates)])
    scores = vecs[1:] @ vecs[0]
    best = int(scores.argmax())
    score = float(scores[best])
    return (candidates[best][0], score) if score >= NEAR_COSINE else None
