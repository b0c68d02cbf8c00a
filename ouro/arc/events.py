"""Flight-recorder events: the kinds, and the one check of a line in
``events/YYYY-MM-DD.jsonl``.

Each line is one JSON object::

    {"schemaVersion": 1, "id": "ev-…", "kind": "turn_accepted", "recordedAt": "…Z",
     "summary": "…", "currentAsk"?, "nextSafeAction"?, "stopBefore"?, "blockedBecause"?,
     "producedRefs"?: [{"schemaVersion": 1, "kind", "locator"}], "meta"?: {…},
     "sessionRef": null, "turnId": null}

Low volume by design: read-only actions are never recorded. ``event_line``
builds a line from the recorder's snake_case fields, or refuses it with an
``InvalidInput`` naming the field: an unknown field or kind, a value of another
type, a NUL in a text, an empty produced-ref field, a ``meta`` value JSON cannot
hold. No schema library: hooks record an event at every host moment.
"""

from __future__ import annotations

from ouro.errors import InvalidInput

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any

#: every event kind (a tuple, not a ``Literal``: reading one needs ``typing``)
EVENT_KINDS: tuple[str, ...] = (
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
)

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


# --- one line ---------------------------------------------------------------------

#: field -> its key on disk, in the order a line holds them
_ALIAS = {
    "id": "id",
    "kind": "kind",
    "recorded_at": "recordedAt",
    "session_ref": "sessionRef",
    "turn_id": "turnId",
    "summary": "summary",
    "current_ask": "currentAsk",
    "next_safe_action": "nextSafeAction",
    "stop_before": "stopBefore",
    "blocked_because": "blockedBecause",
    "produced_refs": "producedRefs",
    "meta": "meta",
}
_REQUIRED_TEXT = ("id", "recorded_at", "summary")
_OPTIONAL_TEXT = ("session_ref", "turn_id", "current_ask", "next_safe_action", "blocked_because")
#: texts that must not hold a NUL (ids and times are ouro's own)
_NO_NUL = ("summary", "current_ask", "next_safe_action", "blocked_because")
HINT = "kinds: see ouro.arc.events.EVENT_KINDS; text must not contain NUL"
#: ``meta`` nested deeper than this is refused
MAX_DEPTH = 32


def _bad(field: str, what: str) -> InvalidInput:
    return InvalidInput(f"event: {field}: {what}", hint=HINT)


def _json(value: Any, field: str, depth: int = 0) -> Any:
    """A fresh copy of ``value`` as JSON holds it (a tuple becomes a list)."""
    kind = type(value)
    if value is None or kind is str or kind is bool or kind is int:
        return value
    if kind is float:
        import math  # on use: events rarely hold a float

        if not math.isfinite(value):
            raise _bad(field, f"{value} is not a JSON number")
        return value
    if depth >= MAX_DEPTH:
        raise _bad(field, f"nested deeper than {MAX_DEPTH} levels")
    if kind is list or kind is tuple:
        return [_json(v, f"{field}.{n}", depth + 1) for n, v in enumerate(value)]
    if kind is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _bad(field, f"key {key!r} is not a string")
            out[key] = _json(item, f"{field}.{key}", depth + 1)
        return out
    raise _bad(field, f"a {kind.__name__} is not a JSON value")


def _produced(refs: Any) -> list[dict[str, Any]]:
    if type(refs) is not list and type(refs) is not tuple:
        raise _bad("produced_refs", "must be a list")
    out = []
    for n, ref in enumerate(refs):
        if type(ref) is not dict or set(ref) - {"kind", "locator"}:
            raise _bad(f"produced_refs.{n}", "must be an object with kind and locator")
        for key in ("kind", "locator"):
            value = ref.get(key)
            if type(value) is not str or not value:
                raise _bad(f"produced_refs.{n}.{key}", "must be a non-empty string")
        out.append({"schemaVersion": 1, "kind": ref["kind"], "locator": ref["locator"]})
    return out


def event_line(raw: dict[str, Any]) -> dict[str, Any]:
    """The event line for ``raw`` (snake_case fields; None = absent), or ``InvalidInput``."""
    unknown = sorted(set(raw) - set(_ALIAS))
    if unknown:
        raise _bad(unknown[0], "unknown field")
    kind = raw.get("kind")
    if type(kind) is not str or kind not in EVENT_KINDS:
        raise _bad("kind", f"{kind!r} is not an event kind")
    for name in _REQUIRED_TEXT:
        if type(raw.get(name)) is not str:
            raise _bad(name, "required: a string")
    for name in _OPTIONAL_TEXT:
        value = raw.get(name)
        if value is not None and type(value) is not str:
            raise _bad(name, "must be a string")
    for name in _NO_NUL:
        value = raw.get(name)
        if value is not None and "\x00" in value:
            raise _bad(name, "must not contain a NUL byte")
    stop = raw.get("stop_before")
    if stop is not None and (
        type(stop) not in (list, tuple) or any(type(s) is not str for s in stop)
    ):
        raise _bad("stop_before", "must be a list of strings")
    meta = raw.get("meta")
    if meta is not None and type(meta) is not dict:
        raise _bad("meta", "must be an object")
    line: dict[str, Any] = {"schemaVersion": 1}
    for name, alias in _ALIAS.items():
        value = raw.get(name)
        if value is None:
            continue
        if name == "produced_refs":
            value = _produced(value)
        elif name == "stop_before":
            value = list(value)
        elif name == "meta":
            value = _json(value, "meta")
        line[alias] = value
    # The always-present fields come last when empty, so every line has them.
    line.setdefault("sessionRef", None)
    line.setdefault("turnId", None)
    return line
