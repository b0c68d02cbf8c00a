"""Searching the record and the work: the four search tools' one engine.

``search(root, request) -> dict`` answers with exactly::

    {"query", "total", "results": [{"locator", "kind", "title", "snippet",
     "score", "updated"}], "index": {"state"}}

Before answering it brings the index up to date: it builds it when missing,
and runs a sync when the index is marked stale or ``quick_check`` sees a
change. Only ``state/index/`` is ever written; ``arc/`` and ``desk/`` are read.
If the sync cannot run (a read-only bundle, say) the answer comes from the
index as it is, with ``index.state = "stale"`` and the reason.

Ranking is BM25 (title ×4, keys ×2, body ×1), ties broken by locator, so an
incrementally maintained index and a rebuilt one answer identically. Facts
that a later fact supersedes are hidden unless ``history`` is set.

This module imports neither pydantic nor click (the CLI fast path uses it);
the tool input models live in ``ouro.index.tools``.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ouro.errors import IndexUnavailable, InvalidInput, OuroError
from ouro.index import db
from ouro.index.fresh import quick_check
from ouro.index.query import to_match
from ouro.index.state import stale_reason

KINDS = ("task", "track", "iteration", "friction", "tip", "fact", "note", "daily")
MAX_LIMIT = 100
SNIPPET_TOKENS = 16
_WEIGHTS = "4.0, 1.0, 2.0"


@dataclass
class Request:
    query: str | None
    kinds: list[str] = field(default_factory=list)
    track: str | None = None
    status: str | None = None
    about: str | None = None
    tag: str | None = None
    since: str | None = None
    history: bool = False
    limit: int = 10


def normalize_entity(text: str) -> str:
    """As facts store ``about`` (docs/record.md): trimmed, spaces collapsed, casefolded."""
    return " ".join(text.split()).casefold()


def ready_index(root: Path) -> tuple[sqlite3.Connection, dict[str, Any]]:
    """An up-to-date index connection and its state for the answer."""
    missing = not db.db_path(root).is_file()
    conn = db.open_db(root)
    try:
        reason = "missing" if missing else stale_reason(root) or quick_check(conn, str(root))
        if reason is None:
            return conn, {"state": "fresh"}
        from ouro.index.sync import SyncReport, _sync

        try:
            _sync(conn, root, None, SyncReport())
        except (OuroError, OSError, sqlite3.OperationalError) as exc:
            if missing:
                raise IndexUnavailable(
                    f"could not build the index: {exc}",
                    hint="check that state/index/ is writable, then run 'ouro index rebuild'",
                ) from None
            return conn, {"state": "stale", "reason": f"sync failed: {exc}"}
        return conn, {"state": "fresh"}
    except BaseException:
        conn.close()
        raise


def _filters(req: Request) -> tuple[list[str], list[Any]]:
    where: list[str] = []
    params: list[Any] = []
    kinds = list(dict.fromkeys(req.kinds))
    if req.status is not None:
        kinds = [k for k in kinds if k == "task"] if kinds else ["task"]
        where.append("d.id IN (SELECT doc_id FROM tasks WHERE status = ?)")
        params.append(req.status)
    if req.about is not None:
        kinds = [k for k in kinds if k == "fact"] if kinds else ["fact"]
        where.append("d.id IN (SELECT fact_doc FROM fact_entities WHERE entity = ?)")
        params.append(normalize_entity(req.about))
    if req.tag is not None:
        where.append("d.id IN (SELECT note_doc FROM note_tags WHERE tag = ?)")
        params.append(req.tag.strip())
    if kinds:
        where.append(f"d.kind IN ({','.join('?' * len(kinds))})")
        params.extend(kinds)
    if req.track is not None:
        where.append("d.track = ?")
        params.append(req.track)
    if req.since is not None:
        where.append("d.updated >= ?")
        params.append(req.since)
    if not req.history and (not kinds or "fact" in kinds):
        where.append("d.id NOT IN (SELECT doc_id FROM facts WHERE superseded = 1)")
    return where, params


def _check(req: Request) -> None:
    unknown = [k for k in req.kinds if k not in KINDS]
    if unknown:
        raise InvalidInput(
            f"kind: unknown kind {unknown[0]!r}", hint="kinds are: " + ", ".join(KINDS)
        )
    if not 1 <= req.limit <= MAX_LIMIT:
        raise InvalidInput(
            f"limit: must be 1..{MAX_LIMIT}, got {req.limit}", hint="pass --limit 10"
        )


def _shorten(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _matching(
    conn: sqlite3.Connection, req: Request, match: str
) -> tuple[int, list[dict[str, Any]]]:
    where, params = _filters(req)
    clause = " AND ".join(["docs_fts MATCH ?", *where])
    base = f"FROM docs_fts JOIN docs d ON d.id = docs_fts.rowid WHERE {clause}"
    rows = conn.execute(
        f"SELECT d.id, d.locator, d.kind, d.title, d.updated, bm25(docs_fts, {_WEIGHTS}) AS s "
        f"{base} ORDER BY s, d.locator LIMIT ?",
        [match, *params, req.limit],
    ).fetchall()
    if len(rows) < req.limit:
        total = len(rows)
    else:
        total = conn.execute(f"SELECT count(*) {base}", [match, *params]).fetchone()[0]
    results = []
    for doc_id, locator, kind, title, updated, score in rows:
        found = conn.execute(
            f"SELECT snippet(docs_fts, -1, '**', '**', '…', {SNIPPET_TOKENS}) FROM docs_fts "
            "WHERE docs_fts MATCH ? AND rowid = ?",
            (match, doc_id),
        ).fetchone()
        results.append(
            {
                "locator": locator,
                "kind": kind,
                "title": title,
                "snippet": " ".join((found[0] if found else "").split()),
                "score": round(-score, 4),
                "updated": updated,
            }
        )
    return total, results


def _newest(conn: sqlite3.Connection, req: Request) -> tuple[int, list[dict[str, Any]]]:
    where, params = _filters(req)
    clause = " AND ".join(where) or "1"
    total = conn.execute(f"SELECT count(*) FROM docs d WHERE {clause}", params).fetchone()[0]
    rows = conn.execute(
        f"SELECT d.id, d.locator, d.kind, d.title, d.updated FROM docs d WHERE {clause} "
        "ORDER BY d.updated DESC, d.locator LIMIT ?",
        [*params, req.limit],
    ).fetchall()
    results = []
    for doc_id, locator, kind, title, updated in rows:
        body = conn.execute("SELECT body FROM docs_fts WHERE rowid = ?", (doc_id,)).fetchone()
        results.append(
            {
                "locator": locator,
                "kind": kind,
                "title": title,
                "snippet": _shorten(body[0] if body else ""),
                "score": None,
                "updated": updated,
            }
        )
    return total, results


def search(root: str | Path, req: Request) -> dict[str, Any]:
    """Answer ``req`` over the bundle at ``root`` (see module docstring)."""
    _check(req)
    # No query = newest first; any query text must contain words (else InvalidInput).
    match = "" if req.query is None else to_match(req.query)
    conn, state = ready_index(Path(os.fspath(root)))
    try:
        total, results = _matching(conn, req, match) if match else _newest(conn, req)
    finally:
        conn.close()
    return {"query": req.query, "total": total, "results": results, "index": state}


# --- the four tools, as plain functions of the bundle root ---------------------


def desk_search(root: str | Path, query: str, kinds: list[str] | None = None,
                track: str | None = None, status: str | None = None,
                limit: int = 10) -> dict[str, Any]:  # fmt: skip
    return search(root, Request(query, kinds or [], track=track, status=status, limit=limit))


def consult_diary(root: str | Path, query: str | None = None, about: str | None = None,
                  since: str | None = None, history: bool = False,
                  limit: int = 10) -> dict[str, Any]:  # fmt: skip
    if query is not None and not query.strip():
        query = None
    return search(
        root,
        Request(query, ["fact", "daily"], about=about, since=since, history=history, limit=limit),
    )


def search_facts(root: str | Path, query: str, about: str | None = None,
                 limit: int = 10) -> dict[str, Any]:  # fmt: skip
    return search(root, Request(query, ["fact"], about=about, limit=limit))


def consult_notes(root: str | Path, query: str, tag: str | None = None,
                  limit: int = 10) -> dict[str, Any]:  # fmt: skip
    return search(root, Request(query, ["note"], tag=tag, limit=limit))


def render(result: dict[str, Any]) -> str:
    """Search results for people: one block per hit."""
    state = result["index"]["state"]
    head = f"{result['total']} result(s)" + (
        f" for {result['query']!r}" if result.get("query") else ""
    )
    lines = [head + ("" if state == "fresh" else f"  [index {state}]")]
    for hit in result["results"]:
        lines.append(f"- [{hit['kind']}] {hit['title']}")
        lines.append(f"  {hit['locator']}" + (f"  ({hit['updated']})" if hit["updated"] else ""))
        if hit["snippet"]:
            lines.append(f"  {hit['snippet']}")
    return "\n".join(lines)
