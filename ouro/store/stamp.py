"""One file stamp, with one racy rule, for every derived file and memo.

A stamp is ``(size, mtime_ns, ctime_ns, inode)`` of a file as ``stat`` sees it:
a plain tuple (it is compared whole, stored in marshal, JSON and SQLite as it
is, and packed into columns by the desk heads). Any write, truncate, ``utime``
or ``chmod`` sets the ctime to the current time, and a file put in another's
place has its own inode, so a changed file never keeps its stamp -- short of
a change within the same clock tick as the stamp was taken.

The racy rule (the one place it is written): file times are coarse, so a file
whose last change (the later of mtime and ctime) lies within ``RACY_NS`` of
the moment it was stamped may change again without its stamp moving. Such a
stamp is *not trusted*: ``trusted`` returns None for it and a cache keeps no
stamp, so the next reader reads (or hashes) the file again instead of
believing it fresh. ``text``/``parse`` are the one text encoding
(``size:mtime:ctime:ino``, ``-`` for no trusted stamp).
"""

from __future__ import annotations

import os
import time

Stamp = tuple[int, int, int, int]
#: a file changed this recently (ns) when stamped gets no trusted stamp
RACY_NS = 100_000_000
#: the text of "no trusted stamp"
UNTRUSTED = "-"


def of(st: os.stat_result) -> Stamp:
    """The stamp of a ``stat`` result (trusted or not)."""
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def changed_at(st: os.stat_result) -> int:
    """When the file last changed, as far as its times tell (ns)."""
    return max(st.st_mtime_ns, st.st_ctime_ns)


def racy(st: os.stat_result, now: int | None = None) -> bool:
    """True when ``st`` was taken within the racy window of the file's last change."""
    return (time.time_ns() if now is None else now) - changed_at(st) <= RACY_NS


def trusted(st: os.stat_result | None, now: int | None = None) -> Stamp | None:
    """The stamp, or None when there is no file or the stamp is racy (not trusted)."""
    if st is None or racy(st, now):
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def stat(path: str | os.PathLike[str]) -> Stamp | None:
    """The stamp of the file at ``path`` (trusted or not), None when it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def text(stamp: Stamp | None) -> str:
    """``size:mtime:ctime:ino``, or ``-`` for None."""
    if stamp is None:
        return UNTRUSTED
    return f"{stamp[0]}:{stamp[1]}:{stamp[2]}:{stamp[3]}"


def text_of(st: os.stat_result) -> str:
    """``text(of(st))``: the text of a ``stat`` result's stamp (trusted or not)."""
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}"


def parse(value: object) -> Stamp | None:
    """A stamp from its text (or a 4-list read from JSON); None for anything else."""
    if isinstance(value, list | tuple) and len(value) == 4:
        parts: list[object] = list(value)
    elif isinstance(value, str) and value.count(":") == 3:
        parts = list(value.split(":"))
    else:
        return None
    try:
        a, b, c, d = (int(p) for p in parts)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None
    return (a, b, c, d)


def fresh(st: os.stat_result | None, known: Stamp | None) -> bool:
    """True when a file with stat ``st`` is provably the one ``known`` was taken of:
    a trusted stamp (never None) equal to its stamp now."""
    return known is not None and st is not None and of(st) == tuple(known)
