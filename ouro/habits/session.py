"""Private habit sessions: ``state/sessions/<sessionId>/`` (throwaway scratch).

A run creates its session folder before the body starts and deletes it after
the receipt is written (unless ``--keep-session``). Nothing in it is needed to
reconstruct the run: the receipt and ``state/habits/<name>.json`` are.

Files in a session folder:

- ``session.json``: run id, habit, trigger, start time;
- ``orient.md`` / ``orient.json``: the orientation packet the body starts from
  (``OURO_ORIENT_FILE`` points at ``orient.md``);
- ``envelope.json``: the permission envelope (read by ``ouro surface``);
- ``policy.json``: the tool policy with the reason each denied tool is denied;
- ``stdout.log`` / ``stderr.log``: the body's output;
- ``tool-refusals.jsonl`` / ``surface-attempts.jsonl``: appended by ouro
  commands the body runs; folded into the receipt;
- for an agent (``ouro.habits.agents``): ``prompt.md`` and the host's MCP
  configuration (``mcp.json``, ``.gemini/settings.json`` or ``opencode.json``).

A runner killed before its receipt leaves its session folder behind;
``ouro.habits.outbox.interrupted_runs`` finds those (runner pid gone, no receipt), so the run is
reported as missing its receipt rather than silently absent.

Ids: run ``hr-<ulid>``, session ``hs-<same ulid>`` (lowercase letters, digits
and ``-`` only, so both are safe as file names and locators).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.errors import OuroError
from ouro.habits.policy import ENV_DENIED, ENV_GRANTED, session_dir
from ouro.habits.receipt import PermissionEnvelope, ToolPolicy
from ouro.lane import ENV_HABIT, ENV_SESSION
from ouro.models.ids import new_id
from ouro.orient_types import Orient
from ouro.store import jsonio
from ouro.store.atomic import atomic_write_json, atomic_write_text
from ouro.store.bounded import file_bytes
from ouro.store.guard import confine

ENV_ORIENT = "OURO_ORIENT_FILE"
ENV_SESSION_DIR = "OURO_SESSION_DIR"
ENV_RUN = "OURO_RUN_ID"
ENV_TRIGGER = "OURO_TRIGGER"
ENVELOPE_FILE = "envelope.json"
SURFACE_FILE = "surface-attempts.jsonl"


@dataclass(frozen=True)
class Session:
    run_id: str
    session_id: str
    folder: Path
    locator: str
    #: non-fatal problems met while opening the session (they go in the receipt)
    notes: list[str] = field(default_factory=list)

    @property
    def orient_file(self) -> Path:
        return self.folder / "orient.md"


def new_run_ids() -> tuple[str, str]:
    run_id = new_id("hr")
    return run_id, "hs-" + run_id[3:]


def open_session(
    bundle: Bundle,
    *,
    habit_name: str,
    trigger: str,
    started_at: str,
    envelope: PermissionEnvelope,
    policy: ToolPolicy,
    reasons: Mapping[str, str],
    orient: Orient,
) -> Session:
    run_id, session_id = new_run_ids()
    folder = session_dir(bundle, session_id)
    assert folder is not None  # new_run_ids makes well-formed ids
    confine(folder, bundle.root)  # before the folder is created, as every write
    folder.mkdir(parents=True)
    session = Session(run_id, session_id, folder, f"state/sessions/{session_id}/")
    atomic_write_json(
        folder / "session.json",
        {
            "schemaVersion": 1,
            "runId": run_id,
            "sessionId": session_id,
            "habitName": habit_name,
            "trigger": trigger,
            "startedAt": started_at,
            "pid": os.getpid(),
        },
    )
    try:
        packet = orient(bundle)
    except OuroError as exc:
        # the body still runs; it is told orientation is missing, and so is the receipt
        session.notes.append(f"orientation packet unavailable: {exc.message}")
        atomic_write_text(session.orient_file, f"orientation unavailable: {exc.message}\n")
    else:
        atomic_write_text(session.orient_file, packet.text)
        atomic_write_json(folder / "orient.json", packet.to_json())
    atomic_write_json(folder / ENVELOPE_FILE, envelope.model_dump(mode="json", by_alias=True))
    atomic_write_json(
        folder / "policy.json",
        {**policy.model_dump(mode="json", by_alias=True), "reasons": dict(reasons)},
    )
    return session


def body_env(
    bundle: Bundle, session: Session, habit_name: str, trigger: str, policy: ToolPolicy
) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "OURO_BUNDLE": str(bundle.root),
            ENV_SESSION: session.session_id,
            ENV_SESSION_DIR: str(session.folder),
            ENV_RUN: session.run_id,
            ENV_HABIT: habit_name,
            ENV_TRIGGER: trigger,
            ENV_ORIENT: str(session.orient_file),
            ENV_GRANTED: ",".join(policy.granted_tools),
            ENV_DENIED: ",".join(policy.denied_tools),
            # the body can call "$OURO_PYTHON -m ouro.cli" and get this very ouro
            "OURO_PYTHON": sys.executable,
        }
    )
    env.pop("OURO_DEBUG", None)
    return env


def current_session(
    bundle: Bundle, env: Mapping[str, str] | None = None
) -> tuple[str, Path] | None:
    """(session id, folder) of the live habit session this process runs in, if any."""
    env = os.environ if env is None else env
    session_id = env.get(ENV_SESSION, "")
    folder = session_dir(bundle, session_id)
    if folder is None or not (folder / ENVELOPE_FILE).is_file():
        return None
    return session_id, folder


def read_session_json(folder: Path, name: str) -> Any:
    """A JSON file of the session, or None when missing/unreadable."""
    try:
        return jsonio.loads(file_bytes(folder / name))
    except (OSError, jsonio.JSONDecodeError):
        return None


def discard(session: Session) -> None:
    shutil.rmtree(session.folder, ignore_errors=False)
