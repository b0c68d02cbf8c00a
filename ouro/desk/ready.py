"""Ready work: open tasks nothing blocks and nobody holds (``ouro desk ready``).

Contract:
- A task is ready when its status is ``open``, every task in its
  ``blockedBy`` is ``done`` (an unknown or unreadable blocker keeps it
  blocked: unknown stays unknown) and no live lease holds it (``heldBy`` set
  with ``leaseUntil`` in the future; ``ready_tasks`` takes ``now``). Ordered
  by priority (0 first), then age (oldest ``created`` first), then id.
- The orientation variant (``ready_orient_items``) uses no clock, so the
  packet stays deterministic: there any ``heldBy`` counts as held.
- Pure: reads task front matter through the desk heads; writes nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ouro.bundle import Bundle
from ouro.desk.heads import (
    READY_KEPT,
    DeskHeads,
    Head,
    Row,
    desk_heads,
    ready_kept,
    ready_rows,
)
from ouro.orient_types import OrientItem

if TYPE_CHECKING:
    from datetime import datetime

SECTION_READY = "Desk: ready"
ORIENT_READY = READY_KEPT  # the desk heads keep that many (no clock)


class Ready:
    __slots__ = ("problems", "tasks", "waiting")

    def __init__(self, problems: list[str] | None = None) -> None:
        self.tasks: list[Head] = []
        #: open tasks left out because a blocker is not done: id -> the blockers
        self.waiting: dict[str, list[str]] = {}
        self.problems: list[str] = problems or []


def ready_tasks(
    bundle: Bundle, *, track: str | None = None, now: datetime | None, limit: int | None = None
) -> Ready:
    """Ready tasks, most urgent then oldest first. ``now=None``: any holder counts.
    ``limit``: only the first so many ready tasks (``waiting`` stays complete)."""
    if track is not None:
        from ouro.desk.tracks import require_track

        require_track(bundle, track)
    found = desk_heads(bundle)
    if now is None:  # no clock: a function of the rows alone, kept while they hold
        picked, waiting = found.derived(
            ("ready", track, limit), lambda heads: _pick(heads, track, None, limit)
        )
    else:
        picked, waiting = _pick(found, track, now, limit)
    out = Ready(problems=found.problems)
    out.waiting = {k: list(v) for k, v in waiting.items()}
    out.tasks = [found.head(r) for r in picked]
    return out


def _pick(
    found: DeskHeads, track: str | None, now: datetime | None, limit: int | None
) -> tuple[list[Row], dict[str, list[str]]]:
    """(the ready rows in order, open task id -> its blockers not done)."""
    return ready_rows(found.rows(ordered=False), track=track, now=now, limit=limit)


def head_summary(head: Head) -> dict[str, Any]:
    return {
        "id": head.id,
        "title": head.title,
        "status": head.status,
        "priority": head.priority,
        "track": head.track,
        "locator": head.locator,
        "created": head.created,
        "blockedBy": list(head.blocked_by),
        "parent": head.parent,
    }


def ready_orient_items(bundle: Bundle, *, priority: int = 2) -> list[OrientItem]:
    """The top ready tasks for the packet (no clock); ``priority`` is lower while an ask exists."""
    found = desk_heads(bundle)
    heads = [found.head(r) for r in ready_kept(found)]
    return [
        OrientItem(
            SECTION_READY,
            priority,
            f"{h.id} p{h.priority} {h.title}",
            h.locator,
            more="ouro desk ready",
        )
        for h in heads[:ORIENT_READY]
    ]
