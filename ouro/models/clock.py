"""UTC time as ISO-8601 strings with millisecond precision and a ``Z`` suffix."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    return datetime.now(UTC)


def format_time(moment: datetime) -> str:
    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def utc_now_iso() -> str:
    return format_time(utc_now())


def parse_time(text: str) -> datetime:
    """Parse an ISO time; a naive value is taken as UTC."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
