"""``b.desk``: durable work -- tracks, tasks, iterations, friction, tips, search.

Each write calls ``ouro.derived.after_write`` with the files it wrote, so
the search index and the Desk heads stay current.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any

from ouro.api._base import Namespace
from ouro.derived import after_write
from ouro.edge import ARC_TEXT, BODY
from ouro.spec import P, verb

STATUSES = ("open", "active", "blocked", "done", "dropped")
SEVERITIES = ("low", "medium", "high")
#: a tip is a lesson (the seed's name); ``tip`` still selects them
KINDS = ("task", "track", "iteration", "friction", "lesson", "tip", "fact", "note", "daily")
MODES = ("lexical", "semantic", "hybrid")
DEFAULT_PRIORITY = 2  # ouro.desk.tasks.DEFAULT_PRIORITY
DEFAULT_LEASE = "30m"  # ouro.desk.leases.DEFAULT_LEASE

TaskRef = Annotated[str, P("task id (t-…) or <track>/<slug>")]
Query = Annotated[
    str | None,
    P('Words (all must match), "quoted phrases", prefix*; omit for the newest first.'),
]
Limit = Annotated[int, P("At most this many results.", min=1, max=100)]
Mode = Annotated[
    str | None,
    P(
        "lexical (FTS5 words), semantic (by meaning) or hybrid (both, fused); default hybrid "
        "when 'ouro-bundle[semantic]' is installed, else lexical.",
        choices=MODES,
    ),
]
Explain = Annotated[bool, P("Show each result's lexical and semantic rank.")]
TakeOver = Annotated[bool, P("take a live lease held by another agent (recorded in the history)")]
Timeout = Annotated[float, P("seconds before the check is stopped", min=0.001)]
Yes = Annotated[bool, P("run a check that was not written through ouro here (read it first)")]


class Desk(Namespace):
    """The Desk: search, ready work, featured items, and the sub-namespaces
    ``track``, ``task``, ``iteration``, ``friction``, ``tip``."""

    @functools.cached_property
    def track(self) -> Track:
        return Track(self.bundle)

    @functools.cached_property
    def task(self) -> Task:
        return Task(self.bundle)

    @functools.cached_property
    def iteration(self) -> Iteration:
        return Iteration(self.bundle)

    @functools.cached_property
    def friction(self) -> Friction:
        return Friction(self.bundle)

    @functools.cached_property
    def tip(self) -> Tip:
        return Tip(self.bundle)

    @verb
    def search(
        self,
        query: Query = None,
        *,
        kind: Annotated[
            list[str] | None, P("Only these kinds (repeatable).", choices=KINDS)
        ] = None,
        track: Annotated[str | None, P("Only items of this track.")] = None,
        status: Annotated[str | None, P("Only tasks with this status.")] = None,
        limit: Limit = 10,
        mode: Mode = None,
        explain: Explain = False,
    ) -> dict[str, Any]:
        """Search the Desk: tasks, tracks, iterations, friction, lessons (tips), diary
        facts, daily reflections and notes. Words must all match; "quoted phrases" and
        prefix* work. Returns locators to open, best match first. Sees every ouro write,
        and tasks, notes, tracks, friction, lessons and days added, removed or renamed by
        hand; an
        existing file edited by hand (in place, or anything inside a task folder) shows
        up after 'ouro index sync', or at once while 'ouro watch' runs."""
        from ouro.index import search

        return search.desk_search(
            self.folder.root, query, list(kind or []), track, status, limit, mode, explain
        )

    @verb
    def ready(
        self,
        *,
        track: Annotated[str | None, P("only tasks of this track")] = None,
        limit: Annotated[int | None, P("at most this many tasks", min=1)] = None,
    ) -> dict[str, Any]:
        """Ready work: open tasks whose blockedBy tasks are all done and that no live lease
        holds, most urgent (priority 0) first, then oldest; optionally one track. Also
        lists open tasks still waiting and on what. Writes nothing."""
        from ouro.desk import ready
        from ouro.models.clock import utc_now

        found = ready.ready_tasks(self.folder, track=track, now=utc_now())
        shown = found.tasks if limit is None else found.tasks[:limit]
        return {
            "total": len(found.tasks),
            "ready": [ready.head_summary(h) for h in shown],
            "waiting": found.waiting,
            "problems": found.problems,
        }

    @verb
    def feature(
        self,
        *,
        tracks: Annotated[list[str], P("track names")] = [],
        tasks: Annotated[list[str], P("task ids or <track>/<slug>")] = [],
        notes: Annotated[list[str], P("note slugs (desk/_record/notes/)")] = [],
        lessons: Annotated[list[str], P("lesson (tip) slugs (desk/_meta/tips/)")] = [],
        remove: Annotated[bool, P("take these out instead of adding them")] = False,
    ) -> dict[str, Any]:
        """Feature tracks, tasks, notes and lessons in desk/_meta/featured.md so
        orientation shows them first (or remove them with --remove)."""
        from ouro.desk import featured

        folder = self.folder
        result = featured.feature(
            folder, tracks=tracks, tasks=tasks, notes=notes, lessons=lessons, remove=remove
        )
        if tracks or tasks or notes or lessons:
            after_write(folder, [featured.featured_path(folder)])
        return {"featured": result, "locator": folder.locator(featured.featured_path(folder))}


class Track(Namespace):
    @verb
    def add(
        self,
        name: Annotated[str, P("track name (becomes the folder desk/<name>/)")],
        *,
        description: Annotated[str | None, P("what the track is for", limit=BODY)] = None,
    ) -> dict[str, Any]:
        """Create a Desk track (a folder desk/<name>/ with track.md) to group tasks;
        adding an existing track returns it unchanged."""
        from ouro.desk import tracks

        folder = self.folder
        added = tracks.add_track(folder, name, description=description or "")
        if added.created:
            after_write(folder, [added.path])
        return {
            "track": added.name,
            "title": added.meta.get("title"),
            "created": added.created,
            "locator": folder.locator(added.path),
        }


class Task(Namespace):
    @verb
    def add(
        self,
        track: Annotated[str, P("track name")],
        title: Annotated[str, P("one-line title")],
        *,
        body: Annotated[str | None, P("task body (Markdown)", limit=BODY, file=True)] = None,
        priority: Annotated[int, P("0 (most urgent) .. 9")] = DEFAULT_PRIORITY,
        acceptance: Annotated[str | None, P("what done means", limit=BODY)] = None,
        check: Annotated[
            str | None,
            P(
                "shell command that verifies it; done then needs a passing observed run "
                "(ouro desk task verify, or the host seeing it run)",
                limit=ARC_TEXT,
            ),
        ] = None,
        about: Annotated[
            list[str],
            P(
                "a file the task changes (repo-relative path or bundle locator); a change "
                "after the check passed means it must pass again"
            ),
        ] = [],
        blocked_by: Annotated[
            list[str],
            P("a task (id or <track>/<slug>, any track) this one waits for (repeatable)"),
        ] = [],
        parent: Annotated[str | None, P("the parent task (id or <track>/<slug>)")] = None,
    ) -> dict[str, Any]:
        """Add a task to a track: writes desk/<track>/<slug>/task.md with status open,
        priority, acceptance text and a check command."""
        from ouro.desk import tasks

        folder = self.folder
        task = tasks.add_task(
            folder,
            track,
            title,
            body=body or "",
            priority=priority,
            acceptance=acceptance,
            check=check,
            about=about,
            blocked_by=blocked_by,
            parent=parent,
        )
        after_write(folder, [task.path])
        return {"task": task.summary()}

    @verb
    def update(
        self,
        task: TaskRef,
        *,
        status: Annotated[str | None, P("new status", choices=STATUSES)] = None,
        priority: Annotated[int | None, P("new priority: 0 (most urgent) .. 9")] = None,
        title: Annotated[str | None, P("new one-line title")] = None,
        acceptance: Annotated[
            str | None, P("new acceptance text ('' clears it)", limit=BODY)
        ] = None,
        check: Annotated[str | None, P("new check command ('' clears it)", limit=ARC_TEXT)] = None,
        about: Annotated[list[str] | None, P("the files the task changes (replaces)")] = None,
        body: Annotated[
            str | None, P("new body (replaces the old one)", limit=BODY, file=True)
        ] = None,
        agent: Annotated[
            str | None, P("who is making the change (default: the bundle's agent)")
        ] = None,
        take_over: TakeOver = False,
        unverified: Annotated[
            str | None,
            P(
                "with status done: complete without a passing check, for this reason "
                "(recorded and shown as unverified)",
                limit=ARC_TEXT,
            ),
        ] = None,
        blocked_by: Annotated[
            list[str] | None,
            P(
                "the tasks (ids or <track>/<slug>, any track) this one waits for (replaces "
                "the list; a cycle is refused and named)"
            ),
        ] = None,
        clear_blocked_by: Annotated[bool, P("drop every blockedBy link")] = False,
        parent: Annotated[str | None, P("the parent task ('' clears it)")] = None,
    ) -> dict[str, Any]:
        """Update a task's status, priority, title, acceptance, check, files or body;
        status changes are recorded in the task's history. While another agent holds a
        live lease the update is refused (take_over takes it). Done needs a passing
        observed run of the task's check newer than any change to its files, or
        unverified with a reason."""
        from ouro.desk import ready, tasks
        from ouro.desk.deps import unblocked_by
        from ouro.desk.heads import read_heads

        folder = self.folder
        found, changed = tasks.update_task(
            folder,
            task,
            status=status,
            priority=priority,
            title=title,
            acceptance=acceptance,
            check=check,
            about=about,
            body=body,
            agent=agent,
            take_over=take_over,
            unverified=unverified,
            blocked_by=[] if clear_blocked_by else blocked_by,
            parent=parent,
        )
        result: dict[str, Any] = {"task": found.summary(), "changed": changed}
        if changed:
            after_write(folder, [found.path])
        if "status" in changed and found.meta.get("status") == "done":
            # closing a task surfaces the work it unblocked
            heads, _problems = read_heads(folder)
            result["unblocked"] = [ready.head_summary(h) for h in unblocked_by(heads, found.id)]
        return result

    @verb
    def show(self, task: TaskRef) -> dict[str, Any]:
        """Show one task: its front matter, body, lease history and iteration locators."""
        from ouro.desk import iterations, tasks

        folder = self.folder
        found = tasks.find_task(folder, task)
        numbers = iterations.iteration_numbers(found.folder / "iterations")
        return {
            "task": found.summary(),
            "body": found.body,
            "history": found.meta.get("history") or [],
            "iterations": [
                folder.locator(found.folder / "iterations" / f"{n:03d}.md") for n in numbers
            ],
        }

    @verb
    def take(
        self,
        task: TaskRef,
        *,
        agent: Annotated[str | None, P("who takes it (default: the bundle's agent)")] = None,
        lease: Annotated[str, P("lease length: 90s, 30m, 2h, 1d")] = DEFAULT_LEASE,
        take_over: TakeOver = False,
    ) -> dict[str, Any]:
        """Take a task with a lease (default 30m; agent defaults to the bundle's agent):
        exactly one agent holds it; the holder renews; a live lease held by another is
        refused naming holder and expiry unless take_over; every takeover is recorded."""
        from ouro.desk import leases

        folder = self.folder
        result = leases.take_task(folder, task, agent=agent, lease=lease, take_over=take_over)
        after_write(folder, [result.task.path])
        return {
            "task": result.task.summary(),
            "outcome": result.outcome,
            "leaseUntil": result.lease_until,
            "previous": result.previous,
        }

    @verb
    def release(
        self,
        task: TaskRef,
        *,
        agent: Annotated[
            str | None, P("the agent holding the lease (default: the bundle's agent)")
        ] = None,
    ) -> dict[str, Any]:
        """Release a task's lease (only its holder may) so others can take it."""
        from ouro.desk import leases

        folder = self.folder
        found = leases.release_task(folder, task, agent=agent)
        after_write(folder, [found.path])
        return {"task": found.summary(), "released": True}

    @verb
    def verify(
        self,
        task: TaskRef,
        *,
        timeout: Timeout = 300.0,
        yes: Yes = False,
        agent: Annotated[str | None, P("who runs it (default: the bundle's agent)")] = None,
    ) -> dict[str, Any]:
        """Run a task's declared check (a shell command) like a CI step: in the repository
        root, with a timeout and secrets scrubbed from the environment; records an
        observed-by-ouro receipt in the task's history (exit status, duration, output
        digest, redacted tail) that 'status done' requires. Exits 1 when the check fails.
        A check not written through ouro here needs yes."""
        from ouro.desk import tasks

        folder = self.folder
        found, run = tasks.verify_task(folder, task, timeout=timeout, yes=yes, agent=agent)
        after_write(folder, [found.path])
        return {
            "task": found.summary(),
            "doneBlockedBy": tasks.completion_gate(folder, found.meta),
            "run": run.to_json(),
        }

    @verb
    def list(
        self,
        *,
        track: Annotated[str | None, P("only tasks of this track")] = None,
        status: Annotated[str | None, P("only tasks with this status", choices=STATUSES)] = None,
        limit: Annotated[int | None, P("at most this many tasks", min=1)] = None,
    ) -> dict[str, Any]:
        """List tasks (optionally one track or one status), most urgent first, with their
        locators and lease holders."""
        from ouro.desk import tasks

        scan = tasks.iter_tasks(self.folder, track=track)
        found = [t for t in scan.tasks if status is None or t.meta.get("status") == status]
        found.sort(key=lambda t: (_int(t.meta.get("priority")), str(t.meta.get("created")), t.id))
        total = len(found)
        if limit is not None:
            found = found[:limit]
        return {"total": total, "tasks": [t.summary() for t in found], "problems": scan.problems}


def _int(value: Any) -> int:
    return value if isinstance(value, int) else DEFAULT_PRIORITY


class Iteration(Namespace):
    @verb
    def add(
        self,
        task: TaskRef,
        text: Annotated[str, P("what happened in this iteration", limit=BODY)],
        *,
        agent: Annotated[str | None, P("who did the work")] = None,
    ) -> dict[str, Any]:
        """Record an iteration of work on a task as <task>/iterations/NNN.md."""
        from ouro.desk import iterations

        folder = self.folder
        path, meta = iterations.add_iteration(folder, task, text, agent=agent)
        after_write(folder, [path])
        return {"iteration": meta["n"], "task": meta["task"], "locator": folder.locator(path)}


class Friction(Namespace):
    @verb
    def add(
        self,
        title: Annotated[str, P("one line: what got in the way")],
        *,
        body: Annotated[str | None, P("details (Markdown)", limit=BODY, file=True)] = None,
        severity: Annotated[str, P("how much it got in the way", choices=SEVERITIES)] = "medium",
        track: Annotated[str | None, P("the track it concerns")] = None,
        task: Annotated[
            str | None, P("the task the friction is about (id or <track>/<slug>; it must exist)")
        ] = None,
    ) -> dict[str, Any]:
        """File a friction entry (something that got in the way) under desk/_friction/."""
        from ouro.desk import friction

        folder = self.folder
        path, meta = friction.add_friction(
            folder,
            title,
            body=body or "",
            severity=severity,
            track=track,
            task=task,
        )
        after_write(folder, [path])
        return {"friction": meta, "locator": folder.locator(path)}

    @verb
    def list(
        self, *, limit: Annotated[int | None, P("at most this many entries", min=1)] = None
    ) -> dict[str, Any]:
        """List friction entries, newest first."""
        from ouro.desk import friction

        items, problems = friction.list_friction(self.folder, limit=limit)
        return {"friction": items, "problems": problems}


class Tip(Namespace):
    @verb
    def add(
        self,
        title: Annotated[str, P("the tip in one line")],
        *,
        body: Annotated[str | None, P("the tip in full (Markdown)", limit=BODY, file=True)] = None,
        tags: Annotated[list[str], P("a tag (repeatable)")] = [],
    ) -> dict[str, Any]:
        """Write a lesson (a tip: short advice learned for later sessions) under
        desk/_meta/tips/ (same title updates it); the packet lists the newest."""
        from ouro.desk import tips

        folder = self.folder
        path, meta, created = tips.add_tip(folder, title, body=body or "", tags=tags)
        after_write(folder, [path])
        return {"tip": meta, "created": created, "locator": folder.locator(path)}

    @verb
    def list(
        self, *, tag: Annotated[str | None, P("only tips with this tag")] = None
    ) -> dict[str, Any]:
        """List tips, optionally only those with a tag."""
        from ouro.desk import tips

        items, problems = tips.list_tips(self.folder, tag=tag)
        return {"tips": items, "problems": problems}
