"""Desk work tools: the registry's input models and functions (interface edge).

Each function validates nothing itself beyond its model, calls one domain
function, reports the written files to the index (``hooks.after_write``) and
returns a JSON-ready dict with camelCase keys.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ouro.bundle import Bundle
from ouro.desk import featured, friction, iterations, leases, ready, tasks, tips, tracks
from ouro.desk.deps import unblocked_by
from ouro.desk.heads import read_heads
from ouro.desk.hooks import after_write
from ouro.models.base import ToolInput
from ouro.models.clock import utc_now

Status = Literal["open", "active", "blocked", "done", "dropped"]
Severity = Literal["low", "medium", "high"]


class TrackAddInput(ToolInput):
    name: str = Field(description="track name (becomes the folder desk/<name>/)")
    description: str | None = Field(None, description="what the track is for")


def track_add(bundle: Bundle, inp: TrackAddInput) -> dict[str, Any]:
    added = tracks.add_track(bundle, inp.name, description=inp.description or "")
    if added.created:
        after_write(bundle, [added.path])
    return {
        "track": added.name,
        "title": added.meta.get("title"),
        "created": added.created,
        "locator": bundle.locator(added.path),
    }


class TaskAddInput(ToolInput):
    track: str = Field(description="track name")
    title: str = Field(description="one-line title")
    body: str | None = Field(None, description="task body (Markdown)")
    priority: int = Field(tasks.DEFAULT_PRIORITY, description="0 (most urgent) .. 9")
    acceptance: str | None = Field(None, description="what done means")
    check: str | None = Field(
        None,
        description="shell command that verifies it; done then needs a passing observed run "
        "(ouro desk task verify, or the host seeing it run)",
    )
    about: list[str] = Field(
        default_factory=list,
        description="a file the task changes (repo-relative path or bundle locator); a change "
        "after the check passed means it must pass again",
    )
    blocked_by: list[str] = Field(
        default_factory=list,
        description="a task (id or <track>/<slug>, any track) this one waits for (repeatable)",
    )
    parent: str | None = Field(None, description="the parent task (id or <track>/<slug>)")


def task_add(bundle: Bundle, inp: TaskAddInput) -> dict[str, Any]:
    task = tasks.add_task(
        bundle,
        inp.track,
        inp.title,
        body=inp.body or "",
        priority=inp.priority,
        acceptance=inp.acceptance,
        check=inp.check,
        about=inp.about,
        blocked_by=inp.blocked_by,
        parent=inp.parent,
    )
    after_write(bundle, [task.path])
    return {"task": task.summary()}


class TaskUpdateInput(ToolInput):
    task: str = Field(description="task id (t-…) or <track>/<slug>")
    status: Status | None = Field(None, description="new status")
    priority: int | None = Field(None, description="new priority (1 = most urgent)")
    title: str | None = Field(None, description="new one-line title")
    acceptance: str | None = Field(None, description="new acceptance text ('' clears it)")
    check: str | None = Field(None, description="new check command ('' clears it)")
    about: list[str] | None = Field(None, description="the files the task changes (replaces)")
    body: str | None = Field(None, description="new body (replaces the old one)")
    agent: str | None = Field(
        None, description="who is making the change (default: the bundle's agent)"
    )
    take_over: bool = Field(
        False, description="take a live lease held by another agent (recorded in the history)"
    )
    unverified: str | None = Field(
        None,
        description="with status done: complete without a passing check, for this reason "
        "(recorded and shown as unverified)",
    )
    blocked_by: list[str] | None = Field(
        None,
        description="the tasks (ids or <track>/<slug>, any track) this one waits for "
        "(replaces the list; a cycle is refused and named)",
    )
    clear_blocked_by: bool = Field(False, description="drop every blockedBy link")
    parent: str | None = Field(None, description="the parent task ('' clears it)")


def task_update(bundle: Bundle, inp: TaskUpdateInput) -> dict[str, Any]:
    task, changed = tasks.update_task(
        bundle,
        inp.task,
        status=inp.status,
        priority=inp.priority,
        title=inp.title,
        acceptance=inp.acceptance,
        check=inp.check,
        about=inp.about,
        body=inp.body,
        agent=inp.agent,
        take_over=inp.take_over,
        unverified=inp.unverified,
        blocked_by=[] if inp.clear_blocked_by else inp.blocked_by,
        parent=inp.parent,
    )
    result: dict[str, Any] = {"task": task.summary(), "changed": changed}
    if changed:
        after_write(bundle, [task.path])
    if "status" in changed and task.meta.get("status") == "done":
        # closing a task surfaces the work it unblocked
        heads, _problems = read_heads(bundle)
        result["unblocked"] = [ready.head_summary(h) for h in unblocked_by(heads, task.id)]
    return result


class ReadyInput(ToolInput):
    track: str | None = Field(None, description="only tasks of this track")
    limit: int | None = Field(None, ge=1, description="at most this many tasks")


def desk_ready(bundle: Bundle, inp: ReadyInput) -> dict[str, Any]:
    found = ready.ready_tasks(bundle, track=inp.track, now=utc_now())
    total = len(found.tasks)
    shown = found.tasks if inp.limit is None else found.tasks[: inp.limit]
    return {
        "total": total,
        "ready": [ready.head_summary(h) for h in shown],
        "waiting": found.waiting,
        "problems": found.problems,
    }


class TaskListInput(ToolInput):
    track: str | None = Field(None, description="only tasks of this track")
    status: Status | None = Field(None, description="only tasks with this status")
    limit: int | None = Field(None, ge=1, description="at most this many tasks")


def task_list(bundle: Bundle, inp: TaskListInput) -> dict[str, Any]:
    scan = tasks.iter_tasks(bundle, track=inp.track)
    found = [t for t in scan.tasks if inp.status is None or t.meta.get("status") == inp.status]
    found.sort(key=lambda t: (_int(t.meta.get("priority")), str(t.meta.get("created")), t.id))
    total = len(found)
    if inp.limit is not None:
        found = found[: inp.limit]
    return {"total": total, "tasks": [t.summary() for t in found], "problems": scan.problems}


def _int(value: Any) -> int:
    return value if isinstance(value, int) else tasks.DEFAULT_PRIORITY


class TaskShowInput(ToolInput):
    task: str = Field(description="task id (t-…) or <track>/<slug>")


def task_show(bundle: Bundle, inp: TaskShowInput) -> dict[str, Any]:
    task = tasks.find_task(bundle, inp.task)
    numbers = iterations.iteration_numbers(task.folder / "iterations")
    return {
        "task": task.summary(),
        "body": task.body,
        "history": task.meta.get("history") or [],
        "iterations": [bundle.locator(task.folder / "iterations" / f"{n:03d}.md") for n in numbers],
    }


class TaskTakeInput(ToolInput):
    task: str = Field(description="task id (t-…) or <track>/<slug>")
    agent: str | None = Field(None, description="who takes it (default: the bundle's agent)")
    lease: str = Field(leases.DEFAULT_LEASE, description="lease length: 90s, 30m, 2h, 1d")
    take_over: bool = Field(
        False, description="take a live lease held by another agent (recorded in the history)"
    )


def task_take(bundle: Bundle, inp: TaskTakeInput) -> dict[str, Any]:
    result = leases.take_task(
        bundle, inp.task, agent=inp.agent, lease=inp.lease, take_over=inp.take_over
    )
    after_write(bundle, [result.task.path])
    return {
        "task": result.task.summary(),
        "outcome": result.outcome,
        "leaseUntil": result.lease_until,
        "previous": result.previous,
    }


class TaskReleaseInput(ToolInput):
    task: str = Field(description="task id (t-…) or <track>/<slug>")
    agent: str | None = Field(
        None, description="the agent holding the lease (default: the bundle's agent)"
    )


def task_release(bundle: Bundle, inp: TaskReleaseInput) -> dict[str, Any]:
    task = leases.release_task(bundle, inp.task, agent=inp.agent)
    after_write(bundle, [task.path])
    return {"task": task.summary(), "released": True}


class TaskVerifyInput(ToolInput):
    task: str = Field(description="task id (t-…) or <track>/<slug>")
    timeout: float = Field(300.0, gt=0, description="seconds before the check is stopped")
    yes: bool = Field(
        False, description="run a check that was not written through ouro here (read it first)"
    )
    agent: str | None = Field(None, description="who runs it (default: the bundle's agent)")


def task_verify(bundle: Bundle, inp: TaskVerifyInput) -> dict[str, Any]:
    task, run = tasks.verify_task(
        bundle, inp.task, timeout=inp.timeout, yes=inp.yes, agent=inp.agent
    )
    after_write(bundle, [task.path])
    return {
        "task": task.summary(),
        "doneBlockedBy": tasks.completion_gate(bundle, task.meta),
        "run": run.to_json(),
    }


class IterationAddInput(ToolInput):
    task: str = Field(description="task id (t-…) or <track>/<slug>")
    text: str = Field(description="what happened in this iteration")
    agent: str | None = Field(None, description="who did the work")


def iteration_add(bundle: Bundle, inp: IterationAddInput) -> dict[str, Any]:
    path, meta = iterations.add_iteration(bundle, inp.task, inp.text, agent=inp.agent)
    after_write(bundle, [path])
    return {"iteration": meta["n"], "task": meta["task"], "locator": bundle.locator(path)}


class FrictionAddInput(ToolInput):
    title: str = Field(description="one line: what got in the way")
    body: str | None = Field(None, description="details (Markdown)")
    severity: Severity = Field("medium", description="how much it got in the way")
    track: str | None = Field(None, description="the track it concerns")
    task: str | None = Field(None, description="task id the friction is about")


def friction_add(bundle: Bundle, inp: FrictionAddInput) -> dict[str, Any]:
    path, meta = friction.add_friction(
        bundle,
        inp.title,
        body=inp.body or "",
        severity=inp.severity,
        track=inp.track,
        task=inp.task,
    )
    after_write(bundle, [path])
    return {"friction": meta, "locator": bundle.locator(path)}


class FrictionListInput(ToolInput):
    limit: int | None = Field(None, ge=1, description="at most this many entries")


def friction_list(bundle: Bundle, inp: FrictionListInput) -> dict[str, Any]:
    items, problems = friction.list_friction(bundle, limit=inp.limit)
    return {"friction": items, "problems": problems}


class TipAddInput(ToolInput):
    title: str = Field(description="the tip in one line")
    body: str | None = Field(None, description="the tip in full (Markdown)")
    tags: list[str] = Field(default_factory=list, description="a tag (repeatable)")


def tip_add(bundle: Bundle, inp: TipAddInput) -> dict[str, Any]:
    path, meta, created = tips.add_tip(bundle, inp.title, body=inp.body or "", tags=inp.tags)
    after_write(bundle, [path])
    return {"tip": meta, "created": created, "locator": bundle.locator(path)}


class TipListInput(ToolInput):
    tag: str | None = Field(None, description="only tips with this tag")


def tip_list(bundle: Bundle, inp: TipListInput) -> dict[str, Any]:
    items, problems = tips.list_tips(bundle, tag=inp.tag)
    return {"tips": items, "problems": problems}


class FeatureInput(ToolInput):
    tracks: list[str] = Field(default_factory=list, description="track names")
    tasks: list[str] = Field(default_factory=list, description="task ids or <track>/<slug>")
    notes: list[str] = Field(default_factory=list, description="note slugs (desk/_record/notes/)")
    lessons: list[str] = Field(
        default_factory=list, description="lesson (tip) slugs (desk/_meta/tips/)"
    )
    remove: bool = Field(False, description="take these out instead of adding them")


def feature(bundle: Bundle, inp: FeatureInput) -> dict[str, Any]:
    result = featured.feature(
        bundle,
        tracks=inp.tracks,
        tasks=inp.tasks,
        notes=inp.notes,
        lessons=inp.lessons,
        remove=inp.remove,
    )
    if inp.tracks or inp.tasks or inp.notes or inp.lessons:
        after_write(bundle, [featured.featured_path(bundle)])
    return {"featured": result, "locator": bundle.locator(featured.featured_path(bundle))}
