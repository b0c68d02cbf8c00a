"""``ouro arc query doing|owe|blocked|unverified|since-checkpoint``: pure reads."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ouro.arc import checkpoint, paths
from ouro.arc.claims import list_claims
from ouro.arc.obligations import list_obligations
from ouro.arc.resume import read_resume_full
from ouro.bundle import Bundle
from ouro.store import jsonio
from ouro.store.bounded import line_pieces, open_regular

QUERIES = ("doing", "owe", "blocked", "unverified", "since-checkpoint")
SINCE_LIMIT = 100


def _events_since(bundle: Bundle, since: dict[str, Any] | None) -> tuple[list[dict[str, Any]], int]:
    folder = paths.events_dir(bundle)
    try:  # nothing behind a symlink leading outside: the resume's recorder names it
        names = checkpoint.day_files(bundle, [])
    except OSError:
        return [], 0
    out: list[dict[str, Any]] = []
    for name in names:
        if since and name < since["file"]:
            continue
        begin = int(since["offset"]) if since and name == since["file"] else 0
        for raw in _lines(folder / name, begin):
            try:
                ev = jsonio.loads(raw) if raw.strip() else None
            except jsonio.JSONDecodeError:
                continue  # named by the resume's recorder issues
            if isinstance(ev, dict) and isinstance(ev.get("id"), str):
                out.append(
                    {
                        "id": ev["id"],
                        "kind": ev.get("kind"),
                        "recordedAt": ev.get("recordedAt"),
                        "summary": ev.get("summary"),
                        "locator": paths.event_locator(name, ev["id"]),
                    }
                )
    return out[-SINCE_LIMIT:], max(0, len(out) - SINCE_LIMIT)


def _lines(path: Path, begin: int) -> Iterator[bytes]:
    """The lines of a day file from ``begin``, a piece at a time; a line past
    LINE_LIMIT is skipped unread (the resume's recorder issues name it), a FIFO
    raises ``NotRegularFile`` unopened."""
    fd = open_regular(path)
    try:
        for _, data in line_pieces(fd, begin, os.fstat(fd).st_size, tail=True):
            if isinstance(data, bytes):
                yield from data.split(b"\n")
    finally:
        os.close(fd)


def query(bundle: Bundle, what: str) -> dict[str, Any]:
    resume = read_resume_full(bundle)
    head = {"query": what, "canContinue": resume["canContinue"], "recorder": resume["recorder"]}
    if what == "doing":
        return {
            **head,
            "continuation": resume["continuation"],
            "confirm": resume["confirm"],
            "currentAsk": resume["currentAsk"],
            "nextSafeAction": resume["nextSafeAction"],
            "handoff": resume["handoff"],
            "blockers": resume["blockers"],
            "lastEvent": resume["lastUsefulEvent"] or resume["lastEvent"],
        }
    if what == "owe":
        listed = list_obligations(bundle, status="open")
        if listed["obligations"] is None:
            return {**head, "obligations": None, "unknown": listed["unknown"]}
        owed = [o for o in listed["obligations"] if not o["inner"]]
        returns = [o for o in listed["obligations"] if o["inner"]]
        return {**head, "obligations": owed, "returns": returns, "unreadable": listed["unreadable"]}
    if what == "blocked":
        return {**head, "blockedBecause": resume["blockedBecause"], "blockers": resume["blockers"]}
    if what == "unverified":
        listed = list_claims(bundle)
        if listed["claims"] is None:
            return {**head, "claims": None, "unknown": listed["unknown"]}
        keep = [c for c in listed["claims"] if c["status"] not in ("verified", "superseded")]
        return {**head, "claims": keep, "unreadable": listed["unreadable"]}
    since = resume["lastSafeCheckpoint"]
    events, omitted = _events_since(bundle, since)
    return {**head, "lastSafeCheckpoint": since, "events": events, "omitted": omitted}
