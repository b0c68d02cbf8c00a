"""Planning the tasks of a journal entry routed to ``task``: one item, one task.

Contract: pure (reads nothing but what it is given, writes nothing),
deterministic for the same bytes. ``task_items`` splits the entry into its
parts (``ouro.migrate.triage.split_items``) and plans

- one task per open checklist item and per TODO / ``Next:`` line, in the
  ``journal-import`` track, titled by the item, ``source`` = the item's
  ``<file>:<line>``, status open, its id derived from that locator (a resumed
  run writes the same file); its body is the item's lines, then the entry's
  context (``triage.task_body``);
- one ``dropped`` item per done checklist item (rule ``done-item``): finished
  work is never open work; it stays in the verified backup, and its report
  line names the backup copy;
- with no open item, one task for the entry's text without its done items.

Every byte of the entry is placed once: each task counts its own item's
bytes, the first one also the entry's context and front matter (blank-only
context that no task body carries is ``dropped`` with rule ``entry-context``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ouro.desk.names import slugify
from ouro.migrate import triage
from ouro.migrate.plan import Item
from ouro.migrate.scan import SourceFile
from ouro.models.hashing import content_hash
from ouro.store.frontmatter import render

TRACK_TASK = "desk/" + triage.TRACK + "/{slug}/task.md"


def review_items(entry: triage.Entry) -> list[dict[str, Any]]:
    """The review file's ``items`` of an entry routed to task: each item's line, kind,
    text and what it becomes."""
    return [
        {
            "line": f"{entry.path}:{p.line}",
            "kind": p.kind,
            "text": triage.preview(p.title or p.text),
            "becomes": "drop" if p.kind == "done" else "task",
        }
        for p in triage.split_items(entry)
        if p.kind in ("open", "todo", "done")
    ]


def task_items(
    data: bytes,
    src: SourceFile,
    entry: triage.Entry,
    base: dict[str, Any],
    why: str | None,
    *,
    created: str,
    backup: str,
    task_id: Callable[[str, str], str],
    free: Callable[[str, str], str],
) -> list[Item]:
    """The plan items of ``entry`` (route task); ``base`` is the entry's detail (entry,
    route, rule), ``free(pattern, slug)`` claims a free destination."""
    from ouro.desk.tasks import new_task_meta

    parts = triage.split_items(entry)
    work = [p for p in parts if p.kind in ("open", "todo")]
    context = [[p.start, p.end] for p in parts if p.kind == "context"]
    context_bytes = sum(p.bytes for p in parts if p.kind == "context")
    meta_bytes = sum(p.bytes for p in parts if p.kind == "meta")
    carried = any(p.text.strip() for p in parts if p.kind == "context")
    items: list[Item] = []

    def task(locator: str, title: str, span: list[int] | None, size: int, kind: str | None) -> Item:
        meta = new_task_meta(
            triage.TRACK, title, task_id=task_id(locator, created), created=created
        )
        meta["source"] = locator
        ctx = context if (carried or span is None) else []
        body = triage.task_body(data, span, ctx)
        rendered = render(meta, body).encode()
        dest = free(TRACK_TASK, slugify(title)[:60].rstrip("-") or "journal-task")
        detail = {**base, "item": locator, "range": span, "context": ctx, "meta": meta}
        reason = why
        if kind is not None and base["rule"] != "plan":  # the rule that makes this line a task
            detail["rule"] = "todo-line" if kind == "todo" else "open-checklist"
            reason = triage.RULE_WHY[detail["rule"]]
        return Item(
            src.path,
            "created",
            "task",
            dest,
            size,
            src.hash,
            content_hash(rendered),
            reason,
            detail,
        )

    if not work:
        body = triage.task_body(data, None, context)
        title = triage.task_title(body, entry.locator)
        items.append(task(entry.locator, title, None, context_bytes + meta_bytes, None))
    for n, part in enumerate(work):
        extra = (meta_bytes + (context_bytes if carried else 0)) if n == 0 else 0
        title = triage._short(part.title or part.text)
        locator = f"{entry.path}:{part.line}"
        items.append(task(locator, title, [part.start, part.end], part.bytes + extra, part.kind))
    if work and not carried and context_bytes:
        rule = "entry-context"
        detail = {**base, "route": "drop", "rule": rule, "range": None}
        items.append(
            Item(
                src.path,
                "dropped",
                "none",
                f"{backup}/{src.path}",
                context_bytes,
                src.hash,
                None,
                triage.RULE_WHY[rule],
                detail,
            )
        )
    for part in parts:
        if part.kind != "done":
            continue
        locator = f"{entry.path}:{part.line}"
        where = f"{backup}/{src.path}"
        done_why = (
            f"a done checklist item ({locator}) is finished work, not open work: not filed "
            f"as a task; it stays in the backup, {where}"
        )
        detail = {
            **base,
            "route": "drop",
            "rule": "done-item",
            "item": locator,
            "range": [part.start, part.end],
        }
        items.append(
            Item(src.path, "dropped", "none", where, part.bytes, src.hash, None, done_why, detail)
        )
    return items
