"""The operating guide: when an agent writes to Arc and Desk, in under 1,200 characters.

One short, versioned protocol text teaches the verbs at the moments they
matter: record the ask, the next safe action, a blocker, a claim with its
check, a diary entry, an obligation, a handoff before stopping, and how to
confirm after a wipe. It is delivered four ways, all from ``render()``:

- the MCP server's ``instructions`` (``ouro.mcp``), naming MCP tools;
- once per host session in the SessionStart injection (``ouro.hooks``),
  budgeted together with the orientation packet;
- ``ouro guide`` for people;
- optionally a block in the project's ``CLAUDE.md`` / ``AGENTS.md`` between
  ``BEGIN_MARKER`` and ``END_MARKER`` (``write_block`` / ``remove_block``:
  idempotent, removable, everything outside the markers untouched).

Each verb is named by its MCP tool and the CLI command the naming rule gives
(``claim_add`` is ``ouro claim add``); a test checks both against the registry.
``GUIDE_VERSION`` changes whenever the protocol (not just wording) changes.
"""

from __future__ import annotations

import re
from pathlib import Path

from ouro.errors import CorruptFile

GUIDE_VERSION = 2
MAX_CHARS = 1200
BEGIN_MARKER = "<!-- ouro:guide begin (managed by 'ouro guide'; edits here are replaced) -->"
END_MARKER = "<!-- ouro:guide end -->"
_BLOCK = re.compile(r"<!-- ouro:guide begin[^\n]*-->\n.*?<!-- ouro:guide end -->\n?", re.DOTALL)

#: (moment, what to do with one ``{}`` per tool, the MCP tool names). The CLI command
#: is the name with ``_`` read as a space (the registry's naming rule; a test checks
#: each name against ``ouro.registry``), except the seed's record tools in ``SEED_COMMANDS``,
#: so rendering never imports the registry: the SessionStart hook pays only for this module.
STEPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("New ask or new direction", "record the ask {}", ("arc_ask",)),
    ("Before acting", "record the next safe action and what to stop before {}", ("arc_next",)),
    ("You cannot go on", "record a blocker {}; clear it when solved", ("arc_blocker",)),
    (
        "You say something is done",
        "record a claim with its check command {}, then run it {}",
        ("claim_add", "claim_verify"),
    ),
    ("You learn a fact", "write a diary entry {}", ("diary_write",)),
    (
        "You owe someone",
        "add an obligation {}; close it when done {}",
        ("obligation_add", "obligation_close"),
    ),
    ("Before you stop", "record a handoff {}", ("arc_handoff",)),
    (
        "Session start or after a wipe",
        "read the packet {}, confirm the ask {} before acting",
        ("orient", "arc_confirm"),
    ),
    (
        "Need more than the packet",
        "consult the diary {}, search facts by entity {}, consult notes {}; "
        "search all Desk work and record {}",
        ("consult_diary", "search_facts", "consult_notes", "desk_search"),
    ),
)
#: The seed's record tools keep the seed's names; their CLI commands are not the
#: naming rule's (the registry declares the same exceptions; a test checks both).
SEED_COMMANDS = {
    "consult_diary": "ouro diary consult",
    "search_facts": "ouro facts search",
    "consult_notes": "ouro notes consult",
}


def command(name: str) -> str:
    """The CLI command of MCP tool ``name`` (``claim_add`` -> ``ouro claim add``)."""
    return SEED_COMMANDS.get(name) or "ouro " + name.replace("_", " ")


def render(*, mcp: bool = False, both: bool = True) -> str:
    """The guide text. ``mcp``: name MCP tools only; else ``both`` names tool and command."""

    def verb(name: str) -> str:
        if mcp:
            return f"({name})"
        if both:
            return f"({name} | {command(name)})"
        return f"({command(name)})"

    lines = [
        f"ouro operating guide v{GUIDE_VERSION}: keep Arc current as you work, not at the end.",
    ]
    for moment, what, names in STEPS:
        lines.append(f"- {moment}: " + what.format(*(verb(name) for name in names)) + ".")
    lines.append("Tool errors name the next call.")
    return "\n".join(lines) + "\n"


def block() -> str:
    """The guide as a marked block for CLAUDE.md / AGENTS.md."""
    return f"{BEGIN_MARKER}\n{render()}{END_MARKER}\n"


def write_block(path: Path) -> bool:
    """Put the guide block into ``path`` (replacing an older block); True if the file changed."""
    from ouro.store.atomic import atomic_write_text

    before = _read(path)
    text = before or ""
    if _BLOCK.search(text):
        after = _BLOCK.sub(lambda _m: block(), text, count=1)
    else:
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        after = text + sep + block()
    if after == before:
        return False
    atomic_write_text(path, after)
    return True


def remove_block(path: Path) -> bool:
    """Take the guide block out of ``path``; True if the file changed."""
    from ouro.store.atomic import atomic_write_text

    before = _read(path)
    match = _BLOCK.search(before or "")
    if before is None or match is None:
        return False
    head, tail = before[: match.start()], before[match.end() :]
    if head.endswith("\n\n") or not head:
        tail = tail.lstrip("\n")  # the blank line write_block put before the block
    after = head + tail
    atomic_write_text(path, after.rstrip("\n") + "\n" if after.strip() else "")
    return True


def _read(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise CorruptFile(
            f"{path}: cannot read it ({exc})", hint="fix the file; ouro left it untouched"
        ) from None
    if text.count("<!-- ouro:guide begin") > 1:
        raise CorruptFile(
            f"{path}: holds more than one ouro guide block",
            hint="remove the extra blocks by hand; ouro left the file untouched",
        )
    return text
