"""Flight-recorder event kinds: plain constants, no schema library.

Kept apart from ``ouro.arc.events`` (the pydantic model of an event line) so
that the fold, the checkpoint and the host hooks, which only need the names,
start without paying for pydantic model construction.
"""

from __future__ import annotations

from typing import Literal, get_args

EventKind = Literal[
    "turn_accepted",
    "context_built",
    "model_started",
    "tool_completed",
    "tool_failed",
    "blocker_detected",
    "blocker_cleared",
    "claim_recorded",
    "evidence_recorded",
    "obligation_changed",
    "post_turn_persisted",
    "handoff",
    "session_started",
    "session_ended",
    "sync_pushed",
    "sync_failed",
    "sync_conflict",
    "habit_run",
    "agent_note",
    "ask_confirmed",
    "record_redacted",
]
EVENT_KINDS: tuple[str, ...] = get_args(EventKind)

#: Kinds that mark a context boundary: an ask recorded before one of these is
#: no longer known to be what the (new) session is working on.
BOUNDARY_KINDS = frozenset({"handoff", "session_started", "session_ended"})

#: ``session_started`` sources that continue the same conversation (the host
#: compacted or resumed it): the ask recorded in that conversation still holds.
CONTINUING_SOURCES = frozenset({"compact", "resume"})


def is_boundary(kind: str, meta: object) -> bool:
    """Does this event end the context an earlier ask was recorded in?"""
    if kind not in BOUNDARY_KINDS:
        return False
    if kind == "session_started" and isinstance(meta, dict):
        return meta.get("source") not in CONTINUING_SOURCES
    return True
