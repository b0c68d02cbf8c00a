"""Tasks: ``desk/<track>/<task-slug>/task.md`` (see ``docs/record.md``).

Contract:
- ``id`` (``t-…``) is the identity; the folder slug comes from the title at
  creation and never changes (a retitled task keeps its folder).
- Every change to a task happens under ``state/locks/task-<id>.lock`` and is
  an atomic replace of task.md: read, change, write, with the lock held, so
  racing updates, takes and verifications serialize and none is lost.
- Leases hold: while ``heldBy`` is set and ``leaseUntil`` is in the future,
  only the holder may update the task (``update_task``), release it or
  complete it; anyone else gets ``Conflict`` naming the holder and the
  expiry, unless they pass ``take_over`` (recorded as a ``takeover`` history
  event naming the previous holder). Task files written before the rename
  keep the holder in ``claimedBy``; it is read as ``heldBy`` and moved there
  on the next write.
- The acting agent defaults to the bundle's agent (``bundle.json`` →
  ``agent``); inside a habit session it is always ``habit:<name>``.
- Completion is gated by the check: ``status done`` on a task with a ``check``
  needs a passing observed receipt of that exact command (``history`` event
  ``check``, written by ``verify_task`` or a host hook) whose hashes of the
  task's ``about`` files still match; or ``unverified`` (a reason), which is
  recorded in the status event and kept in ``unverified`` until the task is
  reopened.
- Looking a task up by id scans ``desk/*/*/task.md`` (front matter text only,
  then one full parse); a task can also be named ``<track>/<task-slug>``.
- Reads are pure; a task.md that cannot be parsed is reported, never rewritten.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.desk.docs import ordered, read_doc, write_doc
from ouro.desk.heads import require_id
from ouro.desk.names import require_slug, slugify, unique_slug
from ouro.desk.tracks import require_track
from ouro.errors import Conflict, CorruptFile, InvalidInput, NotFound, ToolDenied
from ouro.models.clock import format_time, parse_time, utc_now, utc_now_iso
from ouro.models.ids import new_id
from ouro.models.meta import check_agent
from ouro.store import frontmatter
from ouro.store.bounded import file_text
from ouro.store.guard import Inside, outside
from ouro.store.lock import FileLock

STATUSES = ("open", "active", "blocked", "done", "dropped")
OBSERVED = frozenset({"observed-by-ouro", "observed-by-host"})
DEFAULT_LEASE_MINUTES = 30
TASK_KEYS = (
    "id",
    "title",
    "status",
    "priority",
    "track",
    "created",
    "updated",
    "heldBy",
    "leaseUntil",
    "acceptance",
    "check",
    "about",
    "parent",
    "blockedBy",
    "unverified",
    "history",
)
LEGACY_HOLDER = "claimedBy"  # the lease holder's key before leases were renamed
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
            "heldBy": holder_of(m),
            "leaseUntil": m.get("leaseUntil"),
            "acceptance": m.get("acceptance"),
            "check": m.get("check"),
            "about": m.get("about") or [],
            "unverified": m.get("unverified"),
            "lastCheck": last_check(m),
            "blockedBy": blockers_of(m),
            "parent": m.get("parent") or None,
        }


def blockers_of(meta: dict[str, Any]) -> list[str]:
    """``blockedBy`` as a list of ids (a hand-written single id counts as one)."""
    value = meta.get("blockedBy")
    if isinstance(value, list):
        return [str(v) for v in value if v]
    return [str(value)] if value else []


def resolve_links(
    bundle: Bundle, blocked_by: list[str] | None, parent: str | None
) -> tuple[list[str] | None, str | None]:
    """Task references (ids or <track>/<slug>) as ids of tasks that exist.

    None stays None (unchanged); ``parent=""`` clears the parent."""
    ids = None
    if blocked_by is not None:
        ids = []
        for ref in blocked_by:
            try:
                found = find_task(bundle, ref).id
            except NotFound:
                raise InvalidInput(
                    f"blockedBy: no task {ref!r}",
                    hint="name an existing task by id (t-…) or <track>/<slug>; "
                    "list them with 'ouro desk task list'",
                ) from None
            if found not in ids:
                ids.append(found)
    parent_id = parent
    if parent:
        try:
            parent_id = find_task(bundle, parent).id
        except NotFound:
            raise InvalidInput(
                f"parent: no task {parent!r}",
                hint="name an existing task by id (t-…) or <track>/<slug>",
            ) from None
    return ids, parent_id


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


def _task_files(
    bundle: Bundle, track: str | None = None, problems: list[str] | None = None
) -> Iterator[Path]:
    """Every ``task.md``, none behind a symlink leading outside the bundle: those
    are reported in ``problems`` by bundle-relative path, never opened. Only a
    symlink pays for the check (the listing says which entries are)."""
    # os.scandir and string sorting: at thousands of tasks, pathlib's per-path
    # objects and comparisons cost more than reading the files.
    inside = Inside(bundle.root)
    skipped = problems if problems is not None else []
    if track is not None:
        tracks = [str(require_track(bundle, track))]
    else:
        try:
            tracks = sorted(
                e.path
                for e in inside.entries(bundle.desk, skipped, lambda n: not n.startswith("_"))
                if e.is_dir()
            )
        except FileNotFoundError:
            return
    for folder in tracks:
        if track is not None and inside.folder(folder) is None:
            skipped.append(outside(inside.rel(folder)))
            continue
        task_dirs = sorted(e.path for e in inside.entries(folder, skipped) if e.is_dir())
        for task_dir in task_dirs:
            path = os.path.join(task_dir, "task.md")
            try:
                st = os.lstat(path)  # in place of a stat: a plain task pays nothing more
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                if not inside.path(path):
                    skipped.append(outside(inside.rel(path)))
                    continue
                if not os.path.isfile(path):
                    continue
            elif not stat.S_ISREG(st.st_mode):
                continue
            yield Path(path)


def load_task(bundle: Bundle, path: Path) -> Task:
    locator = bundle.locator(path)
    meta, body = read_doc(path, source=locator)
    require_id(meta, locator)
    return Task(path, meta, body, locator)


def iter_tasks(bundle: Bundle, *, track: str | None = None) -> TaskScan:
    """Every task (sorted by track, then folder); unreadable ones go to ``problems``."""
    scan = TaskScan()
    for path in _task_files(bundle, track, scan.problems):
        try:
            scan.tasks.append(load_task(bundle, path))
        except CorruptFile as exc:
            scan.problems.append(exc.message)
    return scan


@dataclass(frozen=True)
class TaskHead:
    """The few front-matter fields a listing sorts by (``HEAD_KEYS``)."""

    path: Path
    id: str
    status: str
    priority: int
    created: str
    #: completed without a passing check (``unverified`` holds the reason)
    unverified: bool = False

    @property
    def track(self) -> str:
        return self.path.parent.parent.name


#: the front-matter keys a head is made of
HEAD_KEYS = frozenset({"id", "status", "priority", "created", "unverified"})


def scan_heads(bundle: Bundle) -> tuple[list[TaskHead], list[str]]:
    """Every task's head (``HEAD_KEYS`` of its front matter); a task that cannot
    be read is reported in the problems, not skipped silently."""
    heads: list[TaskHead] = []
    problems: list[str] = []
    for path in _task_files(bundle, None, problems):
        locator = bundle.locator(path)
        try:
            text = file_text(path)  # a FIFO: NotRegularFile, reported
            meta, _body = frontmatter.parse(text, source=locator, keys=HEAD_KEYS)
            require_id(meta, locator)
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"{locator}: unreadable ({exc})")
            continue
        except CorruptFile as exc:
            problems.append(exc.message)
            continue
        priority = meta.get("priority")
        heads.append(
            TaskHead(
                path,
                str(meta.get("id") or ""),
                str(meta.get("status")),
                priority if type(priority) is int else 9,
                str(meta.get("created") or ""),
                bool(meta.get("unverified")),
            )
        )
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
                head = file_text(path)
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


def linked_task(bundle: Bundle, ref: str | None) -> str | None:
    """The id of the task a record links to (``--task`` of a friction note or a
    message), or None: a task that does not exist is refused naming the field,
    never written as a link to nothing."""
    if not ref:
        return None
    try:
        return find_task(bundle, ref).id
    except (NotFound, InvalidInput) as exc:
        message = exc.message if exc.message.startswith("task:") else f"task: {exc.message}"
        raise type(exc)(message, hint=exc.hint) from None


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
            "check": check.strip() if check and check.strip() else None,
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
    about: list[str] | None = None,
    blocked_by: list[str] | None = None,
    parent: str | None = None,
) -> Task:
    from ouro.proof.checkrun import check_command

    folder = require_track(bundle, track)
    check = check_command(bundle, check)  # a secret-looking check is refused, never rewritten
    meta = new_task_meta(folder.name, title, priority=priority, acceptance=acceptance, check=check)
    if about:
        meta["about"] = check_about(bundle, about)
    # a new task's id is fresh: nothing can wait for it yet, so no loop is possible
    blocker_ids, parent_id = resolve_links(bundle, blocked_by or None, parent or None)
    if blocker_ids:
        meta["blockedBy"] = blocker_ids
    if parent_id:
        meta["parent"] = parent_id
    meta = ordered(meta, TASK_KEYS)
    base = require_slug(meta["title"], field="title")
    with FileLock(bundle.lock_path("desk"), purpose="task add"):
        slug = unique_slug(base, lambda s: (folder / s).exists())
        path = folder / slug / "task.md"
        write_doc(path, meta, body)
    if meta.get("check"):
        from ouro.proof.checkrun import trust

        trust(bundle, meta["check"], how=f"desk task add {meta['id']}")
    return load_task(bundle, path)


def save_task(task: Task) -> None:
    """Write a task back (caller holds the task lock and bumped ``updated``)."""
    if LEGACY_HOLDER in task.meta:
        legacy = task.meta.pop(LEGACY_HOLDER)
        task.meta.setdefault("heldBy", legacy)
    task.meta = ordered(task.meta, TASK_KEYS)
    write_doc(task.path, task.meta, task.body)


# --- who acts, and the lease -------------------------------------------------


def holder_of(meta: dict[str, Any]) -> str | None:
    value = meta.get("heldBy") or meta.get(LEGACY_HOLDER)
    return str(value) if value else None


def acting_agent(bundle: Bundle, agent: str | None) -> str:
    """Who is acting: ``agent``, else the ``agent`` setting (``ouro.config``: by
    default bundle.json's agent); inside a habit session
    always ``habit:<name>`` (a habit body cannot act as someone else)."""
    habit = os.environ.get("OURO_HABIT")
    if habit and os.environ.get("OURO_SESSION_ID"):
        own = f"habit:{habit}"
        if agent is not None and agent.strip() != own:
            raise ToolDenied(
                f"inside habit session {os.environ['OURO_SESSION_ID']} the agent is {own}, "
                f"not {agent!r}",
                hint="a habit acts on tasks as itself; drop --agent",
            )
        return own
    if agent is not None:
        return check_agent(agent)
    from ouro.config import lookup

    # the agent setting: --config agent=, OURO_AGENT, project, bundle.json's agent, global
    name = lookup("agent", bundle.root)
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput(
            "agent: none given and bundle.json names no agent", hint="pass --agent NAME"
        )
    return check_agent(name)


def lease_end(meta: dict[str, Any]) -> Any:
    """The lease end as a datetime, or None when there is no readable lease."""
    value = meta.get("leaseUntil")
    if not holder_of(meta) or not isinstance(value, str):
        return None
    try:
        return parse_time(value)
    except ValueError:
        return None  # an unreadable lease cannot block anyone; a takeover records it


def live_holder(meta: dict[str, Any], now: Any) -> str | None:
    """The agent holding a live lease on the task, if any."""
    end = lease_end(meta)
    holder = holder_of(meta)
    return holder if holder and end is not None and end > now else None


def lease_conflict(task_id: str, meta: dict[str, Any], agent: str, what: str) -> Conflict:
    return Conflict(
        f"task {task_id} is held by {holder_of(meta)} until {meta.get('leaseUntil')}; "
        f"{agent} cannot {what} it",
        hint=f"wait until {meta.get('leaseUntil')} when the lease ends, ask "
        f"{holder_of(meta)} to release it, or take it over explicitly with --take-over "
        "(recorded in the task's history)",
    )


def guard_lease(
    task: Task, agent: str, *, take_over: bool, what: str, now: Any, until: str | None = None
) -> dict[str, Any] | None:
    """Refuse a non-holder while the lease is live, or record the takeover.

    Returns the takeover history event (already appended) or None. Caller holds
    the task lock and saves the task.
    """
    meta = task.meta
    holder = live_holder(meta, now)
    if holder is None or holder == agent:
        return None
    if not take_over:
        raise lease_conflict(task.id, meta, agent, what)
    event = {
        "at": format_time(now),
        "event": "takeover",
        "agent": agent,
        "previous": holder,
        "previousLeaseUntil": meta.get("leaseUntil"),
        "leaseUntil": until,
    }
    meta["history"] = [*history_list(meta.get("history")), event]
    meta.pop(LEGACY_HOLDER, None)
    meta["heldBy"] = agent if until else None
    meta["leaseUntil"] = until
    return event


# --- check receipts and the completion gate ----------------------------------


def last_check(meta: dict[str, Any]) -> dict[str, Any] | None:
    for event in reversed(history_list(meta.get("history"))):
        if isinstance(event, dict) and event.get("event") == "check":
            return {
                k: event.get(k)
                for k in ("at", "command", "exitCode", "provenance", "by", "agent")
                if event.get(k) is not None
            }
    return None


def about_hashes(bundle: Bundle, about: list[str]) -> dict[str, str | None]:
    """The content hash of each ``about`` file now (None when it cannot be read)."""
    from ouro.proof.refs import Unresolvable, hash_ref

    out: dict[str, str | None] = {}
    for ref in about:
        try:
            out[ref] = hash_ref(bundle, ref)
        except Unresolvable:
            out[ref] = None
    return out


def completion_gate(bundle: Bundle, meta: dict[str, Any]) -> str | None:
    """None when the task may be completed; else why not (its check is not backed)."""
    check = meta.get("check")
    if not check:
        return None
    receipts = [
        e
        for e in history_list(meta.get("history"))
        if isinstance(e, dict) and e.get("event") == "check" and e.get("command") == check
    ]
    observed = [e for e in receipts if e.get("provenance") in OBSERVED]
    if not observed:
        return f"no observed run of its check yet ({check})"
    latest = observed[-1]
    if latest.get("exitCode") != 0:
        return f"its check last exited {latest.get('exitCode')} at {latest.get('at')}"
    seen = latest.get("sources") or {}
    now = about_hashes(bundle, list(meta.get("about") or []))
    for ref, digest in now.items():
        if digest is None:
            return f"{ref} cannot be read now"
        if seen.get(ref) != digest:
            return f"{ref} changed since the check passed at {latest.get('at')}"
    return None


def append_check(
    bundle: Bundle,
    ref: str,
    *,
    command: str,
    fields: dict[str, Any],
    sources: dict[str, str | None],
    agent: str,
) -> Task:
    """Append a check receipt to the task's history (under the task lock)."""
    task_id = find_task(bundle, ref).id
    with task_lock(bundle, task_id):
        task = find_task(bundle, task_id)
        if task.meta.get("check") != command:
            raise Conflict(
                f"task {task_id}'s check changed while it ran (ran {command!r}, now "
                f"{task.meta.get('check')!r}); the receipt was not recorded",
                hint=f"run 'ouro desk task verify {task_id}' again",
            )
        now = utc_now_iso()
        event = {
            "at": now,
            "event": "check",
            "agent": agent,
            "command": command,
            **{k: v for k, v in fields.items() if v is not None},
            "sources": {k: v for k, v in sources.items() if v is not None},
        }
        task.meta["history"] = [*history_list(task.meta.get("history")), event]
        task.meta["updated"] = now
        save_task(task)
    return task


def update_task(
    bundle: Bundle,
    ref: str,
    *,
    status: str | None = None,
    priority: int | None = None,
    title: str | None = None,
    acceptance: str | None = None,
    check: str | None = None,
    about: list[str] | None = None,
    body: str | None = None,
    agent: str | None = None,
    take_over: bool = False,
    unverified: str | None = None,
    blocked_by: list[str] | None = None,
    parent: str | None = None,
) -> tuple[Task, list[str]]:
    """Apply the given changes; returns the task and the names of changed fields."""
    if status is not None:
        check_status(status)
    if priority is not None:
        check_priority(priority)
    if unverified is not None and (status != "done" or not unverified.strip()):
        raise InvalidInput(
            "unverified: give a reason, and only with --status done",
            hint="--status done --unverified 'why the check cannot be run'",
        )
    new_title = check_title(title) if title is not None else None
    if check is not None and check.strip():
        from ouro.proof.checkrun import check_command

        check = check_command(bundle, check)  # refused, never rewritten
    refs = check_about(bundle, about) if about is not None else None
    who = acting_agent(bundle, agent)
    task_id = find_task(bundle, ref).id
    links = blocked_by is not None or parent is not None
    from ouro.desk import deps

    with deps.links_lock(bundle) if links else contextlib.nullcontext(), task_lock(bundle, task_id):
        task = find_task(bundle, task_id)  # re-read under the lock
        changed: list[str] = []
        if links:
            blocker_ids, parent_id = resolve_links(bundle, blocked_by, parent)
            deps.check_links(bundle, task_id, blocked_by=blocker_ids, parent=parent_id)
            if blocker_ids is not None and blockers_of(task.meta) != blocker_ids:
                task.meta["blockedBy"] = blocker_ids or None
                changed.append("blockedBy")
            if parent_id is not None and (task.meta.get("parent") or "") != parent_id:
                task.meta["parent"] = parent_id or None
                changed.append("parent")
        now_dt = utc_now()
        now = format_time(now_dt)
        what = "complete" if status == "done" else "update"
        # A takeover through update holds the task for the default lease.
        until = format_time(now_dt + timedelta(minutes=DEFAULT_LEASE_MINUTES))
        taken = guard_lease(task, who, take_over=take_over, what=what, now=now_dt, until=until)
        if taken is not None:
            changed.append("lease")
        fields = {
            "title": (title, new_title),
            "priority": (priority, priority),
            "acceptance": (acceptance, acceptance or None),
            "check": (check, check.strip() if check and check.strip() else None),
            "about": (refs, refs),
        }
        for key, (given, value) in fields.items():
            if given is not None and task.meta.get(key) != value:
                task.meta[key] = value
                changed.append(key)
        if status is not None and task.meta.get("status") != status:
            entry: dict[str, Any] = {
                "at": now,
                "event": "status",
                "from": task.meta.get("status"),
                "to": status,
                "agent": who,
            }
            if status == "done":
                blocked = completion_gate(bundle, task.meta)
                if blocked is not None and unverified is None:
                    raise Conflict(
                        f"task {task_id} cannot be done: {blocked}",
                        hint=f"run 'ouro desk task verify {task_id}' (or run the check through "
                        "your host), or complete it with --unverified 'reason'",
                    )
                if blocked is not None:
                    entry["unverified"] = unverified
                    task.meta["unverified"] = unverified
                if holder_of(task.meta):  # completing ends the lease
                    task.meta.pop(LEGACY_HOLDER, None)
                    task.meta["heldBy"] = None
                    task.meta["leaseUntil"] = None
            else:
                task.meta["unverified"] = None
            task.meta["history"] = [*history_list(task.meta.get("history")), entry]
            task.meta["status"] = status
            changed.append("status")
        if body is not None and body != task.body:
            task.body = body
            changed.append("body")
        if changed:
            task.meta["updated"] = now
            save_task(task)
    if "check" in changed and task.meta.get("check"):
        from ouro.proof.checkrun import trust

        trust(bundle, task.meta["check"], how=f"desk task update {task_id}")
    return task, changed


def check_about(bundle: Bundle, about: list[str]) -> list[str]:
    """The refs, each well-formed and inside its root after symlinks (as a claim's)."""
    from ouro.proof.refs import check_ref, confined_ref

    return [confined_ref(bundle, check_ref(ref, field="about"), field="about") for ref in about]


def verify_task(
    bundle: Bundle,
    ref: str,
    *,
    timeout: float = 300.0,
    yes: bool = False,
    agent: str | None = None,
) -> tuple[Task, Any]:
    """Run the task's check like a CI step and record an observed receipt."""
    from ouro.proof import checkrun

    who = acting_agent(bundle, agent)
    task = find_task(bundle, ref)
    command = task.meta.get("check")
    if not command:
        raise InvalidInput(
            f"task {task.id} declares no check, so there is nothing to run",
            hint=f"give it one: 'ouro desk task update {task.id} --check CMD'",
        )
    checkrun.require_trust(bundle, command, owner=f"task {task.id}", yes=yes)
    sources = about_hashes(bundle, list(task.meta.get("about") or []))
    run = checkrun.run_check(bundle, command, cwd=checkrun.repo_root(bundle), timeout=timeout)
    fields = {
        "exitCode": run.exit_code,
        "provenance": "observed-by-ouro",
        "by": "ouro",
        "durationMs": run.duration_ms,
        "outputDigest": run.digest,
        "tail": run.tail,
        "note": run.note(timeout),
    }
    saved = append_check(
        bundle, task.id, command=command, fields=fields, sources=sources, agent=who
    )
    return saved, run
