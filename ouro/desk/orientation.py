"""The Desk section of the orientation packet (``ouro orient``).

Pure and deterministic: reads Desk files directly (never the search index),
uses no clock, orders everything by stable keys. Featured tracks and tasks
come first, then active and blocked tasks, then tasks completed without a
passing check (``unverified``), then the newest friction. An
unreadable file becomes an item saying so (unknown stays unknown).
"""

from __future__ import annotations

from collections import Counter

from ouro.bundle import Bundle
from ouro.desk.featured import featured_path, read_featured
from ouro.desk.friction import list_friction
from ouro.desk.tasks import Task, TaskHead, holder_of, load_task, scan_heads
from ouro.errors import CorruptFile
from ouro.orient_types import OrientItem

SECTION_FEATURED = "Desk: featured"
SECTION_ACTIVE = "Desk: active tasks"
SECTION_BLOCKED = "Desk: blocked tasks"
SECTION_UNVERIFIED = "Desk: done unverified"
SECTION_FRICTION = "Desk: recent friction"
MAX_PER_SECTION = 20
FRICTION_SHOWN = 5


def _task_text(task: Task) -> str:
    meta = task.meta
    text = f"{task.id} [{meta.get('status')}] p{meta.get('priority')} {meta.get('title')}"
    holder = holder_of(meta)
    if holder:
        text += f" (held by {holder} until {meta.get('leaseUntil')})"
    if meta.get("unverified"):
        text += f" (done unverified: {meta.get('unverified')})"
    return text


def _order(head: TaskHead) -> tuple[int, str, str]:
    return (head.priority, head.created, head.id)


def _load(bundle: Bundle, head: TaskHead, problems: list[str]) -> Task | None:
    try:
        return load_task(bundle, head.path)
    except CorruptFile as exc:
        problems.append(exc.message)
        return None


def desk_items(bundle: Bundle) -> list[OrientItem]:
    items: list[OrientItem] = []
    # Only the heads of all tasks are read; full documents only for tasks shown.
    heads, problems = scan_heads(bundle)
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
        task = _load(bundle, head, problems) if head is not None else None
        if task is None:
            items.append(
                OrientItem(
                    SECTION_FEATURED, 3, f"{task_id}: featured but no task.md has this id", None
                )
            )
            continue
        shown.add(task_id)
        items.append(
            OrientItem(
                SECTION_FEATURED, 3, _task_text(task), task.locator, more="ouro desk task list"
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
            task = _load(bundle, head, problems)
            if task is not None:
                items.append(
                    OrientItem(section, priority, _task_text(task), task.locator, more=more)
                )
    # Completed without a passing check: shown until reopened or verified.
    unverified = sorted(
        (h for h in heads if h.status == "done" and h.unverified and h.id not in shown),
        key=_order,
    )
    for head in unverified[:MAX_PER_SECTION]:
        task = _load(bundle, head, problems)
        if task is not None:
            items.append(
                OrientItem(
                    SECTION_UNVERIFIED,
                    4,
                    _task_text(task),
                    task.locator,
                    more="ouro desk task list --status done",
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
