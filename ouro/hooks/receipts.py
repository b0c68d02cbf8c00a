"""Per-session host receipt ledger: ``state/hooks/<host>-<session>.receipts.json``.

One small JSON file per host session that reported a declared check::

    {"schemaVersion": 1, "host": "claude", "sessionId": "…",
     "seen": ["toolu_…", …],
     "pending": [{"toolUseId": "toolu_…", "transcript": "/…/<session>.jsonl",
                  "command": "pytest -q", "exitCode": 0, "cwd": "/repo",
                  "outputDigest": "sha256:…", "tail": "…", "createdAt": "…Z",
                  "attempts": 0,
                  "claims": {"cl-…": "<recordedAt of its asserted receipt>" | null},
                  "tasks": {"t-…": "<at of its asserted check event>" | null},
                  "sources": {"claims": {"cl-…": [[ref, hash], …]},
                              "tasks": {"t-…": {ref: hash}}}}]}

``seen`` holds the tool call ids that already gave a receipt in this session
(the newest ``SEEN_LIMIT``), so one call is never counted twice (a replayed
payload records nothing). ``pending`` holds the receipts recorded as
``asserted`` because the host's transcript did not show the call yet; every
later hook event of the session checks them again
(``ouro.hooks.posttool.confirm_pending``). ``null`` means no receipt was written
yet (the report carried no exit status: Codex's comes from its transcript);
``sources`` then keeps the hashes taken when the run was reported.

Runtime machinery under ``state/``: written atomically under
``state/locks/hook-receipts-<host>-<session>.lock``; an unreadable file is set
aside as ``<name>.unreadable`` and a fresh one started.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from ouro.bundle import Bundle
from ouro.hooks.state import STATE_DIR, session_slug
from ouro.store.atomic import atomic_write_json
from ouro.store.lock import FileLock

SCHEMA_VERSION = 1
SEEN_LIMIT = 500
#: how long, and over how many later hook events, a receipt waits for the transcript
PENDING_SECONDS = 24 * 3600
PENDING_ATTEMPTS = 50


def ledger_path(bundle: Bundle, host: str, session_id: str | None) -> Path:
    return bundle.root / STATE_DIR / f"{host}-{session_slug(session_id)}.receipts.json"


def session_lock(bundle: Bundle, host: str, session_id: str | None) -> FileLock:
    name = f"hook-receipts-{host}-{session_slug(session_id)}"
    return FileLock(bundle.lock_path(name), timeout=5.0, purpose="host receipts")


def has_pending(bundle: Bundle, host: str, session_id: str | None) -> bool:
    """Whether this session has receipts waiting for the transcript (cheap: one read)."""
    if not session_id:
        return False
    try:
        data = orjson.loads(ledger_path(bundle, host, session_id).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return False  # none, or unreadable (the next receipt sets it aside)
    return isinstance(data, dict) and bool(data.get("pending"))


def load(path: Path) -> tuple[dict[str, Any], str | None]:
    """(the ledger, a warning when an unreadable one was set aside)."""
    try:
        data = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return {"schemaVersion": SCHEMA_VERSION, "seen": [], "pending": []}, None
    except (OSError, orjson.JSONDecodeError) as exc:
        return _fresh(path, str(exc))
    if (
        not isinstance(data, dict)
        or data.get("schemaVersion") != SCHEMA_VERSION
        or not isinstance(data.get("seen"), list)
        or not isinstance(data.get("pending"), list)
    ):
        return _fresh(path, f"not a version-{SCHEMA_VERSION} receipts ledger")
    return data, None


def _fresh(path: Path, why: str) -> tuple[dict[str, Any], str]:
    target = path.with_name(path.name + ".unreadable")
    empty = {"schemaVersion": SCHEMA_VERSION, "seen": [], "pending": []}
    try:
        os.replace(path, target)
    except OSError as exc:
        return empty, f"{path.name}: {why}; could not set it aside ({exc})"
    return empty, f"{path.name}: {why}; kept as {target.name}, starting a fresh ledger"


def save(path: Path, data: dict[str, Any], *, host: str, session_id: str | None) -> None:
    data["host"] = host
    data["sessionId"] = session_id
    data["seen"] = [s for s in data["seen"] if isinstance(s, str)][-SEEN_LIMIT:]
    atomic_write_json(path, data)
