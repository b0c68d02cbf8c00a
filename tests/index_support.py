"""Helpers for the index and search tests: dump every table, write Desk files
directly in the docs/record.md formats (as an outside editor would)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import orjson

from ouro.bundle import Bundle
from ouro.index.db import db_path

#: tables whose rows hang off docs.id; compared by the doc's locator instead
_DOC_TABLES = {
    "tracks": "doc_id",
    "tasks": "doc_id",
    "iterations": "doc_id",
    "friction": "doc_id",
    "tips": "doc_id",
    "notes": "doc_id",
    "daily": "doc_id",
    "facts": "doc_id",
    "fact_entities": "fact_doc",
    "note_tags": "note_doc",
}


def dump_index(bundle: Bundle) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, ids replaced by locators, sync bookkeeping left out."""
    conn = sqlite3.connect(db_path(bundle.root))
    try:
        loc = dict(conn.execute("SELECT id, locator FROM docs").fetchall())
        out: dict[str, list[tuple[Any, ...]]] = {}
        out["docs"] = sorted(
            conn.execute("SELECT locator, file, kind, title, updated, track FROM docs").fetchall()
        )
        out["fts"] = sorted(
            (loc[r[0]], *r[1:])
            for r in conn.execute("SELECT rowid, title, body, keys FROM docs_fts")
        )
        for table, key in _DOC_TABLES.items():
            cols = [c[1] for c in conn.execute(f"PRAGMA table_info({table})") if c[1] != key]
            rows = conn.execute(f"SELECT {key}, {', '.join(cols)} FROM {table}").fetchall()
            out[table] = sorted((loc[r[0]], *r[1:]) for r in rows)
        out["files"] = sorted(
            (loc, kind, size, _same_any_time(digest), indexed, lines)
            for loc, kind, size, digest, indexed, lines in conn.execute(
                "SELECT locator, kind, size, hash, indexed_bytes, lines FROM files"
            )
        )
        out["problems"] = sorted(conn.execute("SELECT file, line, reason FROM problems"))
        return out
    finally:
        conn.close()


def write_note(bundle: Bundle, slug: str, title: str, body: str, tags: list[str] = ()) -> Path:  # type: ignore[assignment]
    path = bundle.record / "notes" / f"{slug}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    tag_text = "[" + ", ".join(tags) + "]"
    path.write_text(
        f"---\ntitle: {title}\ntags: {tag_text}\ncreated: 2026-01-01T00:00:00.000Z\n"
        f"updated: 2026-01-01T00:00:00.000Z\n---\n{body}\n",
        encoding="utf-8",
    )
    return path


def write_task(bundle: Bundle, track: str, slug: str, title: str, body: str,
               status: str = "open") -> Path:  # fmt: skip
    folder = bundle.desk / track / slug
    folder.mkdir(parents=True, exist_ok=True)
    (bundle.desk / track / "track.md").write_text(
        f"---\nname: {track}\ntitle: {track}\ncreated: 2026-01-01T00:00:00.000Z\n---\n"
    )
    path = folder / "task.md"
    path.write_text(
        f"---\nid: t-{slug}\ntitle: {title}\nstatus: {status}\npriority: 2\ntrack: {track}\n"
        "created: 2026-01-01T00:00:00.000Z\nupdated: 2026-01-02T00:00:00.000Z\n"
        f"heldBy: null\nleaseUntil: null\nacceptance: null\ncheck: null\n---\n{body}\n"
    )
    return path


def append_fact(bundle: Bundle, fact_id: str, text: str, about: list[str] = (),  # type: ignore[assignment]
                supersedes: str | None = None, created: str = "2026-01-01T00:00:00.000Z") -> None:  # fmt: skip
    record: dict[str, Any] = {
        "schemaVersion": 1,
        "id": fact_id,
        "text": text,
        "about": list(about),
        "source": None,
        "createdAt": created,
        "provenance": {
            "tool": "test",
            "channel": None,
            "friendId": None,
            "friendName": None,
            "trust": None,
        },
        "hash": "sha256:x",
    }
    if supersedes:
        record["supersedes"] = supersedes
    path = bundle.record / "diary" / "facts.jsonl"
    with path.open("ab") as handle:
        handle.write(orjson.dumps(record) + b"\n")


def _same_any_time(digest: object) -> object:
    """facts.jsonl's cursor without whether its stamp was taken in the racy window
    (that depends on when the sync ran, not on what it indexed)."""
    from ouro.store import cursor as cursors

    cur = cursors.parse(digest)
    return digest if cur is None else (cur.offset, cur.inode, cur.stamp, cur.tail)
