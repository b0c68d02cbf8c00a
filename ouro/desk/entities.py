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
  ``<facts inode> <covered> <tail digest before covered> <entities stamp>
  <verified> <tail digest before verified>`` (the digests and the stamp are
  those of ``ouro.store.cursor`` and ``ouro.store.stamp``): the file holds the
  entities of the log's first ``covered`` bytes, and an ouro writer checked
  that the lines from ``covered`` to ``verified`` are all plain new facts
  (valid lines, no repeated id), so their entities are the file's plus a
  replay of those lines (``apply_lines``). It is a rebuildable cache:
  missing, unreadable, or not matching the files on disk means "not known to
  be current". (The entities stamp is taken by the writer that just replaced
  the file, under the entities lock: only an edit by hand within that same
  clock tick could keep it.)
- A writer whose lines end at byte ``upto`` of the log calls
  ``ensure_entities(..., upto)`` (entities lock held) before it reports success. If
  the stamp already verifies at least ``upto`` bytes (same log, same bytes
  there, and the file is untouched since) there is nothing to do. If the lines
  after ``covered`` are plain and at most ``LAG_LIMIT`` bytes, it only moves
  ``verified`` to the end of what it has read (no rewrite); otherwise it
  rewrites the file from the whole log. So the stamped file plus the verified
  lines always give the entities of a prefix of the log that includes every
  completed write, and the 2.4 MB file (at 100k facts) is rewritten about once
  per ``LAG_LIMIT`` bytes of facts instead of once per write.
- ``entities.json`` on disk may therefore lag the log by up to ``LAG_LIMIT``
  bytes; ouro reads it through ``read_current`` (``ouro.desk.record.read_entities``),
  which replays the verified lines as it reads (pure: no file changes). With no
  valid stamp it returns the file as written. ``ouro diary rebuild-entities``
  (and ``ouro sync``) rewrite it whole.
- A rewrite never silently replaces a hand-edited file that does not parse: it is
  copied to ``entities.json.corrupt-<time>`` first (``keep_unreadable``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ouro.desk.derived import replace_derived
from ouro.desk.entities_stamp import read_stamp, stamp_range
from ouro.desk.factstate import DiaryState
from ouro.store import cursor as cursors
from ouro.store import jsonio
from ouro.store import stamp as stamps
from ouro.store.atomic import atomic_write_bytes
from ouro.store.bounded import LINE_LIMIT, NotRegularFile, TooLarge, file_bytes, open_regular

#: at most this many bytes of verified facts.jsonl lines are left to replay
#: before a writer rewrites entities.json whole
LAG_LIMIT = 256 * 1024


def write_entities(path: Path, data: Sequence[bytes]) -> None:
    """Replace entities.json atomically (temp file, fsync, rename, folder fsync).

    The cost of flushing a file of this size is shared: concurrent writers
    coalesce their rewrites (``ensure_entities``).
    """
    replace_derived(path, data)  # the chunks of DiaryState.entities_chunks()


def _write_stamp(
    state: DiaryState, entities: Path, stamp: Path, covered: tuple[int, str] | None = None
) -> None:
    entities_stamp = stamps.text(stamps.of(os.stat(entities)))
    tail = cursors.digest(state.tail) or "-"
    at, c_tail = covered or (state.offset, tail)
    line = f"{state.ino} {at} {c_tail} {entities_stamp} {state.offset} {tail}\n"
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
    fields = read_stamp(stamp)
    try:
        st = os.stat(entities)
        if fields is not None and stamps.parse(fields[3]) == stamps.of(st):
            return None  # the file ouro wrote last, untouched since
        data = file_bytes(entities)
    except (FileNotFoundError, IsADirectoryError, NotRegularFile):
        return None
    except TooLarge:
        # too large to read whole (DOC_LIMIT): kept under a second name, never
        # copied through memory; the rewrite then replaces only the first name
        copy = _corrupt_name(entities)
        try:
            os.link(entities, copy)
        except OSError:
            return None
        return copy
    try:
        if isinstance(jsonio.loads(data), dict):
            return None
    except jsonio.JSONDecodeError:
        pass
    copy = _corrupt_name(entities)
    atomic_write_bytes(copy, data)
    return copy


def _corrupt_name(entities: Path) -> Path:
    stamp_text = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return entities.with_name(f"{entities.name}.corrupt-{stamp_text}")


def rewrite_entities(
    state: DiaryState, entities: Path, stamp: Path, *, if_changed: bool = False
) -> bool:
    """Rewrite entities.json from ``state`` (already synced) and stamp it.

    ``if_changed`` (a rebuild): a file that already holds exactly these bytes
    is only stamped, not rewritten -- a copied or cloned bundle (whose stamp,
    machine-local, did not travel) keeps its record untouched. Returns whether
    it rewrote the file."""
    chunks = state.entities_chunks()
    if if_changed:
        try:
            same = file_bytes(entities) == b"".join(chunks)
        except OSError:
            same = False
        if same:
            _write_stamp(state, entities, stamp)
            return False
    keep_unreadable(entities, stamp)
    write_entities(entities, chunks)
    _write_stamp(state, entities, stamp)
    return True


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
    fields = read_stamp(stamp)
    try:
        entities_st = os.stat(entities)
    except OSError:
        known = None
    else:
        known = stamp_range(fields, state.ino, state.offset, state.read_bytes, entities_st)
    if known is not None and fields is not None:
        covered, verified = known
        if upto <= verified:
            return False  # another writer's stamp already covers our lines
        plain = state.irregular <= covered and upto <= state.offset
        if plain and state.offset - covered <= LAG_LIMIT:
            # Every line after ``covered`` is a plain new fact: readers replay them.
            _write_stamp(state, entities, stamp, covered=(covered, fields[2]))
            return False
    rewrite_entities(state, entities, stamp)
    return True


def read_current(entities: Path, stamp: Path, facts: Path) -> bytes | dict[str, Any]:
    """entities.json as of the last completed write (pure; see the module doc).

    Returns the file's bytes when there is nothing to replay (or no valid
    stamp: the file as written), else the parsed file with the verified lines
    replayed. Raises FileNotFoundError when the file is missing.
    """
    fd = open_regular(entities)
    try:
        entities_st = os.fstat(fd)
        data = _read_all(fd, entities_st.st_size)
    finally:
        os.close(fd)
    fields = read_stamp(stamp)
    if fields is None:
        return data
    try:
        facts_fd = open_regular(facts)
    except OSError:
        return data
    try:
        facts_st = os.fstat(facts_fd)

        def read(start: int, size: int) -> bytes:
            return os.pread(facts_fd, size, start)

        known = stamp_range(fields, facts_st.st_ino, facts_st.st_size, read, entities_st)
        if known is None or known[0] == known[1] or known[1] - known[0] > LINE_LIMIT:
            return data  # (more than a line's worth: not one write's lines, the file as written)
        covered, verified = known
        lines = read(covered, verified - covered)
    finally:
        os.close(facts_fd)
    try:
        parsed = jsonio.loads(data)
    except jsonio.JSONDecodeError:
        return data  # the caller reports it
    if not isinstance(parsed, dict) or not apply_lines(parsed, lines):
        return data
    return parsed


def _read_all(fd: int, size: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(fd, max(size, 1 << 16))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def apply_lines(entities: dict[str, Any], lines: bytes) -> bool:
    """Add plain fact lines to parsed entities.json in place, as
    ``DiaryState._ingest`` counts them; False if a line is not a plain fact."""
    added = False
    for raw in lines.split(b"\n"):
        if not raw.strip():
            continue
        try:
            value = jsonio.loads(raw)
        except jsonio.JSONDecodeError:
            return False
        if not isinstance(value, dict):
            return False
        fid, text = value.get("id"), value.get("text")
        if not isinstance(fid, str) or not isinstance(text, str):
            return False
        about_raw = value.get("about")
        if not about_raw or not isinstance(about_raw, list):
            continue
        created = value.get("createdAt")
        for entity in about_raw:
            if not isinstance(entity, str):
                continue
            entry = entities.get(entity)
            if entry is None:
                entry = entities[entity] = {"count": 0, "factIds": [], "lastSeenAt": None}
                added = True
            elif not isinstance(entry, dict) or not isinstance(entry.get("factIds"), list):
                return False
            ids = entry["factIds"]
            if ids and ids[-1] == fid:
                continue  # the entity is named twice in this line's about
            ids.append(fid)
            entry["count"] = len(ids)
            if isinstance(created, str) and created > (entry.get("lastSeenAt") or ""):
                entry["lastSeenAt"] = created
    if added:
        ordered = dict(sorted(entities.items()))
        entities.clear()
        entities.update(ordered)
    return True
