"""The flight recorder as a paged list, newest first (for people, not recovery).

``event_page(bundle, skip=, limit=, kinds=, session=)`` reads
``arc/flight-recorder/events/*.jsonl`` backwards through
``ouro.store.daylog`` and returns each event with its locator and two marks:

- ``boundary``: the event ends the context an earlier ask was recorded in
  (``ouro.arc.events.is_boundary``: a handoff, a session start or end);
- ``compaction``: the host compacted the context here (the pre-compaction
  checkpoint, or a session started with source ``compact``).

Pure: it reads the day files only, never the checkpoint or the index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from ouro.arc import paths
from ouro.arc.events import is_boundary
from ouro.bundle import Bundle
from ouro.store.daylog import newest_first

FIELDS = (
    "kind",
    "recordedAt",
    "sessionRef",
    "turnId",
    "summary",
    "currentAsk",
    "nextSafeAction",
    "stopBefore",
    "blockedBecause",
    "producedRefs",
    "meta",
)


def _compaction(event: dict[str, Any]) -> bool:
    meta = event.get("meta")
    if not isinstance(meta, dict):
        return False
    if event.get("kind") == "session_started":
        return meta.get("source") == "compact"
    return meta.get("hostEvent") == "PreCompact"


def event_page(
    bundle: Bundle,
    *,
    skip: int = 0,
    limit: int = 50,
    kinds: Sequence[str] = (),
    session: str | None = None,
) -> dict[str, Any]:
    """One page of events, newest first; ``more`` says whether older ones match.

    An unreadable log is reported in ``error`` (unknown, never "no events").
    """
    wanted = set(kinds)

    def keep(event: dict[str, Any]) -> bool:
        if not isinstance(event.get("id"), str):
            return False
        if wanted and event.get("kind") not in wanted:
            return False
        return session is None or event.get("sessionRef") == session

    try:
        # Lines that cannot match are skipped unparsed: a kind or session must appear in the line.
        if wanted:
            needles = tuple(k.encode() for k in wanted)
        elif session is not None:
            needles = (orjson.dumps(session)[1:-1],)
        else:
            needles = ()
        page = newest_first(
            paths.events_dir(bundle),
            bundle.root,
            skip=skip,
            limit=limit,
            keep=keep,
            needles=needles,
        )
    except OSError as exc:
        return {
            "events": [],
            "more": False,
            "badLines": 0,
            "outside": [],
            "error": f"cannot read events ({exc})",
        }
    events = []
    for raw, name in page.rows:
        event = {k: raw.get(k) for k in FIELDS}
        event["id"] = raw["id"]
        event["locator"] = paths.event_locator(name, raw["id"])
        event["boundary"] = is_boundary(str(raw.get("kind")), raw.get("meta"))
        event["compaction"] = _compaction(raw)
        events.append(event)
    error = f"{paths.EVENTS_DIR}/ is missing" if page.missing else None
    return {
        "events": events,
        "more": page.more,
        "badLines": page.bad,
        "outside": page.outside,
        "error": error,
    }
