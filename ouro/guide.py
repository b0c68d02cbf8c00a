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

Each verb is named by its tool in the registry (``ouro.tools``), with the
CLI command derived from the same entry, so a renamed tool renames the guide.
``GUIDE_VERSION`` changes whenever the protocol (not just wording) changes.
"""

from __future__ import annotations

import re
from pathlib import Path

from ouro.errors import CorruptFile

GUIDE_VERSION = 1
MAX_CHARS = 1200
BEGIN_MARKER = "<!-- ouro:guide begin (managed by 'ouro guide'; edits here are replaced) -->"
END_MARKER = "<!-- ouro:guide end -->"
_BLOCK = re.compile(r"<!-- ouro:guide begin[^\n]*-->\n.*?<!-- ouro:guide end -->\n?", re.DOTALL)

#: (moment, what to do with one ``{}`` per tool, the tools: each a tuple of names in
#: order of preference, the first registered one is named)
STEPS: tuple[tuple[str, str, tuple[tuple[str, ...], ...]], ...] = (
    ("A new request or a change of direction", "record the ask {}", (("arc_ask",),)),
    (
        "Before acting",
        "record the next safe action and what to stop before {}",
        (("arc_next",),),
    ),
    ("You cannot go on", "record a blocker {}; clear it when solved", (("arc_blocker",),)),
    (
        "You say something is done or true",
        "record a claim with its check command {}, then run the check {}",
        (("claim_add",), ("claim_verify",)),
    ),
    ("You learn a lasting fact", "write a diary entry {}", (("diary_write",),)),
    (
        "You owe someone something",
        "add an obligation {}; close it when done {}",
        (("obligation_add",), ("obligation_close",)),
    ),
    ("Before you stop or hand over", "record a handoff {}", (("arc_handoff",),)),
    (
        "Session start, or after a wipe or compaction",
        "read the packet {}, then confirm the ask {} before acting on it",
        (("orient",), ("arc_confirm", "arc_ask")),
    ),
)


def _name(candidates: tuple[str, ...], *, mcp: bool) -> str:
    from ouro.tools import TOOLS

    by_name = {t.name: t for t in TOOLS}
    for name in candidates:
        tool = by_name.get(name)
        if tool is not None:
            return name if mcp else f"ouro {' '.join(tool.cli)}"
    return candidates[0]


def render(*, mcp: bool = False, both: bool = True) -> str:
    """The guide text. ``mcp``: name MCP tools only; else ``both`` names tool and command."""

    def verb(tools: tuple[str, ...]) -> str:
        if mcp:
            return f"({_name(tools, mcp=True)})"
        if both:
            return f"({_name(tools, mcp=True)} | {_name(tools, mcp=False)})"
        return f"({_name(tools, mcp=False)})"

    lines = [
        f"ouro operating guide v{GUIDE_VERSION}: keep Arc current as work happens, not at the end.",
    ]
    for moment, what, tools in STEPS:
        lines.append(f"- {moment}: " + what.format(*(verb(group) for group in tools)) + ".")
    lines.append("Tool errors carry a hint naming the next call.")
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
