"""Daily reflections: ``desk/_record/diary/daily/YYYY-MM-DD.md`` (UTC date).

The first entry of a day creates the file with a ``# YYYY-MM-DD`` heading;
every entry is appended as a ``## HH:MM:SSZ`` section. Appends happen under the
diary lock as one ``write`` + fsync (``ouro.store.append``), so concurrent
reflections never interleave, and a failed append (disk full, short write)
leaves the file byte-identical and reports the error.
"""

from __future__ import annotations

from pathlib import Path

from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.models.clock import format_time, utc_now
from ouro.store.append import append_bytes
from ouro.store.lock import FileLock


def daily_path(bundle: Bundle, day: str) -> Path:
    return bundle.record / "diary" / "daily" / f"{day}.md"


def reflect(bundle: Bundle, text: str) -> tuple[Path, str]:
    """Append a reflection to today's file; returns (path, the entry's heading time)."""
    body = text.strip()
    if not body or "\x00" in body:
        raise InvalidInput(
            "text: the reflection is empty or contains NUL", hint="write what you noticed today"
        )
    now = utc_now()
    day, clock = now.strftime("%Y-%m-%d"), now.strftime("%H:%M:%SZ")
    path = daily_path(bundle, day)

    def entry(size: int, ends_nl: bool) -> bytes:
        if size == 0:
            prefix = f"# {day}\n\n"
        elif not ends_nl:
            prefix = "\n\n"
        else:
            prefix = "\n"
        return f"{prefix}## {clock}\n\n{body}\n".encode()

    with FileLock(bundle.lock_path("diary"), purpose="diary reflect"):
        append_bytes(path, entry)
    return path, format_time(now)
