"""Progress for long work, on stderr, for people only (standard library only).

One helper for every long command (index rebuild and first build, migrate,
drills, sync, embedding builds). Each factory returns a callback, or ``None``
when progress is off, so callers write ``if show: show(...)`` and pay nothing
otherwise:

- ``counter(label, unit)`` -> ``show(done, total)``: one line redrawn in place
  (``indexing: 1500/4000 files (37%)``), at most every 0.1 s, ended with a
  newline when ``done >= total``; work done within ``DELAY`` (0.5 s) prints
  nothing at all;
- ``phased(label)`` -> ``show(phase, done, total)``: the same, per named phase;
- ``steps(label)`` -> ``show(text)``: one line per step (``drill: erase …``).

Progress is on when the ``progress`` setting says so (``ouro.config``:
``--config progress=…``, ``OURO_PROGRESS``, project, bundle, global files;
default ``auto`` = only when stderr is a terminal) and never under ``--json``
(the CLI calls ``set_json``). Nothing is ever written to stdout.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

_json = False
#: seconds of work before a counter line appears (quick work stays silent)
DELAY = 0.5


def set_json(on: bool) -> None:
    """The CLI says whether this run prints JSON (then progress is silent)."""
    global _json
    _json = on


def enabled() -> bool:
    if _json:
        return False
    from ouro.config import lookup

    choice = lookup("progress")
    if choice == "never":
        return False
    return choice == "always" or sys.stderr.isatty()


class _Line:
    """One stderr line redrawn in place, throttled."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.last = 0.0
        self.width = 0
        self.started = time.monotonic()
        self.shown = False

    def draw(self, text: str, *, final: bool) -> None:
        now = time.monotonic()
        if not self.shown and now - self.started < DELAY:
            return
        if not final and now - self.last < 0.1:
            return
        self.shown = True
        self.last = now
        line = f"{self.label}: {text}"
        if final:
            line += f" in {now - self.started:.1f}s"
        pad = " " * max(0, self.width - len(line))
        self.width = len(line)
        sys.stderr.write(f"\r{line}{pad}" + ("\n" if final else ""))
        sys.stderr.flush()


def _fraction(done: int, total: int, unit: str) -> str:
    pct = f" ({100 * done // total}%)" if total else ""
    return f"{done}/{total}{' ' + unit if unit else ''}{pct}"


def counter(label: str, unit: str = "") -> Callable[[int, int], None] | None:
    if not enabled():
        return None
    line = _Line(label)

    def show(done: int, total: int) -> None:
        line.draw(_fraction(done, total, unit), final=done >= total)

    return show


def phased(label: str) -> Callable[[str, int, int], None] | None:
    if not enabled():
        return None
    lines: dict[str, _Line] = {}

    def show(phase: str, done: int, total: int) -> None:
        line = lines.setdefault(phase, _Line(f"{label}: {phase}"))
        line.draw(_fraction(done, total, ""), final=done >= total)

    return show


def steps(label: str) -> Callable[[str], None] | None:
    if not enabled():
        return None

    def show(text: str) -> None:
        sys.stderr.write(f"{label}: {text} …\n")
        sys.stderr.flush()

    return show
