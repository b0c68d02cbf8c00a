"""Search by meaning: the optional embedding side of the index (``ouro[semantic]``).

Contract:

- The model is wordllama 0.4.0.post1's ``l2_supercat_256`` static embedding
  (MIT), read from the files *inside the installed wheel* (its
  ``weights/*.safetensors`` and ``tokenizers/*.json``) with numpy and
  tokenizers. Nothing is downloaded, ever: wordllama's own loader (which may
  fall back to the network) is never imported. Without the extra,
  ``available()`` is False and every caller keeps to lexical search.
- A text's vector is the mean of its tokens' embeddings, scaled to unit
  length (wordllama's ``embed(norm=True)``); the text of a doc is its FTS5
  title, body (first ``MAX_CHARS``) and keys, so a vector is a pure function
  of what the index already holds.
- Vectors live in the index file, table ``vectors(doc_id, vec)`` (float16,
  256 values), created on first use together with a trigger that drops a
  doc id's vector when the id is given to a new doc. Only docs of the kinds
  in ``KINDS`` get one. ``catch_up`` embeds the docs that have none (and
  drops vectors whose doc is gone); ``ouro index sync`` / ``rebuild`` run it
  to the end, a search runs it for at most ``SEARCH_BUDGET`` docs and
  otherwise says ``catching up``. A diary write (write-through) never embeds.
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
DIM = 256
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
        raise InvalidInput("mode: semantic search is not installed", hint=ENABLE_HINT)


class Model:
    """Token embeddings and the tokenizer, loaded once per process."""

    def __init__(self, folder: str) -> None:
        import numpy as np
        from tokenizers import Tokenizer

        with open(_weights_file(folder), "rb") as handle:
            size = int.from_bytes(handle.read(8), "little")
            header = json.loads(handle.read(size))
            data = handle.read()
        meta = header["embedding.weight"]
        start, end = meta["data_offsets"]
        if meta["dtype"] != "F16" or meta["shape"][1] != DIM:
            from ouro.errors import OuroError

            raise OuroError(
                f"{_weights_file(folder)} is not the expected model ({meta})",
                hint="reinstall with pip install 'ouro[semantic]'",
            )
        self.table = (
            np.frombuffer(data[start:end], dtype=np.float16)
            .reshape(meta["shape"])
            .astype(np.float32)
        )
        self.tokenizer = Tokenizer.from_file(_tokenizer_file(folder))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        """Unit vectors, one row per text (a text without tokens: all zeros)."""
        import numpy as np

        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        encoded = self.tokenizer.encode_batch(texts, add_special_tokens=False)
        lengths = np.array([len(e.ids) for e in encoded], dtype=np.int64)
        keep = np.nonzero(lengths)[0]
        if not len(keep):
            return out
        ids = np.concatenate([np.asarray(encoded[i].ids, dtype=np.int64) for i in keep])
        np.clip(ids, 0, self.table.shape[0] - 1, out=ids)
        starts = np.concatenate(([0], np.cumsum(lengths[keep])[:-1]))
        sums = np.add.reduceat(self.table[ids], starts, axis=0)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        out[keep] = sums / norms
        return out


@functools.cache
def model() -> Model:
    require()
    folder = package_dir()
    assert folder is not None
    return Model(folder)


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the vectors table and its trigger (inside the caller's transaction)."""
    for statement in _SCHEMA:
        conn.execute(statement)


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


def catch_up(conn: sqlite3.Connection, budget: int | None = None) -> int:
    """Embed docs without a vector (at most ``budget``); returns how many remain."""
    from ouro.index import db

    with db.transaction(conn):
        ensure_schema(conn)
        conn.execute("DELETE FROM vectors WHERE doc_id NOT IN (SELECT id FROM docs)")
    done = 0
    while budget is None or done < budget:
        take = BATCH if budget is None else min(BATCH, budget - done)
        with db.transaction(conn):
            rows = conn.execute(
                f"SELECT d.id, f.title, f.body, f.keys FROM docs d "
                f"JOIN docs_fts f ON f.rowid = d.id WHERE d.kind IN ({_KIND_SQL}) "
                "AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.doc_id = d.id) "
                "ORDER BY d.id LIMIT ?",
                (take,),
            ).fetchall()
            if not rows:
                return 0
            vecs = model().embed([doc_text(t, b, k) for _i, t, b, k in rows])
            conn.executemany(
                "INSERT OR REPLACE INTO vectors(doc_id, vec) VALUES (?, ?)",
                [
                    (row[0], vec.astype("<f2").tobytes())
                    for row, vec in zip(rows, vecs, strict=True)
                ],
            )
        done += len(rows)
        if len(rows) < take:
            return 0
    return missing(conn)


# --- the vectors of an index, kept in memory ----------------------------------

#: (database file, id of the connection) -> (version, doc ids, unit vectors)
_LOADED: dict[tuple[str, int], tuple[tuple[int, int], Any, Any]] = {}


def _version(conn: sqlite3.Connection) -> tuple[int, int]:
    """Changes by other connections (data_version) and by this one (total_changes)."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0]), conn.total_changes


def matrix(conn: sqlite3.Connection, path: str) -> tuple[Any, Any]:
    """(doc ids, float32 matrix) of every vector in the index, cached per connection
    until the database changes."""
    import numpy as np

    key = (path, id(conn))
    version = _version(conn)
    cached = _LOADED.get(key)
    if cached is not None and cached[0] == version:
        return cached[1], cached[2]
    if not has_table(conn):
        ids, mat = np.zeros(0, dtype=np.int64), np.zeros((0, DIM), dtype=np.float32)
    else:
        rows = conn.execute("SELECT doc_id, vec FROM vectors ORDER BY doc_id").fetchall()
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        blob = b"".join(r[1] for r in rows)
        mat = np.frombuffer(blob, dtype="<f2").reshape(len(rows), DIM).astype(np.float32)
    for other in [k for k in _LOADED if k[0] == path]:
        del _LOADED[other]
    _LOADED[key] = (version, ids, mat)
    return ids, mat


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
#: least this restates it (measured on bench/data/near_duplicates.tsv: 24 of 40
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
