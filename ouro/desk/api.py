"""Desk work tools: the registry's input models and functions (interface edge).

Each function validates nothing itself beyond its model, calls one domain
function, reports the written files to the index (``hooks.after_write``) and
returns a JSON-ready dict with camelCase keys.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from ouro.bundle import Bundle
from ouro.desk import claims, featured, friction, iterations, tasks, tips, tracks
from ouro.desk.hooks import after_write
from ouro.models.base import ToolInput

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
    check: str | None = Field(None, description="shell command that verifies it")


def task_add(bundle: Bundle, inp: TaskAddInput) -> dict[str, Any]:
    task = tasks.add_task(
        bundle,
        inp.track,
        inp.title,
        body=inp.body or "",
        priority=inp.priority,
        acceptance=inp.acceptance,
        check=inp.check,
    )
    after_write(bundle, [task.path])
    return {"task": task.summary()}


class TaskUpdateInput(ToolInput):
    task: str = Field(description="task id (t-…) or <track>/<slug>")
    status: Status | None = None
    priority: int | None = None
    title: str | None = None
    acceptance: str | None = Field(None, description="new acceptance text ('' clears it)")
    check: str | None = Field(None, description="new check command ('' clears it)")
    body: str | None = Field(None, description="new body (replaces the old one)")
    agent: str | None = Field(None, description="who is making the change")


def task_update(bundle: Bundle, inp: TaskUpdateInput) -> dict[str, Any]:
    task, changed = tasks.update_task(
        bundle,
        inp.task,
        status=inp.status,
        priority=inp.priority,
        title=inp.title,
        acceptance=inp.acceptance,
        check=inp.check,
        body=inp.body,
        agent=inp.agent,
    )
    if changed:
        after_write(bundle, [task.path])
    return {"task": task.summary(), "changed": changed}


class TaskListInput(ToolInput):
    track: str | None = None
    status: Status | None = None
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


class TaskClaimInput(ToolInput):
    task: str = Field(description="task id (t-…) or <track>/<slug>")
    agent: str = Field(description="who claims it")
    lease: str = Field(claims.DEFAULT_LEASE, description="lease length: 90s, 30m, 2h, 1d")


def task_claim(bundle: Bundle, inp: TaskClaimInput) -> dict[str, Any]:
    result = claims.claim_task(bundle, inp.task, agent=inp.agent, lease=inp.lease)
    after_write(bundle, [result.task.path])
    return {
        "task": result.task.summary(),
        "outcome": result.outcome,
        "leaseUntil": result.lease_until,
        "previous": result.previous,
    }


class TaskReleaseInput(ToolInput):
    task: str = Field(description="task id (t-…) or <track>/<slug>")
    agent: str = Field(description="the agent holding the lease")


def task_release(bundle: Bundle, inp: TaskReleaseInput) -> dict[str, Any]:
    task = claims.release_task(bundle, inp.task, agent=inp.agent)
    after_write(bundle, [task.path])
    return {"task": task.summary(), "released": True}


class IterationAddInput(ToolInput):
    task: str = Field(description="task id (t-…) or <track>/<slug>")
    text: str = Field(description="what happened in this iteration")
    agent: str | None = None


def iteration_add(bundle: Bundle, inp: IterationAddInput) -> dict[str, Any]:
    path, meta = iterations.add_iteration(bundle, inp.task, inp.text, agent=inp.agent)
    after_write(bundle, [path])
    return {"iteration": meta["n"], "task": meta["task"], "locator": bundle.locator(path)}


class FrictionAddInput(ToolInput):
    title: str = Field(description="one line: what got in the way")
    body: str | None = None
    severity: Severity = "medium"
    track: str | None = None
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
    limit: int | None = Field(None, ge=1)


def friction_list(bundle: Bundle, inp: FrictionListInput) -> dict[str, Any]:
    items, problems = friction.list_friction(bundle, limit=inp.limit)
    return {"friction": items, "problems": problems}


class TipAddInput(ToolInput):
    title: str = Field(description="the tip in one line")
    body: str | None = None
    tags: list[str] = Field(default_factory=list)


def tip_add(bundle: Bundle, inp: TipAddInput) -> dict[str, Any]:
    path, meta, created = tips.add_tip(bundle, inp.title, body=inp.body or "", tags=inp.tags)
    after_write(bundle, [path])
    return {"tip": meta, "created": created, "locator": bundle.locator(path)}


class TipListInput(ToolInput):
    tag: str | None = None


def tip_list(bundle: Bundle, inp: TipListInput) -> dict[str, Any]:
    items, problems = tips.list_tips(bundle, tag=inp.tag)
    return {"tips": items, "problems": problems}


class FeatureInput(ToolInput):
    tracks: list[str] = Field(default_factory=list, description="track names")
    tasks: list[str] = Field(default_factory=list, description="task ids or <track>/<slug>")
    remove: bool = Field(False, description="take these out instead of adding them")


def feature(bundle: Bundle, inp: FeatureInput) -> dict[str, Any]:
    result = featured.feature(bundle, tracks=inp.tracks, tasks=inp.tasks, remove=inp.remove)
    if inp.tracks or inp.tasks:
        after_write(bundle, [featured.featured_path(bundle)])
    return {"featured": result, "locator": bundle.locator(featured.featured_path(bundle))}
