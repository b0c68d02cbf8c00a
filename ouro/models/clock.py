"""UTC time as ISO-8601 strings with millisecond precision and a ``Z`` suffix.

``utc_now_iso`` needs no ``datetime`` (a hook that records one event imports
this module and nothing else of time: ``datetime``'s import is ~5M instructions,
about an eighth of a bare ``python -c pass``); the functions that take or give
a ``datetime`` import it when called.
"""

from __future__ import annotations

import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime


def utc_now() -> datetime:
    from datetime import UTC, datetime

    return datetime.now(UTC)


def format_time(moment: datetime) -> str:
    from datetime import UTC

    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def utc_now_iso() -> str:
    """``format_time(utc_now())``: the same text, from the clock without ``datetime``."""
    seconds, ns = divmod(time.time_ns(), 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(seconds)) + f"{ns // 1_000_000:03d}Z"


def parse_time(text: str) -> datetime:
    """Parse an ISO time; a naive value is taken as UTC."""
    from datetime import UTC, datetime

    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
