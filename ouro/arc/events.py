"""Flight-recorder events: the schema of one line in ``events/YYYY-MM-DD.jsonl``.

Each line is one JSON object::

    {"id": "ev-…", "kind": "turn_accepted", "recordedAt": "…Z",
     "sessionRef": null, "turnId": null, "summary": "…",
     "currentAsk"?, "nextSafeAction"?, "stopBefore"?, "blockedBecause"?,
     "producedRefs"?: [{"kind", "locator"}], "meta"?: {…}, "schemaVersion": 1}

Low volume by design: read-only actions are never recorded. The kind names
live in ``ouro.arc.kinds`` (no pydantic); ``ouro.arc.recorder`` checks plain
well-formed events without this model and falls back to it for everything
else, so its error messages come from here.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from ouro.arc.kinds import BOUNDARY_KINDS, EVENT_KINDS, EventKind
from ouro.models.base import Record

__all__ = ["BOUNDARY_KINDS", "EVENT_KINDS", "Event", "EventKind", "ProducedRef"]


class ProducedRef(Record):
    kind: str = Field(min_length=1)
    locator: str = Field(min_length=1)


class Event(Record):
    id: str
    kind: EventKind
    recorded_at: str
    session_ref: str | None = None
    turn_id: str | None = None
    summary: str
    current_ask: str | None = None
    next_safe_action: str | None = None
    stop_before: list[str] | None = None
    blocked_because: str | None = None
    produced_refs: list[ProducedRef] | None = None
    meta: dict[str, Any] | None = None

    @field_validator("summary", "current_ask", "next_safe_action", "blocked_because")
    @classmethod
    def _no_nul(cls, value: str | None) -> str | None:
        if value is not None and "\x00" in value:
            raise ValueError("must not contain a NUL byte")
        return value

    def to_line(self) -> dict[str, Any]:
        data = self.to_json()
        # Keep the always-present fields even when empty, so every line has them.
        data.setdefault("sessionRef", None)
        data.setdefault("turnId", None)
        return data
