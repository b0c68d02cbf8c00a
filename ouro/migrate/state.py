"""The migration's own journal under ``state/migration/``.

Files:

- ``current.json``: the unfinished run (run id, phase, backup folder, journal
  mode). Absent when no run is in progress. Replaced atomically at every phase
  change, so a kill leaves either the old phase or the new one.
- ``run-<id>/plan.json``: the plan of that run (written once, before any
  change); ``run-<id>/facts.staged.jsonl``: the fact records it appends
  (deleted when the run is done); ``run-<id>/run.json``: the final state. A
  ``run-<id>/`` without ``run.json`` while no run is current was left by a run
  killed before it recorded itself; the next run removes it.

Phases, in order: planned -> backed_up -> applied -> verified -> removed -> done.
A run found in ``planned`` has changed nothing but its own backup folder, so it
is discarded and planned again; from ``backed_up`` on, the persisted plan
drives every step and each step is idempotent.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ouro.errors import CorruptFile
from ouro.migrate.plan import Plan
from ouro.migrate.tidy import clear_temps, write_atomic
from ouro.store import jsonio
from ouro.store.atomic import dump_json
from ouro.store.bounded import file_bytes

PHASES = ("planned", "backed_up", "applied", "verified", "removed", "done")


@dataclass
class RunState:
    run_id: str
    phase: str
    started_at: str
    backup: str
    journal_mode: str

    def to_json(self) -> dict[str, Any]:
        return {
            "schemaVersion": 1,
            "runId": self.run_id,
            "phase": self.phase,
            "startedAt": self.started_at,
            "backup": self.backup,
            "journalMode": self.journal_mode,
        }

    def reached(self, phase: str) -> bool:
        return PHASES.index(self.phase) >= PHASES.index(phase)


class RunFiles:
    def __init__(self, root: Path, state_dir: str) -> None:
        self.root = root
        self.dir = root / state_dir
        self.current = self.dir / "current.json"

    def run_dir(self, run_id: str) -> Path:
        return self.dir / f"run-{run_id}"

    def load(self) -> RunState | None:
        try:
            data = jsonio.loads(file_bytes(self.current))
        except FileNotFoundError:
            return None
        except jsonio.JSONDecodeError as exc:
            raise CorruptFile(
                f"{self.current}: not valid JSON ({exc})",
                hint="an interrupted migration left it; restore it from the backup or git",
            ) from None
        return RunState(
            run_id=data["runId"],
            phase=data["phase"],
            started_at=data["startedAt"],
            backup=data["backup"],
            journal_mode=data["journalMode"],
        )

    def save(self, state: RunState) -> None:
        write_atomic(self.current, dump_json(state.to_json()))

    def write_plan(self, plan: Plan, staged: bytes) -> None:
        folder = self.run_dir(plan.run_id)
        write_atomic(folder / "facts.staged.jsonl", staged)
        write_atomic(folder / "plan.json", orjson.dumps(plan.to_json()))

    def read_plan(self, run_id: str) -> Plan:
        path = self.run_dir(run_id) / "plan.json"
        return Plan.from_json(jsonio.loads(file_bytes(path)))

    def staged_path(self, run_id: str) -> Path:
        return self.run_dir(run_id) / "facts.staged.jsonl"

    def clear_orphans(self) -> list[Path]:
        """Remove run folders no run will ever read: a run killed after writing its
        plan but before ``current.json`` named it. Call with no run in progress,
        under the migration lock; finished runs (with ``run.json``) are kept."""
        removed: list[Path] = []
        if not self.dir.is_dir():
            return removed
        for folder in sorted(self.dir.glob("run-*")):
            if folder.is_dir() and not folder.is_symlink() and not (folder / "run.json").exists():
                shutil.rmtree(folder)
                removed.append(folder)
        clear_temps(self.current)
        return removed

    def finish(self, state: RunState, summary: dict[str, Any]) -> None:
        state.phase = "done"
        write_atomic(
            self.run_dir(state.run_id) / "run.json", dump_json({**state.to_json(), **summary})
        )
        self.staged_path(state.run_id).unlink(missing_ok=True)
        self.current.unlink(missing_ok=True)
