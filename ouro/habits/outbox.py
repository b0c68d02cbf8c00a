"""The main line's queue of surfaced messages, read side (light: the packet reads it).

``arc/outbox/pending.jsonl``: one line per message a habit surfaced with no
sense for its channel (``ouro.habits.surface`` appends them);
``arc/outbox/acks.jsonl``: one line per acknowledgement (``ouro surface ack``).
A message waits -- in the main packet and the workbench -- until acknowledged.

Also the runs that left no receipt (``interrupted_runs``): a session folder
whose runner is gone and whose run has no receipt. Pure; standard library and
``ouro.store`` only, so ``ouro orient`` imports no pydantic.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from ouro.bundle import Bundle
from ouro.store import jsonio
from ouro.store.bounded import file_bytes
from ouro.store.jsonl import JsonlRead, read_jsonl

OUTBOX = "arc/outbox/pending.jsonl"
ACKS = "arc/outbox/acks.jsonl"
RECEIPTS_DIR = "arc/flight-recorder/habit-receipts"


class Queued(NamedTuple):
    """Surfaced messages waiting for the main line, and what could not be read."""

    messages: list[dict[str, Any]]
    problems: list[str]


def queued(bundle: Bundle, *, include_acked: bool = False) -> Queued:
    """Messages queued to the main line, oldest first, without the acknowledged
    ones unless asked."""
    pending = read_jsonl(bundle.root / OUTBOX)
    acks = read_jsonl(bundle.root / ACKS)
    acked = {str(r.get("id")): r for r in acks.records}
    problems = [f"{OUTBOX}: {p}" for p in _problems(pending)]
    problems += [f"{ACKS}: {p}" for p in _problems(acks)]
    out = []
    for record in pending.records:
        ident = record.get("id")
        if not isinstance(ident, str):
            continue
        ack = acked.get(ident)
        if ack is not None and not include_acked:
            continue
        shown = {**record, "locator": f"{OUTBOX}#{ident}"}
        if ack is not None:
            shown["ackedAt"] = ack.get("ackedAt")
        out.append(shown)
    return Queued(out, problems)


def _problems(read: JsonlRead) -> list[str]:
    return [f"line {b.line_no}: {b.reason}" for b in read.bad]


def interrupted_runs(bundle: Bundle) -> list[dict[str, Any]]:
    """Runs whose runner stopped before writing a receipt (killed, machine down):
    a session folder is left, its runner's pid is gone and no receipt names its
    run. This machine's sessions only (``state/`` is machine-local)."""
    base = bundle.state / "sessions"
    if not base.is_dir():
        return []
    out = []
    for folder in sorted(base.iterdir()):
        try:
            meta = jsonio.loads(file_bytes(folder / "session.json"))
        except (OSError, jsonio.JSONDecodeError):
            continue
        if not isinstance(meta, dict) or not isinstance(meta.get("runId"), str):
            continue
        receipt = bundle.root / RECEIPTS_DIR / f"{meta['runId']}.json"
        if receipt.exists() or _alive(meta.get("pid")):
            continue
        out.append(
            {
                "habit": meta.get("habitName"),
                "runId": meta["runId"],
                "sessionId": folder.name,
                "startedAt": meta.get("startedAt"),
                "locator": f"state/sessions/{folder.name}/",
            }
        )
    return out


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True
