"""Desk heads: a small derived summary of every task, so orient reads O(changed) files.

File: ``state/cache/desk-heads.bin`` (machine-local, ignored by git; inode
numbers mean nothing elsewhere): a header line
``ouro-desk-heads <schema> <recordedAt ns> <main len> <shown len> <rest len>
<crc32 main> <crc32 shown> <crc32 rest> <crc32 closed>\\n`` (one line), then four
``marshal`` blobs (stdlib; loads ~10× faster than JSON). Main::

    (desk_fp, tracks, rels, fps, counts, ready)
    tracks: [(name, fp, [folder, ...]), ...]   # every folder, sorted
    rels:   ["<track>/<folder>/task.md", ...]  # folders that held a task.md
    fps:    (sizes, mtimes_ns, ctimes_ns, inodes): four columns, one value per
            rel, each packed as native int64 (a list of ints if a value overflows
            int64); -1 in every column when not trusted. A read compares each
            column whole (an ``array`` compare, in C), not a tuple per task
    counts: {(track, status): n}   # hot tasks per track and status
    ready:  [row, ...]   # the packet's ready rows (``READY_KEPT``, no clock)

Shown: ``[row, ...]``, what orient can show: every hot task (not done/dropped,
or done unverified) except open ones past the first TOP_OPEN of their track;
decoded with main by every read except ``freshness`` (``ouro index status``
compares the stamps only). Rest: ``[row, ...]``, the other open tasks. Closed:
``[row, ...]``, every other task. Both are decoded (and their CRC checked) only
when a read needs them: something changed, a caller wants every task
(``read_heads``), a featured task is not among the shown rows.

A row is ``(priority, created, id, track, key, status, title, updated,
heldBy, leaseUntil, unverified, blockedBy, parent, check)``, so sorting rows sorts by
orient's order (priority, created, id); ``shown`` and rest are stored sorted.
``check`` (the declared check, when it is a string) is what the PostToolUse
hook matches a host's command against (``DeskHeads.checked_by``), so an
unrelated command costs a stat per task, not a read.

Contract:
- Files are the truth; this is a cache and is never trusted blindly. Every
  read ``stat``s every ``task.md``: an entry is used only when the file's
  fingerprint equals the cached one (``chmod`` moves the ctime, so a file made
  unreadable is read again and reported). The steady-state read compares the
  ctime_ns and inode columns whole (any write, truncate, ``utime`` or ``chmod``
  sets the ctime to the current time; a replaced file has a new inode); an
  entry looked at on its own is compared on all four fields. A
  fingerprint (``ouro.store.stamp``) is cached only for a file that had not changed for ``RACY_NS``
  when the cache was written (file times are coarse: a same-tick edit could
  keep them); otherwise it is ``None`` and the file is read on every read until
  the next refresh. The folder listings are cached the same way, keyed on each
  folder's fingerprint (adding, removing or renaming a task folder changes its
  track folder's mtime), so an unchanged desk is not listed again. Every other
  task is read from its file (front matter via ``ouro.store.frontmatter``: no
  YAML for the shape ouro writes). A missing, unreadable, foreign or damaged
  cache file (the CRC covers the payload) means "read every task". A read
  that found the cache missing or stale heals it (``_heal``: saves what it
  read, atomically, under the heads lock, skipped while another process holds
  it) -- it changes nothing else -- so the second read of a copied bundle only
  stats. A process keeps its decoding of
  the cache file while the file's own fingerprint is unchanged (and was trusted
  when read), so a long-lived reader (the MCP server) only stats.
- Writers refresh it: every Desk write that names a task path (``after_write``
  in ``ouro.derived``) calls ``refresh_heads(bundle, paths)``, which
  validates every entry the same way (only changed tasks are read, so edits
  made outside ouro are absorbed too) and replaces the file atomically under
  ``state/locks/heads.lock``. ``ouro index sync`` and ``rebuild`` refresh it as
  well. A refresh that fails leaves the old cache in place, which readers
  validate anyway, so the write it follows stands.
- An unreadable task becomes a problem string (``<locator>: reason``), never a
  head with made-up fields.
"""

from __future__ import annotations

import _thread  # threading.local is _thread._local; threading itself costs ~4M instructions
import array
import contextlib
import heapq
import marshal
import operator
import os
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from stat import S_ISLNK

from ouro.bundle import Bundle
from ouro.errors import CorruptFile, OuroError
from ouro.store import stamp as stamps
from ouro.store.bounded import DOC_LIMIT, NotRegularFile, file_text, open_regular
from ouro.store.guard import Inside, is_dir, outside
from ouro.store.stamp import Stamp as Fp

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any, NamedTuple, TypeVar

    T = TypeVar("T")
else:
    from ouro.tuples import NamedTuple

SCHEMA = 10  # 3: marshal rows, per-folder listings, ctime in the fingerprint; 4: rest blob;
# 5: fingerprints packed as int64; 6: fingerprints as four columns; 7: the check in each row;
# 8: the packet's ready rows (``READY_KEPT``, no clock) saved with the rows they come from;
# 9: the shown rows in a blob of their own (``freshness`` leaves them undecoded);
# 10: listings leave out task folders behind a symlink leading outside the bundle
MAGIC = b"ouro-desk-heads"
FIELDS = (
    "id",
    "title",
    "status",
    "priority",
    "created",
    "updated",
    "heldBy",
    "leaseUntil",
    "unverified",
    "blockedBy",
    "parent",
    "check",
)
#: statuses orient does not show (unless ``unverified``): their rows stay packed
CLOSED = frozenset({"done", "dropped"})
#: open tasks kept per track among the shown rows (orient shows at most this many)
TOP_OPEN = 20
#: ready tasks (no clock) the cache file keeps: the packet's ready section
READY_KEPT = 5
#: the ``DeskHeads.derived`` key of those ready rows (``ready_kept``)
READY_KEY = "ready-kept"

#: the fingerprints as columns: (sizes, mtimes_ns, ctimes_ns, inodes); each an
#: ``array("q")`` as read from the cache file (a list if a value overflows int64,
#: or as a scan made them)
if TYPE_CHECKING:
    Column = array.array[int] | list[int]
else:
    Column = list
Cols = tuple[Column, Column, Column, Column]
#: (priority, created, id, track, key, status, title, updated, heldBy,
#:  leaseUntil, unverified, blockedBy, parent, check)
if TYPE_CHECKING:
    Row = tuple[Any, ...]
else:
    Row = tuple


def heads_path(bundle: Bundle) -> Path:
    return bundle.state / "cache" / "desk-heads.bin"


class Head(NamedTuple):
    """What orientation shows of a task, from its front matter."""

    file: str  # the task.md path (a string: Path objects cost ~50 µs each)
    locator: str
    id: str
    status: str
    priority: int
    title: str
    created: str
    updated: str
    held_by: str | None
    lease_until: str | None
    #: completed without a passing check: the reason (``unverified`` in the file)
    unverified: str | None
    #: the task ids this task waits for (``blockedBy``) and its ``parent``
    blocked_by: tuple[str, ...] = ()
    parent: str | None = None

    @property
    def path(self) -> Path:
        return Path(self.file)

    @property
    def track(self) -> str:
        return self.locator.split("/", 2)[1]


def _str(value: Any) -> str:
    return "" if value is None else str(value)


def _opt(value: Any) -> str | None:
    return None if value is None else str(value)


def _ids(value: Any) -> tuple[str, ...]:
    """``blockedBy`` as ids; a hand-written single id counts as one."""
    if isinstance(value, list):
        return tuple(str(v) for v in value if v)
    return (str(value),) if value else ()


def _row(key: str, meta: dict[str, Any]) -> Row:
    priority = meta.get("priority")
    held = meta.get("heldBy") or meta.get("claimedBy")  # claimedBy: the old name
    check = meta.get("check")
    return (
        priority if isinstance(priority, int) and not isinstance(priority, bool) else 9,
        _str(meta.get("created")),
        _str(meta.get("id")),
        key.partition("/")[0],
        key,
        _str(meta.get("status")),
        _str(meta.get("title")),
        _str(meta.get("updated")),
        str(held) if held else None,
        _opt(meta.get("leaseUntil")),
        _opt(meta.get("unverified") or None),
        _ids(meta.get("blockedBy")),
        _opt(meta.get("parent") or None),
        check if isinstance(check, str) else None,
    )


def _is_hot(row: Row) -> bool:
    return row[5] not in CLOSED or bool(row[10])


def head_of(desk: str, row: Row) -> Head:
    key = row[4]
    return Head(
        f"{desk}{os.sep}{key}{os.sep}task.md",
        f"desk/{key}/task.md",
        row[2],
        row[5],
        row[0],
        row[6],
        row[1],
        row[7],
        row[8],
        row[9],
        row[10],
        row[11],
        row[12],
    )


#: the front-matter keys a head is made of (``heldBy`` was ``claimedBy`` before)
WANTED = frozenset(FIELDS) | {"claimedBy"}


def require_id(meta: dict[str, Any], locator: str) -> None:
    """A task.md is a task only with an ``id`` in its front matter: one without
    (no front matter at all, or a blank id) is a malformed file, reported by its
    locator (``CorruptFile``), never listed as a task with an empty id. Every
    reader of task files (heads, ``tasks.load_task``, the index) asks this."""
    if not _str(meta.get("id")):
        raise CorruptFile(f"{locator}: the front matter has no id", hint="add 'id: t-…'")


def _read_task(key: str, path: str) -> Row:
    """The head row of one task.md; raises CorruptFile when unreadable."""
    from ouro.store.frontmatter import parse

    locator = f"desk/{key}/task.md"
    try:
        text = file_text(path)  # a FIFO: refused, never a hang
    except NotRegularFile as exc:
        raise CorruptFile(
            f"{locator}: {exc.strerror}",
            hint="replace it with a regular file; ouro left it untouched",
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CorruptFile(
            f"{locator}: unreadable ({exc})", hint="fix the file by hand; ouro left it untouched"
        ) from None
    meta, _body = parse(text, source=locator, keys=WANTED)
    require_id(meta, locator)
    return _row(key, meta)


# --- the cache file ---------------------------------------------------------------


class _Cache(NamedTuple):
    recorded: int
    desk_fp: Fp | None
    tracks: list[tuple[str, Fp | None, list[str]]]
    rels: list[str]
    fps: Cols
    #: decoded, or still packed in a cache read for ``freshness`` only
    shown: list[Row] | _Packed
    counts: dict[tuple[str, str], int]
    rest: _Packed
    closed: _Packed
    #: what readers derived from these rows while every task file still had its
    #: cached stamp (``DeskHeads.derived``; the saved ready rows under ``READY_KEY``);
    #: lives and dies with this decoding
    memo: dict[object, Any]


class _Packed(NamedTuple):
    """Rows still marshalled: decoded only when asked for."""

    data: bytes | memoryview
    crc: int

    def rows(self) -> list[Row]:
        if zlib.crc32(self.data) != self.crc:
            return []  # damaged: those tasks are read from their files
        try:
            rows = marshal.loads(self.data)
        except (ValueError, TypeError, EOFError):
            return []
        return rows if type(rows) is list else []


#: cache file path -> (its fingerprint, the decoded cache): a process that reads
#: the same (trusted, unchanged) cache file again reuses the decoding; every task
#: file is still checked on every read
_LOADED: dict[str, tuple[Fp, _Cache]] = {}


def _load_cache(bundle: Bundle, *, rows: bool = True) -> _Cache | None:
    """The cache file, or None when missing, not ours or damaged. ``rows=False``:
    the shown rows are left packed (``freshness``: only the stamps are compared),
    and that decoding is not kept for the next read."""
    path = os.fspath(heads_path(bundle))
    try:
        with open(open_regular(path), "rb") as handle:  # a FIFO: no cache
            st = os.fstat(handle.fileno())  # the fingerprint of exactly these bytes
            known = _LOADED.get(path)
            if known is not None and known[0] == _fp(st):
                return known[1]
            if st.st_size > DOC_LIMIT:
                return None  # not one ouro wrote: rebuilt, never read whole
            data = handle.read(DOC_LIMIT + 1)
    except OSError:
        return None
    cache = _parse_cache(data, rows=rows)
    if rows and cache is not None and _trusted(st, time.time_ns()) is not None:
        _LOADED[path] = (_fp(st), cache)
    return cache


def _parse_cache(data: bytes, *, rows: bool = True) -> _Cache | None:
    end = data.find(b"\n", 0, 200)
    parts = data[:end].split(b" ")
    if end < 0 or len(parts) != 10 or parts[0] != MAGIC or parts[1] != b"%d" % SCHEMA:
        return None
    try:
        recorded, length, shown_length, rest_length = (int(p) for p in parts[2:6])
        crc, shown_crc, rest_crc, closed_crc = (int(p) for p in parts[6:])
        view = memoryview(data)  # slices without copying the (large) payload
        start = end + 1
        main = view[start : start + length]
        if zlib.crc32(main) != crc:
            return None
        desk_fp, tracks, rels, packed, counts, ready = marshal.loads(main)
        start += length
        packed_shown = _Packed(view[start : start + shown_length], shown_crc)
        shown: list[Row] | _Packed = packed_shown
        if rows:
            if zlib.crc32(packed_shown.data) != shown_crc:
                return None
            shown = marshal.loads(packed_shown.data)
            if type(shown) is not list:
                return None
        start += shown_length
        rest = _Packed(view[start : start + rest_length], rest_crc)
        closed = _Packed(view[start + rest_length :], closed_crc)
        fps = _unpack_cols(packed, len(rels))
        if type(ready) is not list:
            return None
        memo: dict[object, Any] = {READY_KEY: ready}
        cache = _Cache(recorded, desk_fp, tracks, rels, fps, shown, counts, rest, closed, memo)
    except (ValueError, TypeError, EOFError):
        return None
    if (
        type(cache.tracks) is not list
        or type(cache.rels) is not list
        or type(cache.counts) is not dict
    ):
        return None
    return cache


def _unpack_cols(packed: object, count: int) -> Cols:
    """The stored columns (arrays, or the lists stored); raises ValueError when
    they do not fit."""
    if type(packed) is not tuple or len(packed) != 4:
        raise ValueError("not four fingerprint columns")
    cols: list[Column] = []
    for col in packed:
        if type(col) is bytes and len(col) == 8 * count:
            values = array.array("q")
            values.frombytes(col)  # no int object per value until one is looked at
            cols.append(values)
        elif type(col) is list and len(col) == count:
            cols.append(col)
        else:
            raise ValueError("a fingerprint column of a wrong length")
    return cols[0], cols[1], cols[2], cols[3]


def _pack_cols(cols: Cols) -> tuple[bytes | list[int], ...]:
    """Each column as packed int64, or kept a list when a value overflows int64."""
    out: list[bytes | list[int]] = []
    for col in cols:
        try:
            out.append(array.array("q", col).tobytes())
        except OverflowError:
            out.append(list(col))
    return tuple(out)


def _dump(cache: _Cache, rest: bytes, closed: bytes) -> bytes:
    main = marshal.dumps(
        (
            cache.desk_fp,
            cache.tracks,
            cache.rels,
            _pack_cols(cache.fps),
            cache.counts,
            cache.memo[READY_KEY],
        ),
        4,
    )
    shown = marshal.dumps(_unpacked(cache.shown), 4)
    head = b"%s %d %d %d %d %d %d %d %d %d\n" % (
        MAGIC,
        SCHEMA,
        cache.recorded,
        len(main),
        len(shown),
        len(rest),
        zlib.crc32(main),
        zlib.crc32(shown),
        zlib.crc32(rest),
        zlib.crc32(closed),
    )
    return head + main + shown + rest + closed


def _unpacked(rows: list[Row] | _Packed) -> list[Row]:
    return rows.rows() if isinstance(rows, _Packed) else rows


# --- reading ----------------------------------------------------------------------


_fp = stamps.of
_trusted = stamps.trusted  # the one racy rule (``ouro.store.stamp``)


class _Scan(NamedTuple):
    """What a read found: the listing, every task's stat, the rows."""

    desk_st: os.stat_result | None
    tracks: list[tuple[str, os.stat_result | None, list[str]]]
    rels: list[str]
    stats: list[os.stat_result | None]  # None: cannot stat (a problem)
    shown: list[Row]  # every hot row, or (packed) see the cache's ``shown``
    rest: _Packed | list[Row]  # still packed (from the cache) or rows
    closed: _Packed | list[Row]
    counts: dict[tuple[str, str], int] | None  # from the cache; None: count the rows
    problems: dict[str, str]  # rel -> reason
    #: True when nothing differs from the cache (a writer need not rewrite it)
    same: bool
    #: the cache's ``memo`` when ``same``, else None (nothing may be reused)
    memo: dict[object, Any] | None = None


def _listing(
    desk: str, cache: _Cache | None, inside: Inside, skipped: dict[str, str]
) -> tuple[os.stat_result | None, list[tuple[str, os.stat_result | None, list[str]]]]:
    """(desk stat, [(track, track stat, folders)]), reusing cached listings whose
    folder fingerprint is unchanged.

    Nothing behind a symlink leading outside the bundle is listed: the desk
    folder is resolved once, a track by its ``lstat`` (in place of a ``stat``),
    a task folder only when its listing says symlink. Each such path goes to
    ``skipped`` (locator -> problem); its track keeps no fingerprint, so it is
    looked at (and reported) again on every read."""
    try:
        desk_st = os.stat(desk)
    except (FileNotFoundError, NotADirectoryError):
        return None, []
    if inside.folder(desk) is None:
        skipped["desk"] = outside("desk")
        return None, []
    cached = {t[0]: t for t in cache.tracks} if cache is not None else {}
    if cache is not None and cache.desk_fp is not None and cache.desk_fp == _fp(desk_st):
        names = [t[0] for t in cache.tracks]
    else:
        with os.scandir(desk) as entries:
            names = sorted(
                e.name for e in entries if is_dir(e) and not e.name.startswith(("_", "."))
            )
    out: list[tuple[str, os.stat_result | None, list[str]]] = []
    for name in names:
        base = f"{desk}{os.sep}{name}"
        try:
            st = os.lstat(base)
            if S_ISLNK(st.st_mode):
                if not inside.path(base):
                    skipped[f"desk/{name}"] = outside(f"desk/{name}")
                    out.append((name, None, []))
                    continue
                st = os.stat(base)
        except (FileNotFoundError, NotADirectoryError):
            continue
        old = cached.get(name)
        if old is not None and old[1] is not None and old[1] == _fp(st):
            out.append((name, st, old[2]))
            continue
        try:
            with os.scandir(base) as entries:
                found = [e for e in entries if is_dir(e)]  # a loop is skipped
        except (FileNotFoundError, NotADirectoryError):
            continue
        folders = []
        trusted: os.stat_result | None = st
        for e in found:
            if e.is_symlink() and not inside.entry(e, base):
                rel = f"desk/{name}/{e.name}"
                skipped[rel] = outside(rel)
                trusted = None  # no fingerprint: listed (and reported) on every read
            else:
                folders.append(e.name)
        out.append((name, trusted, sorted(folders)))
    return desk_st, out


#: the value of every column for an entry that is not trusted (no size is -1)
_UNTRUSTED = -1
_FP = operator.attrgetter("st_size", "st_mtime_ns", "st_ctime_ns", "st_ino")
_MODE = operator.attrgetter("st_mode")
#: the columns the steady-state read compares, each whole as one list (in C):
#: any write, truncate, ``utime`` or ``chmod`` sets a file's ctime to the current
#: time, which is past a trusted fingerprint's (only files unchanged for
#: ``RACY_NS`` get one), and a file put in another's place has its own inode; so
#: a changed task never keeps both (short of the clock stepping back onto the
#: same tick). The size and mtime columns add nothing the ctime does not; an
#: entry looked at on its own is compared on all four fields.
_CHECKED = (
    (2, operator.attrgetter("st_ctime_ns")),
    (3, operator.attrgetter("st_ino")),
)


def _same_column(now: Iterable[int], old: Column) -> bool:
    """The values ``now`` equal the cached column (compared whole, in C)."""
    if type(old) is list:
        return list(now) == old
    try:
        return array.array("q", now) == old
    except OverflowError:  # a value past int64: not what the column holds
        return False


def _to_cols(fps: list[Fp | None]) -> Cols:
    untrusted = (_UNTRUSTED,) * 4
    if not fps:
        return [], [], [], []
    sizes, mtimes, ctimes, inodes = zip(*(fp or untrusted for fp in fps), strict=True)
    return list(sizes), list(mtimes), list(ctimes), list(inodes)


def _fp_list(fps: Cols | list[Fp | None]) -> list[Fp | None]:
    if isinstance(fps, list):
        return fps
    return [None if fp[0] < 0 else fp for fp in zip(*fps, strict=True)]


def _stat_all(desk: str, rels: list[str]) -> list[Any]:
    """One stat per task file, relative to the desk folder (a shorter path walk
    than absolute paths), in a tight loop: the stat, ``False`` for a missing file,
    ``None`` for one that cannot be stat'ed. A final symlink is not followed
    (the same syscall): ``_links`` settles those when a read looks further."""
    try:
        fd = os.open(desk, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return [_stat_one(f"{desk}{os.sep}{rel}", None) for rel in rels]
    try:
        try:
            return [os.stat(rel, dir_fd=fd, follow_symlinks=False) for rel in rels]
        except OSError:
            return [_stat_one(rel, fd) for rel in rels]
    finally:
        os.close(fd)


def _links(desk: str, rels: list[str], stats: list[Any]) -> set[str]:
    """Settle the task files that are symlinks, in place: stat'ed through when
    they stay inside the bundle, else ``None``; returns the latter's rels.

    Not needed when every stamp equals the cached one: a cached stamp is never
    a link's own (this runs before any is saved), and a link's own inode and
    ctime are not its target's."""
    if not any(map(S_ISLNK, map(_MODE, filter(None, stats)))):
        return set()
    outs = set()
    inside = Inside(os.path.dirname(desk))
    for i, st in enumerate(stats):
        if st and S_ISLNK(st.st_mode):
            path = f"{desk}{os.sep}{rels[i]}"
            if inside.path(path):
                stats[i] = _stat_one(path, None, follow=True)
            else:
                stats[i] = None
                outs.add(rels[i])
    return outs


def _stat_one(path: str, fd: int | None, *, follow: bool = False) -> Any:
    try:
        return os.stat(path, dir_fd=fd, follow_symlinks=follow)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError:
        return None


def _same_listing(
    tracks: list[tuple[str, os.stat_result | None, list[str]]], cache: _Cache
) -> bool:
    if len(tracks) != len(cache.tracks):
        return False
    return all(
        new[0] == old[0] and new[2] == old[2] for new, old in zip(tracks, cache.tracks, strict=True)
    )


def _scan(bundle: Bundle, cache: _Cache | None, *, rows: bool = True) -> _Scan:
    """What a read finds. ``rows=False`` (``freshness``): when every task file has
    its cached stamp the scan holds no rows (only ``same`` and the stamps are read)."""
    desk = str(bundle.desk)
    skipped: dict[str, str] = {}  # locator -> problem: behind a symlink leading outside
    desk_st, tracks = _listing(desk, cache, Inside(bundle.root), skipped)
    old: Cols | list[Fp | None]
    if cache is not None and _same_listing(tracks, cache):
        # The listing is the cached one: the candidates are the cached files, plus
        # folders that had no task.md then (rare; they may have one now).
        rels, old = cache.rels, cache.fps
        if sum(len(t[2]) for t in tracks) != len(rels):
            rels, old = list(rels), list(_fp_list(old))
            have = set(rels)
            for name, _st, folders in tracks:
                for folder in folders:
                    if f"{name}/{folder}/task.md" not in have:
                        rels.append(f"{name}/{folder}/task.md")
                        old.append(None)
    else:
        rels = [f"{name}/{folder}/task.md" for name, _st, folders in tracks for folder in folders]
        index = {r: i for i, r in enumerate(cache.rels)} if cache is not None else {}
        cached = _fp_list(cache.fps) if cache is not None else []
        old = [cached[index[r]] if r in index else None for r in rels]
    stats = _stat_all(desk, rels)
    if cache is not None and old is cache.fps and len(rels) == len(cache.rels):
        # the steady state: each fingerprint column compared whole, as one list
        # (an untrusted entry, -1 in every column, never matches)
        try:
            same = all(_same_column(map(get, stats), old[col]) for col, get in _CHECKED)
        except AttributeError:  # a missing-file marker
            same = False
        if same:
            return _Scan(
                desk_st,
                tracks,
                rels,
                stats,
                _unpacked(cache.shown) if rows else [],
                cache.rest,
                cache.closed,
                cache.counts,
                skipped,
                True,
                cache.memo,
            )
    outs = _links(desk, rels, stats)
    old_fps = _fp_list(old)
    now = [_FP(s) if s else None for s in stats]
    changed = [i for i, (a, b) in enumerate(zip(now, old_fps, strict=True)) if a is None or a != b]
    hot: list[Row] = []
    closed: list[Row] = []
    held: list[Row] = []  # the cached rows of the changed (or removed) task files
    fresh: list[Row] = []  # the rows read from them now
    if cache is not None:
        gone = {rels[i][:-8] for i in changed} | {r[:-8] for r in set(cache.rels) - set(rels)}
        for r in (*_unpacked(cache.shown), *cache.rest.rows()):
            (held if r[4] in gone else hot).append(r)
        for r in cache.closed.rows():
            (held if r[4] in gone else closed).append(r)
    problems: dict[str, str] = {}
    for i in changed if cache is not None else range(len(rels)):
        st = stats[i]
        if st is False:
            continue  # no task.md (a folder without one, or removed since the listing)
        key = rels[i][:-8]
        if st is None:
            if rels[i] in outs:
                problems[rels[i]] = outside(f"desk/{rels[i]}")
            else:
                problems[rels[i]] = f"desk/{rels[i]}: cannot stat it"
            continue
        try:
            row = _read_task(key, f"{desk}{os.sep}{rels[i]}")
        except CorruptFile as exc:
            problems[rels[i]] = exc.message
            continue
        (hot if _is_hot(row) else closed).append(row)
        fresh.append(row)
    if (
        cache is not None
        and not problems
        and rels == cache.rels
        and all(stats)
        and len(fresh) == len(held) == len(changed)
        and sorted(fresh) == sorted(held)
    ):
        # Every changed task file read back to the row the cache holds for it:
        # its stamp moved, its head did not (a copy's new ctimes and inodes, a
        # racy stamp now settled, a ``touch``). The rows stay the cache's, still
        # packed, with the memo of their pure functions; the scan is not ``same``,
        # so a heal saves the new stamps without re-sorting, re-splitting or
        # re-deriving every row.
        shown = _unpacked(cache.shown)
        return _Scan(
            desk_st, tracks, rels, stats, shown, cache.rest, cache.closed, cache.counts,
            skipped, False, cache.memo,
        )  # fmt: skip
    hot.sort()
    keep = [i for i, st in enumerate(stats) if st is not False]
    return _Scan(
        desk_st,
        tracks,
        [rels[i] for i in keep],
        [stats[i] or None for i in keep],
        hot,
        [],
        closed,
        None,
        {**skipped, **problems},
        False,
    )


def _by_locator(row: Row) -> tuple[str, str]:
    return (row[3], row[4])  # track, then folder (keys share the "track/" prefix)


def _held(held_by: str | None, lease_until: str | None, now: datetime | None) -> bool:
    if not held_by:
        return False
    if now is None:
        return True
    from ouro.models.clock import parse_time

    try:
        return lease_until is not None and parse_time(lease_until) > now
    except ValueError:
        return False  # an unreadable lease holds nobody (ouro.desk.tasks.lease_end)


def ready_rows(
    rows: list[Row], *, track: str | None, now: datetime | None, limit: int | None
) -> tuple[list[Row], dict[str, list[str]]]:
    """Ready work among every task's row (``ouro.desk.ready``'s contract): (the
    ready rows, most urgent then oldest first, at most ``limit``; open task id ->
    its blockers not done). ``now=None``: any holder counts. Pure."""
    status_of = {r[2]: r[5] for r in rows}
    if len(status_of) != len(rows):
        # two folders share an id: the last by locator speaks for it, as everywhere
        rows = sorted(rows, key=_by_locator)
        status_of = {r[2]: r[5] for r in rows}
    waiting: dict[str, list[str]] = {}
    ready = []
    # Rows, not heads: the packet asks on every prompt, and a year's desk holds
    # thousands of open tasks; a Head is made only for the ready ones returned.
    for row in rows:
        if row[5] != "open" or (track is not None and row[3] != track):
            continue
        blockers = [b for b in row[11] if status_of.get(b) != "done"]  # unknown: not done
        if blockers:
            waiting[row[2]] = blockers
        elif not _held(row[8], row[9], now):
            ready.append(row)
    key = lambda r: (r[0], r[1], r[2])  # noqa: E731 -- priority, created, id (unique here)
    if limit is None:
        ready.sort(key=key)
    else:
        ready = heapq.nsmallest(limit, ready, key=key)
    return ready, waiting


def ready_kept(heads: DeskHeads) -> list[Row]:
    """The first ``READY_KEPT`` ready rows, no clock (the packet's ready section):
    saved in the cache file with the rows they come from, so a read that finds
    every task file unchanged takes them from there (``DeskHeads.derived``)."""
    return heads.derived(
        READY_KEY,
        lambda h: ready_rows(h.rows(ordered=False), track=None, now=None, limit=READY_KEPT)[0],
    )


class DeskHeads:
    """One read of the heads, in orient's order (priority, created, id).

    ``hot`` holds every task orient can show except, when the cache held,
    open tasks past the first ``TOP_OPEN`` of their track; the rest are decoded
    only when asked for.
    """

    def __init__(self, desk: str, scan: _Scan) -> None:
        self.desk = desk
        self._scan = scan
        self.hot: list[Row] = scan.shown
        order = sorted(scan.problems, key=lambda rel: rel.split("/", 2))
        self.problems: list[str] = [scan.problems[k] for k in order]

    def head(self, row: Row) -> Head:
        return head_of(self.desk, row)

    def derived(self, key: object, make: Callable[[DeskHeads], T]) -> T:
        """``make(self)``, a pure function of the rows, kept with the decoded cache
        while this read found every task file with its cached stamp (``same``): a
        process that reads the unchanged desk again (an MCP server's next packet)
        gets it back instead of walking every row again. Any changed, added or
        removed task file makes the read not ``same``, and a rewritten cache file
        is decoded afresh, so nothing outlives its rows. Treat the value as
        read-only."""
        memo = self._scan.memo
        if memo is None:
            return make(self)
        if key not in memo:
            memo[key] = make(self)
        value: T = memo[key]
        return value

    def _rest(self) -> list[Row]:
        rest = self._scan.rest
        return rest.rows() if isinstance(rest, _Packed) else rest

    def closed_rows(self) -> list[Row]:
        closed = self._scan.closed
        return closed.rows() if isinstance(closed, _Packed) else closed

    def count(self, track: str, status: str) -> int:
        """Tasks of ``track`` with a hot ``status`` (open, active, blocked, …)."""
        counts = self._scan.counts
        if counts is not None:
            return counts.get((track, status), 0)
        return sum(1 for r in self.hot if r[3] == track and r[5] == status)

    def open_rows(self, skip: set[str]) -> list[Row]:
        """Open rows in order, complete enough for the first ``TOP_OPEN`` of any
        set of tracks once the ids in ``skip`` are left out."""
        rows = self.hot
        if skip and isinstance(self._scan.rest, _Packed):
            rows = sorted([*rows, *self._rest()])  # a skipped id may hide a later one
        return [r for r in rows if r[5] == "open" and r[2] not in skip]

    def checked_by(self, command: str) -> list[Head]:
        """Tasks not done or dropped whose declared ``check``, trimmed, is ``command``
        (sorted by track, then folder): what a host's report of ``command`` is a
        receipt for. Unreadable tasks are in ``problems``, never here."""
        rows = [
            r
            for r in (*self.hot, *self._rest())
            if r[5] not in CLOSED and r[13] is not None and r[13].strip() == command
        ]
        rows.sort(key=_by_locator)
        return [head_of(self.desk, r) for r in rows]

    def find(self, task_id: str) -> Head | None:
        """The head with this id (the last by locator when copies share one)."""
        rows = (
            [r for r in self.hot if r[2] == task_id]
            or [r for r in self._rest() if r[2] == task_id]
            or [r for r in self.closed_rows() if r[2] == task_id]
        )
        return self.head(max(rows, key=_by_locator)) if rows else None

    def rows(self, *, ordered: bool = True) -> list[Row]:
        """Every task's row, sorted by track, then folder (as ``all``), without
        making a ``Head`` of each: a reader that keeps a few makes only those.
        ``ordered=False``: in no particular order (a reader that sorts its own)."""
        rows = [*self.hot, *self._rest(), *self.closed_rows()]
        if ordered:
            rows.sort(key=_by_locator)
        return rows

    def all(self) -> list[Head]:
        rows = [*self.hot, *self._rest(), *self.closed_rows()]
        rows.sort(key=_by_locator)
        return [head_of(self.desk, r) for r in rows]


#: per thread, inside ``one_read``: the heads that read took, by desk folder
_ONE = _thread._local()


@contextlib.contextmanager
def one_read() -> Iterator[None]:
    """One read made of several (the orientation packet: its Desk section, the
    ready tasks): every part that asks for the heads gets the one scan the first
    made (one ``stat`` per task, once), instead of one scan each. Nothing
    outlives the block."""
    outer = getattr(_ONE, "taken", None)
    _ONE.taken = {} if outer is None else outer
    try:
        yield
    finally:
        _ONE.taken = outer


def desk_heads(bundle: Bundle, *, heal: bool = True) -> DeskHeads:
    """The heads as of now, validated per file.

    Changes nothing but this machine-local cache: when the read found the cache
    missing or stale (``heal``), it saves what it read (``_heal``), so the next
    read of a copied or cloned bundle only stats. Inside ``one_read`` the first
    scan serves the whole read."""
    taken: dict[str, DeskHeads] | None = getattr(_ONE, "taken", None)
    if taken is not None:
        found = taken.get(str(bundle.desk))
        if found is None:
            found = taken[str(bundle.desk)] = _desk_heads(bundle, heal=heal)
        return found
    return _desk_heads(bundle, heal=heal)


def _desk_heads(bundle: Bundle, *, heal: bool) -> DeskHeads:
    scanned_at = time.time_ns()
    seen = stamps.stat(heads_path(bundle)) if heal else None
    cache = _load_cache(bundle)
    scan = _scan(bundle, cache)
    if heal and not scan.same:
        _heal(bundle, seen, cache, scan, scanned_at)
    return DeskHeads(str(bundle.desk), scan)


def freshness(bundle: Bundle) -> tuple[str, str | None]:
    """("fresh" | "stale" | "missing", why) of the cache file against the task
    files (pure: a read-only scan, no heal)."""
    cache = _load_cache(bundle, rows=False)
    if cache is None:
        exists = heads_path(bundle).exists()
        return ("stale", "unreadable or of another ouro") if exists else ("missing", None)
    scan = _scan(bundle, cache, rows=False)
    if scan.same:
        return "fresh", None
    untrusted = sum(1 for fp in _fp_list(cache.fps) if fp is None)
    if untrusted and len(scan.rels) == len(cache.rels):
        return "stale", f"{untrusted} task file(s) changed within the racy window; read again"
    return "stale", "task files changed since it was saved; the next read saves them"


def read_heads(bundle: Bundle) -> tuple[list[Head], list[str]]:
    """Every task's head (sorted by track, then folder) and the unreadable ones. Pure."""
    found = desk_heads(bundle)
    return found.all(), found.problems


# --- writing ----------------------------------------------------------------------


def _keys_for(bundle: Bundle, paths: Iterable[Path]) -> set[str] | None:
    """Cache keys the paths touch; None when a whole track (or more) changed."""
    desk = os.path.abspath(bundle.desk)
    keys: set[str] = set()
    for raw in paths:
        full = os.path.abspath(raw if Path(raw).is_absolute() else bundle.root / raw)
        if not full.startswith(desk + os.sep):
            continue
        parts = full[len(desk) + 1 :].split(os.sep)
        if parts[0].startswith(("_", ".")):
            continue
        if len(parts) < 2:
            return None
        keys.add(f"{parts[0]}/{parts[1]}")
    return keys


def touches_tasks(bundle: Bundle, paths: Iterable[Path]) -> bool:
    keys = _keys_for(bundle, paths)
    return keys is None or bool(keys)


def refresh_heads(bundle: Bundle, paths: Iterable[Path] | None = None) -> None:
    """Bring the cache up to date for ``paths`` (None: every task). Writers call this."""
    from ouro.store.lock import FileLock

    if paths is not None and not touches_tasks(bundle, paths):
        return
    with FileLock(bundle.lock_path("heads"), purpose="desk heads refresh"):
        # Every entry is validated (one stat per task; only changed tasks are
        # read), so edits made outside ouro are absorbed by the next write too.
        scanned_at = time.time_ns()
        cache = _load_cache(bundle)
        _save(bundle, cache, _scan(bundle, cache), scanned_at)


def _heal(
    bundle: Bundle, seen: Fp | None, cache: _Cache | None, scan: _Scan, scanned_at: int
) -> None:
    """Save a read's scan when the cache was missing or stale (under the heads
    lock; skipped when another process holds it: that one is refreshing it).
    Only trusted stamps are saved, so an entry another process changed after
    this scan is read again by the next reader. A failure leaves the old cache."""
    from ouro.store.lock import FileLock

    lock = FileLock(bundle.lock_path("heads"), purpose="desk heads heal")
    with contextlib.suppress(OSError, OuroError):
        if not lock.try_acquire():
            return
        try:
            if stamps.stat(heads_path(bundle)) == seen:  # nobody saved one since this read
                _save(bundle, cache, scan, scanned_at, heal=True)
        finally:
            lock.release()


def _save(
    bundle: Bundle, cache: _Cache | None, scan: _Scan, now: int, *, heal: bool = False
) -> None:
    """Write ``scan`` as the cache (heads lock held), unless it holds the same.
    ``now``: when the scan started (a stamp is trusted only if the file had
    not changed for ``RACY_NS`` before its stat). A writer saves unless every
    entry held; a heal also skips the write when the stamps it would save are
    the cached ones (an untrusted entry is read again by every reader whatever
    its cached row, so rewriting the file for it on every read buys nothing)."""
    from ouro.store.atomic import atomic_write_bytes

    fps = [
        None if rel in scan.problems else _trusted(st, now)
        for rel, st in zip(scan.rels, scan.stats, strict=True)
    ]
    tracks = [(name, _trusted(st, now), folders) for name, st, folders in scan.tracks]
    desk_fp = _trusted(scan.desk_st, now)
    if (
        cache is not None
        and (scan.same or heal)
        and scan.rels == cache.rels
        and fps == _fp_list(cache.fps)
        and tracks == cache.tracks
        and desk_fp == cache.desk_fp
    ):
        return  # nothing to write
    if isinstance(scan.closed, _Packed):
        closed = bytes(scan.closed.data)
    else:
        closed = marshal.dumps(sorted(_interned(r) for r in scan.closed), 4)
    if isinstance(scan.rest, _Packed) and scan.counts is not None:
        shown, rest, counts = scan.shown, bytes(scan.rest.data), scan.counts
    else:
        more = scan.rest.rows() if isinstance(scan.rest, _Packed) else scan.rest
        rows = sorted(_interned(r) for r in (*scan.shown, *more))
        shown, rest_rows, counts = _split(rows)
        rest = marshal.dumps(rest_rows, 4)
    if scan.memo is not None and READY_KEY in scan.memo:  # the rows are the cached ones
        ready = scan.memo[READY_KEY]
    else:
        more = scan.rest.rows() if isinstance(scan.rest, _Packed) else scan.rest
        done = scan.closed.rows() if isinstance(scan.closed, _Packed) else scan.closed
        everything = [*scan.shown, *more, *done]
        ready = ready_rows(everything, track=None, now=None, limit=READY_KEPT)[0]
    empty = _Packed(b"", 0)
    fresh = _Cache(
        now, desk_fp, tracks, scan.rels, _to_cols(fps), shown, counts, empty, empty,
        {READY_KEY: ready},
    )  # fmt: skip
    target = heads_path(bundle)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, _dump(fresh, rest, closed))


def _split(rows: list[Row]) -> tuple[list[Row], list[Row], dict[tuple[str, str], int]]:
    """(shown, rest, counts) of the sorted hot rows: open rows past the first
    ``TOP_OPEN`` of their track go to rest."""
    shown: list[Row] = []
    rest: list[Row] = []
    counts: dict[tuple[str, str], int] = {}
    for row in rows:
        key = (row[3], row[5])
        n = counts[key] = counts.get(key, 0) + 1
        (rest if row[5] == "open" and n > TOP_OPEN else shown).append(row)
    return shown, rest, counts


def _interned(row: Row) -> Row:
    """Repeated short strings (status, track) as one object, so marshal stores them once."""
    return (*row[:3], sys.intern(row[3]), row[4], sys.intern(row[5]), *row[6:])
