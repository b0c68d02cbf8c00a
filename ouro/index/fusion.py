"""Semantic and hybrid search: cosine ranks, fused with the FTS5 ranks.

Imported by ``ouro.index.search`` only when a search runs in ``semantic`` or
``hybrid`` mode (so lexical searches, and everything on the continuity path,
never load numpy or the model).

- semantic: the docs nearest the query by cosine of their vectors
  (``ouro.index.semantic``), ties by doc id then locator; the search's
  filters (kind, track, status, about, tag, since, superseded) are applied
  to the candidates in SQL exactly as to the FTS5 matches. Candidates below
  ``MIN_COSINE`` are not results.
- hybrid: reciprocal-rank fusion of the FTS5 ranking and the cosine ranking,
  each cut at ``DEPTH``: ``score = sum(w / (K + rank))`` with weights
  ``LEXICAL_WEIGHT`` / 1; ties broken by locator. ``total`` counts the fused
  candidates. With ``explain`` each result carries
  ``ranks: {"lexical": n|None, "semantic": n|None}``.
- Before ranking, docs still without a vector are embedded when they are at
  most ``semantic.SEARCH_BUDGET`` (a longer queue is left to ``ouro index
  sync``), and a missing vector file is written (``semantic.heal_file``); if
  some remain, or the index cannot be written, the answer's ``index.semantic``
  says ``catching up`` with how many (the semantic side ranks the docs that
  have a vector; with none, a hybrid search is the lexical one).

The constants were chosen on ``bench/data/retrieval.json`` (``bench/semantic.py``).
"""

from __future__ import annotations

import contextlib
import sqlite3

from ouro.errors import OuroError
from ouro.index import db, semantic
from ouro.index.search import Request, _filters, _matching, _shorten

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

K = 60
DEPTH = 50
LEXICAL_WEIGHT = 1.0
MIN_COSINE = 0.2


def _allowed(conn: sqlite3.Connection, req: Request) -> Any:
    where, params, _ = _filters(req)

    def allowed(ids: list[int]) -> set[int]:
        found: set[int] = set()
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            clause = " AND ".join([f"d.id IN ({','.join('?' * len(part))})", *where])
            found.update(
                r[0]
                for r in conn.execute(f"SELECT d.id FROM docs d WHERE {clause}", [*part, *params])
            )
        return found

    return allowed


def _vectors_state(conn: sqlite3.Connection, path: str) -> dict[str, Any]:
    try:
        remaining = semantic.catch_up_once(conn, path, semantic.SEARCH_BUDGET)
    except sqlite3.OperationalError as exc:  # read-only or busy: rank what is there
        return {"state": "catching up", "reason": f"vectors cannot be written now ({exc})"}
    if not remaining:
        # the cache a fresh process maps; on failure the table answers meanwhile,
        # and 'ouro index sync' writes it
        with contextlib.suppress(OSError, sqlite3.Error, OuroError):
            semantic.heal_file(conn, path)
    if remaining:
        return {
            "state": "catching up",
            "reason": f"{remaining} item(s) have no vector yet; 'ouro index sync' computes them",
        }
    return {"state": "fresh"}


def _semantic_hits(
    conn: sqlite3.Connection, path: str, req: Request, depth: int
) -> list[dict[str, Any]]:
    assert req.query is not None
    near = [
        (doc_id, score)
        for doc_id, score in semantic.ranked(conn, path, req.query, _allowed(conn, req), depth)
        if score >= MIN_COSINE
    ]
    if not near:
        return []
    rows = {
        r[0]: r[1:]
        for r in conn.execute(
            "SELECT d.id, d.locator, d.kind, d.title, d.updated, f.body FROM docs d "
            f"JOIN docs_fts f ON f.rowid = d.id WHERE d.id IN ({','.join('?' * len(near))})",
            [doc_id for doc_id, _ in near],
        )
    }
    hits = []
    for doc_id, score in near:
        locator, kind, title, updated, body = rows[doc_id]
        hits.append(
            {
                "locator": locator,
                "kind": kind,
                "title": title,
                "snippet": _shorten(body or ""),
                "score": round(score, 4),
                "updated": updated,
            }
        )
    return hits


def by_meaning(
    conn: sqlite3.Connection, root: str, req: Request, match: str, mode: str
) -> tuple[int, list[dict[str, Any]], dict[str, Any]]:
    """(total, results, state of the vectors) for a semantic or hybrid search."""
    path = db.db_file(root)
    state = _vectors_state(conn, path)
    depth = max(DEPTH, req.limit)
    near = _semantic_hits(conn, path, req, depth)
    if mode == "semantic":
        results = near[: req.limit]
        if req.explain:
            for rank, hit in enumerate(results, 1):
                hit["ranks"] = {"lexical": None, "semantic": rank}
        return len(near), results, state
    wide = Request(req.query, req.kinds, track=req.track, status=req.status, about=req.about,
                   tag=req.tag, since=req.since, history=req.history, limit=depth)  # fmt: skip
    _total, words = _matching(conn, wide, match, count=False)
    fused: dict[str, dict[str, Any]] = {}
    ranks: dict[str, dict[str, int | None]] = {}
    scores: dict[str, float] = {}
    for side, hits, weight in (("lexical", words, LEXICAL_WEIGHT), ("semantic", near, 1.0)):
        for rank, hit in enumerate(hits, 1):
            loc = hit["locator"]
            if loc not in fused or side == "lexical":
                fused.setdefault(loc, hit)
            ranks.setdefault(loc, {"lexical": None, "semantic": None})[side] = rank
            scores[loc] = scores.get(loc, 0.0) + weight / (K + rank)
    order = sorted(fused, key=lambda loc: (-scores[loc], loc))
    results = []
    for loc in order[: req.limit]:
        hit = dict(fused[loc])
        hit["score"] = round(scores[loc], 6)
        if req.explain:
            hit["ranks"] = ranks[loc]
        results.append(hit)
    return len(fused), results, state
