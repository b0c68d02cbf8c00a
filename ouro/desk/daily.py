"""Daily reflections: ``desk/_record/diary/daily/YYYY-MM-DD.md`` (UTC date).

The first entry of a day creates the file with a ``# YYYY-MM-DD`` heading;
every entry is appended as a ``## HH:MM:SSZ`` section. Appends happen under the
diary lock as one ``write`` + fsync, so concurrent reflections never interleave.
"""

from __future__ import annotations

import os
from pathlib import Path

from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.models.clock import format_time, utc_now
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
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(bundle.lock_path("diary"), purpose="diary reflect"):
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            if size == 0:
                prefix = f"# {day}\n\n"
            elif os.pread(fd, 1, size - 1) != b"\n":
                prefix = "\n\n"
            else:
                prefix = "\n"
            payload = f"{prefix}## {clock}\n\n{body}\n".encode()
            os.write(fd, payload)
            os.fsync(fd)
        finally:
            os.close(fd)
    return path, format_time(now)
