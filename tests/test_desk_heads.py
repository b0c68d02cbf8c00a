"""Desk heads: the per-file-validated task summary orient reads (ouro.desk.heads)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from ouro import api as tools
from ouro.bundle import Bundle
from ouro.desk import heads, tasks, tracks
from ouro.desk.orientation import desk_items
from ouro.store import stamp as stamps
from tests.conftest import record_snapshot, snapshot


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    read: list[str] = []
    real = heads._read_task

    def spy(key: str, path: str) -> dict[str, Any]:
        read.append(path)
        return real(key, path)

    monkeypatch.setattr(heads, "_read_task", spy)
    return read


def _settle(bundle: Bundle) -> None:
    """Refresh once the racy window has passed, so every entry can be trusted."""
    time.sleep(stamps.RACY_NS / 1e9 + 0.02)
    heads.refresh_heads(bundle)


def test_orient_reads_only_changed_task_files(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    tracks.add_track(bundle, "web")
    made = [tasks.add_task(bundle, "web", f"Task {n}", priority=n % 4) for n in range(12)]
    tasks.update_task(bundle, made[3].id, status="active")
    plain = desk_items(bundle)  # no cache yet: every task is read from its file
    _settle(bundle)
    read = _counting(monkeypatch)
    before = record_snapshot(bundle.root)
    assert desk_items(bundle) == plain
    assert read == []  # every head came from the validated cache
    # an edit outside ouro (same folder, new size): only that file is read again
    path = made[5].path
    path.write_text(path.read_text().replace("status: open", "status: blocked"))
    before = record_snapshot(bundle.root)
    items = desk_items(bundle)
    assert read == [str(path)]
    assert record_snapshot(bundle.root) == before  # reading wrote nothing, not even the cache
    assert any(i.section == "Desk: blocked tasks" and made[5].id in i.text for i in items)
    heads.refresh_heads(bundle)  # a writer absorbs the outside edit
    assert tasks.find_task(bundle, made[5].id).meta["status"] == "blocked"


def _forge(bundle: Bundle, change: Any) -> None:
    """Rewrite the cache with ``change(cache) -> cache`` applied (a valid CRC)."""
    cache = heads._load_cache(bundle)
    assert cache is not None
    forged = change(cache)
    rest, closed = bytes(cache.rest.data), bytes(cache.closed.data)
    heads.heads_path(bundle).write_bytes(heads._dump(forged, rest, closed))


def test_a_cache_that_does_not_match_the_files_is_not_trusted(bundle: Bundle) -> None:
    tracks.add_track(bundle, "web")
    task = tasks.add_task(bundle, "web", "Alpha")
    _settle(bundle)
    loaded = heads._load_cache(bundle)
    assert loaded is not None and heads._fp_list(loaded.fps)[0] is not None
    # a forged entry whose stat no longer matches the file
    size, mtime, ctime, ino = heads._fp_list(loaded.fps)[0] or (0, 0, 0, 0)

    def forge(cache: Any) -> Any:
        row = (*cache.shown[0][:6], "forged", *cache.shown[0][7:])
        return cache._replace(shown=[row], fps=heads._to_cols([(size, mtime, ctime + 1, ino)]))

    _forge(bundle, forge)
    (head,), problems = heads.read_heads(bundle)
    assert head.title == "Alpha" and problems == []
    # a damaged file (the CRC no longer matches) or a foreign one is not used at all
    good = heads.heads_path(bundle).read_bytes()
    damaged = good[:-3] + bytes([good[-3] ^ 1]) + good[-2:]
    for garbage in (b"", b"{not json", b"ouro-desk-heads 99 0 0 0 0 0 0\n", damaged, good[:-9]):
        heads.heads_path(bundle).write_bytes(garbage)
        (head,), problems = heads.read_heads(bundle)
        assert (head.id, head.title, problems) == (task.id, "Alpha", [])


def test_writes_through_the_tool_path_keep_the_cache_current(bundle: Bundle) -> None:
    tools.call("desk_track_add", bundle, {"name": "web"})
    added = tools.call("desk_task_add", bundle, {"track": "web", "title": "Alpha"})
    task_id = added["task"]["id"]
    cache = heads._load_cache(bundle)
    assert cache is not None and [row[2] for row in cache.shown] == [task_id]
    tools.call("desk_task_update", bundle, {"task": task_id, "status": "blocked"})
    cache = heads._load_cache(bundle)
    assert cache is not None and [row[5] for row in cache.shown] == ["blocked"]
    tools.call("desk_task_update", bundle, {"task": task_id, "status": "done"})
    cache = heads._load_cache(bundle)
    assert cache is not None and cache.shown == []
    assert [row[5] for row in cache.closed.rows()] == ["done"]
    # a deleted task folder drops out; an unreadable task is a problem, not a head
    tasks.add_task(bundle, "web", "Beta")
    broken = bundle.desk / "web" / "alpha" / "task.md"
    broken.write_text("---\nid: [unclosed\n---\n")
    found, problems = heads.read_heads(bundle)
    assert [h.title for h in found] == ["Beta"]
    assert len(problems) == 1 and "desk/web/alpha/task.md" in problems[0]


def test_a_read_heals_only_the_cache(bundle: Bundle) -> None:
    tracks.add_track(bundle, "web")
    tasks.add_task(bundle, "web", "Alpha")
    heads.heads_path(bundle).unlink(missing_ok=True)  # domain calls do not refresh it
    before = snapshot(bundle.root)
    (head,), _ = heads.read_heads(bundle)
    desk_items(bundle)
    after = snapshot(bundle.root)
    healed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert healed and all(k.startswith("state/") for k in healed), healed
    assert heads.heads_path(bundle).exists()
    assert head.locator == "desk/web/alpha/task.md"
    assert Path(os.fspath(head.path)).name == "task.md"


def test_a_process_reuses_its_decoding_only_while_the_cache_file_is_unchanged(
    bundle: Bundle,
) -> None:
    tracks.add_track(bundle, "web")
    tasks.add_task(bundle, "web", "Alpha")
    _settle(bundle)
    time.sleep(stamps.RACY_NS / 1e9 + 0.02)  # the cache file itself is trusted now
    first = heads._load_cache(bundle)
    assert first is not None and heads._load_cache(bundle) is first  # decoded once

    def retitle(cache: Any) -> Any:
        row = (*cache.shown[0][:6], "Retitled in the cache", *cache.shown[0][7:])
        return cache._replace(shown=[row])

    _forge(bundle, retitle)  # a writer replaced the file: the next read decodes it
    (head,), _ = heads.read_heads(bundle)
    assert head.title == "Retitled in the cache"


def test_one_packet_scans_the_heads_once(bundle: Bundle, monkeypatch: pytest.MonkeyPatch) -> None:
    from ouro.desk import heads as heads_module
    from ouro.orient import collect_items

    tracks.add_track(bundle, "web")
    tasks.add_task(bundle, "web", "Ship it")
    scans: list[int] = []
    real = heads_module._stat_all

    def counting(desk: str, rels: list[str]) -> list[object]:
        scans.append(len(rels))
        return real(desk, rels)

    monkeypatch.setattr(heads_module, "_stat_all", counting)
    heads_module.desk_heads(bundle)
    heads_module.desk_heads(bundle)
    assert len(scans) == 2  # outside one read, every read stats every task
    scans.clear()
    items = collect_items(bundle)
    assert any("Ship it" in item.text for item in items)
    assert len(scans) == 1  # the Desk section and the ready tasks share the scan


def test_a_moved_stamp_with_an_unchanged_head_keeps_the_cached_rows(
    bundle: Bundle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copy's new inodes and ctimes, or a ``touch``: the files are read again
    and, when each reads back to its cached row, the heal saves the new stamps
    and keeps the rows as they are (no re-sort, re-split or re-derivation)."""
    tracks.add_track(bundle, "web")
    made = [tasks.add_task(bundle, "web", f"Task {n}", priority=n % 4) for n in range(12)]
    _settle(bundle)
    plain = desk_items(bundle)
    touched = made[2].path
    os.utime(touched, ns=(time.time_ns(), time.time_ns() - 10**9))
    copied = made[7].path
    copy = copied.with_name("task.md.tmp")
    copy.write_bytes(copied.read_bytes())
    os.replace(copy, copied)  # the same bytes on a new inode, as ``cp -a`` leaves them
    time.sleep(stamps.RACY_NS / 1e9 + 0.02)
    assert heads.freshness(bundle)[0] == "stale"
    splits: list[int] = []
    real_split = heads._split
    monkeypatch.setattr(heads, "_split", lambda rows: splits.append(len(rows)) or real_split(rows))
    read = _counting(monkeypatch)
    assert desk_items(bundle) == plain
    assert sorted(read) == sorted([str(touched), str(copied)])
    assert splits == []  # the rows stayed packed: only the stamps were saved
    assert heads.freshness(bundle) == ("fresh", None)
    read.clear()
    assert desk_items(bundle) == plain and read == []
    # a changed head still goes the whole way
    touched.write_text(touched.read_text().replace("Task 2", "Task two"))
    time.sleep(stamps.RACY_NS / 1e9 + 0.02)
    assert "Task two" in [h.title for h in heads.read_heads(bundle)[0]]
    assert splits != []
    assert heads.freshness(bundle) == ("fresh", None)
