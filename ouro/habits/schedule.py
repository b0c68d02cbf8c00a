"""What is due, and ``tick``: run every due habit once.

``tick`` is safe to call from cron every minute and from several processes at
once: each due habit's run happens under its lock, and whether it is still due
is decided again after the lock is taken (another tick may just have run it).
A habit whose run window was missed runs once with trigger ``overdue``. One
habit failing to start never stops the others: tick reports it and goes on.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from ouro.bundle import Bundle
from ouro.errors import LockTimeout, OuroError
from ouro.habits.cadence import DueInfo, due_info
from ouro.habits.definition import Habit, load_habits
from ouro.habits.receipt import latest_receipt_for
from ouro.habits.runner import habit_lock, run_locked
from ouro.habits.state import read_state
from ouro.models.clock import format_time, parse_time, utc_now
from ouro.orient_types import Orient

TickTrigger = Literal["cron", "launchd", "poke", "manual"]


def last_run_at(bundle: Bundle, habit: Habit) -> tuple[datetime | None, str | None]:
    """When the habit's last run started, and a problem met finding out (pure).

    The runtime state says; when it is missing or unreadable, the newest receipt
    does (the runtime state is reconstructable from receipts).
    """
    read = read_state(bundle, habit.name)
    if read.state is not None and read.state.last_run_at:
        return parse_time(read.state.last_run_at), None
    receipt, _problems = latest_receipt_for(bundle, habit.name)
    if receipt is not None:
        note = read.problem or f"state/habits/{habit.name}.json missing"
        return parse_time(receipt.started_at), f"{note}; last run taken from its receipt"
    return None, read.problem


def habit_due(bundle: Bundle, habit: Habit, now: datetime) -> tuple[DueInfo, str | None]:
    last, problem = last_run_at(bundle, habit)
    return due_info(habit.cadence, last, habit.modified_at, now), problem


def due_report(bundle: Bundle, now: datetime | None = None) -> dict[str, Any]:
    """Every habit with whether it is due at ``now`` (pure)."""
    now = now or utc_now()
    habits = load_habits(bundle)
    rows = []
    for habit in habits.habits:
        row: dict[str, Any] = {
            "name": habit.name,
            "title": habit.definition.title,
            "status": habit.definition.status,
            "cadence": habit.definition.cadence,
        }
        if habit.definition.status == "paused":
            row.update({"due": False, "dueAt": None, "overdue": False, "windowsMissed": 0})
        else:
            info, problem = habit_due(bundle, habit, now)
            row.update(info.to_json())
            if problem:
                row["problem"] = problem
        rows.append(row)
    return {
        "at": format_time(now),
        "habits": rows,
        "due": [r["name"] for r in rows if r["due"]],
        "problems": [p.to_json() for p in habits.problems],
    }


def tick(bundle: Bundle, trigger: TickTrigger = "manual", *, orient: Orient) -> dict[str, Any]:
    habits = load_habits(bundle)
    ran: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    for habit in habits.habits:
        if habit.definition.status != "active":
            continue
        if not habit_due(bundle, habit, utc_now())[0].due:
            continue
        lock = habit_lock(bundle, habit.name)
        try:
            lock.acquire()
        except LockTimeout:
            skipped.append({"name": habit.name, "reason": "already running"})
            continue
        try:
            info, _problem = habit_due(bundle, habit, utc_now())
            if not info.due:
                skipped.append({"name": habit.name, "reason": "already ran (another tick)"})
                continue
            run_trigger = "overdue" if info.overdue else trigger
            receipt = run_locked(
                bundle, habit, trigger=run_trigger, keep_session=False, orient=orient
            )
            ran.append(
                {
                    "name": habit.name,
                    "trigger": run_trigger,
                    "runId": receipt["runId"],
                    "outcome": receipt["outcome"],
                    "receiptLocator": receipt["receiptLocator"],
                }
            )
        except (OuroError, OSError) as exc:
            message = exc.message if isinstance(exc, OuroError) else str(exc)
            failed.append({"name": habit.name, "error": message})
        finally:
            lock.release()
    return {
        "trigger": trigger,
        "ran": ran,
        "skipped": skipped,
        "failed": failed,
        "problems": [p.to_json() for p in habits.problems],
    }
