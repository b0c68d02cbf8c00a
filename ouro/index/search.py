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
incrementally maintained index and a rebuilt one answer identically. That is
``mode = "lexical"``, the default of these functions; ``"semantic"`` and
``"hybrid"`` (``ouro.index.fusion``, imported only then) rank by meaning and
add ``index.mode`` and ``index.semantic`` to the answer; ``mode = None`` is
hybrid when ``ouro-bundle[semantic]`` is installed, else lexical (the tools' default).
``explain`` adds ``ranks: {"lexical", "semantic"}`` to each result. Facts
that a later fact supersedes are hidden unless ``history`` is set.

Every search command imports this module, so it (and what it imports) stays
on the standard library's cheap modules: no pydantic, click, PyYAML, orjson,
pathlib, dataclasses or typing at load time. The verbs' inputs are declared on
``ouro.api.desk.Desk.search`` and ``ouro.api.record`` (``ouro.spec``).
"""

from __future__ import annotations

import _thread
import os
import re
import sqlite3

from ouro.errors import IndexUnavailable, InvalidInput, OuroError
from ouro.index import db
from ouro.index.fresh import FACTS, quick_check
from ouro.index.query import to_match

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KINDS = ("task", "track", "iteration", "friction", "tip", "fact", "note", "daily")
#: the seed's names for what ouro files under another: a tip (``desk/_meta/tips/``) is
#: a *lesson*; results say ``lesson`` and ``kind: lesson`` selects them (``tip`` too)
PUBLIC_KIND = {"tip": "lesson"}
_INTERNAL_KIND = {v: k for k, v in PUBLIC_KIND.items()}
MAX_LIMIT = 100
SNIPPET_TOKENS = 16
#: BM25 weights of title, body, keys
_RANK = "bm25(4.0, 1.0, 2.0)"


class Request:
    """What to search for. (A plain class: ``dataclasses`` costs a cold CLI ~5 ms.)"""

    __slots__ = ("about", "explain", "history", "kinds", "limit", "mode", "query", "since",
                 "status", "tag", "track")  # fmt: skip

    def __init__(self, query: str | None, kinds: list[str] | None = None, *,
                 track: str | None = None, status: str | None = None,
                 about: str | None = None, tag: str | None = None, since: str | None = None,
                 history: bool = False, limit: int = 10, mode: str | None = "lexical",
                 explain: bool = False) -> None:  # fmt: skip
        self.query = query if query is None or query.strip() else None  # blank = no query
        self.kinds = list(kinds or [])
        self.track = track
        self.status = status
        self.about = about
        self.tag = tag
        self.since = since
        self.history = history
        self.limit = limit
        self.mode = mode  # lexical | semantic | hybrid; None: hybrid when installed, else lexical
        self.explain = explain


MODES = ("lexical", "semantic", "hybrid")


def resolve_mode(mode: str | None) -> str:
    """The mode to use: None is hybrid when ``ouro-bundle[semantic]`` is installed, else lexical.
    An explicit semantic or hybrid without the extra is refused in one line."""
    if mode is None:
        from ouro.embedding import available

        return "hybrid" if available() else "lexical"
    if mode not in MODES:
        raise InvalidInput(f"mode: {mode!r} is not a mode", hint="modes are: " + ", ".join(MODES))
    if mode != "lexical":
        from ouro.embedding import require

        require()
    return mode


def normalize_entity(text: str) -> str:
    """As facts store ``about`` (docs/record.md): trimmed, spaces collapsed, casefolded."""
    return " ".join(text.split()).casefold()


#: (pid, thread) -> (database file, its (dev, inode, mtime, size), connection):
#: the last connection each thread used, kept for its next search. A new
#: connection re-reads the schema and starts with a cold page cache, which
#: costs more than the query (~4 ms at 100k facts). Reused only while the
#: database file is the same, unchanged file (WAL commits leave it alone;
#: a deleted, replaced or checkpointed index is opened afresh).
_OPEN: dict[tuple[int, int], tuple[str, tuple[int, int, int, int], sqlite3.Connection]] = {}


def _identity(path: str) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)


def _connection(root: str) -> tuple[sqlite3.Connection, bool]:
    """A connection to the index of ``root`` and whether the index was missing."""
    path = db.db_file(root)
    key = (os.getpid(), _thread.get_ident())
    seen = _identity(path)
    cached = _OPEN.pop(key, None)
    if cached is not None:
        if seen is not None and cached[:2] == (path, seen):
            _OPEN[key] = cached
            return cached[2], False
        cached[2].close()
    conn = db.open_db(root)
    return conn, seen is None


def _keep(root: str, conn: sqlite3.Connection) -> None:
    """Remember ``conn`` for this thread's next search (see ``_OPEN``)."""
    path = db.db_file(root)
    key = (os.getpid(), _thread.get_ident())
    old = _OPEN.pop(key, None)
    if old is not None and old[2] is not conn:
        old[2].close()
    seen = _identity(path)
    if seen is None:
        conn.close()
        return
    _OPEN[key] = (path, seen, conn)


def ready_index(root: str) -> tuple[sqlite3.Connection, dict[str, Any]]:
    """An up-to-date index connection and its state for the answer."""
    if not db.writable(root):
        return _read_only_index(root)
    conn, missing = _connection(root)
    try:
        reason = "missing" if missing else db.stale_reason(root) or quick_check(conn, root)
        if reason is None:
            return conn, {"state": "fresh"}
        from pathlib import Path

        from ouro import progress
        from ouro.index.sync import SyncReport, _sync

        label = "building the search index" if missing else "updating the search index"
        try:
            _sync(conn, Path(root), progress.counter(label, "files"), SyncReport())
        except (OuroError, OSError, sqlite3.OperationalError) as exc:
            if missing:
                raise IndexUnavailable(
                    f"could not build the index: {exc}",
                    hint="check that state/index/ is writable, then run 'ouro index rebuild'",
                ) from None
            return conn, {"state": "stale", "reason": f"sync failed: {exc}"}
        return conn, {"state": "fresh"}
    except BaseException:
        _forget(conn)
        raise


#: per process, thread and bundle: the scratch index of a bundle whose index
#: cannot be written (kept up to date from the files by the usual cheap check)
_SCRATCH: dict[tuple[int, int, str], tuple[sqlite3.Connection, str | None]] = {}


def _read_only_index(root: str) -> tuple[sqlite3.Connection, dict[str, Any]]:
    """``state/index/`` cannot be written (a read-only disk, a bundle that is not the
    reader's). The index on disk is read immutable, never synced; when it is missing,
    unreadable, of an older schema or behind the files, the answer comes from the
    files instead -- through a scratch index the same sync fills -- and ``index.note``
    says so.
    Either way the answer is true to the files; nothing is written."""
    from pathlib import Path

    from ouro import progress
    from ouro.index.sync import SyncReport, _sync

    key = (os.getpid(), _thread.get_ident(), root)
    scratch, why = _SCRATCH.get(key, (None, None))
    if scratch is None:
        try:
            disk = db.open_read_only(root)
        except IndexUnavailable as exc:
            disk, why = None, exc.message
        if disk is not None:
            try:
                behind = disk.behind or db.stale_reason(root) or quick_check(disk, root)
                old = disk.execute("PRAGMA user_version").fetchone()[0] < db.SCHEMA_VERSION
            except sqlite3.DatabaseError as exc:
                disk.close()
                disk, why = None, f"the index cannot be read ({exc})"
            else:
                if behind is None and not old:
                    return disk, {"state": "fresh", "readOnly": True}
                why = f"the index is behind the files ({behind or 'an older schema'})"
        try:
            scratch = db.open_scratch(copy_of=disk)
        except (IndexUnavailable, sqlite3.DatabaseError):
            scratch = db.open_scratch()  # a copy that will not take: index the files afresh
        finally:
            if disk is not None:
                disk.close()
        _SCRATCH[key] = (scratch, why)
    elif quick_check(scratch, root) is None:
        return scratch, _read_only_state(root, why)
    label = "indexing the files (read-only bundle, scratch index)"
    try:
        _sync(scratch, Path(root), progress.counter(label, "files"), SyncReport())
    except BaseException:
        _SCRATCH.pop(key, None)
        scratch.close()
        raise
    return scratch, _read_only_state(root, why)


def _read_only_state(root: str, why: str | None) -> dict[str, Any]:
    state: dict[str, Any] = {"state": "fresh", "readOnly": True}
    if why is not None:
        state["note"] = (
            f"{db.read_only_reason(root)} and {why}: this answer comes from the files, "
            "through a scratch index that is never saved"
        )
    return state


def _forget(conn: sqlite3.Connection) -> None:
    key = (os.getpid(), _thread.get_ident())
    if key in _OPEN and _OPEN[key][2] is conn:
        del _OPEN[key]
    for held, (scratch, _why) in list(_SCRATCH.items()):
        if scratch is conn:
            del _SCRATCH[held]
    conn.close()


def _filters(req: Request, doc_id: str = "d.id") -> tuple[list[str], list[Any], bool]:
    """WHERE conditions, their parameters, and whether they read ``docs d``
    columns (the others only need the doc id, spelt ``doc_id``)."""
    where: list[str] = []
    params: list[Any] = []
    kinds = list(dict.fromkeys(req.kinds))
    if req.status is not None:
        kinds = [k for k in kinds if k == "task"] if kinds else ["task"]
        where.append(f"{doc_id} IN (SELECT doc_id FROM tasks WHERE status = ?)")
        params.append(req.status)
    if req.about is not None:
        kinds = [k for k in kinds if k == "fact"] if kinds else ["fact"]
        where.append(f"{doc_id} IN (SELECT fact_doc FROM fact_entities WHERE entity = ?)")
        params.append(normalize_entity(req.about))
    if req.tag is not None:
        where.append(f"{doc_id} IN (SELECT note_doc FROM note_tags WHERE tag = ?)")
        params.append(req.tag.strip())
    needs_docs = bool(kinds) or req.track is not None or req.since is not None
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
        where.append(f"{doc_id} NOT IN (SELECT doc_id FROM facts WHERE superseded = 1)")
    return where, params, needs_docs


_SINCE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?Z?)?$")


def check_since(since: str) -> str:
    """A date (``2026-11-30``) or UTC time (``2026-11-30T09:00Z``); else ``InvalidInput``.

    A value that is neither used to match nothing, silently.
    """
    match = _SINCE.match(since.strip())
    valid = match is not None
    if match is not None:
        import datetime

        try:
            datetime.date(int(match[1]), int(match[2]), int(match[3]))
        except ValueError:
            valid = False
    if not valid:
        raise InvalidInput(
            f"since: {since!r} is not a date",
            hint="write a date such as 2026-11-30 or a UTC time such as 2026-11-30T09:00Z",
        )
    return since.strip().rstrip("Z")  # a prefix of the stored times compares right


def _check(req: Request) -> None:
    # Callers other than the library (the workbench, tests) reach this directly: check here too.
    from ouro.edge import check_text

    for name in ("query", "about", "tag", "track", "status", "since"):
        value = getattr(req, name)
        if isinstance(value, str):
            check_text(value, name)
    if req.since is not None:
        req.since = check_since(req.since)
    req.kinds = [_INTERNAL_KIND.get(k, k) for k in req.kinds]
    unknown = [k for k in req.kinds if k not in KINDS]
    if unknown:
        shown = [PUBLIC_KIND.get(k, k) for k in KINDS]
        raise InvalidInput(
            f"kind: unknown kind {unknown[0]!r}", hint="kinds are: " + ", ".join(shown)
        )
    if req.mode is not None and req.mode not in MODES:
        raise InvalidInput(
            f"mode: {req.mode!r} is not a mode", hint="modes are: " + ", ".join(MODES)
        )
    if not 1 <= req.limit <= MAX_LIMIT:
        raise InvalidInput(
            f"limit: must be 1..{MAX_LIMIT}, got {req.limit}", hint="pass --limit 10"
        )


def _shorten(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _matching(
    conn: sqlite3.Connection, req: Request, match: str, *, count: bool = True
) -> tuple[int, list[dict[str, Any]]]:
    """(total, the first ``req.limit`` results) of the FTS5 matches; with
    ``count=False`` the total is only a lower bound (hybrid does not show it)."""
    where, params, needs_docs = _filters(req, "docs_fts.rowid")
    clause = " AND ".join(["docs_fts MATCH ?", *where])
    # CROSS JOIN keeps the FTS table the outer loop: given a kind filter the
    # planner would otherwise walk every doc of that kind and probe FTS for each.
    join = "CROSS JOIN docs d ON d.id = docs_fts.rowid"
    # ORDER BY rank lets FTS5 sort by itself and compute snippets only for the
    # rows we step through (the join and filters are applied row by row).
    cursor = conn.execute(
        f"SELECT d.locator, d.kind, d.title, d.updated, docs_fts.rank, "
        f"snippet(docs_fts, -1, '**', '**', '…', {SNIPPET_TOKENS}) "
        f"FROM docs_fts {join} WHERE {clause} AND docs_fts.rank MATCH '{_RANK}' "
        "ORDER BY docs_fts.rank",
        [match, *params],
    )
    # Ties are broken by locator (an incremental index and a rebuilt one give
    # the same ids to different docs): take every row tied with the last one.
    picked: list[tuple[Any, ...]] = []
    exhausted = True
    for row in cursor:
        if len(picked) >= req.limit and row[4] != picked[req.limit - 1][4]:
            exhausted = False
            break
        picked.append(row)
    cursor.close()
    if exhausted or not count:
        total = len(picked)
    else:
        # Counting joins docs only when a filter reads it (a join per match costs).
        tables = f"docs_fts {join}" if needs_docs else "docs_fts"
        counting = f"SELECT count(*) FROM {tables} WHERE {clause}"
        total = conn.execute(counting, [match, *params]).fetchone()[0]
    picked.sort(key=lambda r: (r[4], r[0]))
    results = [
        {
            "locator": locator,
            "kind": kind,
            "title": title,
            "snippet": " ".join((snippet or "").split()),
            "score": round(-score, 4),
            "updated": updated,
        }
        for locator, kind, title, updated, score, snippet in picked[: req.limit]
    ]
    return total, results


def _newest(conn: sqlite3.Connection, req: Request) -> tuple[int, list[dict[str, Any]]]:
    where, params, _ = _filters(req)
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


def search(root: str | os.PathLike[str], req: Request) -> dict[str, Any]:
    """Answer ``req`` over the bundle at ``root`` (see module docstring)."""
    _check(req)
    # No query = newest first; any query text must contain words (else InvalidInput).
    match = "" if req.query is None else to_match(req.query)
    top = os.fspath(root)
    try:
        conn, state = ready_index(top)
    except sqlite3.DatabaseError as exc:  # malformed pages found while checking freshness
        raise db.damaged(db.db_file(top), exc) from None
    try:
        mode = resolve_mode(req.mode) if match else "lexical"
        if mode == "lexical":
            total, results = _matching(conn, req, match) if match else _newest(conn, req)
            if req.explain:
                for rank, hit in enumerate(results, 1):
                    hit["ranks"] = {"lexical": rank, "semantic": None}
        else:
            from ouro.index.fusion import by_meaning

            total, results, vectors = by_meaning(conn, top, req, match, mode)
            state = {**state, "mode": mode, "semantic": vectors}
        state = _with_problems(conn, state, "fact" in req.kinds)
    except sqlite3.DatabaseError as exc:
        _forget(conn)
        raise db.damaged(db.db_file(top), exc) from None
    except BaseException:
        _forget(conn)
        raise
    if state.get("readOnly"):
        if isinstance(conn, db.ReadOnlyIndex):  # opened for this answer; scratch ones are kept
            conn.close()
    else:
        _keep(top, conn)
    return {"query": req.query, "total": total, "results": _public(results), "index": state}


#: at most this many unread files, and of facts.jsonl's bad lines, ride along with an answer
PROBLEMS_SHOWN = 10


def _with_problems(conn: sqlite3.Connection, state: dict[str, Any], facts: bool) -> dict[str, Any]:
    """``state`` with what the answer left out (``problems``, the first
    ``PROBLEMS_SHOWN`` of each sort): every file the index could not read
    at all (``locator: reason``: behind a symlink, a FIFO, past the size limit),
    so "0 results" never passes an unread file off as an empty one; and, for an
    answer about facts, facts.jsonl's lines that could not be read
    (``locator:line: reason``), never a torn or bad line passed over."""
    rows = conn.execute(
        "SELECT file, reason FROM problems WHERE line = 0 AND file NOT IN "
        "(SELECT locator FROM files) ORDER BY file LIMIT ?",
        (PROBLEMS_SHOWN,),
    ).fetchall()
    problems = [f"{file}: {reason}" for file, reason in rows]
    if facts:
        rows = conn.execute(
            "SELECT line, reason FROM problems WHERE file = ? AND line > 0 ORDER BY line LIMIT ?",
            (FACTS, PROBLEMS_SHOWN),
        ).fetchall()
        problems += [f"{FACTS}:{line}: {reason}" for line, reason in rows]
    return {**state, "problems": problems} if problems else state


def search_readonly(root: str | os.PathLike[str], req: Request) -> dict[str, Any]:
    """``search`` for viewers that must write nothing, not even ``state/index/``.

    The index is opened immutable (no lock files, no sync). A missing index
    answers nothing with ``index.state = "missing"``; one that the cheap check
    finds behind the files answers as it is, with ``state = "stale"`` and the
    reason, so the viewer can say "run 'ouro index sync'".
    """
    _check(req)
    match = "" if req.query is None else to_match(req.query)
    top = os.fspath(root)
    path = db.db_file(top)
    if not os.path.isfile(path):
        return {"query": req.query, "total": 0, "results": [], "index": {"state": "missing"}}
    from pathlib import Path

    conn = sqlite3.connect(f"{Path(path).as_uri()}?mode=ro&immutable=1", uri=True)
    try:
        reason = db.stale_reason(top) or quick_check(conn, top)
        total, results = _matching(conn, req, match) if match else _newest(conn, req)
    except sqlite3.DatabaseError as exc:
        raise IndexUnavailable(
            f"the index {path} cannot be read ({exc})", hint="run 'ouro index rebuild'"
        ) from None
    finally:
        conn.close()
    state = {"state": "fresh"} if reason is None else {"state": "stale", "reason": reason}
    return {"query": req.query, "total": total, "results": _public(results), "index": state}


def _public(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each hit's kind by its public name (a tip is a lesson)."""
    for hit in results:
        hit["kind"] = PUBLIC_KIND.get(hit["kind"], hit["kind"])
    return results


# --- the four tools, as plain functions of the bundle root ---------------------


def desk_search(root: str | os.PathLike[str], query: str | None = None, kinds: list[str] | None = None,
                track: str | None = None, status: str | None = None,
                limit: int = 10, mode: str | None = "lexical",
                explain: bool = False) -> dict[str, Any]:  # fmt: skip
    return search(root, Request(query, kinds or [], track=track, status=status, limit=limit,
                                mode=mode, explain=explain))  # fmt: skip


def consult_diary(root: str | os.PathLike[str], query: str | None = None, about: str | None = None,
                  since: str | None = None, history: bool = False,
                  limit: int = 10, mode: str | None = "lexical",
                  explain: bool = False) -> dict[str, Any]:  # fmt: skip
    return search(
        root,
        Request(
            query,
            ["fact", "daily"],
            about=about,
            since=since,
            history=history,
            limit=limit,
            mode=mode,
            explain=explain,
        ),
    )


def search_facts(root: str | os.PathLike[str], query: str | None = None, about: str | None = None,
                 limit: int = 10, mode: str | None = "lexical",
                 explain: bool = False) -> dict[str, Any]:  # fmt: skip
    return search(root, Request(query, ["fact"], about=about, limit=limit, mode=mode,
                                explain=explain))  # fmt: skip


def consult_notes(root: str | os.PathLike[str], query: str | None = None, tag: str | None = None,
                  limit: int = 10, mode: str | None = "lexical",
                  explain: bool = False) -> dict[str, Any]:  # fmt: skip
    return search(root, Request(query, ["note"], tag=tag, limit=limit, mode=mode,
                                explain=explain))  # fmt: skip
