"""Printing results and errors: one JSON object with ``--json``, text otherwise."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import orjson

from ouro.errors import OuroError


def to_json_line(obj: Any) -> str:
    return orjson.dumps(obj, option=orjson.OPT_NON_STR_KEYS).decode() + "\n"


def render_text(obj: Any, indent: int = 0) -> str:
    """A plain, stable rendering of a JSON-like value for people."""
    pad = "  " * indent
    if isinstance(obj, dict):
        if not obj:
            return pad + "(none)"
        lines = []
        for key, value in obj.items():
            if isinstance(value, dict | list) and value:
                lines.append(f"{pad}{key}:")
                lines.append(render_text(value, indent + 1))
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
                body = render_text(item, indent + 1).lstrip()
                lines.append(f"{pad}- {body}")
            else:
                lines.append(f"{pad}- {item}")
        return "\n".join(lines)
    return f"{pad}{obj}"


def emit(result: Any, *, json_mode: bool, render: Callable[[Any], str] | None = None) -> None:
    if json_mode:
        sys.stdout.write(to_json_line(result))
    else:
        text = render(result) if render else render_text(result)
        sys.stdout.write(text.rstrip("\n") + "\n")


def emit_error(
    error: OuroError | None,
    *,
    json_mode: bool,
    kind: str = "",
    message: str = "",
    hint: str | None = None,
) -> None:
    payload = error.to_json() if error else {"type": kind, "message": message, "hint": hint}
    if json_mode:
        sys.stdout.write(to_json_line({"error": payload}))
    else:
        sys.stderr.write(f"error: {payload['message']}\n")
        if payload.get("hint"):
            sys.stderr.write(f"hint: {payload['hint']}\n")
