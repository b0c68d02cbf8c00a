"""Runtime state of each habit: ``state/habits/<name>.json``.

One small JSON document per habit, replaced atomically by the run that owns
the habit's lock::

    {"schemaVersion": 1, "habitName": "triage", "lastRunAt": "…Z",
     "lastRunId": "hr-…", "lastTrigger": "cron", "lastOutcome": "no_change",
     "lastReceiptLocator": "arc/flight-recorder/habit-receipts/hr-….json",
     "nextRunAt": "…Z", "consecutiveFailures": 0, "updatedAt": "…Z"}

Reading is pure and tolerant: a missing file is "never ran"; a malformed one
is reported (``StateRead.problem``) and the habit's last run is then taken from
its newest receipt. Before a run replaces a malformed state file, a copy is
kept next to it as ``<name>.json.corrupt-<stamp>`` so nothing is lost.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from ouro.bundle import Bundle
from ouro.errors import InvalidInput
from ouro.models.base import Record
from ouro.models.clock import utc_now
from ouro.store import jsonio
from ouro.store.atomic import atomic_write_bytes, atomic_write_json
from ouro.store.bounded import file_bytes

STATE_DIR = "state/habits"


class HabitState(Record):
    habit_name: str
    last_run_at: str | None = None
    last_run_id: str | None = None
    last_trigger: str | None = None
    last_outcome: str | None = None
    last_receipt_locator: str | None = None
    next_run_at: str | None = None
    consecutive_failures: int = Field(default=0, ge=0)
    updated_at: str | None = None


@dataclass(frozen=True)
class StateRead:
    state: HabitState | None  # None: never ran, or unreadable (see problem)
    problem: str | None = None


def state_locator(name: str) -> str:
    return f"{STATE_DIR}/{name}.json"


def state_path(bundle: Bundle, name: str) -> Path:
    return bundle.root / STATE_DIR / f"{name}.json"


def read_state(bundle: Bundle, name: str) -> StateRead:
    path = state_path(bundle, name)
    try:
        data = jsonio.loads(file_bytes(path))
    except FileNotFoundError:
        return StateRead(None)
    except (OSError, jsonio.JSONDecodeError) as exc:
        return StateRead(None, f"{state_locator(name)}: unreadable ({exc})")
    try:
        return StateRead(HabitState.from_json(data, source=state_locator(name)))
    except InvalidInput as exc:
        return StateRead(None, exc.message)


def write_state(bundle: Bundle, state: HabitState) -> None:
    """Replace the state file; the caller holds the habit's lock."""
    path = state_path(bundle, state.habit_name)
    if read_state(bundle, state.habit_name).problem and path.exists():
        stamp = utc_now().strftime("%Y%m%dT%H%M%S%fZ")
        try:
            kept = file_bytes(path)
        except OSError:  # a FIFO, past DOC_LIMIT: moved aside as it is, never read
            os.replace(path, path.with_name(f"{path.name}.corrupt-{stamp}"))
        else:
            # through the store, like every write: confined to the bundle, all or nothing
            atomic_write_bytes(path.with_name(f"{path.name}.corrupt-{stamp}"), kept)
    # nulls stay in the file: "no next run" is stated, not left out
    atomic_write_json(path, state.model_dump(mode="json", by_alias=True))
