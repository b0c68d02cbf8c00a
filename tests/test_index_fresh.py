"""The check before every search: a few dozen stats whatever the bundle's size,
seeing every change at the watched levels and (by design) nothing deeper."""

from __future__ import annotations

import builtins
import os
import shutil
import sqlite3
import time
from collections.abc import Callable
from typing import Any

import pytest

from ouro.bundle import Bundle
from ouro.index import db
from ouro.index.fresh import quick_check
from ouro.index.search import desk_search
from ouro.index.sync import sync
from ouro.store.stamp import RACY_NS
from tests.conftest import ouro_json
from tests.index_support import append_fact, write_note, write_task

TEMPLATE_DIRS = {
    "desk",
    "desk/_friction",
    "desk/_meta",
    "desk/_meta/tips",
    "desk/_record",
    "desk/_record/diary",
    "desk/_record/diary/daily",
    "desk/_record/notes",
}


def settle(bundle: Bundle) -> None:
    """Sync once every folder is older than the racy window, so the check is quiet."""
    time.sleep(RACY_NS / 1e9 + 0.01)
    sync(bundle)
    assert check(bundle) is None


def check(bundle: Bundle) -> str | None:
    conn = db.open_db(bundle.root)
    try:
        return quick_check(conn, str(bundle.root))
    finally:
        conn.close()


def counted_check(bundle: Bundle, monkeypatch: pytest.MonkeyPatch) -> tuple[str | None, int]:
    """The check's answer and how many stat calls it made; it must open no file."""
    conn = db.open_db(bundle.root)
    calls = 0
    real_stat = os.stat

    def counting_stat(*args: Any, **kwargs: Any) -> os.stat_result:
        nonlocal calls
        calls += 1
        return real_stat(*args, **kwargs)

    def no_open(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"quick_check opened {args[0]!r}")

    try:
        with monkeypatch.context() as patch:
            patch.setattr(os, "stat", counting_stat)
            patch.setattr(builtins, "open", no_open)
            reason = quick_check(conn, str(bundle.root))
        return reason, calls
    finally:
        conn.close()


def test_the_check_costs_the_same_whatever_the_number_of_tasks(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    for track in ("a", "b"):
        write_task(bundle, track, "first", "First", "body")
    append_fact(bundle, "f-1", "a fact")
    (bundle.record / "diary" / "daily" / "2026-01-01.md").write_text("## 10:00:00Z\nday\n")
    settle(bundle)
    conn = sqlite3.connect(db.db_path(bundle.root))
    dirs = {row[0] for row in conn.execute("SELECT path FROM dirs")}
    conn.close()
    assert dirs == TEMPLATE_DIRS | {"desk/a", "desk/b"}  # no task folder is watched
    small = counted_check(bundle, monkeypatch)
    for i in range(40):
        task = write_task(bundle, "a" if i % 2 else "b", f"t{i}", f"Task {i}", "body")
        (task.parent / "iterations").mkdir()
        (task.parent / "iterations" / "001.md").write_text("---\nn: 1\n---\nstep\n")
    settle(bundle)
    assert counted_check(bundle, monkeypatch) == small == (None, len(dirs) + 3)


def _rename_save(path: Any, text: str) -> None:
    """What most editors and git do: write a new file, rename it over the old one."""
    temp = path.with_name(path.name + ".tmp")
    temp.write_text(text)
    os.replace(temp, path)


Change = Callable[[Bundle], None]
SEEN: dict[str, tuple[Change, str, int]] = {
    "a new note": (lambda b: write_note(b, "new", "New", "zebrafish"), "zebrafish", 1),
    "a note rename-saved": (
        lambda b: _rename_save(b.record / "notes" / "old.md", "---\ntitle: Old\n---\nzebrafish\n"),
        "zebrafish",
        1,
    ),
    "a note deleted": (lambda b: (b.record / "notes" / "old.md").unlink(), "walrus", 0),
    "a note in a notes subfolder": (
        lambda b: write_note(b, "journal/day", "Day", "zebrafish"),
        "zebrafish",
        1,
    ),
    "a new task in a track": (
        lambda b: write_task(b, "work", "fresh", "Fresh", "zebrafish"),
        "zebrafish",
        1,
    ),
    "a task folder deleted": (lambda b: shutil.rmtree(b.desk / "work" / "old"), "narwhal", 0),
    "a new track": (lambda b: write_task(b, "play", "game", "Game", "zebrafish"), "zebrafish", 1),
    "a track.md rename-saved": (
        lambda b: _rename_save(b.desk / "work" / "track.md", "---\ntitle: zebrafish\n---\n"),
        "zebrafish",
        1,
    ),
    "a fact appended outside ouro": (
        lambda b: append_fact(b, "f-2", "zebrafish facts"),
        "zebrafish",
        1,
    ),
    "a friction entry": (
        lambda b: (b.desk / "_friction" / "x.md").write_text("---\ntitle: zebrafish\n---\n"),
        "zebrafish",
        1,
    ),
    "a tip": (
        lambda b: (b.desk / "_meta" / "tips" / "x.md").write_text("---\ntitle: zebrafish\n---\n"),
        "zebrafish",
        1,
    ),
    "the newest day appended in place": (
        lambda b: (b.record / "diary" / "daily" / "2026-01-02.md").open("a").write("zebrafish\n"),
        "zebrafish",
        1,
    ),
    "a new day": (
        lambda b: (b.record / "diary" / "daily" / "2026-01-03.md").write_text("zebrafish\n"),
        "zebrafish",
        1,
    ),
}


@pytest.mark.parametrize("name", list(SEEN))
def test_search_sees_changes_at_the_watched_levels(bundle: Bundle, name: str) -> None:
    write_note(bundle, "old", "Old", "walrus")
    write_note(bundle, "journal/first", "First", "entry")  # a notes subfolder
    write_task(bundle, "work", "old", "Old task", "narwhal")
    append_fact(bundle, "f-1", "a fact")
    (bundle.record / "diary" / "daily" / "2026-01-01.md").write_text("older day\n")
    (bundle.record / "diary" / "daily" / "2026-01-02.md").write_text("newest day\n")
    settle(bundle)
    change, word, hits = SEEN[name]
    change(bundle)
    assert check(bundle) is not None
    answer = desk_search(bundle.root, word)
    assert (answer["total"], answer["index"]) == (hits, {"state": "fresh"})


def test_deep_edits_wait_for_sync_or_watch(bundle: Bundle) -> None:
    """An in-place edit of task.md, or a rename-save inside its task folder, does
    not move a watched folder: search answers from the index until a write-through,
    ``ouro watch`` or ``ouro index sync`` applies it (docs/index.md, "Freshness")."""
    task = write_task(bundle, "work", "deep", "Deep task", "narwhal")
    write_task(bundle, "work", "other", "Other task", "walrus")
    settle(bundle)
    with task.open("r+") as handle:  # in place: same inode, no folder mtime moves
        text = handle.read().replace("narwhal", "zebrafish")
        handle.seek(0)
        handle.write(text)
        handle.truncate()
    other = bundle.desk / "work" / "other" / "task.md"
    _rename_save(other, other.read_text().replace("walrus", "quokka"))
    assert check(bundle) is None
    assert desk_search(bundle.root, "zebrafish")["total"] == 0
    assert desk_search(bundle.root, "quokka")["total"] == 0
    synced = ouro_json("index", "sync", bundle=bundle)
    assert synced["indexed"] == 2
    assert desk_search(bundle.root, "zebrafish")["total"] == 1
    assert desk_search(bundle.root, "quokka")["total"] == 1
    assert desk_search(bundle.root, "narwhal")["total"] == 0


def test_an_old_index_with_deep_folder_rows_is_trimmed_by_the_next_sync(bundle: Bundle) -> None:
    """Indexes built before the check was narrowed recorded every folder."""
    write_task(bundle, "work", "deep", "Deep task", "narwhal")
    settle(bundle)
    conn = db.open_db(bundle.root)
    with db.transaction(conn):
        conn.execute("INSERT INTO dirs(path, mtime_ns) VALUES ('desk/work/deep', -1)")
    conn.close()
    assert check(bundle) == "folder desk/work/deep changed"
    assert desk_search(bundle.root, "narwhal")["total"] == 1  # syncs, and drops the row
    settle(bundle)
    conn = sqlite3.connect(db.db_path(bundle.root))
    assert conn.execute("SELECT count(*) FROM dirs WHERE path = 'desk/work/deep'").fetchone() == (
        0,
    )
    conn.close()
