"""Agent tools for the flight recorder: inputs, functions and text renderings.

Registered in ``ouro/tools.py`` (``# --- arc ---``); the CLI and MCP server are
generated from there. Each function records one event through
``ouro.arc.recorder`` (or reads, purely) and returns a JSON-ready dict.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ouro.arc import paths
from ouro.arc.checkpoint import compute, view
from ouro.arc.checkpoint import write as write_checkpoint_file
from ouro.arc.desklinks import resolve_links
from ouro.arc.fold import catch_up, day_files, empty_state
from ouro.arc.queries import query
from ouro.arc.recorder import append_locked, build_event, record_event
from ouro.arc.resume import read_resume
from ouro.arc.stores import scan_claims, scan_obligations
from ouro.bundle import Bundle
from ouro.errors import NotFound
from ouro.models.base import NonBlank, ToolInput


class ResumeInput(ToolInput):
    pass


class QueryInput(ToolInput):
    what: Literal["doing", "owe", "blocked", "unverified", "since-checkpoint"] = Field(
        description="doing | owe | blocked | unverified | since-checkpoint"
    )


class SessionFields(ToolInput):
    session_ref: str | None = Field(None, description="the session recording this")
    turn_id: str | None = Field(None, description="the turn recording this")


class TextInput(SessionFields):
    text: NonBlank = Field(min_length=1, description="what to record")


class DeskLinkInput(TextInput):
    tasks: list[str] = Field(
        default_factory=list, description="a Desk task (id or track/slug) that carries the details"
    )
    refs: list[str] = Field(
        default_factory=list,
        description="a Desk locator that carries the details (e.g. desk/_record/notes/x.md)",
    )


class NextInput(DeskLinkInput):
    stop_before: list[NonBlank] = Field(
        default_factory=list, description="an action not to take without confirming first"
    )


class ConfirmInput(SessionFields):
    pass


class UnblockInput(SessionFields):
    blocker_id: str | None = Field(None, description="the blocker's event id (default: all)")


class CheckpointInput(ToolInput):
    pass


def _written(
    bundle: Bundle, event: dict[str, Any], warnings: list[str] | None = None
) -> dict[str, Any]:
    resume = read_resume(bundle)
    return {
        "event": event,
        "canContinue": resume["canContinue"],
        "continuation": resume["continuation"],
        "missing": resume["missing"],
        "blockedBecause": resume["blockedBecause"],
        "warnings": warnings or [],
    }


def _session(inp: SessionFields) -> dict[str, Any]:
    return {"session_ref": inp.session_ref, "turn_id": inp.turn_id}


def arc_resume(bundle: Bundle, inp: ResumeInput) -> dict[str, Any]:
    return read_resume(bundle)


def arc_query(bundle: Bundle, inp: QueryInput) -> dict[str, Any]:
    return query(bundle, inp.what)


def _links_meta(bundle: Bundle, inp: DeskLinkInput) -> dict[str, Any]:
    links = resolve_links(bundle, inp.tasks, inp.refs)
    return {"deskRefs": links} if links else {}


def record_ask(bundle: Bundle, inp: DeskLinkInput) -> dict[str, Any]:
    meta = _links_meta(bundle, inp)
    warnings: list[str] = []
    event = record_event(
        bundle,
        "turn_accepted",
        f"ask: {inp.text}",
        current_ask=inp.text,
        meta=meta or None,
        **_session(inp),
        warnings=warnings,
    )
    return _written(bundle, event, warnings)


def record_next(bundle: Bundle, inp: NextInput) -> dict[str, Any]:
    """Record the next safe action, bound to the ask current now (``meta.askEventId``)."""
    meta = _links_meta(bundle, inp)
    with paths.arc_lock(bundle, "record next"):
        ask_ids = compute(bundle).checkpoint["currentAsk"]["sourceEventIds"]
        if ask_ids:
            meta["askEventId"] = ask_ids[0]
        line = build_event(
            bundle,
            "agent_note",
            f"next safe action: {inp.text}",
            next_safe_action=inp.text,
            stop_before=inp.stop_before,
            meta=meta or None,
            **_session(inp),
        )
        warnings = append_locked(bundle, line)
    return _written(bundle, line, warnings)


def _require_ask(resume: dict[str, Any]) -> None:
    if not resume["currentAsk"]["value"]:
        raise NotFound(
            "no ask to confirm: none was ever recorded",
            hint="record one with 'ouro arc ask TEXT'",
        )


def confirm(bundle: Bundle, inp: ConfirmInput) -> dict[str, Any]:
    """Confirm the ask (and its next safe action) after a session boundary, without retyping."""
    _require_ask(read_resume(bundle))  # refuse before taking the lock: a refusal writes nothing
    with paths.arc_lock(bundle, "confirm"):
        now = compute(bundle).checkpoint
        ask, nxt = now["currentAsk"], now["nextSafeAction"]
        _require_ask(now)
        meta: dict[str, Any] = {"confirms": ask["sourceEventIds"][0]}
        if ask["refs"]:
            meta["deskRefs"] = ask["refs"]
        if nxt["value"]:
            meta["confirmsNext"] = nxt["sourceEventIds"][0]
        line = build_event(
            bundle,
            "ask_confirmed",
            f"confirmed: {ask['value']}" + (f" — next: {nxt['value']}" if nxt["value"] else ""),
            current_ask=ask["value"],
            next_safe_action=nxt["value"],
            stop_before=nxt["stopBefore"] if nxt["value"] else None,
            meta=meta,
            **_session(inp),
        )
        warnings = append_locked(bundle, line)
    return {**_written(bundle, line, warnings), "confirmedNext": bool(nxt["value"])}


def record_blocker(bundle: Bundle, inp: TextInput) -> dict[str, Any]:
    warnings: list[str] = []
    event = record_event(
        bundle,
        "blocker_detected",
        f"blocked: {inp.text}",
        blocked_because=inp.text,
        **_session(inp),
        warnings=warnings,
    )
    return _written(bundle, event, warnings)


def clear_blocker(bundle: Bundle, inp: UnblockInput) -> dict[str, Any]:
    with paths.arc_lock(bundle, "clear blocker"):
        active = read_resume(bundle)["blockers"]
        if inp.blocker_id is not None and inp.blocker_id not in {b["id"] for b in active}:
            raise NotFound(
                f"no active blocker {inp.blocker_id}",
                hint="list blockers with 'ouro arc query blocked'",
            )
        if not active:
            return {"event": None, "cleared": [], "blockedBecause": None}
        cleared = [b["id"] for b in active if inp.blocker_id in (None, b["id"])]
        line = build_event(
            bundle,
            "blocker_cleared",
            f"unblocked: {', '.join(cleared)}",
            meta={"blockerId": inp.blocker_id} if inp.blocker_id else None,
            **_session(inp),
        )
        warnings = append_locked(bundle, line)
    return {**_written(bundle, line, warnings), "cleared": cleared}


def record_handoff(bundle: Bundle, inp: TextInput) -> dict[str, Any]:
    warnings: list[str] = []
    event = record_event(bundle, "handoff", inp.text, **_session(inp), warnings=warnings)
    return _written(bundle, event, warnings)


def record_note(bundle: Bundle, inp: TextInput) -> dict[str, Any]:
    warnings: list[str] = []
    event = record_event(bundle, "agent_note", inp.text, **_session(inp), warnings=warnings)
    return _written(bundle, event, warnings)


def checkpoint(bundle: Bundle, inp: CheckpointInput) -> dict[str, Any]:
    """Rebuild latest.json from the whole log and every store file, then mark it."""
    with paths.arc_lock(bundle, "checkpoint"):
        state, _n = catch_up(
            empty_state(), paths.events_dir(bundle), day_files(paths.events_dir(bundle))
        )
        stores = {"claims": scan_claims(bundle), "obligations": scan_obligations(bundle)}
        write_checkpoint_file(bundle, view(bundle, state, stores, []))
        line = build_event(bundle, "post_turn_persisted", "checkpoint rebuilt from the log")
        warnings = append_locked(bundle, line)
    return _written(bundle, line, warnings)


# --- renderings -------------------------------------------------------------


def render_written(result: dict[str, Any]) -> str:
    event = result.get("event")
    if event is None:
        return "nothing to clear: no active blockers"
    lines = [f"recorded {event['id']} ({event['kind']}): {event['summary']}"]
    lines.append(f"can continue: {continuation_text(result)}")
    if result.get("blockedBecause"):
        lines.append(f"blocked because: {result['blockedBecause']}")
    lines.extend(f"missing: {m}" for m in result.get("missing", []))
    lines.extend(f"warning: {w}" for w in result.get("warnings", []))
    return "\n".join(lines)


def continuation_text(r: dict[str, Any]) -> str:
    """``yes`` | ``needs confirmation ('ouro arc confirm')`` | ``no``."""
    state = r.get("continuation") or ("yes" if r.get("canContinue") else "no")
    if state == "needs_confirmation":
        return "needs confirmation (run 'ouro arc confirm' or record a new ask)"
    return str(state)


def render_resume(r: dict[str, Any]) -> str:
    ask, nxt = r["currentAsk"], r["nextSafeAction"]
    lines = [
        f"can continue: {continuation_text(r)}   recorder: {r['recorder']['health']}",
        f"current ask [{ask['confidence']}]: {ask['value'] or '(none recorded)'}",
    ]
    if r.get("confirm"):
        lines.append(f"  confirm: {r['confirm']['message']}")
    elif ask["confidence"] == "stale_risky":
        lines.append(f"  why: {ask['reason']}")
    lines.extend(f"  details: {ref}" for ref in ask.get("refs") or [])
    lines.append(f"next safe action: {nxt['value'] or '(none recorded)'}")
    if nxt["stopBefore"]:
        lines.append(f"  stop before: {'; '.join(nxt['stopBefore'])}")
    lines.extend(f"  details: {ref}" for ref in nxt.get("refs") or [])
    prev = nxt.get("fromPreviousAsk")
    if prev:
        lines.append(f"  from the previous ask (not current): {prev['value']}")
    handoff = r.get("handoff")
    if handoff:
        who = f" by {handoff['sessionRef']}" if handoff.get("sessionRef") else ""
        lines.append(f"handoff ({handoff['recordedAt']}{who}): {handoff['value']}")
    for b in r["blockers"]:
        lines.append(f"blocker {b['id']}: {b['text']}")
    lines.extend(f"missing: {m}" for m in r["missing"])
    lines.extend(f"issue [{i['code']}]: {i['message']}" for i in r["recorder"]["issues"])
    lines.append(
        f"obligations open: {_count(r['activeObligationIds'])}, returns: "
        f"{_count(r['returnObligationIds'])}, unverified claims: {_count(r['unverifiedClaimIds'])}"
    )
    for label, key in (("obligation", "unreadableObligationIds"), ("claim", "unreadableClaimIds")):
        for item_id in r.get(key) or []:
            lines.append(f"  {label} {item_id}: unknown (unreadable file)")
    last = r.get("lastUsefulEvent") or r.get("lastEvent")
    if last:
        lines.append(f"last event: {last['kind']} at {last['recordedAt']}: {last['summary']}")
    return "\n".join(lines)


def _count(ids: list[str] | None) -> str:
    return "unknown" if ids is None else str(len(ids))
