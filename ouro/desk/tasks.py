"""Tasks: ``desk/<track>/<task-slug>/task.md`` (see ``docs/record.md``).

Contract:
- ``id`` (``t-…``) is the identity; the folder slug comes from the title at
  creation and never changes (a retitled task keeps its folder).
- Every change to a task happens under ``state/locks/task-<id>.lock`` and is
  an atomic replace of task.md: read, change, write, with the lock held, so
  racing updates and claims serialize and none is lost.
- Looking a task up by id scans ``desk/*/*/task.md`` (front matter text only,
  then one full parse); a task can also be named ``<track>/<task-slug>``.
- Reads are pure; a task.md that cannot be parsed is reported, never rewritten.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.desk.docs import ordered, read_doc, write_doc
from ouro.desk.names import require_slug, slugify, unique_slug
from ouro.desk.tracks import require_track
from ouro.errors import CorruptFile, InvalidInput, NotFound
from ouro.models.clock import utc_now_iso
from ouro.models.ids import new_id
from ouro.store.lock import FileLock

STATUSES = ("open", "active", "blocked", "done", "dropped")
TASK_KEYS = (
    "id",
    "title",
    "status",
    "priority",
    "track",
    "created",
    "updated",
    "claimedBy",
    "leaseUntil",
    "acceptance",
    "check",
    "history",
)
DEFAULT_PRIORITY = 2
_ID_LINE = re.compile(r"^id:\s*['\"]?(t-[0-9a-z]+)['\"]?\s*$", re.MULTILINE)


@dataclass
class Task:
    path: Path
    meta: dict[str, Any]
    body: str
    locator: str = ""

    @property
    def id(self) -> str:
        return str(self.meta.get("id") or "")

    @property
    def track(self) -> str:
        return self.path.parent.parent.name

    @property
    def slug(self) -> str:
        return self.path.parent.name

    @property
    def folder(self) -> Path:
        return self.path.parent

    def summary(self) -> dict[str, Any]:
        m = self.meta
        return {
            "id": self.id,
            "title": m.get("title"),
            "status": m.get("status"),
            "priority": m.get("priority"),
            "track": self.track,
            "slug": self.slug,
            "locator": self.locator,
            "created": m.get("created"),
            "updated": m.get("updated"),
            "claimedBy": m.get("claimedBy"),
            "leaseUntil": m.get("leaseUntil"),
            "acceptance": m.get("acceptance"),
            "check": m.get("check"),
        }


@dataclass
class TaskScan:
    tasks: list[Task] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def task_lock(bundle: Bundle, task_id: str) -> FileLock:
    return FileLock(bundle.lock_path(f"task-{task_id}"), purpose=f"task {task_id}")


def check_title(title: str, *, field: str = "title") -> str:
    clean = title.strip()
    if not clean or "\n" in clean or len(clean) > 200:
        raise InvalidInput(
            f"{field}: must be one non-empty line of at most 200 characters",
            hint="put details in the body (--body-file)",
        )
    return clean


def check_priority(priority: int) -> int:
    if not 0 <= priority <= 9:
        raise InvalidInput(
            f"priority: {priority} is outside 0..9", hint="use 0 (most urgent) to 9; default 2"
        )
    return priority


def check_status(status: str) -> str:
    if status not in STATUSES:
        raise InvalidInput(
            f"status: {status!r} is not one of {', '.join(STATUSES)}", hint="pick one of those"
        )
    return status


def _task_files(bundle: Bundle, track: str | None = None) -> Iterator[Path]:
    # os.scandir and string sorting: at thousands of tasks, pathlib's per-path
    # objects and comparisons cost more than reading the files.
    if track is not None:
        tracks = [str(require_track(bundle, track))]
    else:
        try:
            with os.scandir(bundle.desk) as entries:
                tracks = sorted(
                    e.path for e in entries if e.is_dir() and not e.name.startswith("_")
                )
        except FileNotFoundError:
            return
    for folder in tracks:
        with os.scandir(folder) as entries:
            task_dirs = sorted(e.path for e in entries if e.is_dir())
        for task_dir in task_dirs:
            path = os.path.join(task_dir, "task.md")
            if os.path.isfile(path):
                yield Path(path)


def load_task(bundle: Bundle, path: Path) -> Task:
    locator = bundle.locator(path)
    meta, body = read_doc(path, source=locator)
    return Task(path, meta, body, locator)


def iter_tasks(bundle: Bundle, *, track: str | None = None) -> TaskScan:
    """Every task (sorted by track, then folder); unreadable ones go to ``problems``."""
    scan = TaskScan()
    for path in _task_files(bundle, track):
        try:
            scan.tasks.append(load_task(bundle, path))
        except CorruptFile as exc:
            scan.problems.append(exc.message)
    return scan


@dataclass(frozen=True)
class TaskHead:
    """The few front-matter fields orientation sorts by, read without YAML."""

    path: Path
    id: str
    status: str
    priority: int
    created: str

    @property
    def track(self) -> str:
        return self.path.parent.parent.name


_HEAD_FIELD = re.compile(
    r"^(id|status|priority|created):[ \t]*['\"]?([^'\"\n]*?)['\"]?[ \t]*$", re.MULTILINE
)


def _head(path: Path, text: str) -> TaskHead | None:
    """Fast path over the front matter; None when it is not in the shape ouro writes."""
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---", 3)
    if end < 0:
        return None
    found = dict(_HEAD_FIELD.findall(text[4:end]))
    if not {"id", "status", "priority"} <= found.keys() or not found["priority"].isdigit():
        return None
    return TaskHead(
        path, found["id"], found["status"], int(found["priority"]), found.get("created", "")
    )


def scan_heads(bundle: Bundle) -> tuple[list[TaskHead], list[str]]:
    """Every task's head, cheaply: orientation must stay fast at thousands of
    tasks. A task whose front matter is not in the plain shape ouro writes is
    parsed in full (and reported when it cannot be)."""
    heads: list[TaskHead] = []
    problems: list[str] = []
    for path in _task_files(bundle):
        try:
            head = _head(path, path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{bundle.locator(path)}: unreadable ({exc})")
            continue
        if head is None:
            try:
                task = load_task(bundle, path)
            except CorruptFile as exc:
                problems.append(exc.message)
                continue
            priority = task.meta.get("priority")
            head = TaskHead(
                path,
                task.id,
                str(task.meta.get("status")),
                priority if isinstance(priority, int) else 9,
                str(task.meta.get("created") or ""),
            )
        heads.append(head)
    return heads, problems


def history_list(value: Any) -> list[Any]:
    """The task's history as a list to append to; a hand-written non-list value
    (a string, a mapping) is kept whole as the first entry, never split apart."""
    if isinstance(value, list):
        return list(value)
    return [] if value is None or value == "" else [value]


def find_task(bundle: Bundle, ref: str) -> Task:
    """A task by id (``t-…``) or by ``<track>/<task-slug>``."""
    ref = ref.strip()
    if "/" in ref:
        track, _, slug = ref.partition("/")
        if slugify(track) != track or slugify(slug) != slug:
            # 'ops/fix\login' must not find ops/fix-login: a reference names one task exactly
            raise InvalidInput(
                f"task: {ref!r} is not a task reference: expected a task id (t-…) or "
                "<track>/<task-slug> in lowercase letters, digits and dashes",
                hint="list tasks and their references with 'ouro desk task list'",
            )
        path = require_track(bundle, track) / slug / "task.md"
        if path.is_file():
            return load_task(bundle, path)
    else:
        for path in _task_files(bundle):
            try:
                head = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            end = head.find("\n---", 3)
            ids = _ID_LINE.findall(head[: end if end > 0 else len(head)])
            if ref in ids:
                return load_task(bundle, path)
    raise NotFound(
        f"no task {ref!r} (looked for a task.md with that id, or <track>/<slug>)",
        hint="list tasks with 'ouro desk task list'",
    )


def new_task_meta(
    track: str,
    title: str,
    *,
    priority: int = DEFAULT_PRIORITY,
    acceptance: str | None = None,
    check: str | None = None,
    task_id: str | None = None,
    created: str | None = None,
) -> dict[str, Any]:
    """The front matter of a new task (validated); bulk writers use it too."""
    clean = check_title(title)
    check_priority(priority)
    now = created or utc_now_iso()
    return ordered(
        {
            "id": task_id or new_id("t"),
            "title": clean,
            "status": "open",
            "priority": priority,
            "track": track,
            "created": now,
            "updated": now,
            "acceptance": acceptance or None,
            "check": check or None,
            "history": [],
        },
        TASK_KEYS,
    )


def add_task(
    bundle: Bundle,
    track: str,
    title: str,
    *,
    body: str = "",
    priority: int = DEFAULT_PRIORITY,
    acceptance: str | None = None,
    check: str | None = None,
) -> Task:
    folder = require_track(bundle, track)
    meta = new_task_meta(folder.name, title, priority=priority, acceptance=acceptance, check=check)
    base = require_slug(meta["title"], field="title")
    with FileLock(bundle.lock_path("desk"), purpose="task add"):
        slug = unique_slug(base, lambda s: (folder / s).exists())
        path = folder / slug / "task.md"
        write_doc(path, meta, body)
    return load_task(bundle, path)


def save_task(task: Task) -> None:
    """Write a task back (caller holds the task lock and bumped ``updated``)."""
    task.meta = ordered(task.meta, TASK_KEYS)
    write_doc(task.path, task.meta, task.body)


def update_task(
    bundle: Bundle,
    ref: str,
    *,
    status: str | None = None,
    priority: int | None = None,
    title: str | None = None,
    acceptance: str | None = None,
    check: str | None = None,
    body: str | None = None,
    agent: str | None = None,
) -> tuple[Task, list[str]]:
    """Apply the given changes; returns the task and the names of changed fields."""
    if status is not None:
        check_status(status)
    if priority is not None:
        check_priority(priority)
    new_title = check_title(title) if title is not None else None
    task_id = find_task(bundle, ref).id
    with task_lock(bundle, task_id):
        task = find_task(bundle, task_id)  # re-read under the lock
        changed: list[str] = []
        now = utc_now_iso()
        fields = {
            "title": (title, new_title),
            "priority": (priority, priority),
            "acceptance": (acceptance, acceptance or None),
            "check": (check, check or None),
        }
        for key, (given, value) in fields.items():
            if given is not None and task.meta.get(key) != value:
                task.meta[key] = value
                changed.append(key)
        if status is not None and task.meta.get("status") != status:
            history = history_list(task.meta.get("history"))
            history.append(
                {
                    "at": now,
                    "event": "status",
                    "from": task.meta.get("status"),
                    "to": status,
                    "agent": agent,
                }
            )
            task.meta["history"] = history
            task.meta["status"] = status
            changed.append("status")
        if body is not None and body != task.body:
            task.body = body
            changed.append("body")
        if changed:
            task.meta["updated"] = now
            save_task(task)
    return task, changed
