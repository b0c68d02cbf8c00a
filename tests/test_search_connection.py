"""Search keeps one index connection per process and thread between calls; it
must never answer from a database that was deleted, replaced or overwritten."""

from __future__ import annotations

import shutil
import threading
from typing import Any

import pytest

from ouro.bundle import Bundle
from ouro.errors import IndexUnavailable
from ouro.index import db, search
from ouro.index.search import desk_search
from ouro.index.sync import sync
from tests.conftest import run_ouro
from tests.index_support import write_note


@pytest.fixture
def noted(bundle: Bundle) -> Bundle:
    write_note(bundle, "a", "Alpha", "walrus words")
    sync(bundle)
    return bundle


def _cached() -> list[Any]:
    return [entry[2] for entry in search._OPEN.values()]


def test_the_connection_is_reused_and_sees_other_processes_writes(noted: Bundle) -> None:
    assert desk_search(noted.root, "walrus")["total"] == 1
    first = _cached()
    run_ouro("notes", "write", "Beta", "--body-file", "-", input="walrus again", bundle=noted,
             check=True)  # fmt: skip
    assert desk_search(noted.root, "walrus")["total"] == 2  # the other process's write-through
    assert any(conn in first for conn in _cached())


def test_a_deleted_index_is_rebuilt_not_read_through_an_old_handle(noted: Bundle) -> None:
    before = desk_search(noted.root, "walrus")
    shutil.rmtree(noted.index_dir)
    assert desk_search(noted.root, "walrus") == before
    assert db.db_path(noted.root).is_file()


def test_an_overwritten_index_is_refused_cleanly(noted: Bundle) -> None:
    desk_search(noted.root, "walrus")
    db.db_path(noted.root).write_bytes(b"not a database at all" * 100)  # same inode
    with pytest.raises(IndexUnavailable, match="not a readable SQLite database"):
        desk_search(noted.root, "walrus")
    assert not any(entry[0] == db.db_file(noted.root) for entry in search._OPEN.values())


def test_threads_search_on_their_own_connections(noted: Bundle) -> None:
    answers: list[int] = []
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            for _ in range(20):
                answers.append(desk_search(noted.root, "walrus")["total"])
        except BaseException as exc:  # reported below; a thread cannot raise into the test
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and answers == [1] * 80
