"""Taking a task: a lease held by one agent at a time.

Contract (fields in task.md front matter, see ``docs/record.md``):
- A lease is held when ``heldBy`` is set and ``leaseUntil`` is in the future
  (files written before the rename keep the holder in ``claimedBy``, read the
  same way and moved to ``heldBy`` on the next write).
- ``take`` runs under the task's lock and rewrites task.md atomically, so among
  any number of racing processes exactly one wins; the others get ``Conflict``
  naming the holder and when the lease ends — unless they pass ``take_over``,
  which takes a live lease explicitly (a ``takeover`` history event names the
  previous holder and its lease end).
- The holder taking again renews (only ``leaseUntil`` moves). After the lease
  ends anyone may take it: that too is recorded as a ``takeover``.
- ``release`` by the holder clears the lease (an active task goes back to
  open); nobody else may release a live lease (``take_over`` first).
- A done or dropped task cannot be taken.
- The agent defaults to the bundle's agent (``ouro.desk.tasks.acting_agent``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ouro.bundle import Bundle
from ouro.desk.names import parse_duration
from ouro.desk.tasks import (
    LEGACY_HOLDER,
    Task,
    acting_agent,
    find_task,
    guard_lease,
    history_list,
    holder_of,
    lease_conflict,
    live_holder,
    save_task,
    task_lock,
)
from ouro.errors import Conflict
from ouro.models.clock import format_time, utc_now

DEFAULT_LEASE = "30m"


@dataclass
class TakeResult:
    task: Task
    outcome: str  # taken | renewed | takeover
    lease_until: str
    previous: dict[str, Any] | None = None


def take_task(
    bundle: Bundle,
    ref: str,
    *,
    agent: str | None = None,
    lease: str = DEFAULT_LEASE,
    take_over: bool = False,
) -> TakeResult:
    who = acting_agent(bundle, agent)
    seconds = parse_duration(lease, field="lease")
    task_id = find_task(bundle, ref).id
    with task_lock(bundle, task_id):
        task = find_task(bundle, task_id)
        meta = task.meta
        if meta.get("status") in ("done", "dropped"):
            raise Conflict(
                f"task {task_id} is {meta.get('status')}; it cannot be taken",
                hint=f"reopen it first: 'ouro desk task update {task_id} --status open'",
            )
        now = utc_now()
        until = format_time(now + timedelta(seconds=seconds))
        holder = holder_of(meta)
        previous = None
        if holder == who:
            outcome = "renewed"
        elif live_holder(meta, now) is not None:
            if not take_over:
                raise lease_conflict(task_id, meta, who, "take")
            previous = {"agent": holder, "leaseUntil": meta.get("leaseUntil")}
            guard_lease(task, who, take_over=True, what="take", now=now, until=until)
            outcome = "takeover"
        elif holder:  # the lease ended: taking it is a takeover all the same
            previous = {"agent": holder, "leaseUntil": meta.get("leaseUntil")}
            meta["history"] = [
                *history_list(meta.get("history")),
                {
                    "at": format_time(now),
                    "event": "takeover",
                    "agent": who,
                    "previous": holder,
                    "previousLeaseUntil": meta.get("leaseUntil"),
                    "leaseUntil": until,
                },
            ]
            outcome = "takeover"
        else:
            outcome = "taken"
            meta["history"] = [
                *history_list(meta.get("history")),
                {"at": format_time(now), "event": "taken", "agent": who, "leaseUntil": until},
            ]
        meta.pop(LEGACY_HOLDER, None)
        meta["heldBy"] = who
        meta["leaseUntil"] = until
        if meta.get("status") == "open":
            meta["status"] = "active"
        meta["updated"] = format_time(now)
        save_task(task)
    return TakeResult(task, outcome, until, previous)


def release_task(bundle: Bundle, ref: str, *, agent: str | None = None) -> Task:
    who = acting_agent(bundle, agent)
    task_id = find_task(bundle, ref).id
    with task_lock(bundle, task_id):
        task = find_task(bundle, task_id)
        meta = task.meta
        holder = holder_of(meta)
        if not holder:
            raise Conflict(f"task {task_id} is not held by anyone", hint="nothing to release")
        if holder != who:
            if live_holder(meta, utc_now()) is not None:
                raise lease_conflict(task_id, meta, who, "release")
            raise Conflict(
                f"task {task_id}'s lease by {holder} ended at {meta.get('leaseUntil')}; "
                f"{who} does not hold it",
                hint=f"take it with 'ouro desk task take {task_id}'",
            )
        now = format_time(utc_now())
        meta["history"] = [
            *history_list(meta.get("history")),
            {"at": now, "event": "released", "agent": who},
        ]
        meta.pop(LEGACY_HOLDER, None)
        meta.update(heldBy=None, leaseUntil=None, updated=now)
        if meta.get("status") == "active":
            meta["status"] = "open"
        save_task(task)
    return task
