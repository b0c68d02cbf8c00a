"""The index database: migrations, identity checks, purity of status."""

from __future__ import annotations

import json
import sqlite3

import pytest

from ouro.bundle import Bundle
from ouro.errors import IndexUnavailable
from ouro.index import db
from ouro.index.search import desk_search
from ouro.index.sync import status, sync, touch_paths
from tests.conftest import ouro_json, run_ouro, snapshot
from tests.index_support import write_note


def test_migrations_are_recorded_with_identity(bundle: Bundle) -> None:
    sync(bundle)
    conn = sqlite3.connect(db.db_path(bundle.root))
    assert conn.execute("PRAGMA application_id").fetchone()[0] == db.APPLICATION_ID
    assert conn.execute("PRAGMA user_version").fetchone()[0] == db.latest_version()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    rows = conn.execute("SELECT version, name FROM schema_migrations").fetchall()
    assert rows == [
        (1, "0001_initial.sql"),
        (2, "0002_fact_text_once.sql"),
        (3, "0003_fact_columns_read.sql"),
        (4, "0004_docs_file_without_facts.sql"),
        (5, "0005_entities_derived_once.sql"),
        (6, "0006_doc_counts.sql"),
    ]
    conn.close()
    sync(bundle)  # reopening does not re-apply
    conn = sqlite3.connect(db.db_path(bundle.root))
    assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == 6


def _foreign(bundle: Bundle, app_id: int, version: int = 0) -> bytes:
    path = db.db_path(bundle.root)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE theirs (x)")
    conn.execute("INSERT INTO theirs VALUES ('precious')")
    conn.execute(f"PRAGMA application_id = {app_id}")
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()
    conn.close()
    return path.read_bytes()


@pytest.mark.parametrize(
    ("app_id", "version", "words"),
    [
        (0, 0, "another application"),
        (0x1234, 1, "another application"),
        (db.APPLICATION_ID, 99, "newer"),
    ],
)
def test_foreign_or_newer_database_is_refused_and_kept(
    bundle: Bundle, app_id: int, version: int, words: str
) -> None:
    before = _foreign(bundle, app_id, version)
    with pytest.raises(IndexUnavailable, match=words):
        sync(bundle)
    with pytest.raises(IndexUnavailable, match=words):
        desk_search(bundle.root, "anything")
    touch_paths(bundle, [bundle.record / "notes" / "x.md"])  # never raises: marks stale
    assert db.db_path(bundle.root).read_bytes() == before
    assert status(bundle)["state"] == "unavailable"
    assert db.stale_marker(bundle.root).exists()
    # rebuild never overwrites it: it moves the whole folder aside, then builds anew
    proc = run_ouro("index", "rebuild", "--json", bundle=bundle)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    moved = bundle.root / json.loads(proc.stdout)["movedAside"]
    assert (moved / db.DB_NAME).read_bytes() == before
    assert status(bundle)["state"] in ("fresh", "stale")


def test_garbage_file_is_refused_and_kept(bundle: Bundle) -> None:
    path = db.db_path(bundle.root)
    path.write_bytes(b"not a database at all" * 100)
    with pytest.raises(IndexUnavailable, match="not a readable SQLite database"):
        sync(bundle)
    assert path.read_bytes() == b"not a database at all" * 100


def test_status_is_pure_when_missing(bundle: Bundle) -> None:
    before = snapshot(bundle.root)
    result = status(bundle)
    assert result["state"] == "missing"
    assert ouro_json("index", "status", bundle=bundle)["state"] == "missing"
    assert ouro_json("info", bundle=bundle)["index"]["state"] == "missing"
    assert snapshot(bundle.root) == before
    assert not db.db_path(bundle.root).exists()


def test_status_is_pure_when_present_and_sees_changes(bundle: Bundle) -> None:
    write_note(bundle, "a", "Alpha", "first body")
    sync(bundle)
    sync(bundle)  # settle racy folders
    before = snapshot(bundle.root)
    result = status(bundle)
    assert snapshot(bundle.root) == before
    assert result["counts"]["note"] == 1
    assert result["lastSync"]
    write_note(bundle, "b", "Beta", "second body")
    assert status(bundle)["state"] == "stale"
    sync(bundle)
    db.mark_stale(bundle.root, "write-through failed: test")
    after = status(bundle)
    assert after["state"] == "stale" and "test" in after["reason"]
    sync(bundle)
    assert not db.stale_marker(bundle.root).exists()


#: the facts columns schema 3 dropped (migrations/index/0003_fact_columns_read.sql)
_PROVENANCE = (
    "friend_name",
    "created_at",
    "source",
    "tool",
    "channel",
    "friend_id",
    "trust",
    "hash",
)


@pytest.mark.parametrize("old", [1, 2])
def test_older_index_is_migrated_in_place_with_the_same_answers(bundle: Bundle, old: int) -> None:
    """An index written by an older ouro is migrated on open: schema 1 stored the
    fact text twice (0002 drops facts.text), schemas 1 and 2 kept a second copy
    of each fact id and provenance columns nothing read (0003 drops them);
    0005 drops the index's second derivation of entities; every answer stays the same."""
    from ouro import api as tools
    from tests.index_support import dump_index

    tools.call("diary_write", bundle, {"text": "the deploy key rotates monthly", "about": ["ops"]})
    write_note(bundle, "keys", "Signing keys", "how we change signing keys", tags=["sec"])
    sync(bundle)
    expected = dump_index(bundle)
    answers = desk_search(bundle.root, "keys")["results"]
    # Turn it back into the old schema: its columns back in facts, filled, its version.
    conn = sqlite3.connect(db.db_path(bundle.root), isolation_level=None)
    for column in _PROVENANCE:
        conn.execute(f"ALTER TABLE facts ADD COLUMN {column} TEXT")
        conn.execute(f"UPDATE facts SET {column} = 'old {column}'")
    conn.execute("DROP INDEX docs_file")
    conn.execute("CREATE INDEX docs_file ON docs(file)")  # with the facts, as before 0004
    conn.execute("ALTER TABLE facts ADD COLUMN id TEXT")
    conn.execute(
        "UPDATE facts SET id = "
        "(SELECT substr(locator, instr(locator, '#') + 1) FROM docs WHERE docs.id = doc_id)"
    )
    conn.execute("DROP TABLE doc_counts")  # before 0006 docs were counted on each status
    # before 0005 the index derived entities a second time
    conn.execute("CREATE TABLE entities (name TEXT PRIMARY KEY, count INTEGER, last_seen_at TEXT)")
    if old == 1:
        conn.execute("ALTER TABLE facts ADD COLUMN text TEXT NOT NULL DEFAULT ''")
        conn.execute("UPDATE facts SET text = (SELECT body FROM docs_fts WHERE rowid = doc_id)")
    conn.execute("DELETE FROM schema_migrations WHERE version > ?", (old,))
    conn.execute(f"PRAGMA user_version = {old}")
    conn.close()
    sync(bundle)  # opens, migrates, finds nothing changed
    conn = sqlite3.connect(db.db_path(bundle.root))
    columns = [r[1] for r in conn.execute("PRAGMA table_info(facts)")]
    assert columns == ["doc_id", "line", "supersedes", "superseded"]
    assert conn.execute("PRAGMA user_version").fetchone()[0] == db.latest_version() == 6
    assert [r[0] for r in conn.execute("SELECT version FROM schema_migrations")] == [
        1,
        2,
        3,
        4,
        5,
        6,
    ]
    assert conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'entities'").fetchone() is None
    (index_sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'docs_file'").fetchone()
    assert "WHERE kind <> 'fact'" in index_sql
    conn.close()
    assert dump_index(bundle) == expected
    assert desk_search(bundle.root, "keys")["results"] == answers
    # and a rebuild of the migrated index gives the same rows again
    run = run_ouro("index", "rebuild", "--json", bundle=bundle)
    assert run.returncode == 0, run.stderr
    assert dump_index(bundle) == expected


def test_a_file_s_docs_are_found_through_the_partial_docs_file_index(bundle: Bundle) -> None:
    """docs_file leaves out the facts (schema 4); re-indexing one file still
    finds its docs through it, and the facts through docs_kind_updated."""
    from ouro.index import apply

    write_note(bundle, "keys", "Signing keys", "how we change signing keys")
    sync(bundle)
    conn = sqlite3.connect(db.db_path(bundle.root))
    plan = conn.execute(
        f"EXPLAIN QUERY PLAN SELECT id FROM docs WHERE {apply._OF_FILE}", ("x",)
    ).fetchall()
    assert "USING INDEX docs_file" in str(plan)
    plan = conn.execute("EXPLAIN QUERY PLAN SELECT id FROM docs WHERE kind = 'fact'").fetchall()
    assert "docs_kind_updated" in str(plan)
    conn.close()


def test_doc_counts_kept_with_the_docs_equal_a_count(bundle: Bundle) -> None:
    """0006: the writer keeps docs per kind in the transaction that changes them;
    ``ouro index status`` reads those rows, and they always equal a real count
    (notes written, rewritten and removed, facts appended, a rebuild)."""
    from ouro import api as tools
    from ouro.index.state import index_status
    from ouro.index.sync import rebuild

    def kept() -> dict[str, int]:
        conn = sqlite3.connect(db.db_path(bundle.root))
        try:
            rows = conn.execute("SELECT kind, n FROM doc_counts WHERE n <> 0").fetchall()
            real = conn.execute("SELECT kind, count(*) FROM docs GROUP BY kind").fetchall()
        finally:
            conn.close()
        assert dict(rows) == dict(real)
        return dict(rows)

    for n in range(3):
        text = ("the deploy key rotates monthly", "lunch is at noon", "backups run nightly")[n]
        tools.call("diary_write", bundle, {"text": text, "about": ["ops"]})
    write_note(bundle, "keys", "Signing keys", "how we change signing keys", tags=["sec"])
    write_note(bundle, "rota", "Rota", "who is on call", tags=[])
    sync(bundle)
    assert kept()["note"] == 2 and kept()["fact"] == 3
    write_note(bundle, "keys", "Signing keys", "how we change them now", tags=["sec"])
    (bundle.root / "desk/_record/notes/rota.md").unlink()
    sync(bundle)
    assert kept()["note"] == 1
    assert index_status(bundle.root)["counts"]["note"] == 1
    rebuild(bundle)
    assert kept()["note"] == 1 and kept()["fact"] == 3


_FIRST_OPEN = """
import sys, time
from ouro.index import db
start = float(sys.argv[2])
while time.time() < start:
    pass
db.open_db(sys.argv[1]).close()
print("ok")
"""


def test_processes_creating_the_index_at_once_all_open_it(bundle: Bundle) -> None:
    """Real processes opening a bundle's index at the same moment, while one of
    them creates it: none may take the half-made index for a foreign one."""
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    repo = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(repo)}
    path = Path(db.db_file(bundle.root))
    for _round in range(6):
        for leftover in path.parent.glob(path.name + "*"):
            leftover.unlink()
        start = str(time.time() + 0.6)
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _FIRST_OPEN, str(bundle.root), start],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
            )
            for _ in range(6)
        ]
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0 and out.strip() == "ok", err[-1500:]
        conn = sqlite3.connect(path)
        assert conn.execute("PRAGMA application_id").fetchone()[0] == db.APPLICATION_ID
        conn.close()
