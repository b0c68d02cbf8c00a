"""Keeping ``entities.json`` in step with ``facts.jsonl`` (docs/record.md).

Contract:
- ``entities.json`` is derived from the log and rewritten whole, atomically and
  fsynced (``derived.replace_derived``), from a process's view of the log
  (``factstate.DiaryState``), always with the entities lock
  (``state/locks/entities.lock``) held. Lock order: entities, then diary.
  A writer rewrites it holding only the entities lock (group commit: appends
  by other writers go on meanwhile, and the next rewrite covers them all); a
  rebuild, and a writer that finds the log rewritten, hold both.
- ``state/locks/diary.entities-stamp`` says which log the file reflects:
  ``<facts inode> <facts bytes> <hex of the last log bytes> <entities inode>
  <entities size> <entities mtime_ns>``. It is a rebuildable cache: missing,
  unreadable, or not matching the files on disk means "not known to be current".
- A writer whose lines end at byte ``upto`` of the log calls
  ``ensure_entities(..., upto)`` (entities lock held) before it reports success. If
  another writer has since rewritten the file from a log of at least ``upto``
  bytes (same log, same bytes there, and the file is untouched since) there is
  nothing to do; otherwise it rewrites the file from the whole log. So the file
  always reflects a prefix of the log that includes every completed write, and
  concurrent writers share one rewrite (2.4 MB at 100k facts) instead of one each.
- A rewrite never silently replaces a hand-edited file that does not parse: it is
  copied to ``entities.json.corrupt-<time>`` first (``keep_unreadable``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path

import orjson

from ouro.desk.derived import replace_derived
from ouro.desk.factstate import DiaryState
from ouro.store.atomic import atomic_write_bytes

STAMP_TAIL = 32


def write_entities(path: Path, data: Sequence[bytes]) -> None:
    """Replace entities.json atomically (temp file, fsync, rename, folder fsync).

    The cost of flushing a file of this size is shared: concurrent writers
    coalesce their rewrites (``ensure_entities``).
    """
    replace_derived(path, data)  # the chunks of DiaryState.entities_chunks()


def _read_stamp(path: Path) -> list[str] | None:
    try:
        fd = os.open(path, os.O_RDONLY)  # os-level: read on every diary write
    except OSError:
        return None
    try:
        fields = os.read(fd, 512).decode("ascii", "replace").split()
    finally:
        os.close(fd)
    return fields if len(fields) == 6 else None


def _is_current(state: DiaryState, entities: Path, stamp: Path, upto: int) -> bool:
    fields = _read_stamp(stamp)
    if fields is None or state.ino is None:
        return False
    ino, size, tail, e_ino, e_size, e_mtime = fields
    try:
        covered = int(size)
        if int(ino) != state.ino or not upto <= covered <= state.offset:
            return False
        st = os.stat(entities)
        if (st.st_ino, st.st_size, st.st_mtime_ns) != (int(e_ino), int(e_size), int(e_mtime)):
            return False  # replaced or edited since that rewrite
        start = max(0, covered - STAMP_TAIL)
        return state.read_bytes(start, covered - start).hex() == tail
    except (ValueError, OSError):
        return False


def _write_stamp(state: DiaryState, entities: Path, stamp: Path) -> None:
    st = os.stat(entities)
    tail = state.tail[-STAMP_TAIL:].hex() or "-"
    line = f"{state.ino} {state.offset} {tail} {st.st_ino} {st.st_size} {st.st_mtime_ns}\n"
    stamp.parent.mkdir(parents=True, exist_ok=True)
    # Overwrite in place, then cut: cheaper than a new file per write, and a torn
    # stamp (crash) only means "not current".
    fd = os.open(stamp, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.pwrite(fd, line.encode(), 0)
        os.ftruncate(fd, len(line))
    finally:
        os.close(fd)


def keep_unreadable(entities: Path, stamp: Path) -> Path | None:
    """Copy entities.json aside (``.corrupt-<time>``) if someone else left it unreadable.

    Derived, but a user may have edited it by hand: before a rewrite replaces a
    file ouro did not write last (the stamp does not match it) and that does
    not parse, its bytes are kept, as habit state does. Returns the copy.
    """
    fields = _read_stamp(stamp)
    try:
        st = os.stat(entities)
        if fields is not None and fields[3:] == [
            str(st.st_ino),
            str(st.st_size),
            str(st.st_mtime_ns),
        ]:
            return None  # the file ouro wrote last, untouched since
        data = entities.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        return None
    try:
        if isinstance(orjson.loads(data), dict):
            return None
    except orjson.JSONDecodeError:
        pass
    stamp_text = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    copy = entities.with_name(f"{entities.name}.corrupt-{stamp_text}")
    atomic_write_bytes(copy, data)
    return copy


def rewrite_entities(state: DiaryState, entities: Path, stamp: Path) -> None:
    """Rewrite entities.json from ``state`` (already synced) and stamp it."""
    keep_unreadable(entities, stamp)
    write_entities(entities, state.entities_chunks())
    _write_stamp(state, entities, stamp)


def ensure_entities(
    state: DiaryState, entities: Path, stamp: Path, upto: int, *, diary_lock: Path | None = None
) -> bool:
    """Make entities.json reflect at least the first ``upto`` bytes of the log.

    Call with the entities lock held and, when ``diary_lock`` is None, the diary
    lock too. With ``diary_lock`` given (a writer after its append) the diary
    lock is taken only when the log cannot be read as a plain append without it
    (an outside rewrite), so appends by other writers go on during the rewrite.
    Returns True when it rewrote the file.
    """
    if diary_lock is None:
        state.sync()
    elif not state.sync(locked=False) or state.offset < upto:
        from ouro.store.lock import FileLock

        with FileLock(diary_lock, purpose="entities update"):
            state.sync()
    if _is_current(state, entities, stamp, upto):
        return False
    rewrite_entities(state, entities, stamp)
    return True
