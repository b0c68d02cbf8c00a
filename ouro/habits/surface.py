"""Surfacing from a habit session: ``ouro surface --to WHO --reason WHY TEXT``.

Inside a habit session (``OURO_SESSION_ID`` names a live session of this
bundle) the recipient is checked against the session's permission envelope:
``family``, ``originator`` or an explicit recipient's friendId. Then:

- the route's channel has a sense command in ``bundle.json`` ``senses`` →
  the command runs (no shell, 30 s limit). Exit 0 → ``sent`` (or the status the
  command printed on its first stdout line, when that is one of delivered,
  delivered_now, queued, deferred); non-zero → ``failed``; not runnable →
  ``unavailable``;
- otherwise the message is queued to the main line → ``queued``: one line
  appended to ``arc/outbox/pending.jsonl``, shown in the main line's packet
  (``ouro.habits.orientation``) and the workbench until someone acknowledges it
  (``ouro surface ack ID``: one line appended to ``arc/outbox/acks.jsonl``)::

      {"schemaVersion": 1, "id": "ob-…", "queuedAt": "…Z", "habitName": …,
       "runId": …, "sessionId": …, "recipient": …, "routeKind": …,
       "channel": … | null, "friendId"?: …, "key"?: …, "reason": …, "text": …}

- the route's channel is ``message`` (``surface.extra: [{friendId: bo,
  channel: message}]``) → a typed message to peer ``bo`` through
  ``ouro.messages.send`` (kind from the reason: needed_input → question,
  answer → answer, blocked → blocker, else status; sender ``habit:<name>``):
  ``delivered``, or ``queued`` with the reason (never lost; ``ouro sync`` and
  ``ouro message retry`` try it again). Refused (``blocked``) when the habit's
  tool policy denies ``message_send``;
- a recipient outside the envelope → ``blocked``; an unresolved route (e.g. an
  originator with no friendId) → ``unavailable``.

Every attempt inside a session is appended to the session's
``surface-attempts.jsonl`` and ends up in the run's receipt. Outside a habit
session nothing is sent and the answer is ``blocked`` (there is no envelope to
check against). The text is redacted before it is sent or queued.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

from ouro.arc.paths import arc_lock
from ouro.bundle import Bundle
from ouro.habits.config import read_config
from ouro.habits.outbox import ACKS, OUTBOX, queued
from ouro.habits.receipt import PermissionEnvelope, ReturnRoute, SurfaceAttempt, SurfaceResult
from ouro.habits.session import ENVELOPE_FILE, SURFACE_FILE, current_session, read_session_json
from ouro.models.clock import utc_now_iso
from ouro.models.ids import new_id
from ouro.proof.redact import bundle_literals, redact
from ouro.store.jsonl import append_jsonl

SENSE_TIMEOUT = 30.0
MESSAGE_CHANNEL = "message"
_KIND = {"needed_input": "question", "answer": "answer", "blocked": "blocker"}
_PRINTED = frozenset({"delivered", "delivered_now", "queued", "deferred", "sent"})


class Request(NamedTuple):
    """One surface request, validated by ``b.surface`` (``ouro.api``)."""

    to: str
    reason: str
    text: str


def _route(envelope: PermissionEnvelope, to: str) -> ReturnRoute | None:
    for route in envelope.return_routes:
        if to == route.kind and route.kind in ("family", "originator"):
            return route
        if route.status == "allowed" and to in (route.recipient, route.friend_id):
            return route
    return None


def surface(bundle: Bundle, *, to: str, reason: str, text: str) -> dict[str, Any]:
    """Surface ``text`` to ``to`` for ``reason`` from inside a habit session (``b.surface``)."""
    inp = Request(to=to, reason=reason, text=text)
    live = current_session(bundle)
    if live is None:
        return {
            "recipient": inp.to,
            "channel": "none",
            "reason": inp.reason,
            "result": "blocked",
            "error": "not inside a habit session (OURO_SESSION_ID names no live session "
            "of this bundle); surfacing is how a habit's private session reports back",
            "recorded": False,
        }
    session_id, folder = live
    envelope = PermissionEnvelope.model_validate(read_session_json(folder, ENVELOPE_FILE))
    text = redact(text, bundle_literals(bundle))
    route = _route(envelope, inp.to)
    queued_ref: str | None = None
    if route is None:
        allowed = ", ".join(r.recipient for r in envelope.return_routes if r.status == "allowed")
        attempt = SurfaceAttempt(
            recipient=inp.to,
            channel="none",
            reason=inp.reason,
            result="blocked",
            error=f"{inp.to!r} is not in this habit's return routes (allowed: {allowed or 'none'})",
        )
    elif route.status != "allowed":
        attempt = SurfaceAttempt(
            recipient=route.recipient,
            channel=route.channel or "none",
            reason=inp.reason,
            result="unavailable",
            route_kind=route.kind,
            error=route.reason or "route unresolved",
        )
    elif route.channel == MESSAGE_CHANNEL:
        attempt, queued_ref = _message(bundle, route, inp, text, envelope)
    else:
        template = read_config(bundle).senses.get(route.channel or "")
        if template:
            attempt = _send(template, route, inp, text, folder)
        else:
            queued_ref = _queue(bundle, route, inp, text, folder, session_id)
            attempt = SurfaceAttempt(
                recipient=route.recipient,
                channel=route.channel or "arc-outbox",
                reason=inp.reason,
                result="queued",
                route_kind=route.kind,
                raw_status="no sense configured for this channel; queued to the main line "
                "(its packet shows it until 'ouro surface ack')",
            )
    shown = attempt.model_dump(mode="json", by_alias=True, exclude_none=True)
    append_jsonl(
        folder / SURFACE_FILE, [{"at": utc_now_iso(), "attempt": shown, "locator": queued_ref}]
    )
    return {**shown, "recorded": True, "outboxLocator": queued_ref}


def _message(
    bundle: Bundle, route: ReturnRoute, inp: Request, text: str, env: PermissionEnvelope
) -> tuple[SurfaceAttempt, str | None]:
    """A typed message to the peer ``route.friend_id`` (ouro.messages)."""
    from ouro import messages
    from ouro.desk.tasks import acting_agent

    base: dict[str, Any] = {
        "recipient": route.recipient,
        "channel": MESSAGE_CHANNEL,
        "reason": inp.reason,
        "route_kind": route.kind,
    }
    if "message_send" in env.denied_tools:
        error = "the habit's tool policy denies message_send"
        return SurfaceAttempt(**base, result="blocked", error=error), None
    sent = messages.send(
        bundle,
        route.friend_id or route.recipient,
        text,
        kind=_KIND.get(inp.reason, "status"),
        sender=acting_agent(bundle, None),
    )
    ref = f"{messages.SENT}#{sent['message']['id']}"
    if sent["delivered"]:
        return SurfaceAttempt(**base, result="delivered", raw_status="delivered"), ref
    reason = str(sent["queuedReason"])
    return SurfaceAttempt(**base, result="queued", raw_status=reason[:200]), ref


def _queue(
    bundle: Bundle,
    route: ReturnRoute,
    inp: Request,
    text: str,
    folder: Path,
    session_id: str,
) -> str:
    meta = read_session_json(folder, "session.json") or {}
    record: dict[str, Any] = {
        "schemaVersion": 1,
        "id": new_id("ob"),
        "queuedAt": utc_now_iso(),
        "habitName": meta.get("habitName"),
        "runId": meta.get("runId"),
        "sessionId": session_id,
        "recipient": route.recipient,
        "routeKind": route.kind,
        "channel": route.channel,
        "reason": inp.reason,
        "text": text,
    }
    if route.friend_id:
        record["friendId"] = route.friend_id
    if route.key:
        record["key"] = route.key
    # Under the Arc lock like every arc/ write, so 'ouro sync' (which holds it
    # while git replaces files) never has this append land in a replaced file.
    with arc_lock(bundle, "outbox queue"):
        append_jsonl(bundle.root / OUTBOX, [record])
    return f"{OUTBOX}#{record['id']}"


def _send(
    template: str, route: ReturnRoute, inp: Request, text: str, folder: Path
) -> SurfaceAttempt:
    meta = read_session_json(folder, "session.json") or {}
    values = {
        "{recipient}": route.recipient,
        "{text}": text,
        "{reason}": inp.reason,
        "{channel}": route.channel or "",
        "{key}": route.key or "",
        "{habit}": str(meta.get("habitName", "")),
        "{runId}": str(meta.get("runId", "")),
    }
    argv = []
    for part in shlex.split(template):
        for placeholder, value in values.items():
            part = part.replace(placeholder, value)
        argv.append(part)
    base: dict[str, Any] = {
        "recipient": route.recipient,
        "channel": route.channel or "none",
        "reason": inp.reason,
        "route_kind": route.kind,
    }
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=SENSE_TIMEOUT, check=False
        )
    except (FileNotFoundError, PermissionError) as exc:
        return SurfaceAttempt(**base, result="unavailable", error=f"sense command: {exc}")
    except subprocess.TimeoutExpired:
        return SurfaceAttempt(
            **base, result="failed", error=f"sense command timed out after {SENSE_TIMEOUT:g}s"
        )
    first = (proc.stdout.strip().splitlines() or [""])[0].strip()[:200]
    if proc.returncode != 0:
        tail = proc.stderr.strip()[-300:]
        return SurfaceAttempt(
            **base,
            result="failed",
            raw_status=first or None,
            error=f"sense command exited {proc.returncode}: {tail}".rstrip(": "),
        )
    result: SurfaceResult = first if first in _PRINTED else "sent"  # type: ignore[assignment]
    return SurfaceAttempt(**base, result=result, raw_status=first or None)


def ack(bundle: Bundle, ident: str, *, by: str | None = None) -> dict[str, Any]:
    """Acknowledge the queued message ``ident``: it leaves the main line's packet."""
    from ouro.errors import NotFound

    with arc_lock(bundle, "surface ack"):
        found = queued(bundle, include_acked=True).messages
        message = next((m for m in found if m["id"] == ident), None)
        if message is None:
            waiting = ", ".join(m["id"] for m in found if "ackedAt" not in m) or "none"
            raise NotFound(
                f"no surfaced message {ident!r} in {OUTBOX} (waiting: {waiting})",
                hint="'ouro surface list' shows the waiting ones",
            )
        if "ackedAt" in message:
            return {"id": ident, "acked": True, "already": True, "ackedAt": message["ackedAt"]}
        at = utc_now_iso()
        append_jsonl(
            bundle.root / ACKS, [{"schemaVersion": 1, "id": ident, "ackedAt": at, "by": by}]
        )
    return {"id": ident, "acked": True, "already": False, "ackedAt": at}
