"""The habits section of the main line's orientation packet.

Pure: reads ``arc/outbox/pending.jsonl`` + ``acks.jsonl``, the session
folders left by interrupted runs (``ouro.habits.outbox``),
``state/habits/<name>.json`` and the receipts they point at; writes nothing.
Light on purpose (JSON read with ``ouro.store.jsonio``, no pydantic): every
``ouro orient`` and every hook runs it.

- "Habits: surfaced to you": each message a habit surfaced with no sense for
  its channel, until acknowledged (``ouro surface ack ID``): who (the habit),
  why (the reason), to whom, and the text -- written by this agent's own habit
  session, so it is shown, redacted like every packet line;
- "Habits: last runs": one line per habit that ran: outcome, when, what it
  produced, the receipt; and a run whose runner was killed before its receipt
  was written, said as such. A habit's private lane never reaches the packet
  any other way.
"""

from __future__ import annotations

from typing import Any

from ouro.bundle import Bundle
from ouro.habits.outbox import OUTBOX, interrupted_runs, queued
from ouro.orient_types import OrientItem
from ouro.store import jsonio
from ouro.store.bounded import file_bytes

SURFACED = "Habits: surfaced to you"
RUNS = "Habits: last runs"
TEXT_SHOWN = 300
STATE_DIR = "state/habits"


def habit_items(bundle: Bundle) -> list[OrientItem]:
    items: list[OrientItem] = []
    waiting = queued(bundle)
    for m in waiting.messages:
        text = str(m.get("text", ""))
        if len(text) > TEXT_SHOWN:
            text = text[: TEXT_SHOWN - 1] + "…"
        items.append(
            OrientItem(
                SURFACED,
                0,
                f"[{m['id']}] habit {m.get('habitName') or '?'} ({m.get('reason')}) to "
                f"{m.get('recipient')}: {text} -- ack: `ouro surface ack {m['id']}`",
                str(m["locator"]),
                "ouro surface list",
            )
        )
    for problem in waiting.problems:
        items.append(OrientItem(SURFACED, 0, f"surfaced messages: unknown ({problem})", OUTBOX))
    for run in interrupted_runs(bundle):
        items.append(
            OrientItem(
                RUNS,
                1,
                f"habit {run['habit']}: run {run['runId']} (started {run['startedAt']}) left no "
                "receipt: its runner stopped before it finished; its scratch is kept",
                run["locator"],
                "ouro habits list",
            )
        )
    for name in _habit_names(bundle):
        items.extend(_last_run(bundle, name))
    return items


def _habit_names(bundle: Bundle) -> list[str]:
    if not bundle.habits.is_dir():
        return []
    return sorted(
        {p.stem for p in bundle.habits.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file()}
    )


def _read(bundle: Bundle, locator: str) -> tuple[Any, str | None]:
    try:
        return jsonio.loads(file_bytes(bundle.root / locator)), None
    except FileNotFoundError:
        return None, None
    except (OSError, jsonio.JSONDecodeError) as exc:
        return None, f"{locator}: unreadable ({exc})"


def _last_run(bundle: Bundle, name: str) -> list[OrientItem]:
    locator = f"{STATE_DIR}/{name}.json"
    state, problem = _read(bundle, locator)
    if problem is not None or (state is not None and not isinstance(state, dict)):
        reason = problem or f"{locator}: not an object"
        return [OrientItem(RUNS, 2, f"habit {name}: last run unknown ({reason})", locator)]
    if state is None or not state.get("lastRunAt"):
        return []  # never ran
    receipt_locator = state.get("lastReceiptLocator")
    line = (
        f"habit {name}: {state.get('lastOutcome')} at {state['lastRunAt']} "
        f"({state.get('lastTrigger')}); {_produced(bundle, receipt_locator)}"
    )
    return [OrientItem(RUNS, 2, line, receipt_locator or locator, "ouro habits list")]


def _produced(bundle: Bundle, locator: object) -> str:
    """What the run produced, from its receipt (unknown when it cannot be read)."""
    if not isinstance(locator, str) or not locator.startswith("arc/"):
        return "produced: unknown (no receipt named)"
    receipt, problem = _read(bundle, locator)
    if not isinstance(receipt, dict):
        return f"produced: unknown ({problem or f'{locator} is missing'})"
    kinds: dict[str, int] = {}
    for ref in receipt.get("producedRefs") or []:
        kind = ref.get("kind") if isinstance(ref, dict) else None
        if isinstance(kind, str) and kind != "none":
            kinds[kind] = kinds.get(kind, 0) + 1
    refused = len((receipt.get("toolPolicy") or {}).get("refusedCalls") or [])
    parts = [f"{n} {kind}" for kind, n in sorted(kinds.items())] or ["nothing"]
    if refused:
        parts.append(f"{refused} tool call(s) refused")
    return "produced: " + ", ".join(parts)
