"""Cadences and due computation.

A cadence is one of:

- an interval ``<N><unit>`` with unit ``m`` (minutes), ``h``, ``d`` or ``w``,
  e.g. ``30m``, ``2h``, ``1d`` (at least one minute: the scheduler ticks once a
  minute);
- a 5-field cron expression (``ouro.habits.cron``), e.g. ``*/15 9-17 * * mon-fri``;
- a macro: ``@hourly``, ``@daily`` (= ``@midnight``), ``@weekly``, ``@monthly``,
  ``@yearly`` (= ``@annually``).

All times are UTC. Due rules (documented in docs/habits.md):

- an interval habit is next due one interval after the minute its last run
  started (runs are compared at minute precision, so a ``1m`` habit ticked every
  minute runs every minute, not every other);
- a cron habit is next due at the first fire time after its last run started;
- a habit that never ran is anchored at its definition file's modification
  time: an interval habit is due at once, a cron habit at its first fire time
  after the anchor;
- a due run is **overdue** when more than one window has passed since it became
  due, or when it is more than ``OVERDUE_GRACE`` late. Either way it runs once,
  never once per missed window.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from ouro.habits.cron import Cron, CronError, parse_cron

MACROS = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_INTERVAL = re.compile(r"^(\d{1,6})([mhdw])$")

#: A scheduler calling ``tick`` every minute is never this late; a run found
#: later than this was missed (machine asleep, scheduler not installed, ...).
OVERDUE_GRACE = timedelta(minutes=5)


class CadenceError(ValueError):
    """A cadence that cannot be parsed; the message says why."""


@dataclass(frozen=True)
class Cadence:
    text: str
    interval: timedelta | None = None
    cron: Cron | None = None

    @property
    def kind(self) -> str:
        return "interval" if self.interval is not None else "cron"

    def next_after(self, moment: datetime) -> datetime:
        """When a habit whose last run started at ``moment`` is next due."""
        if self.interval is not None:
            return _floor_minute(moment) + self.interval
        assert self.cron is not None
        return self.cron.next_after(moment)

    def windows_between(self, due_at: datetime, now: datetime, cap: int = 2) -> int:
        """How many windows opened in ``[due_at, now]`` (counting stops at ``cap``)."""
        if now < due_at:
            return 0
        if self.interval is not None:
            return min(cap, 1 + int((now - due_at) / self.interval))
        assert self.cron is not None
        count, t = 1, due_at
        while count < cap:
            t = self.cron.next_after(t)
            if t > now:
                break
            count += 1
        return count


def _floor_minute(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(second=0, microsecond=0)


def parse_cadence(text: str) -> Cadence:
    cleaned = text.strip()
    match = _INTERVAL.match(cleaned)
    if match:
        amount = int(match.group(1))
        if amount == 0:
            raise CadenceError(f"interval {text!r} must be at least 1{match.group(2)}")
        return Cadence(cleaned, interval=timedelta(seconds=amount * _UNITS[match.group(2)]))
    if cleaned.startswith("@"):
        expression = MACROS.get(cleaned.lower())
        if expression is None:
            raise CadenceError(f"unknown macro {text!r}; use one of {', '.join(MACROS)}")
        return Cadence(cleaned, cron=parse_cron(expression))
    if len(cleaned.split()) == 5:
        try:
            return Cadence(cleaned, cron=parse_cron(cleaned))
        except CronError as exc:
            raise CadenceError(str(exc)) from None
    raise CadenceError(
        f"{text!r} is not a cadence; use an interval like 30m, 2h, 1d, 1w, "
        "a 5-field cron expression like '*/15 * * * *', or a macro like @daily"
    )


@dataclass(frozen=True)
class DueInfo:
    due: bool
    due_at: datetime
    windows: int  # windows opened since due_at (capped at 2)
    overdue: bool

    def to_json(self) -> dict[str, object]:
        from ouro.models.clock import format_time

        return {
            "due": self.due,
            "dueAt": format_time(self.due_at),
            "overdue": self.overdue,
            "windowsMissed": max(0, self.windows - 1),
        }


def due_info(
    cadence: Cadence, last_run_at: datetime | None, anchor: datetime, now: datetime
) -> DueInfo:
    """Whether a habit is due at ``now`` (see the module docstring for the rules)."""
    if last_run_at is not None:
        due_at = cadence.next_after(last_run_at)
    elif cadence.interval is not None:
        due_at = _floor_minute(anchor)
    else:
        due_at = cadence.next_after(anchor)
    windows = cadence.windows_between(due_at, now)
    due = windows > 0
    overdue = due and (windows >= 2 or now - due_at > OVERDUE_GRACE)
    return DueInfo(due=due, due_at=due_at, windows=windows, overdue=overdue)
