"""The flight recorder: append an event, then rewrite the checkpoint.

``record_event`` is the one way events are written. Under the Arc lock it
validates the event (``ouro.arc.events.event_line``), redacts every
field, appends the event as one line to the UTC day's file (``append_jsonl``:
a single locked write + fsync), then folds the log from the checkpoint's
cursor and replaces ``latest.json`` atomically. A crash between
the append and the rewrite loses nothing: the next reader folds the missing
lines in process and the next writer persists them.
"""

from __future__ import annotations

from ouro.arc import checkpoint as ckpt
from ouro.arc import paths
from ouro.arc.events import event_line
from ouro.bundle import Bundle
from ouro.edge import require_text
from ouro.errors import OuroError
from ouro.lane import habit_lane
from ouro.models.clock import utc_now_iso
from ouro.models.ids import new_id
from ouro.proof.redact import bundle_literals, redact_obj
from ouro.store.jsonl import append_jsonl

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any


def build_event(
    bundle: Bundle,
    kind: str,
    summary: str,
    *,
    session_ref: str | None = None,
    turn_id: str | None = None,
    current_ask: str | None = None,
    next_safe_action: str | None = None,
    stop_before: list[str] | None = None,
    blocked_because: str | None = None,
    produced_refs: list[dict[str, str]] | None = None,
    meta: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A validated, redacted event line (not yet written). Meaningful text given
    (an ask, a next action, each stop-before item, a blocker, a handoff's text)
    must not be blank (``ouro.edge.require_text``).

    Inside a habit session (``ouro.lane``) the event is the habit's: its
    ``sessionRef`` is the session, whatever the caller passed, and ``meta.habit``
    names the habit, so it never becomes the main line's ask or next action."""
    for field, value in (
        ("current_ask", current_ask),
        ("next_safe_action", next_safe_action),
        ("blocked_because", blocked_because),
        *(("stop_before", item) for item in stop_before or []),
        *((("text", summary),) if kind == "handoff" else ()),
    ):
        if value is not None:
            require_text(value, field)
    lane = habit_lane(bundle.root)
    if lane is not None:
        session_ref = lane.session_id
        meta = {**(meta or {}), "habit": lane.habit}
    raw = {
        "id": new_id("ev"),
        "kind": kind,
        "recorded_at": utc_now_iso(),
        "session_ref": session_ref,
        "turn_id": turn_id,
        "summary": summary,
        "current_ask": current_ask,
        "next_safe_action": next_safe_action,
        "stop_before": stop_before,
        "blocked_because": blocked_because,
        "produced_refs": produced_refs,
        "meta": meta,
    }
    line: dict[str, Any] = redact_obj(event_line(raw), bundle_literals(bundle))
    return line


def write_checkpoint(bundle: Bundle) -> dict[str, Any]:
    """Fold the log into the checkpoint and replace latest.json. Needs the Arc lock."""
    now = ckpt.compute(bundle).checkpoint
    fresh = ckpt.view(bundle, now["fold"], now["stores"], now["storesDigest"], [])
    ckpt.write(bundle, fresh)
    return fresh


def append_locked(bundle: Bundle, line: dict[str, Any]) -> list[str]:
    """Append one built event and rewrite the checkpoint. Needs the Arc lock.

    Returns warnings: once the event is durable the write has happened, so a
    checkpoint that cannot be rewritten (disk full, a folder in its place) is
    a warning, not an error -- latest.json then lags the log, which readers
    detect and fold in process, and the next write rewrites it.
    """
    append_jsonl(paths.events_dir(bundle) / paths.day_file_name(line["recordedAt"]), [line])
    try:
        write_checkpoint(bundle)
    except OuroError as exc:
        return [
            f"event {line['id']} recorded; {paths.CHECKPOINT} is stale ({exc.message}) -- "
            "it is folded from the log on read and rewritten by the next write"
        ]
    return []


def record_event(
    bundle: Bundle,
    kind: str,
    summary: str,
    *,
    session_ref: str | None = None,
    turn_id: str | None = None,
    current_ask: str | None = None,
    next_safe_action: str | None = None,
    stop_before: list[str] | None = None,
    blocked_because: str | None = None,
    produced_refs: list[dict[str, str]] | None = None,
    meta: dict[str, Any] | None = None,
    warnings: list[str] | None = None,
) -> dict[str, Any]:
    """Append one event (redacted) and rewrite the checkpoint; returns the event.

    A checkpoint that could not be rewritten after the append is reported in
    ``warnings`` (when given), never raised.
    """
    with paths.arc_lock(bundle, f"record {kind}"):
        line = build_event(
            bundle,
            kind,
            summary,
            session_ref=session_ref,
            turn_id=turn_id,
            current_ask=current_ask,
            next_safe_action=next_safe_action,
            stop_before=stop_before,
            blocked_because=blocked_because,
            produced_refs=produced_refs,
            meta=meta,
        )
        problems = append_locked(bundle, line)
    if warnings is not None:
        warnings.extend(problems)
    return line
