"""Which log ``entities.json`` reflects: reading its stamp (``ouro.desk.entities``).

Light on purpose (``ouro index status`` reads it cold): the stamp file
``state/locks/diary.entities-stamp`` is ``<facts inode> <covered> <tail digest
before covered> <entities stamp> <verified> <tail digest before verified>``,
with the digests and the stamp of ``ouro.store.cursor`` and ``ouro.store.stamp``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ouro.store import cursor as cursors
from ouro.store import stamp as stamps
from ouro.store.bounded import open_regular


def read_stamp(path: Path) -> list[str] | None:
    try:
        fd = open_regular(path)  # os-level: read on every diary write
    except OSError:
        return None
    try:
        fields = os.read(fd, 512).decode("ascii", "replace").split()
    finally:
        os.close(fd)
    return fields if len(fields) == 6 else None


def stamp_range(
    fields: list[str] | None,
    facts_ino: int | None,
    facts_size: int,
    read: Callable[[int, int], bytes],
    entities_st: os.stat_result,
) -> tuple[int, int] | None:
    """``(covered, verified)`` when the stamp matches these files, else None."""
    if fields is None or facts_ino is None:
        return None
    ino, covered_s, c_tail, e_stamp, verified_s, v_tail = fields
    try:
        covered, verified = int(covered_s), int(verified_s)
        if int(ino) != facts_ino or not 0 <= covered <= verified <= facts_size:
            return None
        if stamps.parse(e_stamp) != stamps.of(entities_st):
            return None  # replaced or edited since that rewrite
        if tail(read, covered) != c_tail or tail(read, verified) != v_tail:
            return None
    except (ValueError, OSError):
        return None
    return covered, verified


def tail(read: Callable[[int, int], bytes], upto: int) -> str:
    return cursors.tail_digest(read, upto) or "-"


def freshness(facts: Path, entities_st: os.stat_result, stamp: Path) -> tuple[str, str | None]:
    """("fresh" | "stale", why) of entities.json against facts.jsonl, by its stamp
    (pure). Fresh: the stamp matches both files and verifies every complete line
    of the log. With no stamp that matches (a copy, a clone, an edit by hand)
    whether the file is current is not known: stale, with the reason."""
    fields = read_stamp(stamp)
    try:
        fd = open_regular(facts)  # a FIFO: cannot be read (below), never a hang
    except FileNotFoundError:
        return (
            ("fresh", None)
            if not entities_st.st_size or fields is None
            else ("stale", "no facts.jsonl")
        )
    except OSError as exc:
        return "stale", f"facts.jsonl cannot be read ({exc})"
    try:
        facts_st = os.fstat(fd)

        def read(start: int, size: int) -> bytes:
            return os.pread(fd, size, start)

        known = stamp_range(fields, facts_st.st_ino, facts_st.st_size, read, entities_st)
        if known is None:
            return "stale", (
                "not stamped on this machine (copied, cloned or edited by hand): "
                "'ouro diary rebuild-entities' or 'ouro index sync' derives it again"
            )
        complete = facts_st.st_size
        if complete and read(complete - 1, 1) != b"\n":
            complete = known[1]  # an unfinished last line is not a fact yet
    finally:
        os.close(fd)
    if known[1] < complete:
        return "stale", f"{complete - known[1]} bytes of facts.jsonl not in it"
    return "fresh", None
