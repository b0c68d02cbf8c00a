"""How much text each host takes from one hook at once: one row per (host, event).

A host that gets more than its cap from a hook does not fail: it cuts the text
and shows a preview (Claude Code), or spills the rest to a file and shows a
head and tail (Codex), and the model is none the wiser. So ouro fits every
injection to the cap of the host *and event* it goes to, counted the way that
host counts (``unit``), and when something has to go it drops the
lowest-priority parts first and says so in one line (``drop_line``).

- ``BUDGETS[(host, event)] = Budget(limit, unit, source)``: ``unit`` is
  ``"chars"`` (counted here as UTF-16 code units, which is what a JavaScript
  host's ``text.length`` counts and never less than Python's ``len``) or
  ``"tokens"`` (counted here as ``ceil(UTF-8 bytes / 3)``: more than any host
  estimate of 4 bytes per token, so a text that fits here fits there).
  ``source`` says where the number comes from (docs/hooks.md cites it).
- Events missing from the table inject nothing (``cap`` returns None); a host
  module may still name its own events here when it adds a row.
- ``cost(text, budget)`` is the text's size in the budget's unit;
  ``fits(text, budget)`` compares it with the limit.

Host adapters add their rows below (one line each, keep them grouped by host);
the table in docs/hooks.md is checked against this one (tests/test_budget.py).
"""

from __future__ import annotations

TYPE_CHECKING = False  # no typing at run time: the CLI and hooks start without it
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from ouro.tuples import NamedTuple


class Budget(NamedTuple):
    limit: int
    unit: str  # "chars" | "tokens"
    source: str  # where the host sets it (file, or documentation page)


#: Tokens are counted as UTF-8 bytes divided by this, rounded up.
BYTES_PER_TOKEN = 3

BUDGETS: dict[tuple[str, str], Budget] = {}

# Claude Code 2.1.328: additionalContext over 10,000 characters is saved to a file
# and the model gets "Output too large (…KB). Full output saved to: …" and a 2 KB
# preview. Measured with the real binary (tests/test_host_budgets.py): 10,000
# characters arrive whole, 10,001 do not; 3,997 CJK characters (11,991 bytes)
# arrive whole, so it counts characters, not bytes.
_CLAUDE = "claude 2.1.328, measured: over 10,000 characters → a file and a 2 KB preview"
BUDGETS[("claude", "SessionStart")] = Budget(10_000, "chars", _CLAUDE)
BUDGETS[("claude", "UserPromptSubmit")] = Budget(10_000, "chars", _CLAUDE)

# Codex 0.169.0: codex-rs/hooks/src/output_spill.rs HOOK_OUTPUT_TOKEN_LIMIT = 2_500,
# counted by codex-rs/utils/output-truncation approx_token_count (ceil(bytes / 4)).
_CODEX = "codex-rs/hooks/src/output_spill.rs: HOOK_OUTPUT_TOKEN_LIMIT = 2_500 (bytes / 4)"
BUDGETS[("codex", "SessionStart")] = Budget(2_500, "tokens", _CODEX)
BUDGETS[("codex", "UserPromptSubmit")] = Budget(2_500, "tokens", _CODEX)

# Gemini CLI 0.61.0, Pi 0.73.1 and OpenCode 1.18.33 set no cap on what a hook or an
# extension injects (their sections in docs/hooks.md cite the code), so their rows
# are ouro's own limit: the 2,500-character packet plus the guide.
_GEMINI = "no host cap: packages/core/src/hooks/hookRunner.ts keeps stdout whole; ouro's own limit"
BUDGETS[("gemini", "SessionStart")] = Budget(4_000, "chars", _GEMINI)
BUDGETS[("gemini", "UserPromptSubmit")] = Budget(4_000, "chars", _GEMINI)
_PI = "no host cap: dist/core/extensions/runner.js emitBeforeAgentStart passes it whole; ouro's own limit"
BUDGETS[("pi", "SessionStart")] = Budget(4_000, "chars", _PI)
BUDGETS[("pi", "UserPromptSubmit")] = Budget(4_000, "chars", _PI)
_OPENCODE = "no host cap: packages/opencode/src/session/prompt.ts saves a pushed part whole; ouro's own limit"
BUDGETS[("opencode", "SessionStart")] = Budget(4_000, "chars", _OPENCODE)
BUDGETS[("opencode", "UserPromptSubmit")] = Budget(4_000, "chars", _OPENCODE)


def cap(host: str, event: str) -> Budget | None:
    """The cap for ``event``'s injected text on ``host`` (None: the event injects nothing)."""
    return BUDGETS.get((host, event))


def cost(text: str, budget: Budget) -> int:
    """``text``'s size as ``budget`` counts it (see the module docstring)."""
    if budget.unit == "tokens":
        return -(-len(text.encode("utf-8")) // BYTES_PER_TOKEN)
    return len(text.encode("utf-16-le")) // 2


def fits(text: str, budget: Budget) -> bool:
    return cost(text, budget) <= budget.limit


def describe(budget: Budget) -> str:
    """``10,000 characters`` / ``2,500 tokens``."""
    return f"{budget.limit:,} {'characters' if budget.unit == 'chars' else 'tokens'}"


def drop_line(dropped: list[str], host_title: str, budget: Budget) -> str:
    """The one line an injection ends with when the cap made it leave parts out."""
    guide = "the operating guide" in dropped
    return (
        f"[ouro: to fit {host_title}'s {describe(budget)} per hook, left out "
        f"{' and '.join(dropped)}; 'ouro orient' (MCP tool 'orient') shows the whole packet"
        + ("; 'ouro guide' shows the guide" if guide else "")
        + "]"
    )


def for_host(name: str, event: str, context_limit: int) -> Budget:
    """The row for ``(name, event)``, or ouro's own limit for a host without one."""
    return BUDGETS.get((name, event)) or Budget(context_limit, "chars", "ouro's own limit")


CUT_NOTE = "[ouro: cut to fit the host's cap; 'ouro orient' (MCP tool 'orient') shows the rest]\n"


def cut(text: str, budget: Budget) -> str:
    """``text`` cut at a line break to fit ``budget``, ending with ``CUT_NOTE`` (the
    last resort: the packet builder drops whole parts first)."""
    if fits(text, budget):
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # the longest prefix that fits with the note
        mid = (lo + hi + 1) // 2
        if fits(text[:mid] + "\n" + CUT_NOTE, budget):
            lo = mid
        else:
            hi = mid - 1
    head = text[:lo]
    head = head[: head.rindex("\n") + 1] if "\n" in head else head
    out = (head if head.endswith("\n") or not head else head + "\n") + CUT_NOTE
    return out if fits(out, budget) else ""
