"""Paged, newest-first reads of the diary for viewers (the workbench).

``iter_facts`` parses all of ``facts.jsonl`` (about a second at 100k facts);
a page of twenty facts should not. These reads work on the file's bytes:

- ``fact_page(bundle, skip=, limit=, entity=)``: the newest facts, walking
  lines back from the end of the file; with ``entity``, that entity's facts
  (ids from ``entities.json``), each found by its ``"id"`` in the bytes;
- every fact carries its supersede chain: ``supersedes`` (older, with their
  texts) and ``supersededBy`` (newer), found by one scan for
  ``"supersedes"`` (a literal search, not a parse of every line);
- ``entity_page(bundle, skip=, limit=)``: entities by last seen, newest first;
- ``find_fact(bundle, id)``: one fact by id, and the id of a fact that
  supersedes it (the packet shows the facts the ask points at).

Pure: read only. Lines that are not JSON objects, or longer than
``ouro.store.bounded.LINE_LIMIT`` (never copied out of the map), are skipped
here; the diary's own readers (``ouro.desk.record.iter_facts``) name them.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import orjson

from ouro.bundle import Bundle
from ouro.desk.factnorm import normalize_entity
from ouro.desk.record import fact_locator, facts_path, read_entities
from ouro.store import jsonio
from ouro.store.bounded import LINE_LIMIT, open_regular
from ouro.store.guard import Inside

#: the key as it appears in a line, however the JSON is spaced
_SUPERSEDES = b'"supersedes"'
Buffer = bytes | mmap.mmap
CHAIN_LIMIT = 10


@contextmanager
def _mapped(bundle: Bundle) -> Iterator[Buffer]:
    """facts.jsonl mapped read-only: only the pages a search touches are read.

    Behind a symlink leading outside the bundle it is never opened: empty."""
    path = facts_path(bundle)
    if not Inside(bundle.root).path(path):
        yield b""
        return
    try:
        fd = open_regular(path)  # a FIFO: NotRegularFile, never a hang
    except FileNotFoundError:
        yield b""
        return
    with open(fd, "rb") as handle:
        try:
            view = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except ValueError:  # an empty file cannot be mapped
            yield b""
            return
        with view:
            yield view


def _line_at(data: Buffer, pos: int) -> bytes:
    """The line holding ``pos``; empty (not a fact) when it is longer than
    LINE_LIMIT: only LINE_LIMIT bytes either side are looked at, none copied."""
    low = max(0, pos - LINE_LIMIT - 1)
    newline = data.rfind(b"\n", low, pos)
    if newline < 0 and low:
        return b""
    start = newline + 1
    high = min(len(data), start + LINE_LIMIT + 1)
    end = data.find(b"\n", pos, high)
    if end < 0 and high < len(data):
        return b""
    return data[start : high if end < 0 else end]


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        value = jsonio.loads(raw)
    except jsonio.JSONDecodeError:
        return None
    ok = isinstance(value, dict) and isinstance(value.get("id"), str)
    return value if ok else None


def _find(data: Buffer, fact_id: str) -> dict[str, Any] | None:
    """The first line whose id is ``fact_id`` (the one ``iter_facts`` keeps)."""
    key = orjson.dumps(fact_id)
    pos = 0
    while True:
        pos = data.find(key, pos)
        if pos < 0:
            return None
        fact = _parse(_line_at(data, pos))
        if fact is not None and fact["id"] == fact_id:
            return fact
        pos += len(key)


def _forward(data: Buffer, start: int) -> dict[str, str]:
    """old id -> first new id superseding it, from the lines at or after ``start``.

    A superseding line is always appended after the fact it retires, so the
    tail from the oldest fact shown holds every link forward from it.
    """
    forward: dict[str, str] = {}
    pos = data.find(_SUPERSEDES, start)  # bytes.find: a plain scan, ~10x faster than a regex here
    while pos >= 0:
        fact = _parse(_line_at(data, pos))
        if fact is not None and isinstance(fact.get("supersedes"), str):
            forward.setdefault(fact["supersedes"], fact["id"])
        pos = data.find(_SUPERSEDES, pos + len(_SUPERSEDES))
    return forward


def _chain(data: Buffer, fact: dict[str, Any], forward: dict[str, str]) -> dict[str, Any]:
    older: list[dict[str, Any]] = []
    newer: list[dict[str, Any]] = []
    target = fact.get("supersedes")
    while isinstance(target, str) and len(older) < CHAIN_LIMIT:
        found = _find(data, target)
        older.append({"id": target, "text": found.get("text") if found else None})
        target = found.get("supersedes") if found else None
    cur = fact["id"]
    while cur in forward and len(newer) < CHAIN_LIMIT:
        cur = forward[cur]
        found = _find(data, cur)
        newer.append({"id": cur, "text": found.get("text") if found else None})
    return {
        **fact,
        "locator": fact_locator(fact["id"]),
        "supersedesChain": older,
        "supersededByChain": newer,
        "active": fact["id"] not in forward,
    }


def _newest(data: Buffer, skip: int, limit: int) -> tuple[list[dict[str, Any]], bool, int]:
    """Facts ``skip .. skip+limit`` from the end, whether more exist, and the
    offset of the oldest line read."""
    out: list[dict[str, Any]] = []
    seen = 0
    end = len(data)
    ids: set[str] = set()
    while end > 0:
        start = data.rfind(b"\n", 0, end - 1) + 1 if end > 1 else 0
        # a line past LINE_LIMIT is not a fact here (iter_facts names it): never copied
        raw = bytes(data[start:end]).strip() if end - start <= LINE_LIMIT + 1 else b""
        end = start
        fact = _parse(raw) if raw else None
        if fact is None or fact["id"] in ids:
            continue
        ids.add(fact["id"])
        if seen >= skip + limit:
            return out, True, start
        if seen >= skip:
            out.append(fact)
        seen += 1
    return out, False, 0


def fact_page(
    bundle: Bundle, *, skip: int = 0, limit: int = 20, entity: str | None = None
) -> dict[str, Any]:
    """A page of facts, newest first, each with its supersede chain."""
    with _mapped(bundle) as data:
        if entity is None:
            facts, more, start = _newest(data, skip, limit)
        else:
            entry = read_entities(bundle).get(normalize_entity(entity)) or {}
            ids = [i for i in reversed(entry.get("factIds") or []) if isinstance(i, str)]
            more = len(ids) > skip + limit
            facts = [f for f in (_find(data, i) for i in ids[skip : skip + limit]) if f]
            start = 0
        forward = _forward(data, start)
        return {
            "facts": [_chain(data, f, forward) for f in facts],
            "more": more,
            "missing": not len(data),
        }


def entity_page(bundle: Bundle, *, skip: int = 0, limit: int = 50) -> dict[str, Any]:
    """Entities by last seen (newest first), with their fact counts."""
    entities = read_entities(bundle)
    rows = [
        {"name": name, "count": e.get("count"), "lastSeenAt": e.get("lastSeenAt")}
        for name, e in entities.items()
        if isinstance(e, dict)
    ]
    rows.sort(key=lambda r: (str(r["lastSeenAt"] or ""), r["name"]), reverse=True)
    return {
        "entities": rows[skip : skip + limit],
        "more": len(rows) > skip + limit,
        "total": len(rows),
    }


def find_fact(bundle: Bundle, fact_id: str) -> tuple[dict[str, Any] | None, str | None]:
    """(the fact with ``fact_id`` or None, the id of a newer fact superseding it or None)."""
    with _mapped(bundle) as data:
        fact = _find(data, fact_id)
        if fact is None:
            return None, None
        key = orjson.dumps(fact_id)
        pos = data.find(key)
        while pos >= 0:  # a superseding line names the old id after its own line
            other = _parse(_line_at(data, pos))
            if other is not None and other.get("supersedes") == fact_id:
                return fact, str(other["id"])
            end = data.find(b"\n", pos)
            if end < 0:
                break
            pos = data.find(key, end + 1)
        return fact, None
