"""A small 5-field cron parser and next-fire search (UTC, no DST).

Fields: minute (0-59), hour (0-23), day of month (1-31), month (1-12 or
``jan``-``dec``), day of week (0-7 or ``sun``-``sat``; 0 and 7 are Sunday).
Each field is ``*`` or a comma list of ``N``, ``A-B``, ``*/S``, ``A-B/S`` or
``A/S`` (from A to the field's maximum in steps of S).

As in Vixie cron, when both day of month and day of week are restricted (not
starting with ``*``), a day matches if EITHER matches; when one is ``*`` only the other
counts.

All times are UTC, so there is no daylight-saving gap or repeat: every minute
exists exactly once. We own this parser (rather than adding ``croniter``)
because the whole job is ~150 lines and the habit contract needs only
"next fire strictly after t" and "how many fires in (a, b]".
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")

#: (name, low, high, names) per field, in order.
_FIELDS: tuple[tuple[str, int, int, tuple[str, ...]], ...] = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day of month", 1, 31, ()),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 7, _DAYS),
)

#: A search that finds nothing within this many years means the expression
#: never fires (e.g. ``0 0 30 2 *``). Eight years cover every leap-day case.
_HORIZON_YEARS = 8


class CronError(ValueError):
    """A cron expression that cannot be parsed; the message names the field."""


@dataclass(frozen=True)
class Cron:
    expression: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 = Sunday .. 6 = Saturday
    days_restricted: bool
    weekdays_restricted: bool

    def day_matches(self, moment: datetime) -> bool:
        dom = moment.day in self.days
        dow = (moment.weekday() + 1) % 7 in self.weekdays  # Python: Monday = 0
        if self.days_restricted and self.weekdays_restricted:
            return dom or dow
        return dom and dow

    def matches(self, moment: datetime) -> bool:
        return (
            moment.minute in self.minutes
            and moment.hour in self.hours
            and moment.month in self.months
            and self.day_matches(moment)
        )

    def next_after(self, moment: datetime) -> datetime:
        """The first fire time strictly after ``moment`` (UTC, whole minutes)."""
        t = moment.astimezone(UTC).replace(second=0, microsecond=0) + timedelta(minutes=1)
        limit = t.year + _HORIZON_YEARS
        while t.year <= limit:
            if t.month not in self.months:
                # jump to the first day of the next month
                year, month = (t.year + 1, 1) if t.month == 12 else (t.year, t.month + 1)
                t = t.replace(year=year, month=month, day=1, hour=0, minute=0)
                continue
            if not self.day_matches(t):
                t = (t + timedelta(days=1)).replace(hour=0, minute=0)
                continue
            if t.hour not in self.hours:
                t = (t + timedelta(hours=1)).replace(minute=0)
                continue
            if t.minute not in self.minutes:
                t = t + timedelta(minutes=1)
                continue
            return t
        raise CronError(f"cron {self.expression!r} never fires")


def parse_cron(expression: str) -> Cron:
    parts = expression.split()
    if len(parts) != 5:
        raise CronError(
            f"cron {expression!r} has {len(parts)} fields; expected 5 "
            "(minute hour day-of-month month day-of-week)"
        )
    sets = [
        _parse_field(text, name, low, high, names)
        for text, (name, low, high, names) in zip(parts, _FIELDS, strict=True)
    ]
    weekdays = frozenset(d % 7 for d in sets[4])
    cron = Cron(
        expression=expression,
        minutes=sets[0],
        hours=sets[1],
        days=sets[2],
        months=sets[3],
        weekdays=weekdays,
        # Vixie cron: a field starting with "*" (also "*/2") counts as unrestricted
        days_restricted=not parts[2].startswith("*"),
        weekdays_restricted=not parts[4].startswith("*"),
    )
    if not _can_fire(cron):
        raise CronError(f"cron {expression!r} never fires (no such day in the chosen months)")
    return cron


def _can_fire(cron: Cron) -> bool:
    if cron.weekdays_restricted:
        return True  # every weekday occurs in every month
    # only day of month restricts: some chosen day must exist in some chosen month
    return any(
        day <= calendar.monthrange(2024, month)[1] for month in cron.months for day in cron.days
    )


def _value(token: str, name: str, low: int, high: int, names: tuple[str, ...]) -> int:
    lowered = token.lower()
    if names and lowered in names:
        return names.index(lowered) + (1 if name == "month" else 0)
    if not token.isdigit():
        raise CronError(f"{name}: {token!r} is not a number" + _named(names))
    value = int(token)
    if not low <= value <= high:
        raise CronError(f"{name}: {value} is outside {low}-{high}")
    return value


def _named(names: tuple[str, ...]) -> str:
    return f" or one of {', '.join(names)}" if names else ""


def _parse_field(
    text: str, name: str, low: int, high: int, names: tuple[str, ...]
) -> frozenset[int]:
    values: set[int] = set()
    for item in text.split(","):
        if not item:
            raise CronError(f"{name}: empty list item in {text!r}")
        body, slash, step_text = item.partition("/")
        step = 1
        if slash:
            if not step_text.isdigit() or int(step_text) == 0:
                raise CronError(f"{name}: step {step_text!r} must be a positive number")
            step = int(step_text)
        if body == "*":
            start, end = low, high
        elif "-" in body:
            first, _, last = body.partition("-")
            start = _value(first, name, low, high, names)
            end = _value(last, name, low, high, names)
            if start > end:
                raise CronError(f"{name}: range {body!r} runs backwards")
        else:
            start = _value(body, name, low, high, names)
            end = high if slash else start
        values.update(range(start, end + 1, step))
    return frozenset(values)
