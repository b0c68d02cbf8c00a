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

import heapq
from datetime import datetime
from typing import Any

from ouro.bundle import Bundle
from ouro.desk.deps import not_done
from ouro.desk.heads import DeskHeads, Head, Row, desk_heads
from ouro.models.clock import parse_time
from ouro.orient_types import OrientItem

SECTION_READY = "Desk: ready"
ORIENT_READY = 5


class Ready:
    __slots__ = ("problems", "tasks", "waiting")

    def __init__(self, problems: list[str] | None = None) -> None:
        self.tasks: list[Head] = []
        #: open tasks left out because a blocker is not done: id -> the blockers
        self.waiting: dict[str, list[str]] = {}
        self.problems: list[str] = problems or []


def _held(held_by: str | None, lease_until: str | None, now: datetime | None) -> bool:
    if not held_by:
        return False
    if now is None:
        return True
    try:
        return lease_until is not None and parse_time(lease_until) > now
    except ValueError:
        return False  # an unreadable lease holds nobody (ouro.desk.tasks.lease_end)


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
    rows = found.rows(ordered=False)  # every task: a blocker may be any of them
    status_of = {r[2]: r[5] for r in rows}
    if len(status_of) != len(rows):
        # two folders share an id: the last by locator speaks for it, as everywhere
        rows = found.rows()
        status_of = {r[2]: r[5] for r in rows}
    waiting: dict[str, list[str]] = {}
    ready = []
    # Rows, not heads: the packet asks on every prompt, and a year's desk holds
    # thousands of open tasks; a Head is made only for the ready ones it returns.
    for row in rows:
        if row[5] != "open" or (track is not None and row[3] != track):
            continue
        blockers = not_done(row[11], status_of)
        if blockers:
            waiting[row[2]] = blockers
        elif not _held(row[8], row[9], now):
            ready.append(row)
    key = lambda r: (r[0], r[1], r[2])  # noqa: E731 -- priority, created, id (unique here)
    if limit is None:
        ready.sort(key=key)
    else:
        ready = heapq.nsmallest(limit, ready, key=key)
    return ready, waiting


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
    found = ready_tasks(bundle, now=None, limit=ORIENT_READY)
    return [
        OrientItem(
            SECTION_READY,
            priority,
            f"{h.id} p{h.priority} {h.title}",
            h.locator,
            more="ouro desk ready",
        )
        for h in found.tasks[:ORIENT_READY]
    ]
