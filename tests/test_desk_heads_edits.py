"""Desk heads against edits made outside ouro (issue 11 point 4, issue 15 point 3).

The cache is written by writers only; every read validates it per file
(size, mtime_ns, ctime_ns, inode) and per folder listing, so each edit below is
seen by the very next orient, and the read writes nothing.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from ouro.bundle import Bundle
from ouro.desk import heads, tasks, tracks
from ouro.desk.orientation import desk_items
from ouro.orient import build_packet
from ouro.store import stamp as stamps
from tests.conftest import record_snapshot, run_ouro


def _settle(bundle: Bundle) -> None:
    """A refresh once the racy window has passed, so every entry is trusted."""
    time.sleep(stamps.RACY_NS / 1e9 + 0.05)
    heads.refresh_heads(bundle)
    cache = heads._load_cache(bundle)
    assert cache is not None and None not in heads._fp_list(cache.fps)
    assert all(t[1] is not None for t in cache.tracks) and cache.desk_fp is not None


@pytest.fixture
def desk(bundle: Bundle) -> dict[str, tasks.Task]:
    tracks.add_track(bundle, "web")
    made = {
        "active": tasks.add_task(bundle, "web", "Active one"),
        "done": tasks.add_task(bundle, "web", "Closed one"),
        "dropped": tasks.add_task(bundle, "web", "Dropped one"),
    }
    tasks.update_task(bundle, made["active"].id, status="active")
    tasks.update_task(bundle, made["done"].id, status="done")
    tasks.update_task(bundle, made["dropped"].id, status="dropped")
    _settle(bundle)
    return made


def _texts(bundle: Bundle) -> str:
    """What orient shows of Desk, in process and as a process, checking purity."""
    before = record_snapshot(bundle.root)
    text = "\n".join(f"{i.section}: {i.text}" for i in desk_items(bundle))
    packet = build_packet(bundle, budget=100_000).text
    cli = run_ouro("orient", "--budget", "100000", bundle=bundle, check=True).stdout
    for item in desk_items(bundle):
        assert item.text in cli and item.text in packet
    assert record_snapshot(bundle.root) == before  # reads changed no record (the cache may heal)
    return text


def _edit_in_place(path: Path, old: str, new: str) -> None:
    inode = path.stat().st_ino
    text = path.read_text()
    assert old in text
    with open(path, "r+", encoding="utf-8") as handle:
        handle.write(text.replace(old, new, 1))
        handle.truncate()
    assert path.stat().st_ino == inode


def test_a_closed_task_reopened_by_hand_is_shown(
    bundle: Bundle, desk: dict[str, tasks.Task]
) -> None:
    assert desk["done"].id not in _texts(bundle)
    _edit_in_place(desk["done"].path, "status: done", "status: active")
    assert f"{desk['done'].id} [active]" in _texts(bundle)


def test_a_same_size_edit_in_place_is_shown(bundle: Bundle, desk: dict[str, tasks.Task]) -> None:
    # 'dropped' and 'blocked' have the same length: only the times tell
    size = desk["dropped"].path.stat().st_size
    _edit_in_place(desk["dropped"].path, "status: dropped", "status: blocked")
    assert desk["dropped"].path.stat().st_size == size
    assert f"{desk['dropped'].id} [blocked]" in _texts(bundle)


def test_a_same_size_edit_with_its_mtime_put_back_is_shown(
    bundle: Bundle, desk: dict[str, tasks.Task]
) -> None:
    # size and mtime as cached: the ctime (which utime cannot set back) tells
    path = desk["dropped"].path
    st = path.stat()
    _edit_in_place(path, "status: dropped", "status: blocked")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert f"{desk['dropped'].id} [blocked]" in _texts(bundle)


def test_a_task_file_replaced_by_an_older_copy_is_shown(
    bundle: Bundle, desk: dict[str, tasks.Task]
) -> None:
    # a same-size copy made before the cache was written, moved over the task:
    # its ctime is older than the cached one's, its inode is its own
    path = desk["dropped"].path
    copy = path.with_name("prepared.md")
    copy.write_text(path.read_text().replace("status: dropped", "status: blocked"))
    st = path.stat()
    os.utime(copy, ns=(st.st_atime_ns, st.st_mtime_ns))
    _settle(bundle)
    os.replace(copy, path)
    assert f"{desk['dropped'].id} [blocked]" in _texts(bundle)


def test_a_new_task_folder_made_by_hand_is_shown(
    bundle: Bundle, desk: dict[str, tasks.Task]
) -> None:
    source = desk["active"].path.parent
    copy = source.parent / "copied-by-hand"
    shutil.copytree(source, copy)
    _edit_in_place(copy / "task.md", desk["active"].id, "t-0handmade0000000")
    _edit_in_place(copy / "task.md", "title: Active one", "title: Made by hand")
    text = _texts(bundle)
    assert "t-0handmade0000000 [active] p2 Made by hand" in text
    assert f"{desk['active'].id} [active]" in text
    # a task.md appearing in a folder that had none is seen too
    bare = source.parent / "bare"
    bare.mkdir()
    _settle(bundle)
    shutil.copy(copy / "task.md", bare / "task.md")
    _edit_in_place(bare / "task.md", "t-0handmade0000000", "t-0bare00000000000")
    assert "t-0bare00000000000 [active]" in _texts(bundle)


def test_a_deleted_task_is_gone(bundle: Bundle, desk: dict[str, tasks.Task]) -> None:
    assert desk["active"].id in _texts(bundle)
    shutil.rmtree(desk["active"].path.parent)
    assert desk["active"].id not in _texts(bundle)


def test_a_deleted_task_file_is_gone(bundle: Bundle, desk: dict[str, tasks.Task]) -> None:
    desk["active"].path.unlink()  # the folder stays: its track folder's listing does not change
    assert desk["active"].id not in _texts(bundle)


def test_an_unreadable_task_is_reported_not_dropped(
    bundle: Bundle, desk: dict[str, tasks.Task]
) -> None:
    path = desk["active"].path
    data = path.read_bytes()
    with open(path, "r+b") as handle:  # in place: invalid UTF-8 in the title
        handle.write(data.replace(b"Active one", b"Active \xff\xfe\xfd"))
    text = _texts(bundle)
    assert "unreadable task: desk/web/active-one/task.md" in text
    assert f"{desk['active'].id} [active]" not in text


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_a_task_made_unreadable_by_chmod_is_reported(
    bundle: Bundle, desk: dict[str, tasks.Task]
) -> None:
    path = desk["active"].path
    path.chmod(0)  # only the ctime moves
    try:
        assert "unreadable task: desk/web/active-one/task.md" in _texts(bundle)
    finally:
        path.chmod(0o644)


def test_a_task_replaced_by_a_folder_is_reported(
    bundle: Bundle, desk: dict[str, tasks.Task]
) -> None:
    path = desk["active"].path
    path.unlink()
    path.mkdir()
    assert "unreadable task: desk/web/active-one/task.md" in _texts(bundle)


def _from_files_alone(bundle: Bundle) -> list[object]:
    """desk_items with the cache moved away (then put back): the oracle."""
    cache = heads.heads_path(bundle)
    data = cache.read_bytes()
    cache.unlink()
    try:
        return list(desk_items(bundle))
    finally:
        cache.write_bytes(data)
        os.utime(cache, ns=(time.time_ns(), time.time_ns()))


def test_open_tasks_past_the_first_of_their_track_stay_packed_but_count(bundle: Bundle) -> None:
    from ouro.desk.featured import feature

    tracks.add_track(bundle, "web")
    made = [
        tasks.add_task(bundle, "web", f"Open {n:02d}", priority=n % 4)
        for n in range(heads.TOP_OPEN + 6)
    ]
    tasks.update_task(bundle, made[0].id, status="active")  # web is a current track
    _settle(bundle)
    cache = heads._load_cache(bundle)
    assert cache is not None and len(cache.rest.rows()) == 5  # 25 open: 20 shown, 5 packed
    assert desk_items(bundle) == _from_files_alone(bundle)
    # featuring shown open tasks lets later ones into the section (read from the rest)
    first_open = [i for i in desk_items(bundle) if "[open]" in i.text][:3]
    ids = [i.text.split()[0] for i in first_open]
    feature(bundle, tracks=["web"], tasks=ids)
    items = desk_items(bundle)
    assert items == _from_files_alone(bundle)
    assert "track web: 1 active, 25 open" in [i.text for i in items]
    opened = [i for i in items if i.section == "Desk: open tasks (current tracks)"]
    assert len(opened) == heads.TOP_OPEN and not {i.text.split()[0] for i in opened} & set(ids)
    # a packed task edited by hand to the top is seen
    packed = cache.rest.rows()[-1]
    path = bundle.desk / packed[4] / "task.md"
    _edit_in_place(path, f"priority: {packed[0]}", "priority: 0")
    _edit_in_place(path, f"title: {packed[6]}", "title: Now first")
    items = desk_items(bundle)
    assert items == _from_files_alone(bundle)
    assert any("Now first" in i.text for i in items)


def _writer(root: str, i: int, start: object) -> None:
    from ouro import api as tools

    bundle = Bundle(Path(root))
    start.wait()  # type: ignore[attr-defined]
    for n in range(6):
        added = tools.call("desk_task_add", bundle, {"track": "web", "title": f"W{i} task {n}"})
        status = ("active", "blocked", "done", "open")[(i + n) % 4]
        tools.call("desk_task_update", bundle, {"task": added["task"]["id"], "status": status})


@pytest.mark.slow
def test_racing_writers_leave_a_cache_that_matches_the_files(bundle: Bundle) -> None:
    """8 processes add and update tasks through the tool registry at once: every
    refresh holds the heads lock and replaces the file whole, so whatever the
    interleaving, the cache a reader finds validates to what the files say."""
    import multiprocessing as mp

    from ouro import api as tools

    tools.call("desk_track_add", bundle, {"name": "web"})
    ctx = mp.get_context("fork")
    start = ctx.Event()
    procs = [ctx.Process(target=_writer, args=(str(bundle.root), i, start)) for i in range(8)]
    for proc in procs:
        proc.start()
    start.set()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    found, problems = heads.read_heads(bundle)
    assert len(found) == 48 and problems == []
    assert desk_items(bundle) == _from_files_alone(bundle)
    _settle(bundle)  # once settled, every entry is trusted and still agrees
    assert heads.read_heads(bundle) == (found, [])
    assert desk_items(bundle) == _from_files_alone(bundle)
