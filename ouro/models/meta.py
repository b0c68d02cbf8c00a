"""The shape of ``bundle.json``: what a bundle's marker file must hold.

Standard library only (``ouro.bundle`` reads it on every command's start).

``problem(data)`` is None for a valid file, else ``(field, what is wrong)``:

- ``layoutVersion``: required, an integer this ouro knows (1 ..
  ``LAYOUT_VERSION``; 1 is the legacy layout ``ouro migrate`` moves); a larger
  one is a layout made by a newer ouro (``newer_layout``), never guessed at;
- ``agent``: required, an agent name (``agent_problem``: one line of at most
  ``AGENT_MAX`` printable characters, not blank; the one rule ``ouro init``,
  ``ouro config set agent``, ``--agent`` and a message's peer name are checked
  by, ``check_agent``);
- ``schemaVersion``: an integer when present, 1 .. ``SCHEMA_VERSION``; a larger
  one is bundle.json written by a newer ouro (``newer_layout``), as a newer
  ``layoutVersion`` is; ``createdAt``, ``repoRoot``: strings when present.

Every other key (settings, habits, senses, redact, migrations, …) belongs to
the module that reads it, which reports its own problems.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LAYOUT_VERSION = 2
#: the ``schemaVersion`` ``ouro init`` writes: the newest bundle.json this ouro reads
SCHEMA_VERSION = 1
#: an agent name's length limit (after surrounding whitespace is dropped)
AGENT_MAX = 100
AGENT_RULE = f"one line of at most {AGENT_MAX} printable characters, not blank"
#: bundle.json is read up to this many bytes (``ouro.store.bounded``)
META_LIMIT = 1_000_000

_STRINGS = ("createdAt", "repoRoot")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def newer_layout(data: Any) -> tuple[str, int] | None:
    """(field, version) when ``layoutVersion`` or ``schemaVersion`` is newer than this
    ouro reads, else None."""
    if not isinstance(data, dict):
        return None
    for field, known in (("layoutVersion", LAYOUT_VERSION), ("schemaVersion", SCHEMA_VERSION)):
        value = data.get(field)
        if isinstance(value, int) and not isinstance(value, bool) and value > known:
            return field, value
    return None


def agent_problem(value: Any) -> str | None:
    """None when ``value`` is an agent name, else what is wrong with it.

    Surrounding whitespace is not part of the name (``check_agent`` drops it). A
    name is text people and other agents read (lease holders, lock owners, message
    senders and peers, a git identity): never a path as it is -- where one becomes
    part of a path or a git identity it is sanitised there -- so ``/`` or ``:``
    (``habit:<name>``) are allowed; a line break or another control character is not.
    """
    if not isinstance(value, str) or not value.strip():
        return f"must be a non-empty string, got {_show(value)}"
    clean = value.strip()
    if len(clean) > AGENT_MAX:
        return f"must be at most {AGENT_MAX} characters, got {len(clean)}"
    if not clean.isprintable():
        return f"must be one line of printable characters, got {_show(value)}"
    return None


def check_agent(value: Any, *, field: str = "agent", hint: str = "pass --agent NAME") -> str:
    """The agent name ``value`` without surrounding whitespace; ``InvalidInput``
    naming ``field`` when it is not one (``agent_problem``)."""
    reason = agent_problem(value)
    if reason is not None:
        from ouro.errors import InvalidInput

        raise InvalidInput(f"{field}: {reason} ({AGENT_RULE})", hint=hint)
    return str(value).strip()


def problem(data: Any) -> tuple[str, str] | None:
    """None when ``data`` is a valid bundle.json document, else (field, reason)."""
    if not isinstance(data, dict):
        return "(document)", "must be a JSON object"
    if "layoutVersion" not in data:
        return "layoutVersion", "is missing"
    bad = _version_problem("layoutVersion", data["layoutVersion"], LAYOUT_VERSION, "a layout")
    if bad is not None:
        return bad
    if "agent" not in data:
        return "agent", "is missing"
    agent = agent_problem(data["agent"])
    if agent is not None:
        return "agent", agent
    if "schemaVersion" in data:
        bad = _version_problem("schemaVersion", data["schemaVersion"], SCHEMA_VERSION, "a version")
        if bad is not None:
            return bad
    for key in _STRINGS:
        if key in data and not isinstance(data[key], str):
            return key, f"must be a string, got {_show(data[key])}"
    return None


def _version_problem(field: str, value: Any, newest: int, what: str) -> tuple[str, str] | None:
    """Why ``value`` is not a version number this ouro reads (1 .. ``newest``), or None."""
    if not _is_int(value):
        return field, f"must be an integer, got {_show(value)}"
    if value > newest:
        return field, f"is {value}: made by a newer ouro"
    if value < 1:
        return field, f"is {value}: not {what} any ouro wrote (1 .. {newest})"
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


def repaired(
    data: Any, *, agent: str | None, default_agent: str
) -> tuple[dict[str, Any], list[str]]:
    """``data`` (the parsed bundle.json, or None when it is not JSON) with every field
    ``problem`` refuses set again, and the names of the fields it set.

    Only what is missing or invalid changes; valid fields and every other key stay
    as they are. ``agent`` names the agent when bundle.json names none (or an
    invalid one), else ``default_agent``; an agent bundle.json names validly is
    kept, and ``agent`` naming another one is refused (renaming is not a repair).
    A layout made by a newer ouro is never repaired (``newer_layout``: the caller
    refuses it first). ``layoutVersion`` is set to ``LAYOUT_VERSION``: the caller
    refuses a bundle in the legacy layout, which ``ouro migrate`` moves.
    """
    doc: dict[str, Any] = dict(data) if isinstance(data, dict) else {}
    changed: list[str] = []
    if _version_problem("layoutVersion", doc.get("layoutVersion"), LAYOUT_VERSION, "a layout"):
        doc["layoutVersion"] = LAYOUT_VERSION
        changed.append("layoutVersion")
    if agent_problem(doc.get("agent")) is None:
        if agent is not None and check_agent(agent) != doc["agent"].strip():
            from ouro.errors import InvalidInput

            raise InvalidInput(
                f"--agent: bundle.json already names the agent {doc['agent']!r}; "
                "a repair changes only missing or invalid fields",
                hint="leave --agent out, or change the name with 'ouro config set agent NAME'",
            )
    else:
        doc["agent"] = check_agent(agent if agent is not None else default_agent)
        changed.append("agent")
    if "schemaVersion" in doc and _version_problem(
        "schemaVersion", doc["schemaVersion"], SCHEMA_VERSION, "a version"
    ):
        doc["schemaVersion"] = SCHEMA_VERSION
        changed.append("schemaVersion")
    for key in _STRINGS:  # optional: one that is not a string is dropped (unknown), not made up
        if key in doc and not isinstance(doc[key], str):
            del doc[key]
            changed.append(key)
    return doc, changed
