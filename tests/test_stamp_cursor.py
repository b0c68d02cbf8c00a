"""The one file stamp (racy rule) and the one append-log cursor (ouro.store)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from ouro.store import cursor as cursors
from ouro.store import stamp as stamps


def _age(path: Path, seconds: float = 5.0) -> None:
    """Make the file look unchanged for a while (mtime in the past; ctime is now)."""
    past = time.time() - seconds
    os.utime(path, (past, past))


def test_a_fresh_file_has_no_trusted_stamp(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    st = os.stat(path)
    # the ctime is now: within the racy window however old the mtime claims to be
    _age(path)
    assert stamps.trusted(os.stat(path)) is None
    later = stamps.changed_at(st) + stamps.RACY_NS + 1
    assert stamps.trusted(st, later) == stamps.of(st)
    assert stamps.trusted(st, later - 2) is None


def test_same_size_edit_with_mtime_restored_is_stale(tmp_path: Path) -> None:
    path = tmp_path / "task.md"
    path.write_bytes(b"status: open\n")
    st = os.stat(path)
    known = stamps.trusted(st, stamps.changed_at(st) + stamps.RACY_NS + 1)
    assert known is not None and stamps.fresh(os.stat(path), known)
    time.sleep(0.01)
    path.write_bytes(b"status: done\n")  # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the old mtime back
    now = os.stat(path)
    assert (now.st_size, now.st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert not stamps.fresh(now, known)  # the ctime moved: stale


def test_stamp_text_round_trip() -> None:
    assert stamps.parse(stamps.text((1, 2, 3, 4))) == (1, 2, 3, 4)
    assert stamps.parse([1, 2, 3, 4]) == (1, 2, 3, 4)
    assert stamps.text(None) == "-" and stamps.parse("-") is None
    assert stamps.parse("1:2:x:4") is None and stamps.parse([1, 2]) is None


def _cursor_of(path: Path, offset: int | None = None) -> cursors.Cursor:
    with open(path, "rb") as handle:
        st = os.fstat(handle.fileno())
        end = st.st_size if offset is None else offset
        return cursors.at(cursors.pread_of(handle.fileno()), end, st)


def _follow(path: Path, cur: cursors.Cursor) -> str:
    with open(path, "rb") as handle:
        return cursors.follow(cursors.pread_of(handle.fileno()), os.fstat(handle.fileno()), cur)


def test_cursor_sees_growth_and_rewrites(tmp_path: Path) -> None:
    log = tmp_path / "facts.jsonl"
    log.write_bytes(b'{"id":"f-1"}\n{"id":"f-2"}\n')
    cur = _cursor_of(log)
    assert _follow(log, cur) == cursors.UNCHANGED
    with log.open("ab") as handle:
        handle.write(b'{"id":"f-3"}\n')
    assert _follow(log, cur) == cursors.GROWN
    # the same bytes rewritten in place, then grown: the tail before the offset differs
    log.write_bytes(b'{"id":"f-9"}\n{"id":"f-8"}\n{"id":"f-3"}\n')
    assert _follow(log, cur) == cursors.REWRITTEN
    # shorter
    log.write_bytes(b"{}\n")
    assert _follow(log, cur) == cursors.REWRITTEN


def test_cursor_same_size_rewrite_is_seen(tmp_path: Path) -> None:
    log = tmp_path / "facts.jsonl"
    log.write_bytes(b'{"id":"f-1"}\n')
    _age(log)
    st = os.stat(log)
    with open(log, "rb") as handle:
        cur = cursors.at(
            cursors.pread_of(handle.fileno()),
            st.st_size,
            st,
            now=st.st_ctime_ns + stamps.RACY_NS + 1,
        )
    assert cur.stamp is not None
    time.sleep(0.01)
    log.write_bytes(b'{"id":"f-2"}\n')
    os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _follow(log, cur) == cursors.REWRITTEN


def test_cursor_of_a_copy_replays_everything(tmp_path: Path) -> None:
    log = tmp_path / "facts.jsonl"
    log.write_bytes(b'{"id":"f-1"}\n')
    cur = _cursor_of(log)
    copy = tmp_path / "copy.jsonl"
    shutil.copy2(log, copy)  # same bytes and mtime, another inode
    assert _follow(copy, cur) == cursors.REWRITTEN


def test_cursor_text_round_trip(tmp_path: Path) -> None:
    log = tmp_path / "facts.jsonl"
    log.write_bytes(b"x\n")
    for cur in (_cursor_of(log), cursors.Cursor(5, 7, (1, 2, 3, 4), True, "ab"), cursors.START):
        assert cursors.parse(cursors.text(cur)) == cur
    assert cursors.parse("tail:1:ff") is None and cursors.parse(None) is None
