"""The shape of ``bundle.json``: what a bundle's marker file must hold.

Standard library only (``ouro.bundle`` reads it on every command's start).

``problem(data)`` is None for a valid file, else ``(field, what is wrong)``:

- ``layoutVersion``: required, an integer this ouro knows (1 ..
  ``LAYOUT_VERSION``; 1 is the legacy layout ``ouro migrate`` moves); a larger
  one is a layout made by a newer ouro (``newer_layout``), never guessed at;
- ``agent``: a non-empty string when present (``ouro init`` always writes it);
- ``schemaVersion``: an integer when present; ``createdAt``, ``repoRoot``:
  strings when present.

Every other key (settings, habits, senses, redact, migrations, …) belongs to
the module that reads it, which reports its own problems.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LAYOUT_VERSION = 2
#: bundle.json is read up to this many bytes (``ouro.store.bounded``)
META_LIMIT = 1_000_000

_STRINGS = ("createdAt", "repoRoot")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def newer_layout(data: Any) -> int | None:
    """The layout version when it is newer than this ouro's, else None."""
    value = data.get("layoutVersion") if isinstance(data, dict) else None
    if isinstance(value, int) and not isinstance(value, bool) and value > LAYOUT_VERSION:
        return value
    return None


def problem(data: Any) -> tuple[str, str] | None:
    """None when ``data`` is a valid bundle.json document, else (field, reason)."""
    if not isinstance(data, dict):
        return "(document)", "must be a JSON object"
    if "layoutVersion" not in data:
        return "layoutVersion", "is missing"
    layout = data["layoutVersion"]
    if not _is_int(layout):
        return "layoutVersion", f"must be an integer, got {_show(layout)}"
    if layout > LAYOUT_VERSION:
        return "layoutVersion", f"is {layout}: made by a newer ouro"
    if layout < 1:
        return "layoutVersion", f"is {layout}: not a layout any ouro wrote (1 .. {LAYOUT_VERSION})"
    if "agent" in data:
        agent = data["agent"]
        if not isinstance(agent, str) or not agent.strip():
            return "agent", f"must be a non-empty string, got {_show(agent)}"
    if "schemaVersion" in data and not _is_int(data["schemaVersion"]):
        return "schemaVersion", f"must be an integer, got {_show(data['schemaVersion'])}"
    for key in _STRINGS:
        if key in data and not isinstance(data[key], str):
            return key, f"must be a string, got {_show(data[key])}"
    return None


def _show(value: Any) -> str:
    """A short JSON-ish picture of a bad value (never the whole of a large one)."""
    if isinstance(value, str):
        text = repr(value)
    elif value is None:
        text = "null"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int | float):
        text = repr(value)
    elif isinstance(value, dict):
        text = "an object"
    elif isinstance(value, list):
        text = "a list"
    else:
        text = type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."
