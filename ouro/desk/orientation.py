"""The Desk section of the orientation packet (``ouro orient``).

Pure and deterministic: reads Desk files directly (never the search index),
uses no clock, orders everything by stable keys. Featured tracks and tasks
come first, then active and blocked tasks, then tasks completed without a
passing check (``unverified``), then the open tasks of the current tracks (the
featured tracks, else the tracks that have active tasks; at most
``MAX_PER_SECTION``, lower priority so the budget drops them first), then the
newest friction, then the newest lessons. Featured notes and lessons (slugs in
``featured.md``) are listed with their titles in the featured section. A
*lesson* is what ouro files as a tip (``desk/_meta/tips/``). An unreadable file becomes an item saying so (unknown stays
unknown). Tasks come from the desk heads (``ouro.desk.heads``: a
per-file-validated summary, so only changed task files are read). Item texts
are redacted when the packet is assembled (``ouro.orient.collect_items``):
Desk records keep what the user wrote, the packet never shows a secret from
them.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import islice

from ouro.bundle import Bundle
from ouro.desk.featured import DOC_HOMES, FEATURED, read_featured
from ouro.desk.friction import list_friction
from ouro.desk.heads import TOP_OPEN, Head, Row, desk_heads
from ouro.errors import CorruptFile
from ouro.orient_types import OrientItem

SECTION_FEATURED = "Desk: featured"
SECTION_ACTIVE = "Desk: active tasks"
SECTION_BLOCKED = "Desk: blocked tasks"
SECTION_UNVERIFIED = "Desk: done unverified"
SECTION_OPEN = "Desk: open tasks (current tracks)"
SECTION_FRICTION = "Desk: recent friction"
SECTION_LESSONS = "Desk: lessons"
LESSONS_SHOWN = 5
#: at most this many tasks per section (the heads keep that many open ones per track)
MAX_PER_SECTION = TOP_OPEN
FRICTION_SHOWN = 5


def _task_text(head: Head) -> str:
    text = f"{head.id} [{head.status}] p{head.priority} {head.title}"
    if head.held_by:
        text += f" (held by {head.held_by} until {head.lease_until})"
    if head.unverified:
        text += f" (done unverified: {head.unverified})"
    return text


def _first(rows: Iterable[Row], limit: int = MAX_PER_SECTION) -> list[Row]:
    return list(islice(rows, limit))


def desk_items(bundle: Bundle) -> list[OrientItem]:
    items: list[OrientItem] = []
    found = desk_heads(bundle)
    hot = found.hot  # the tasks orient can show, in (priority, created, id) order
    try:
        featured = read_featured(bundle)
    except CorruptFile as exc:
        featured = {"tracks": [], "tasks": []}
        items.append(
            OrientItem(
                SECTION_FEATURED,
                3,
                f"featured list unreadable: {exc.message}",
                FEATURED,
            )
        )
    for name in featured["tracks"]:
        counts = {s: found.count(name, s) for s in ("active", "blocked", "open")}
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
        head = found.find(task_id)
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
    items.extend(_featured_docs(bundle, featured))
    for status, section, priority in (
        ("active", SECTION_ACTIVE, 4),
        ("blocked", SECTION_BLOCKED, 3),
    ):
        more = f"ouro desk task list --status {status}"
        for row in _first(r for r in hot if r[5] == status and r[2] not in shown):
            head = found.head(row)
            items.append(OrientItem(section, priority, _task_text(head), head.locator, more=more))
    # Completed without a passing check: shown until reopened or verified.
    for row in _first(r for r in hot if r[5] == "done" and r[10] and r[2] not in shown):
        head = found.head(row)
        items.append(
            OrientItem(
                SECTION_UNVERIFIED,
                4,
                _task_text(head),
                head.locator,
                more="ouro desk task list --status done",
            )
        )
    current = set(featured["tracks"]) or {r[3] for r in hot if r[5] == "active"}
    for row in _first(r for r in found.open_rows(shown) if r[3] in current):
        head = found.head(row)
        items.append(
            OrientItem(
                SECTION_OPEN,
                5,
                _task_text(head),
                head.locator,
                more="ouro desk task list --status open",
            )
        )
    for problem in found.problems[:MAX_PER_SECTION]:
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
    items.extend(lesson_items(bundle))
    return items


def _doc_title(bundle: Bundle, locator: str) -> str | None:
    """A Desk document's title (its slug when it has none), or None when unreadable."""
    from ouro.desk.docs import read_doc
    from ouro.errors import OuroError
    from ouro.store.guard import Inside

    path = bundle.root / locator
    if not Inside(bundle.root).path(path):
        return None  # behind a symlink leading outside the bundle: not read
    try:
        meta, _ = read_doc(path, source=locator)
    except OuroError:
        return None
    title = meta.get("title")
    return title if isinstance(title, str) and title else locator.rsplit("/", 1)[-1][:-3]


def _featured_docs(bundle: Bundle, featured: dict[str, list[str]]) -> list[OrientItem]:
    out = []
    for key, what in (("notes", "note"), ("lessons", "lesson")):
        for slug in featured.get(key, []):
            locator = f"{DOC_HOMES[key]}{slug}.md"
            title = _doc_title(bundle, locator)
            more = "ouro notes search" if key == "notes" else "ouro desk tip list"
            if title is None:  # no locator: it does not resolve (the gauntlet checks them)
                text = f"{what} {slug}: featured but unreadable or gone ({locator})"
                out.append(OrientItem(SECTION_FEATURED, 3, text, None, more=more))
            else:
                out.append(OrientItem(SECTION_FEATURED, 3, f"{what} {title}", locator, more=more))
    return out


def lesson_items(bundle: Bundle) -> list[OrientItem]:
    """The newest lessons (tips), by ``updated`` then slug: titles and locators."""
    from ouro.desk.tips import list_tips

    tips, problems = list_tips(bundle)
    tips.sort(key=lambda t: (str(t.get("updated") or ""), t["slug"]), reverse=True)
    items = [
        OrientItem(
            SECTION_LESSONS,
            6,
            f"{str(t.get('updated') or '')[:10]} {t.get('title')}".strip(),
            t["locator"],
            more="ouro desk tip list",
        )
        for t in tips[:LESSONS_SHOWN]
    ]
    if len(tips) > LESSONS_SHOWN:
        items.append(
            OrientItem(
                SECTION_LESSONS,
                6,
                f"{len(tips) - LESSONS_SHOWN} older lessons",
                None,
                more="ouro desk tip list",
            )
        )
    items.extend(
        OrientItem(SECTION_LESSONS, 6, f"unreadable lesson: {p}", None) for p in problems[:3]
    )
    return items
