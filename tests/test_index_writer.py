"""The write-through's kept connection (``db.take_writer``): a long-lived process
(``ouro mcp``) opens the index once, and never writes through it to a file that
is no longer the bundle's index."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path

import orjson
import pytest

from ouro import api as tools
from ouro.bundle import Bundle
from ouro.index import db
from ouro.index.fresh import FACTS
from ouro.index.search import search_facts
from ouro.index.sync import rebuild, status, sync
from tests.conftest import run_ouro
from tests.index_support import dump_index


def _write(bundle: Bundle, word: str) -> None:
    tools.call(
        "diary_write",
        bundle,
        {"text": f"the marker {word} was written", "about": ["m"], "force": True},
    )


def _facts_in(path: Path) -> set[str]:
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        return {text for (text,) in conn.execute("SELECT title FROM docs WHERE kind = 'fact'")}
    finally:
        conn.close()


def _kept(bundle: Bundle) -> sqlite3.Connection | None:
    entry = db._WRITERS.get(os.fspath(bundle.root))
    return None if entry is None else entry[2]


def _exact(bundle: Bundle) -> None:
    """The index holds every line of facts.jsonl, as a rebuild would."""
    lines = (bundle.root / FACTS).read_bytes().splitlines()
    conn = db.open_db(bundle.root)
    try:
        indexed = conn.execute("SELECT count(*) FROM facts").fetchone()[0]
    finally:
        conn.close()
    assert indexed == len(lines)
    before = dump_index(bundle)
    rebuild(bundle)
    assert dump_index(bundle) == before


def test_the_connection_is_kept_between_writes(bundle: Bundle) -> None:
    sync(bundle)
    _write(bundle, "alpha")
    first = _kept(bundle)
    assert first is not None and not first.in_transaction
    _write(bundle, "beta")
    assert _kept(bundle) is first  # not reopened
    assert search_facts(bundle.root, "beta")["total"] == 1
    _exact(bundle)


def test_a_rebuild_that_replaces_the_file_between_two_writes_is_seen(bundle: Bundle) -> None:
    sync(bundle)
    _write(bundle, "alpha")
    old = _kept(bundle)
    assert old is not None
    aside = bundle.root / "state" / "index.old"
    os.rename(bundle.index_dir, aside)  # behind this process's back: nothing forgets it
    rebuild(bundle)
    _write(bundle, "beta")
    new_file = db.db_path(bundle.root)
    assert any("beta" in t for t in _facts_in(new_file))
    assert not any("beta" in t for t in _facts_in(aside / db.DB_NAME))  # not the old file
    assert _kept(bundle) is not old
    assert search_facts(bundle.root, "beta")["total"] == 1
    _exact(bundle)


def test_a_deleted_index_is_not_written_through_the_kept_connection(bundle: Bundle) -> None:
    sync(bundle)
    _write(bundle, "alpha")
    shutil.rmtree(bundle.index_dir)
    _write(bundle, "beta")  # no index: nothing happens, the next search builds it
    assert not db.db_path(bundle.root).exists()
    assert _kept(bundle) is None
    assert search_facts(bundle.root, "beta")["total"] == 1


def test_a_file_rewritten_in_place_is_opened_again(bundle: Bundle) -> None:
    sync(bundle)
    _write(bundle, "alpha")
    db.db_path(bundle.root).write_bytes(b"garbage")
    _write(bundle, "beta")
    assert status(bundle)["state"] == "unavailable"
    assert "write-through" in db.stale_marker(bundle.root).read_text()


def test_write_through_is_exact_after_a_rebuild_by_another_process(bundle: Bundle) -> None:
    sync(bundle)
    _write(bundle, "alpha")
    kept = _kept(bundle)
    run_ouro("index", "rebuild", bundle=bundle, process=True, check=True)  # in place
    _write(bundle, "beta")
    assert _kept(bundle) is kept
    shutil.rmtree(bundle.index_dir)  # and a rebuild into a new file
    run_ouro("index", "rebuild", bundle=bundle, process=True, check=True)
    _write(bundle, "gamma")
    assert _kept(bundle) is not kept
    texts = _facts_in(db.db_path(bundle.root))
    assert {w for w in ("alpha", "beta", "gamma") if any(w in t for t in texts)} == {
        "alpha",
        "beta",
        "gamma",
    }
    assert not db.stale_marker(bundle.root).exists()
    _exact(bundle)


def test_a_symlinked_index_folder_is_refused_even_with_a_kept_connection(
    bundle: Bundle, tmp_path: Path
) -> None:
    sync(bundle)
    _write(bundle, "alpha")
    outside = tmp_path / "elsewhere"
    os.rename(bundle.index_dir, outside)  # the very same files, now outside the bundle
    os.symlink(outside, bundle.index_dir)
    _write(bundle, "beta")
    assert not any("beta" in t for t in _facts_in(outside / db.DB_NAME))
    assert _kept(bundle) is None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork")
def test_a_forked_child_does_not_use_the_parents_connection(bundle: Bundle) -> None:
    sync(bundle)
    _write(bundle, "alpha")
    parent = _kept(bundle)
    assert parent is not None
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        code = 1
        try:
            _write(bundle, "beta")
            entry = db._WRITERS.get(os.fspath(bundle.root))
            ok = entry is not None and entry[0] == os.getpid() and entry[2] is not parent
            os.write(write, orjson.dumps({"ok": ok, "orphaned": parent in db._ORPHANS}))
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as handle:
        answer = orjson.loads(handle.read())
    assert os.waitpid(pid, 0)[1] == 0
    assert answer == {"ok": True, "orphaned": True}
    _write(bundle, "gamma")
    assert _kept(bundle) is parent  # the parent's own, still good
    _exact(bundle)
