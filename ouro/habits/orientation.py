"""The habits section of the main line's orientation packet.

Pure: reads ``arc/outbox/pending.jsonl`` + ``acks.jsonl`` (``ouro.habits.surface``),
``state/habits/<name>.json`` and the receipts they point at; writes nothing.

- "Habits: surfaced to you": each message a habit surfaced with no sense for
  its channel, until acknowledged (``ouro surface ack ID``): who (the habit),
  why (the reason), to whom, and the text -- written by this agent's own habit
  session, so it is shown, redacted like every packet line;
- "Habits: last runs": one line per habit that ran: outcome, when, what it
  produced, the receipt; and a run whose runner was killed before its receipt
  was written, said as such (``ouro.habits.session.interrupted_runs``). A habit's private lane never reaches the packet any
  other way.
"""

from __future__ import annotations

from ouro.bundle import Bundle
from ouro.errors import CorruptFile, NotFound
from ouro.habits.definition import definition_files
from ouro.habits.receipt import read_receipt
from ouro.habits.session import interrupted_runs
from ouro.habits.state import read_state, state_locator
from ouro.habits.surface import OUTBOX, queued
from ouro.orient_types import OrientItem

SURFACED = "Habits: surfaced to you"
RUNS = "Habits: last runs"
TEXT_SHOWN = 300


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
    for path in definition_files(bundle):
        read = read_state(bundle, path.stem)
        if read.problem:
            items.append(
                OrientItem(RUNS, 2, f"habit {path.stem}: last run unknown ({read.problem})")
            )
            continue
        state = read.state
        if state is None or state.last_run_at is None:
            continue
        items.append(
            OrientItem(
                RUNS,
                2,
                f"habit {path.stem}: {state.last_outcome} at {state.last_run_at} "
                f"({state.last_trigger}); {_produced(bundle, state.last_receipt_locator)}",
                state.last_receipt_locator or state_locator(path.stem),
                "ouro habits list",
            )
        )
    return items


def _produced(bundle: Bundle, locator: str | None) -> str:
    """What the run produced, from its receipt (unknown when it cannot be read)."""
    if not locator:
        return "produced: unknown (no receipt named)"
    try:
        receipt = read_receipt(bundle, locator)
    except (CorruptFile, NotFound) as exc:
        return f"produced: unknown ({exc.message})"
    kinds: dict[str, int] = {}
    for ref in receipt.produced_refs:
        if ref.kind != "none":
            kinds[ref.kind] = kinds.get(ref.kind, 0) + 1
    refused = len(receipt.tool_policy.refused_calls)
    parts = [f"{n} {kind}" for kind, n in sorted(kinds.items())] or ["nothing"]
    if refused:
        parts.append(f"{refused} tool call(s) refused")
    return "produced: " + ", ".join(parts)
