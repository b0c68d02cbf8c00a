"""One append-log cursor: "has this log only grown since I read it?".

A derived file that follows an append-only log (``facts.jsonl`` for the index,
the diary state and ``entities.json``) remembers how far it has read with a
``Cursor``: the byte ``offset`` it consumed up to (the end of a complete line),
the log's ``inode``, its stamp when the cursor was taken (``ouro.store.stamp``)
and whether that stamp was trusted (taken outside the racy window), and a
digest of the ``TAIL`` bytes before ``offset``.

``follow(read, st, cursor)`` says what happened to the log since:

- ``UNCHANGED``: the same file, not grown (its trusted stamp is the same; a
  racy one is the same and the tail still digests the same);
- ``GROWN``: the same file with bytes after ``offset`` -- only those are
  replayed;
- ``REWRITTEN``: another inode (replaced, or a copy: ``cp -a``, a clone), a
  shorter file, a file of the same size whose stamp moved, or different bytes
  before ``offset``. The follower replays the whole log.

A rewrite that grows the file and keeps the ``TAIL`` bytes before ``offset``
in place passes as growth; that is the price of an O(1) check on a log of any
size (docs/index.md). An append in flight can look like a rewrite for a moment
(a write may set the new mtime before the new size): callers that read without
the log's lock look again under it before they replay everything.

``text``/``parse`` are its one encoding:
``c1:<offset>:<inode>:<stamp>:<t (trusted) | r (racy)>:<tail digest>``.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ouro.store import stamp as stamps
from ouro.store.stamp import Stamp

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Final, NamedTuple
else:
    from ouro.tuples import NamedTuple

try:  # hashlib's own blake2b, without hashlib's OpenSSL start-up (ouro.arc.fold does the same)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - a Python built without _blake2
    from hashlib import blake2b

#: bytes before the offset whose digest the cursor keeps
TAIL: Final = 64
UNCHANGED: Final = "unchanged"
GROWN: Final = "grown"
REWRITTEN: Final = "rewritten"

#: ``read(start, size) -> bytes`` of the log
Reader = Callable[[int, int], bytes]


class Cursor(NamedTuple):
    offset: int
    inode: int
    #: the log's stamp when it ended at ``offset`` (None: it went on past it)
    stamp: Stamp | None
    #: whether that stamp was taken outside the racy window (``ouro.store.stamp``)
    trusted: bool
    tail: str


#: the cursor of a log nothing has been read from
START: Final = Cursor(0, 0, None, False, "")


def digest(tail: bytes) -> str:
    """The digest of the bytes before an offset (``""`` for none)."""
    return blake2b(tail, digest_size=12).hexdigest() if tail else ""


def tail_digest(read: Reader, offset: int) -> str:
    """The digest of the ``TAIL`` bytes before ``offset`` (``""`` at 0)."""
    if offset <= 0:
        return ""
    start = max(0, offset - TAIL)
    data = read(start, offset - start)
    if len(data) != offset - start:
        return "short"  # the file is shorter than the offset: never equal to a digest
    return digest(data)


def at(read: Reader, offset: int, st: os.stat_result, now: int | None = None) -> Cursor:
    """The cursor of a reader that consumed the log up to ``offset`` (stat ``st``)."""
    stamp = stamps.of(st) if st.st_size == offset else None
    trusted = stamp is not None and not stamps.racy(st, now)
    return Cursor(offset, st.st_ino, stamp, trusted, tail_digest(read, offset))


def follow(read: Reader, st: os.stat_result, cursor: Cursor | None) -> str:
    """``UNCHANGED``, ``GROWN`` or ``REWRITTEN`` (see the module docstring)."""
    if cursor is None or cursor.offset == 0:
        return GROWN if st.st_size > 0 else UNCHANGED
    if st.st_ino != cursor.inode or st.st_size < cursor.offset:
        return REWRITTEN
    same = cursor.stamp is not None and stamps.of(st) == tuple(cursor.stamp)
    if same and cursor.trusted:
        return UNCHANGED
    if st.st_size == cursor.offset and cursor.stamp is not None and not same:
        return REWRITTEN  # touched in place without growing
    # grown, or a racy stamp that is still the same: the bytes before the offset decide
    if tail_digest(read, cursor.offset) != cursor.tail:
        return REWRITTEN
    return GROWN if st.st_size > cursor.offset else UNCHANGED


def pread_of(fd: int) -> Reader:
    """A reader over an open file descriptor."""

    def read(start: int, size: int) -> bytes:
        return os.pread(fd, size, start)

    return read


def text(cursor: Cursor) -> str:
    trusted = "t" if cursor.trusted else "r"
    return f"c1:{cursor.offset}:{cursor.inode}:{stamps.text(cursor.stamp)}:{trusted}:{cursor.tail or '-'}"


def parse(value: object) -> Cursor | None:
    """A cursor from its text; None when it is not one (read as "replay everything")."""
    if not isinstance(value, str) or not value.startswith("c1:"):
        return None
    parts = value.split(":")
    # c1, offset, inode, then either "-" or four stamp fields, t|r, then the tail
    try:
        offset, inode = int(parts[1]), int(parts[2])
    except (IndexError, ValueError):
        return None
    if len(parts) == 6 and parts[3] == stamps.UNTRUSTED:
        stamp = None
    elif len(parts) == 9:
        stamp = stamps.parse(":".join(parts[3:7]))
        if stamp is None:
            return None
    else:
        return None
    if parts[-2] not in ("t", "r"):
        return None
    tail = parts[-1]
    return Cursor(offset, inode, stamp, parts[-2] == "t", "" if tail == "-" else tail)
