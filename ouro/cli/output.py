"""Printing results and errors: one JSON object with ``--json``, text otherwise.

Human output helpers, shared by every renderer:

- ``table(rows, columns)``: a header line and aligned columns (no borders);
- ``confirm(verb, kind, ident, where)``: the one-line confirmation of a write
  ("recorded fact f-01… → desk/_record/diary/facts.jsonl#f-01…");
- ``status(word)``: a status word, coloured only when stdout is a terminal, the
  ``color`` setting allows it and ``NO_COLOR`` is unset (ANSI codes);
- ``when(iso)``: "3h ago" / "in 2d" (or the timestamp, per the ``dates`` setting).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import Any

    from ouro.errors import OuroError


def to_json_line(obj: Any) -> str:
    """One compact JSON line, UTF-8 as is (the format orjson writes). The standard
    encoder: importing orjson (it pulls in ``dataclasses`` and ``inspect``) costs a
    cold start more than encoding any result does."""
    import json

    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n"


def render_full(obj: Any, indent: int = 0) -> str:
    """A plain, stable rendering of a JSON-like value for people."""
    pad = "  " * indent
    if isinstance(obj, dict):
        if not obj:
            return pad + "(none)"
        lines = []
        for key, value in obj.items():
            if isinstance(value, dict | list) and value:
                lines.append(f"{pad}{key}:")
                lines.append(render_full(value, indent + 1))
            else:
                shown = "(none)" if value in ({}, [], None) else value
                lines.append(f"{pad}{key}: {shown}")
        return "\n".join(lines)
    if isinstance(obj, list):
        if not obj:
            return pad + "(none)"
        lines = []
        for item in obj:
            if isinstance(item, dict):
                body = render_full(item, indent + 1).lstrip()
                lines.append(f"{pad}- {body}")
            else:
                lines.append(f"{pad}- {item}")
        return "\n".join(lines)
    return f"{pad}{obj}"


#: status words and their colour (everything else is printed plain)
STATUS_COLOURS = {
    "ok": "green", "pass": "green", "ready": "green", "verified": "green", "done": "green",
    "fresh": "green", "open": "cyan", "active": "cyan", "asserted": "cyan",
    "watch": "yellow", "warn": "yellow", "stale": "yellow", "stale_risky": "yellow",
    "evidence_required": "yellow", "degraded": "yellow", "unknown": "yellow",
    "missing": "yellow", "due": "yellow", "blocked": "red", "fail": "red",
    "failed": "red", "error": "red", "unverifiable": "red", "dropped": "bright_black",
    "superseded": "bright_black",
}  # fmt: skip


#: ANSI foreground codes of the colours above
_ANSI = {"green": "32", "cyan": "36", "yellow": "33", "red": "31", "bright_black": "90"}


def colour_on() -> bool:
    """Colour only on a terminal, never with NO_COLOR, and as the ``color`` setting says."""
    if os.environ.get("NO_COLOR"):
        return False
    from ouro.config import lookup

    choice = lookup("color")
    if choice == "always":
        return True
    if choice == "never":
        return False
    return sys.stdout.isatty()


_colour: bool | None = None


def reset() -> None:
    """Forget this run's colour decision (the CLI root calls it per run)."""
    global _colour
    _colour = None


def status(word: str) -> str:
    global _colour
    colour = STATUS_COLOURS.get(word.lower())
    if colour is None:
        return word
    if _colour is None:
        _colour = colour_on()
    if not _colour:
        return word
    bold = "\x1b[1m" if colour == "red" else ""
    return f"\x1b[{_ANSI[colour]}m{bold}{word}\x1b[0m"


def when(stamp: str | None, *, now: float | None = None) -> str:
    """A timestamp as people read it: "3h ago", "in 2d", "just now"."""
    if not stamp:
        return "-"
    from ouro.config import lookup

    if lookup("dates") == "absolute":
        return stamp
    from datetime import datetime

    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    if moment.tzinfo is None:
        return stamp  # a bare date: already short
    import time

    delta = (time.time() if now is None else now) - moment.timestamp()
    ahead = delta < 0
    seconds = abs(delta)
    if seconds < 45:
        return "just now"
    for size, unit in (
        (86400 * 365, "y"),
        (86400 * 30, "mo"),
        (86400, "d"),
        (3600, "h"),
        (60, "m"),
    ):
        if seconds >= size:
            n = int(seconds // size)
            return f"in {n}{unit}" if ahead else f"{n}{unit} ago"
    return "just now"


def _visible(text: str) -> int:
    import re

    return len(re.sub(r"\x1b\[[0-9;]*m", "", text))


def table(rows: list[dict[str, Any]], columns: list[str], *, empty: str = "(none)") -> str:
    """Rows as aligned columns under an upper-case header; ``empty`` when no rows."""
    if not rows:
        return empty
    cells = [[("-" if r.get(c) in (None, "") else str(r.get(c))) for c in columns] for r in rows]
    header = [c.upper() for c in columns]
    widths = [max(_visible(x) for x in col) for col in zip(header, *cells, strict=False)]
    lines = []
    for line in [header, *cells]:
        padded = [x + " " * (w - _visible(x)) for x, w in zip(line, widths, strict=True)]
        lines.append("  ".join(padded).rstrip())
    return "\n".join(lines)


def confirm(verb: str, kind: str, ident: str | None, where: str | None) -> str:
    """One line for a write: what happened, the id, where it is."""
    parts = [verb, kind]
    if ident:
        parts.append(ident)
    line = " ".join(parts)
    return f"{line}  → {where}" if where else line


def emit(result: Any, *, json_mode: bool, render: Callable[[Any], str] | None = None) -> None:
    if json_mode:
        sys.stdout.write(to_json_line(result))
    else:
        text = render(result) if render else render_full(result)
        sys.stdout.write(text.rstrip("\n") + "\n")


def emit_error(
    error: OuroError | None,
    *,
    json_mode: bool,
    kind: str = "",
    message: str = "",
    hint: str | None = None,
    exit_code: int | None = None,
) -> None:
    payload: dict[str, Any] = dict(
        error.to_json() if error else {"type": kind, "message": message, "hint": hint}
    )
    if exit_code is not None:
        payload["exitCode"] = exit_code
    if json_mode:
        sys.stdout.write(to_json_line({"error": payload}))
    else:
        sys.stderr.write(f"error: {payload['message']}\n")
        if payload.get("hint"):
            sys.stderr.write(f"hint: {payload['hint']}\n")


def report_error(exc: BaseException, *, json_mode: bool) -> int:
    """Print a failed command's error (``ouro.cli.run``) and return its exit code.

    An ``OuroError`` as itself; an ``OSError`` no store primitive converted as a
    storage error; anything else (called only with ``--json``) as an internal error.
    """
    from ouro.cli import exits

    if isinstance(exc, OSError):
        from ouro.store.guard import storage_error

        exc = storage_error(
            exc,
            exc.filename or "(unknown path)",
            outcome="the command stopped; what it had finished writing stays written",
        )
    from ouro.errors import OuroError

    if isinstance(exc, OuroError):
        code = exits.code_for(exc.kind)
        emit_error(exc, json_mode=json_mode, exit_code=code)
        return code
    emit_error(
        None,
        json_mode=True,
        kind="internal",
        message=f"{type(exc).__name__}: {exc}",
        hint="this is a bug in ouro; rerun with OURO_DEBUG=1 for the traceback",
        exit_code=exits.NEGATIVE,
    )
    return exits.NEGATIVE
