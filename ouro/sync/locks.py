"""The bundle's writer locks, taken together around a sync's commit and merge.

Every ouro writer takes one of these before it changes a tracked file, so
while ``ouro sync`` holds them all, git's view of the files cannot change
under it and no write can land between git reading a file and git (or the
merge rules) replacing it. A writer that comes meanwhile waits; its write
lands after the merge and goes out with the next sync.

Order (outer to inner, as writers nest them): desk, each task the merge will
write (by id), notes, diary, sentinel, arc. FileLock is not re-entrant, so nothing that takes one
of these (``record_event``, entity rebuilds, ...) may run while they are held;
Arc lines are appended with ``append_locked`` instead.
"""

from __future__ import annotations

import re
from contextlib import ExitStack

from ouro.bundle import Bundle
from ouro.store.git import Git
from ouro.store.lock import FileLock
from ouro.sync.state import read_inside

LOCK_TIMEOUT = 60.0


_TASK_ID = re.compile(rb"^id:[ \t]*['\"]?(t-[0-9a-z]+)['\"]?[ \t]*$", re.MULTILINE)


def incoming_task_ids(bundle: Bundle, git: Git, targets: list[str]) -> list[str]:
    """Ids of the tasks whose folders a merge of ``targets`` into HEAD will write.

    Only those need their lock: git replaces no other task file, and a bundle
    of thousands of tasks must not hold thousands of lock descriptors.
    """
    folders: dict[str, str] = {}
    for target in targets:
        base = git.run("merge-base", "HEAD", target, check=False).stdout.decode().strip()
        if not base:
            continue
        for path in git.lines(
            "diff", "--relative", "--name-only", "--no-renames", "-z", base, target, "--", "desk"
        ):
            parts = path.split("/")
            if len(parts) >= 4 and not parts[1].startswith("_"):
                folders.setdefault("/".join(parts[:3]), target)
    ids = set()
    for folder, target in folders.items():
        match = _TASK_ID.search(
            _local_task(bundle, folder) or git.blob(f"{target}:./{folder}/task.md") or b""
        )
        if match:
            ids.add(match.group(1).decode())
    return sorted(ids)


#: the largest working task file read for its id (a larger one: the committed version)
_TASK_HEAD = 1 << 20


def _local_task(bundle: Bundle, folder: str) -> bytes | None:
    """The working ``task.md`` of ``folder``, None when missing or not a regular file
    inside the bundle (a FIFO, a symlink leading outside: never read)."""
    try:
        return read_inside(bundle.root, bundle.root / folder / "task.md", _TASK_HEAD)
    except OSError:  # the committed version names the id as well
        return None


def writer_locks(bundle: Bundle, task_ids: list[str]) -> ExitStack:
    names = [
        "desk",
        *(f"task-{tid}" for tid in sorted(task_ids)),
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
