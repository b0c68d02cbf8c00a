"""The bundle's writer locks, taken together around a sync's commit and merge.

Every ouro writer takes one of these before it changes a tracked file, so
while ``ouro sync`` holds them all, git's view of the files cannot change
under it and no write can land between git reading a file and git (or the
merge rules) replacing it. A writer that comes meanwhile waits; its write
lands after the merge and goes out with the next sync.

Order (outer to inner, as writers nest them): desk, each task (by id), notes,
diary, sentinel, arc. FileLock is not re-entrant, so nothing that takes one
of these (``record_event``, entity rebuilds, ...) may run while they are held;
Arc lines are appended with ``append_locked`` instead.
"""

from __future__ import annotations

from contextlib import ExitStack

from ouro.bundle import Bundle
from ouro.desk.tasks import scan_heads
from ouro.store.lock import FileLock

LOCK_TIMEOUT = 60.0


def task_ids(bundle: Bundle) -> list[str]:
    heads, _ = scan_heads(bundle)
    ids = {h.id for h in heads if h.id}
    locks = bundle.lock_path("x").parent
    if locks.is_dir():
        ids.update(p.stem[5:] for p in locks.glob("task-*.lock"))
    return sorted(ids)


def writer_locks(bundle: Bundle) -> ExitStack:
    names = [
        "desk",
        *(f"task-{tid}" for tid in task_ids(bundle)),
        "notes",
        "diary",
        "sentinel",
        "arc",
    ]
    stack = ExitStack()
    try:
        for name in names:
            lock = FileLock(bundle.lock_path(name), timeout=LOCK_TIMEOUT, purpose="ouro sync")
            stack.enter_context(lock)
    except BaseException:
        stack.close()
        raise
    return stack
