"""Cadence and cron parsing, next-fire search and due rules (UTC, DST-free)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ouro.habits.cadence import OVERDUE_GRACE, CadenceError, due_info, parse_cadence
from ouro.habits.cron import CronError, parse_cron


def t(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


# (cadence, after, expected next fire)
NEXT_CASES = [
    ("30m", "2026-01-01T10:17:45", "2026-01-01T10:47:00"),
    ("2h", "2026-01-01T23:30:10", "2026-01-02T01:30:00"),
    ("1d", "2026-02-28T08:00:00", "2026-03-01T08:00:00"),
    ("1w", "2026-01-01T00:00:00", "2026-01-08T00:00:00"),
    ("* * * * *", "2026-01-01T10:17:45", "2026-01-01T10:18:00"),
    ("*/15 * * * *", "2026-01-01T10:15:00", "2026-01-01T10:30:00"),
    ("*/15 * * * *", "2026-01-01T23:59:00", "2026-01-02T00:00:00"),
    ("0 9 * * *", "2026-01-01T09:00:00", "2026-01-02T09:00:00"),
    ("0 9 * * *", "2026-01-01T08:59:59", "2026-01-01T09:00:00"),
    ("5,35 9-10 * * *", "2026-01-01T09:35:00", "2026-01-01T10:05:00"),
    ("0 9-17/4 * * *", "2026-01-01T10:00:00", "2026-01-01T13:00:00"),
    ("30 2 * * *", "2026-03-08T00:00:00", "2026-03-08T02:30:00"),  # US DST day: UTC has no gap
    ("30 1 * * *", "2026-03-29T00:00:00", "2026-03-29T01:30:00"),  # EU DST day
    ("30 1 * * *", "2026-10-25T01:30:00", "2026-10-26T01:30:00"),  # EU fall-back: no repeat
    ("0 0 * * mon-fri", "2026-01-02T12:00:00", "2026-01-05T00:00:00"),  # Fri → Mon
    ("0 0 * * 7", "2026-01-01T00:00:00", "2026-01-04T00:00:00"),  # 7 is Sunday
    ("0 0 * * sun", "2026-01-01T00:00:00", "2026-01-04T00:00:00"),
    ("0 0 1 * *", "2026-01-31T00:00:00", "2026-02-01T00:00:00"),
    ("0 0 31 * *", "2026-02-01T00:00:00", "2026-03-31T00:00:00"),  # skips short months
    ("0 0 29 2 *", "2025-03-01T00:00:00", "2028-02-29T00:00:00"),  # leap day
    ("0 0 1 jan *", "2026-06-01T00:00:00", "2027-01-01T00:00:00"),
    ("0 12 13 * fri", "2026-01-01T00:00:00", "2026-01-02T12:00:00"),  # dom OR dow: Fri 2nd
    ("0 12 */10 * fri", "2026-01-01T12:00:00", "2026-05-01T12:00:00"),  # "*/10": AND (Fri 1st)
    ("@hourly", "2026-01-01T10:00:00", "2026-01-01T11:00:00"),
    ("@daily", "2026-01-01T10:00:00", "2026-01-02T00:00:00"),
    ("@midnight", "2026-01-01T10:00:00", "2026-01-02T00:00:00"),
    ("@weekly", "2026-01-01T10:00:00", "2026-01-04T00:00:00"),
    ("@monthly", "2026-01-15T10:00:00", "2026-02-01T00:00:00"),
    ("@yearly", "2026-01-15T10:00:00", "2027-01-01T00:00:00"),
    ("@annually", "2026-01-15T10:00:00", "2027-01-01T00:00:00"),
]


@pytest.mark.parametrize(("cadence", "after", "expected"), NEXT_CASES)
def test_next_fire(cadence: str, after: str, expected: str) -> None:
    assert parse_cadence(cadence).next_after(t(after)) == t(expected)


def test_dom_and_dow_both_star_prefixed_means_and() -> None:
    # "*/10" in day-of-month counts as unrestricted (Vixie): Friday AND day in 1,11,21,31
    cron = parse_cron("0 12 */10 * fri")
    fires = []
    moment = t("2026-01-01T00:00:00")
    for _ in range(3):
        moment = cron.next_after(moment)
        fires.append(moment)
    assert all(f.weekday() == 4 for f in fires)  # Friday


def test_a_slash_step_runs_to_the_field_end() -> None:
    assert parse_cron("50/5 * * * *").minutes == frozenset({50, 55})


BAD = [
    ("", "not a cadence"),
    ("0m", "at least 1m"),
    ("30s", "not a cadence"),
    ("5 minutes", "not a cadence"),
    ("@reboot", "unknown macro"),
    ("61 * * * *", "minute: 61 is outside 0-59"),
    ("* 24 * * *", "hour: 24 is outside 0-23"),
    ("* * 0 * *", "day of month: 0 is outside 1-31"),
    ("* * * 13 *", "month: 13 is outside 1-12"),
    ("* * * * 8", "day of week: 8 is outside 0-7"),
    ("* * * foo *", "month: 'foo' is not a number or one of jan"),
    ("*/0 * * * *", "step '0' must be a positive number"),
    ("5-1 * * * *", "range '5-1' runs backwards"),
    ("1,,2 * * * *", "empty list item"),
    ("0 0 30 2 *", "never fires"),
    ("* * * *", "not a cadence"),
]


@pytest.mark.parametrize(("text", "message"), BAD)
def test_bad_cadences_say_why(text: str, message: str) -> None:
    with pytest.raises(CadenceError) as caught:
        parse_cadence(text)
    assert message in str(caught.value)


def test_cron_field_count_is_named() -> None:
    with pytest.raises(CronError, match="has 4 fields; expected 5"):
        parse_cron("* * * *")


EXPRESSIONS = st.builds(
    lambda m, h, dom, dow: f"{m} {h} {dom} * {dow}",
    st.sampled_from(["*", "0", "*/7", "5,50", "10-20/5"]),
    st.sampled_from(["*", "3", "*/5", "22-23"]),
    st.sampled_from(["*", "1", "15", "28-31"]),
    st.sampled_from(["*", "0", "mon-wed", "6"]),
)


@settings(max_examples=60, deadline=None)
@given(
    EXPRESSIONS,
    st.datetimes(min_value=datetime(2024, 1, 1), max_value=datetime(2030, 1, 1)),
)
def test_next_fire_is_the_first_matching_minute(expression: str, start: datetime) -> None:
    cron = parse_cron(expression)
    start = start.replace(tzinfo=UTC)
    found = cron.next_after(start)
    assert found > start and found.second == 0 and cron.matches(found)
    # nothing matches in between (brute force, bounded to keep it fast)
    probe = start.replace(second=0, microsecond=0) + timedelta(minutes=1)
    for _ in range(min(int((found - probe).total_seconds() // 60), 3000)):
        assert not cron.matches(probe), probe
        probe += timedelta(minutes=1)


# --- due rules -------------------------------------------------------------------

ANCHOR = t("2026-01-01T00:00:00")


@pytest.mark.parametrize(
    ("cadence", "last", "now", "due", "overdue", "due_at"),
    [
        # interval, never ran: due at once (anchored at the definition's mtime)
        ("30m", None, "2026-01-01T00:00:30", True, False, "2026-01-01T00:00:00"),
        # interval: due one interval after the minute the last run started
        ("30m", "2026-01-01T10:00:20", "2026-01-01T10:29:59", False, False, "2026-01-01T10:30:00"),
        ("30m", "2026-01-01T10:00:20", "2026-01-01T10:30:05", True, False, "2026-01-01T10:30:00"),
        # a 1m habit ticked every minute runs every minute
        (
            "1m",
            "2026-01-01T10:00:00.400",
            "2026-01-01T10:01:00.200",
            True,
            False,
            "2026-01-01T10:01:00",
        ),
        # more than one window passed: overdue (runs once)
        ("30m", "2026-01-01T10:00:00", "2026-01-01T11:00:00", True, True, "2026-01-01T10:30:00"),
        ("30m", "2026-01-01T10:00:00", "2026-01-03T11:00:00", True, True, "2026-01-01T10:30:00"),
        # one window but found late (scheduler was off): overdue
        ("1d", "2026-01-01T09:00:00", "2026-01-02T09:10:00", True, True, "2026-01-02T09:00:00"),
        ("1d", "2026-01-01T09:00:00", "2026-01-02T09:04:00", True, False, "2026-01-02T09:00:00"),
        # cron, never ran: first fire after the anchor
        ("0 9 * * *", None, "2026-01-01T08:00:00", False, False, "2026-01-01T09:00:00"),
        ("0 9 * * *", None, "2026-01-01T09:00:30", True, False, "2026-01-01T09:00:00"),
        # cron: the fire after the last run
        (
            "*/5 * * * *",
            "2026-01-01T10:00:01",
            "2026-01-01T10:04:59",
            False,
            False,
            "2026-01-01T10:05:00",
        ),
        (
            "*/5 * * * *",
            "2026-01-01T10:00:01",
            "2026-01-01T10:05:02",
            True,
            False,
            "2026-01-01T10:05:00",
        ),
        # cron: a whole hour of windows missed → overdue, still one run
        (
            "*/5 * * * *",
            "2026-01-01T10:00:01",
            "2026-01-01T11:00:00",
            True,
            True,
            "2026-01-01T10:05:00",
        ),
        ("@daily", "2026-01-01T00:00:05", "2026-01-05T00:00:00", True, True, "2026-01-02T00:00:00"),
    ],
)
def test_due_rules(
    cadence: str, last: str | None, now: str, due: bool, overdue: bool, due_at: str
) -> None:
    info = due_info(parse_cadence(cadence), t(last) if last else None, ANCHOR, t(now))
    assert (info.due, info.overdue, info.due_at) == (due, overdue, t(due_at))


def test_missed_windows_are_counted_but_run_once() -> None:
    info = due_info(
        parse_cadence("*/5 * * * *"), t("2026-01-01T10:00:01"), ANCHOR, t("2026-01-01T11:00:00")
    )
    assert info.to_json()["windowsMissed"] >= 1
    assert info.due and info.overdue
    # after the (single) overdue run at 11:00, the habit is not due again until 11:05
    after = due_info(
        parse_cadence("*/5 * * * *"), t("2026-01-01T11:00:00.5"), ANCHOR, t("2026-01-01T11:01:00")
    )
    assert not after.due and after.due_at == t("2026-01-01T11:05:00")


def test_grace_is_five_minutes() -> None:
    assert timedelta(minutes=5) == OVERDUE_GRACE
