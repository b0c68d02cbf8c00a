"""What state is the index in? Read-only, standard library only.

``index_status(root)`` never creates the database and writes nothing: when
the write-ahead log is absent it opens the file ``immutable`` (so SQLite does
not create ``-wal``/``-shm`` files either).

States: ``missing`` (no database yet), ``stale`` (a write-through failed, the
index was never synced, or files changed since the last sync), ``fresh``, and
``unavailable`` (a foreign, newer or unreadable database; the reason says which).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from ouro.errors import IndexUnavailable
from ouro.index import db
from ouro.index.fresh import quick_check

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any

DOC_KINDS = ("task", "track", "iteration", "friction", "tip", "note", "daily", "fact")


def open_readonly(root: Path) -> sqlite3.Connection:
    """The index, opened without writing a byte (``ouro.index.db.open_read_only``)."""
    return db.open_read_only(root)


def index_status(root: str | Path) -> dict[str, Any]:
    base = Path(root)
    locator = "state/index/" + db.DB_NAME
    # A bundle whose index cannot be written (a read-only disk): say so, and what
    # searches do there, rather than "the next search builds it".
    read_only = None if db.writable(base) else db.read_only_reason(base)
    if not db.db_path(base).is_file():
        result: dict[str, Any] = {
            "state": "missing",
            "reason": "no index has been built yet; the next search builds it"
            if read_only is None
            else f"no index here, and {read_only}: none can be built on it; searches answer "
            "from the files, through a scratch index that is never saved",
            "path": locator,
            "counts": {},
            "lastSync": None,
        }
        return result if read_only is None else {**result, "readOnly": True}
    result = _status_of(base, locator)
    if read_only is not None:
        result["readOnly"] = True
        if result["state"] in ("stale", "unavailable"):
            result["reason"] += (
                f"; {read_only}: searches answer from the files, through a scratch index that is never saved"
            )
        if result["state"] == "unavailable" and not db.can_move_aside(base):
            result["hint"] = (
                "to rebuild the index, remount the disk read-write or work on a writable "
                "copy of the bundle"
            )
    return result


def _doc_counts(conn: sqlite3.Connection) -> list[tuple[str, int]]:
    """Docs per kind: the rows the writer keeps (``doc_counts``, schema 6), or, on
    an older index no write has migrated yet (a read never migrates), counted."""
    try:
        rows: list[tuple[str, int]] = conn.execute(
            "SELECT kind, n FROM doc_counts WHERE n <> 0"
        ).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" not in str(exc):
            raise
        rows = conn.execute("SELECT kind, count(*) FROM docs GROUP BY kind").fetchall()
    return rows


def _status_of(base: Path, locator: str) -> dict[str, Any]:
    try:
        conn = open_readonly(base)
    except IndexUnavailable as exc:
        return {
            "state": "unavailable",
            "reason": exc.message,
            "hint": exc.hint,
            "path": locator,
            "counts": {},
            "lastSync": None,
        }
    try:
        counts = dict.fromkeys(DOC_KINDS, 0)
        counts.update(_doc_counts(conn))
        counts["supersededFacts"] = conn.execute(
            "SELECT count(*) FROM facts WHERE superseded = 1"
        ).fetchone()[0]
        counts["files"] = conn.execute("SELECT count(*) FROM files").fetchone()[0]
        problems = conn.execute("SELECT count(*) FROM problems").fetchone()[0]
        row = conn.execute("SELECT value FROM meta WHERE key = 'lastSync'").fetchone()
        last_sync = row[0] if row else None
        reason = getattr(conn, "behind", None) or db.stale_reason(base)
        if reason is None and last_sync is None:
            reason = "the index has never finished a sync"
        if reason is None:
            reason = quick_check(conn, os.fspath(base))
    except sqlite3.DatabaseError as exc:
        return {
            "state": "unavailable",
            "reason": f"{locator} cannot be read ({exc})",
            "hint": "run 'ouro index rebuild'",
            "path": locator,
            "counts": {},
            "lastSync": None,
        }
    finally:
        conn.close()
    result: dict[str, Any] = {
        "state": "stale" if reason else "fresh",
        "path": locator,
        "counts": counts,
        "problems": problems,
        "lastSync": last_sync,
    }
    if reason:
        result["reason"] = reason
    return result
