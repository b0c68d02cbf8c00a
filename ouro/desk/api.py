"""The old CLI input models of the Desk work verbs (``ouro.api.desk``).

Transitional: the pydantic input models here only build the old click CLI
(``ouro.cli.gen``) until the new CLI reads ``ouro.spec``; each verb's one home is its
library method (``ouro.api``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ouro.desk import leases, tasks
from ouro.models.base import ToolInput

Status = Literal["open", "active", "blocked", "done", "dropped"]
Severity = Literal["low", "medium", "high"]


class TrackAddInput(ToolInput):
    name: str = Field(description="track name (becomes the folder desk/<name>/)")
    description: str | None = Field(None, description="what the track is for")


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


class ReadyInput(ToolInput):
    track: str | None = Field(None, description="only tasks of this track")
    limit: int | None = Field(None, ge=1, description="at most this many tasks")


class TaskListInput(ToolInput):
    track: str | None = Field(None, description="only tasks of this track")
    status: Status | None = Field(None, description="only tasks with this status")
    limit: int | None = Field(None, ge=1, description="at most this many tasks")


class TaskShowInput(ToolInput):
    task: str = Field(description="task id (t-…) or <track>/<slug>")


class TaskTakeInput(ToolInput):
    task: str = Field(description="task id (t-…) or <track>/<slug>")
    agent: str | None = Field(None, description="who takes it (default: the bundle's agent)")
    lease: str = Field(leases.DEFAULT_LEASE, description="lease length: 90s, 30m, 2h, 1d")
    take_over: bool = Field(
        False, description="take a live lease held by another agent (recorded in the history)"
    )


class TaskReleaseInput(ToolInput):
    task: str = Field(description="task id (t-…) or <track>/<slug>")
    agent: str | None = Field(
        None, description="the agent holding the lease (default: the bundle's agent)"
    )


class TaskVerifyInput(ToolInput):
    task: str = Field(description="task id (t-…) or <track>/<slug>")
    timeout: float = Field(300.0, gt=0, description="seconds before the check is stopped")
    yes: bool = Field(
        False, description="run a check that was not written through ouro here (read it first)"
    )
    agent: str | None = Field(None, description="who runs it (default: the bundle's agent)")


class IterationAddInput(ToolInput):
    task: str = Field(description="task id (t-…) or <track>/<slug>")
    text: str = Field(description="what happened in this iteration")
    agent: str | None = Field(None, description="who did the work")


class FrictionAddInput(ToolInput):
    title: str = Field(description="one line: what got in the way")
    body: str | None = Field(None, description="details (Markdown)")
    severity: Severity = Field("medium", description="how much it got in the way")
    track: str | None = Field(None, description="the track it concerns")
    task: str | None = Field(None, description="task id the friction is about")


class FrictionListInput(ToolInput):
    limit: int | None = Field(None, ge=1, description="at most this many entries")


class TipAddInput(ToolInput):
    title: str = Field(description="the tip in one line")
    body: str | None = Field(None, description="the tip in full (Markdown)")
    tags: list[str] = Field(default_factory=list, description="a tag (repeatable)")


class TipListInput(ToolInput):
    tag: str | None = Field(None, description="only tips with this tag")


class FeatureInput(ToolInput):
    tracks: list[str] = Field(default_factory=list, description="track names")
    tasks: list[str] = Field(default_factory=list, description="task ids or <track>/<slug>")
    notes: list[str] = Field(default_factory=list, description="note slugs (desk/_record/notes/)")
    lessons: list[str] = Field(
        default_factory=list, description="lesson (tip) slugs (desk/_meta/tips/)"
    )
    remove: bool = Field(False, description="take these out instead of adding them")
