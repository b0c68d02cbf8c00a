"""Task dependencies: ``blockedBy`` and ``parent`` in task.md front matter.

Contract (fields written by ``ouro.desk.tasks``, see ``docs/desk.md``):
- ``blockedBy`` is a list of task ids (any track) the task waits for; a task
  is unblocked when every one of them is ``done`` (``dropped`` does not count:
  the work it stood for was not done). ``parent`` is one task id.
- A change that would close a loop is refused before anything is written:
  ``InvalidInput`` names the loop (``t-a → t-b → t-a``). A task cannot block
  itself or be its own parent; the parent chain cannot loop either.
- Links are checked and written under ``state/locks/desk-links.lock`` (taken
  before the task's own lock), so two racing updates cannot each add one half
  of a loop.
- The graph is read from the desk heads (``ouro.desk.heads``): files are the
  truth, the heads cache is validated per file. A blocker whose task cannot be
  found or read is unknown, and an unknown blocker keeps the task blocked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ouro.bundle import Bundle
from ouro.desk.heads import Head, read_heads
from ouro.errors import InvalidInput
from ouro.store.lock import FileLock


def links_lock(bundle: Bundle) -> FileLock:
    return FileLock(bundle.lock_path("desk-links"), purpose="task links")


def find_loop(edges: Mapping[str, Sequence[str]], start: str) -> list[str] | None:
    """A path ``start → … → start`` along ``edges``, or None (depth-first)."""
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        for nxt in edges.get(node, ()):
            if nxt == start:
                return [*path, start]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, [*path, nxt]))
    return None


def check_links(
    bundle: Bundle, task_id: str, *, blocked_by: list[str] | None, parent: str | None
) -> None:
    """Refuse links that would make a loop (caller holds ``links_lock``).

    ``blocked_by`` / ``parent`` are the task's new values (None: unchanged);
    they are already resolved to ids of tasks that exist.
    """
    heads, _problems = read_heads(bundle)
    blocks = {h.id: list(h.blocked_by) for h in heads}
    parents = {h.id: [h.parent] if h.parent else [] for h in heads}
    if blocked_by is not None:
        if task_id in blocked_by:
            raise InvalidInput(
                f"blockedBy: task {task_id} cannot be blocked by itself",
                hint="name the other tasks it waits for",
            )
        blocks[task_id] = list(blocked_by)
        loop = find_loop(blocks, task_id)
        if loop:
            raise InvalidInput(
                "blockedBy: refused, it would make a cycle: " + " → ".join(loop),
                hint="a task cannot wait (directly or through others) for itself; "
                "drop one of these links",
            )
    if parent is not None:
        parents[task_id] = [parent] if parent else []
        loop = find_loop(parents, task_id)
        if loop:
            raise InvalidInput(
                "parent: refused, it would make a cycle: " + " → ".join(loop),
                hint="a task cannot be its own ancestor; pick another parent",
            )


def waiting_on(head: Head, status_of: Mapping[str, str]) -> list[str]:
    """The blockers of ``head`` that are not done (unknown ones included)."""
    return not_done(head.blocked_by, status_of)


def not_done(blocked_by: Iterable[str], status_of: Mapping[str, str]) -> list[str]:
    """The ids among ``blocked_by`` that are not done (unknown ones included)."""
    return [b for b in blocked_by if status_of.get(b) != "done"]


def unblocked_by(heads: Iterable[Head], done_id: str) -> list[Head]:
    """Open tasks that waited for ``done_id`` and now wait for nothing."""
    heads = list(heads)
    status_of = {h.id: h.status for h in heads}
    return [
        h
        for h in heads
        if done_id in h.blocked_by and h.status == "open" and not waiting_on(h, status_of)
    ]
