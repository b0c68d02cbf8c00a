"""Text at the edges: what every argument must be before a tool runs.

Contract (``docs/concepts.md``, "Limits"): every text value that reaches ouro
from outside -- CLI arguments (``ouro.cli``), MCP tool arguments and CLI tool
options (both validated by ``ouro.spec`` from the verb's signature), host hook stdin
(``ouro.hooks.common``) -- is UTF-8 text without NUL characters or lone
surrogates (the form invalid bytes in argv take), and no longer than its
field's limit. A value that is not is refused with ``InvalidInput`` naming the
field, before anything is read or written; the message never echoes the bad
characters themselves (they could not be printed or sent back).

Limits are in characters, per field (each verb's ``P(limit=...)``, with these
constants):

- Arc text (an ask, a next action, a blocker, a handoff, a note, a claim, an
  obligation, a check command): 2,000 -- Arc is re-read at every session start;
- a diary fact: 4,000; a surfaced message: 4,000; evidence output: 20,000;
- task, friction and tip bodies, iterations, acceptance text, reflections: 100,000;
- a note body: 1,000,000 (large, but bounded);
- every other string (names, titles, ids, tags, refs, queries): 1,000;
- a list: at most 200 items.

Meaningful Arc text (an ask, a next action, each stop-before item, a handoff,
a blocker, an obligation's what and recipient, a claim) must not be blank
(``require_text``; ``is_blank`` is the one test, used by the readers too).

Files and streams (``--*-file``, ``-`` for stdin, hook stdin, habit files,
``bundle.json``) are bounded while they are read, by ``ouro.store.bounded``:
a ``--*-file`` by its field's limit, hook stdin by ``HOOK_STDIN``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ouro.errors import InvalidInput

TYPE_CHECKING = False
if TYPE_CHECKING:  # cheap to import: no typing at run time
    from typing import Any

SHORT = 1_000
ARC_TEXT = 2_000
FACT_TEXT = 4_000
MESSAGE = 4_000
EVIDENCE_OUTPUT = 20_000
BODY = 100_000
NOTE_BODY = 1_000_000
MAX_ITEMS = 200
#: a host hook's whole stdin JSON (a PostToolUse payload carries the tool's output)
HOOK_STDIN = 8_000_000


def check_text(value: str, field: str, limit: int = SHORT) -> str:
    """``value`` if it is UTF-8 text without NUL within ``limit`` characters."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(
            f"{field}: not valid UTF-8 text (a lone surrogate at character {exc.start + 1}; "
            "this is how invalid bytes in an argument arrive)",
            hint=f"pass {field} as UTF-8 text",
        ) from None
    nul = value.find("\x00")
    if nul != -1:
        raise InvalidInput(
            f"{field}: contains a NUL character (at character {nul + 1})",
            hint=f"remove the NUL from {field}",
        )
    if len(value) > limit:
        raise InvalidInput(
            f"{field}: {len(value):,} characters, more than the limit of {limit:,}",
            hint=f"shorten {field} (limits: docs/concepts.md#limits); "
            "put long material in a note and point at it by locator",
        )
    return value


#: characters that print as nothing but are not whitespace to ``str.strip``
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))


def is_blank(value: object) -> bool:
    """Is ``value`` missing as text: not a string, empty, or only whitespace (and
    zero-width characters)? Arc's meaningful text (an ask, a next action, a
    stop-before item, a handoff, a blocker, an obligation, a claim) must not be;
    readers treat a blank one already in the files as missing."""
    return not isinstance(value, str) or not value.translate(_INVISIBLE).strip()


def require_text(value: str, field: str) -> str:
    """``value`` unless it is blank (``is_blank``): ``InvalidInput`` naming the field."""
    if is_blank(value):
        raise InvalidInput(
            f"{field}: must not be empty or only whitespace",
            hint=f"say it in words: {field} is read back to a fresh agent as it is",
        )
    return value


def check_value(value: Any, field: str, limit: int = SHORT) -> None:
    """Check every string inside ``value`` (lists and objects walked; keys too)."""
    if isinstance(value, str):
        check_text(value, field, limit)
    elif isinstance(value, list | tuple):
        if len(value) > MAX_ITEMS:
            raise InvalidInput(
                f"{field}: {len(value)} items, more than the limit of {MAX_ITEMS}",
                hint=f"pass at most {MAX_ITEMS} values",
            )
        for i, item in enumerate(value):
            check_value(item, f"{field}[{i}]", limit)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            name = check_text(str(key), f"{field} key", SHORT)
            check_value(item, f"{field}.{name}", limit)


def check_argv(argv: list[str]) -> None:
    """Refuse a command-line argument that is not valid UTF-8 text (or holds NUL)."""
    for i, arg in enumerate(argv, start=1):
        check_text(arg, f"command-line argument {i}", limit=max(len(arg), 1))
