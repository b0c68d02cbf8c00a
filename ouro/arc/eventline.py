"""Building an event line without the pydantic model, when that is safe.

``plain_line(raw)`` returns exactly the dict that
``ouro.arc.events.Event.model_validate(raw).to_line()`` would return, or
``None`` when ``raw`` is anything but plainly well-formed (a value of another
type, an unknown kind, a NUL, an empty produced-ref field, a non-JSON value in
``meta``...). The recorder then falls back to the model, so what the model
would coerce it still coerces and what it refuses it still refuses, with the
model's own error message. Hooks record an event on every host moment; this
keeps pydantic out of their start-up.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from ouro.arc.kinds import EVENT_KINDS

#: Field order of the model (``schemaVersion`` first: it is the base's field).
_TEXT = ("summary", "current_ask", "next_safe_action", "blocked_because")
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
#: Nesting beyond this goes to the model (which has its own limits).
_MAX_DEPTH = 32


def _json_native(value: Any, depth: int = 0) -> bool:
    """True when the model's JSON dump would return ``value`` unchanged."""
    kind = type(value)
    if value is None or kind is str or kind is bool or kind is int:
        return True
    if kind is float:
        return math.isfinite(value)  # the model dumps inf/nan as null
    if depth >= _MAX_DEPTH:
        return False
    if kind is list:
        return all(_json_native(v, depth + 1) for v in value)
    if kind is dict:
        return all(type(k) is str and _json_native(v, depth + 1) for k, v in value.items())
    return False


def _produced(refs: Any) -> list[dict[str, Any]] | None:
    if type(refs) is not list:
        return None
    out = []
    for ref in refs:
        if type(ref) is not dict or set(ref) != {"kind", "locator"}:
            return None
        kind, locator = ref["kind"], ref["locator"]
        if type(kind) is not str or type(locator) is not str or not kind or not locator:
            return None
        out.append({"schemaVersion": 1, "kind": kind, "locator": locator})
    return out


def plain_line(raw: dict[str, Any]) -> dict[str, Any] | None:
    """The event line for ``raw`` (snake_case keys), or None to ask the model."""
    if set(raw) - set(_ALIAS):
        return None
    if type(raw.get("kind")) is not str or raw["kind"] not in EVENT_KINDS:
        return None
    for name in _REQUIRED_TEXT:
        if type(raw.get(name)) is not str:
            return None
    for name in _OPTIONAL_TEXT:
        value = raw.get(name)
        if value is not None and type(value) is not str:
            return None
    for name in _TEXT:
        value = raw.get(name)
        if value is not None and "\x00" in value:
            return None
    stop = raw.get("stop_before")
    if stop is not None and (type(stop) is not list or any(type(s) is not str for s in stop)):
        return None
    meta = raw.get("meta")
    if meta is not None and (type(meta) is not dict or not _json_native(meta)):
        return None
    refs = raw.get("produced_refs")
    produced = None if refs is None else _produced(refs)
    if refs is not None and produced is None:
        return None
    line: dict[str, Any] = {"schemaVersion": 1}
    for name, alias in _ALIAS.items():
        value = produced if name == "produced_refs" else raw.get(name)
        if value is not None:
            # Fresh containers, as the model's dump returns (no aliasing of ``raw``).
            line[alias] = copy.deepcopy(value) if name in ("stop_before", "meta") else value
    # As Event.to_line: the always-present fields come last when empty.
    line.setdefault("sessionRef", None)
    line.setdefault("turnId", None)
    return line
