"""Any damage to state/index/ is recoverable: reads answer or name 'ouro index
rebuild', writes stand (the index is marked stale), and rebuild always works by
moving the damaged index aside. Read-only and immutable cases use a real
``chattr +i`` (root on a file system that supports it; skipped otherwise)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ouro.api import call as invoke
from ouro.bundle import Bundle
from ouro.errors import OuroError
from ouro.index import db


def _chattr(flag: str, path: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("chattr") is None:
        return False
    return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0


def _index(bundle: Bundle) -> Path:
    return bundle.index_dir


def missing(bundle: Bundle) -> None:
    shutil.rmtree(_index(bundle))


def truncated(bundle: Bundle) -> None:
    path = db.db_path(bundle.root)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    for extra in ("-wal", "-shm"):
        Path(str(path) + extra).unlink(missing_ok=True)


def random_bytes(bundle: Bundle) -> None:
    path = db.db_path(bundle.root)
    path.write_bytes(os.urandom(50_000))
    for extra in ("-wal", "-shm"):
        Path(str(path) + extra).unlink(missing_ok=True)


def folder_for_db(bundle: Bundle) -> None:
    path = db.db_path(bundle.root)
    for extra in ("", "-wal", "-shm"):
        Path(str(path) + extra).unlink(missing_ok=True)
    path.mkdir()
    (path / "x").write_text("x")


def folder_for_stale(bundle: Bundle) -> None:
    marker = db.stale_marker(bundle.root)
    marker.unlink(missing_ok=True)
    marker.mkdir()


def foreign(bundle: Bundle) -> None:
    path = db.db_path(bundle.root)
    for extra in ("", "-wal", "-shm"):
        Path(str(path) + extra).unlink(missing_ok=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE photos (id INTEGER)")
    conn.commit()
    conn.close()


def newer(bundle: Bundle) -> None:
    conn = sqlite3.connect(db.db_path(bundle.root))
    conn.execute(f"PRAGMA user_version = {db.SCHEMA_VERSION + 5}")
    conn.commit()
    conn.close()


def read_only_folder(bundle: Bundle) -> None:
    invoke("diary_write", bundle, {"text": "written before the folder froze", "about": ["x"]})
    if not _chattr("+i", _index(bundle)):
        pytest.skip("chattr +i needs root on a file system that supports it")


def immutable_db(bundle: Bundle) -> None:
    invoke("diary_write", bundle, {"text": "written before the file froze", "about": ["x"]})
    conn = sqlite3.connect(db.db_path(bundle.root))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    if not _chattr("+i", db.db_path(bundle.root)):
        pytest.skip("chattr +i needs root on a file system that supports it")


DAMAGE: list[Callable[[Bundle], None]] = [
    missing,
    truncated,
    random_bytes,
    folder_for_db,
    folder_for_stale,
    foreign,
    newer,
    read_only_folder,
    immutable_db,
]


@pytest.fixture
def indexed(bundle: Bundle) -> Iterator[Bundle]:
    invoke("diary_write", bundle, {"text": "the parser lives in src/parse", "about": ["parser"]})
    invoke("notes_write", bundle, {"title": "Releases", "body": "tag then push the parser\n"})
    invoke("desk_search", bundle, {"query": "parser"})  # builds the index
    yield bundle
    subprocess.run(["chattr", "-R", "-i", str(bundle.root / "state")], capture_output=True)


def _answer(bundle: Bundle) -> list[str]:
    # lexical: the fact written below is near "parser" by meaning (hybrid would add it)
    found = invoke("desk_search", bundle, {"query": "parser", "mode": "lexical"})
    return sorted(r["locator"] for r in found["results"])


@pytest.mark.parametrize("damage", DAMAGE, ids=lambda f: f.__name__)
def test_damaged_index_is_recoverable(indexed: Bundle, damage: Callable[[Bundle], None]) -> None:
    expected = _answer(indexed)
    damage(indexed)
    # reads: an answer, or an error that names the repair
    for tool, args in (
        ("desk_search", {"query": "parser"}),
        ("consult_diary", {"query": "parser"}),
        ("consult_notes", {"query": "releases"}),
        ("info", {}),
    ):
        try:
            invoke(tool, indexed, args)
        except OuroError as exc:
            assert "ouro index rebuild" in str(exc), (tool, str(exc))
    # writes stand; the index may be marked stale
    written = invoke("diary_write", indexed, {"text": "the lexer is in src/lex", "about": ["lex"]})
    assert written["fact"]["id"]
    # status says something, never crashes
    from ouro.index.sync import rebuild, status, sync

    assert status(indexed)["state"]
    try:
        sync(indexed)
    except OuroError as exc:
        assert "ouro index rebuild" in str(exc)
    # rebuild always succeeds and answers as a fresh index does
    report = rebuild(indexed)
    assert report.to_json()["state"]
    assert _answer(indexed) == sorted({*expected})
    assert status(indexed)["state"] in ("fresh", "stale"), status(indexed)  # stale: racy mtimes


def test_rebuild_keeps_the_damaged_index_aside(indexed: Bundle) -> None:
    random_bytes(indexed)
    garbage = db.db_path(indexed.root).read_bytes()
    from ouro.index.sync import rebuild

    report = rebuild(indexed).to_json()
    aside = indexed.root / report["movedAside"]
    assert (aside / db.DB_NAME).read_bytes() == garbage
    assert _answer(indexed)  # the new index answers
    assert report["movedAside"].startswith("state/index.damaged-")


def test_a_write_that_cannot_refresh_the_index_says_so(indexed: Bundle) -> None:
    foreign(indexed)
    result = invoke("diary_reflect", indexed, {"text": "the index is foreign today"})
    assert any("search index is stale" in w for w in result["warnings"]), result
    assert db.stale_reason(indexed.root)


def test_an_index_folder_symlinked_out_of_the_bundle_is_never_written(
    indexed: Bundle, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    shutil.move(str(_index(indexed)), str(outside))
    os.symlink(outside, _index(indexed))
    before = {p.name: p.read_bytes() for p in outside.iterdir() if p.is_file()}
    import sys

    proc = subprocess.run(  # a fresh process: no connection cached from before the move
        [sys.executable, "-m", "ouro.cli", "--bundle", str(indexed.root), "desk", "search", "x"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1 and "outside the bundle" in proc.stderr, proc.stderr
    invoke("diary_write", indexed, {"text": "written while the index is away", "about": ["x"]})
    after = {p.name: p.read_bytes() for p in outside.iterdir() if p.is_file()}
    assert after == before
    from ouro.index.sync import rebuild

    report = rebuild(indexed).to_json()  # the symlink is moved aside, not followed
    assert report["movedAside"] and _answer(indexed)
    assert {p.name: p.read_bytes() for p in outside.iterdir() if p.is_file()} == before
