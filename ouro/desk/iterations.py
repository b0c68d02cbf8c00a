"""Iterations: ``<task folder>/iterations/NNN.md``, numbered from 1, never reused.

The next number is chosen under the task lock and the file is created with an
atomic replace, so racing writers get distinct numbers.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.desk.docs import write_doc
from ouro.desk.tasks import find_task, task_lock
from ouro.errors import InvalidInput
from ouro.models.clock import utc_now_iso

_NUMBERED = re.compile(r"^(\d+)\.md$")


def iteration_numbers(folder: Path) -> list[int]:
    try:
        names = [p.name for p in folder.iterdir()]
    except FileNotFoundError:
        return []
    return sorted(int(m.group(1)) for n in names if (m := _NUMBERED.match(n)))


def add_iteration(
    bundle: Bundle, ref: str, text: str, *, agent: str | None = None
) -> tuple[Path, dict[str, Any]]:
    if not text.strip():
        raise InvalidInput("text: the iteration is empty", hint="say what happened")
    task_id = find_task(bundle, ref).id
    with task_lock(bundle, task_id):
        task = find_task(bundle, task_id)
        folder = task.folder / "iterations"
        n = max(iteration_numbers(folder), default=0) + 1
        path = folder / f"{n:03d}.md"
        meta = {"task": task_id, "n": n, "created": utc_now_iso(), "agent": agent}
        write_doc(path, meta, text)
    return path, meta
