"""Text renderings of the Arc verbs (``ouro.api.arc``), and their old CLI input models.

Transitional: the pydantic input models here only build the old click CLI
(``ouro.cli.gen``) until the new CLI reads ``ouro.spec``; each verb's one home is its
library method (``ouro.api``).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

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
