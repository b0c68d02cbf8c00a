"""Claiming a task: a lease held by one agent at a time.

Contract (fields in task.md front matter, see ``docs/record.md``):
- A lease is held when ``claimedBy`` is set and ``leaseUntil`` is in the future.
- ``claim`` runs under the task's lock and rewrites task.md atomically, so among
  any number of racing processes exactly one wins; the others get ``Conflict``
  naming the holder and when the lease ends.
- The holder claiming again renews (only ``leaseUntil`` moves). After the lease
  ends anyone may claim: a ``takeover`` history event names the previous holder
  and is returned in the result.
- ``release`` by the holder clears the lease (an active task goes back to open).
- A done or dropped task cannot be claimed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ouro.bundle import Bundle
from ouro.desk.names import parse_duration
from ouro.desk.tasks import Task, find_task, history_list, save_task, task_lock
from ouro.errors import Conflict, InvalidInput
from ouro.models.clock import format_time, parse_time, utc_now

DEFAULT_LEASE = "30m"


@dataclass
class ClaimResult:
    task: Task
    outcome: str  # claimed | renewed | takeover
    lease_until: str
    previous: dict[str, Any] | None = None


def _check_agent(agent: str) -> str:
    clean = agent.strip()
    if not clean or "\n" in clean or len(clean) > 100:
        raise InvalidInput(
            "agent: must be one non-empty line of at most 100 characters", hint="pass --agent NAME"
        )
    return clean


def lease_end(meta: dict[str, Any]) -> Any:
    """The lease end as a datetime, or None when there is no readable lease."""
    value = meta.get("leaseUntil")
    if not meta.get("claimedBy") or not isinstance(value, str):
        return None
    try:
        return parse_time(value)
    except ValueError:
        return None  # an unreadable lease cannot block anyone; the takeover records it


def claim_task(bundle: Bundle, ref: str, *, agent: str, lease: str = DEFAULT_LEASE) -> ClaimResult:
    agent = _check_agent(agent)
    seconds = parse_duration(lease, field="lease")
    task_id = find_task(bundle, ref).id
    with task_lock(bundle, task_id):
        task = find_task(bundle, task_id)
        meta = task.meta
        if meta.get("status") in ("done", "dropped"):
            raise Conflict(
                f"task {task_id} is {meta.get('status')}; it cannot be claimed",
                hint=f"reopen it first: 'ouro desk task update {task_id} --status open'",
            )
        now = utc_now()
        holder = meta.get("claimedBy")
        end = lease_end(meta)
        until = format_time(now + timedelta(seconds=seconds))
        history = history_list(meta.get("history"))
        previous = None
        if holder and holder == agent:
            outcome = "renewed"
        elif holder and end is not None and end > now:
            wait = max(1, int((end - now).total_seconds()))
            raise Conflict(
                f"task {task_id} is claimed by {holder} until {meta.get('leaseUntil')}",
                hint=f"work on something else, or retry after {meta.get('leaseUntil')} "
                f"(in about {wait}s) when the lease ends",
            )
        elif holder:
            outcome = "takeover"
            previous = {"agent": holder, "leaseUntil": meta.get("leaseUntil")}
            history.append(
                {
                    "at": format_time(now),
                    "event": "takeover",
                    "agent": agent,
                    "previous": holder,
                    "previousLeaseUntil": meta.get("leaseUntil"),
                    "leaseUntil": until,
                }
            )
        else:
            outcome = "claimed"
            history.append(
                {"at": format_time(now), "event": "claimed", "agent": agent, "leaseUntil": until}
            )
        meta["claimedBy"] = agent
        meta["leaseUntil"] = until
        if meta.get("status") == "open":
            meta["status"] = "active"
        meta["history"] = history
        meta["updated"] = format_time(now)
        save_task(task)
    return ClaimResult(task, outcome, until, previous)


def release_task(bundle: Bundle, ref: str, *, agent: str) -> Task:
    agent = _check_agent(agent)
    task_id = find_task(bundle, ref).id
    with task_lock(bundle, task_id):
        task = find_task(bundle, task_id)
        meta = task.meta
        holder = meta.get("claimedBy")
        if not holder:
            raise Conflict(f"task {task_id} is not claimed", hint="nothing to release")
        if holder != agent:
            raise Conflict(
                f"task {task_id} is claimed by {holder}, not {agent}",
                hint="only the holder releases; after its lease ends you can claim it",
            )
        now = format_time(utc_now())
        history = history_list(meta.get("history"))
        history.append({"at": now, "event": "released", "agent": agent})
        meta.update(claimedBy=None, leaseUntil=None, history=history, updated=now)
        if meta.get("status") == "active":
            meta["status"] = "open"
        save_task(task)
    return task
