"""The Desk section of the orientation packet (``ouro orient``).

Pure and deterministic: reads Desk files directly (never the search index),
uses no clock, orders everything by stable keys. Featured tracks and tasks
come first, then active and blocked tasks, then tasks completed without a
passing check (``unverified``), then the open tasks of the current tracks (the
featured tracks, else the tracks that have active tasks; at most
``MAX_PER_SECTION``, lower priority so the budget drops them first), then the
newest friction. An unreadable file becomes an item saying so (unknown stays
unknown). Tasks come from the desk heads (``ouro.desk.heads``: a
per-file-validated summary, so only changed task files are read). Item texts
are redacted when the packet is assembled (``ouro.orient.collect_items``):
Desk records keep what the user wrote, the packet never shows a secret from
them.
"""

from __future__ import annotations

from collections import Counter

from ouro.bundle import Bundle
from ouro.desk.featured import featured_path, read_featured
from ouro.desk.friction import list_friction
from ouro.desk.heads import Head, read_heads
from ouro.errors import CorruptFile
from ouro.orient_types import OrientItem

SECTION_FEATURED = "Desk: featured"
SECTION_ACTIVE = "Desk: active tasks"
SECTION_BLOCKED = "Desk: blocked tasks"
SECTION_UNVERIFIED = "Desk: done unverified"
SECTION_OPEN = "Desk: open tasks (current tracks)"
SECTION_FRICTION = "Desk: recent friction"
MAX_PER_SECTION = 20
FRICTION_SHOWN = 5


def _task_text(head: Head) -> str:
    text = f"{head.id} [{head.status}] p{head.priority} {head.title}"
    if head.held_by:
        text += f" (held by {head.held_by} until {head.lease_until})"
    if head.unverified:
        text += f" (done unverified: {head.unverified})"
    return text


def _order(head: Head) -> tuple[int, str, str]:
    return (head.priority, head.created, head.id)


def desk_items(bundle: Bundle) -> list[OrientItem]:
    items: list[OrientItem] = []
    heads, problems = read_heads(bundle)
    by_id = {h.id: h for h in heads}
    try:
        featured = read_featured(bundle)
    except CorruptFile as exc:
        featured = {"tracks": [], "tasks": []}
        items.append(
            OrientItem(
                SECTION_FEATURED,
                3,
                f"featured list unreadable: {exc.message}",
                bundle.locator(featured_path(bundle)),
            )
        )
    for name in featured["tracks"]:
        counts = Counter(h.status for h in heads if h.track == name)
        summary = ", ".join(f"{counts[s]} {s}" for s in ("active", "blocked", "open") if counts[s])
        items.append(
            OrientItem(
                SECTION_FEATURED,
                3,
                f"track {name}: {summary or 'no open tasks'}",
                f"desk/{name}/track.md",
                more="ouro desk task list",
            )
        )
    shown: set[str] = set()
    for task_id in featured["tasks"]:
        head = by_id.get(task_id)
        if head is None:
            items.append(
                OrientItem(
                    SECTION_FEATURED, 3, f"{task_id}: featured but no task.md has this id", None
                )
            )
            continue
        shown.add(task_id)
        items.append(
            OrientItem(
                SECTION_FEATURED, 3, _task_text(head), head.locator, more="ouro desk task list"
            )
        )
    for status, section, priority in (
        ("active", SECTION_ACTIVE, 4),
        ("blocked", SECTION_BLOCKED, 3),
    ):
        picked = sorted(
            (h for h in heads if h.status == status and h.id not in shown),
            key=_order,
        )
        more = f"ouro desk task list --status {status}"
        for head in picked[:MAX_PER_SECTION]:
            items.append(OrientItem(section, priority, _task_text(head), head.locator, more=more))
    # Completed without a passing check: shown until reopened or verified.
    unverified = sorted(
        (h for h in heads if h.status == "done" and h.unverified and h.id not in shown),
        key=_order,
    )
    for head in unverified[:MAX_PER_SECTION]:
        items.append(
            OrientItem(
                SECTION_UNVERIFIED,
                4,
                _task_text(head),
                head.locator,
                more="ouro desk task list --status done",
            )
        )
    current = list(featured["tracks"]) or sorted({h.track for h in heads if h.status == "active"})
    opened = sorted(
        (h for h in heads if h.status == "open" and h.track in current and h.id not in shown),
        key=_order,
    )
    for head in opened[:MAX_PER_SECTION]:
        items.append(
            OrientItem(
                SECTION_OPEN,
                5,
                _task_text(head),
                head.locator,
                more="ouro desk task list --status open",
            )
        )
    for problem in problems[:MAX_PER_SECTION]:
        items.append(OrientItem(SECTION_ACTIVE, 3, f"unreadable task: {problem}", None))
    friction, problems = list_friction(bundle, limit=FRICTION_SHOWN)
    for entry in friction:
        items.append(
            OrientItem(
                SECTION_FRICTION,
                6,
                f"{entry.get('created', '')[:10]} {entry.get('title')}",
                entry["locator"],
                more="ouro desk friction list",
            )
        )
    for problem in problems[:FRICTION_SHOWN]:
        items.append(OrientItem(SECTION_FRICTION, 6, f"unreadable friction: {problem}", None))
    return items
