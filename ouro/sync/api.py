"""The sync verbs behind the CLI: sync, status, resolve a conflict, the sync habit.

``sync_status`` is a pure read (config, last outcome, open conflicts, and a
bundle set up by an older ouro without a repository of its own). The
built-in sync habit is ``habits/sync.yaml`` running ``ouro sync`` on the
configured interval; ``ouro habits list|due|tick|run`` treat it like any other.
"""

from __future__ import annotations

from typing import Any

from ouro.bundle import Bundle
from ouro.errors import Conflict, InvalidInput, NotFound
from ouro.models.clock import utc_now_iso
from ouro.store import jsonio
from ouro.store.atomic import atomic_write_json, atomic_write_text
from ouro.sync import state
from ouro.sync.repo import has_own_repository, require_own_repository
from ouro.sync.run import sync
from ouro.sync.state import CONFLICTS_DIR, conflicts_dir, open_conflicts

__all__ = ["add_sync_habit", "resolve", "sync", "sync_status"]

SYNC_HABIT = "sync"
SYNC_HABIT_TEMPLATE = """\
# Built-in habit written by 'ouro sync habit': keeps this bundle in step with
# its git remote. Safe to run from any machine that has run 'ouro sync init'.
title: sync the bundle with its git remote
cadence: {cadence}
run: ouro sync
timeout: 10m
"""


def sync_status(bundle: Bundle) -> dict[str, Any]:
    config = state.read_config(bundle)
    conflicts, problems = open_conflicts(bundle)
    if config is not None and not has_own_repository(bundle):
        problems = [
            "the bundle has no git repository of its own (an older ouro synced it through "
            "the repository around it); 'ouro sync' refuses until 'ouro sync init' sets one up",
            *problems,
        ]
    return {
        "configured": config is not None,
        "config": config,
        "last": state.read_status(bundle),
        "openConflicts": [
            {k: c.get(k) for k in ("id", "path", "kind", "kept", "detectedAt", "recordPath")}
            for c in conflicts
        ],
        "problems": problems,
    }


def resolve(bundle: Bundle, conflict_id: str) -> dict[str, Any]:
    if not conflict_id.startswith("cf-") or "/" in conflict_id:
        raise InvalidInput(
            f"conflict id {conflict_id!r} is not a sync conflict id (cf-…)",
            hint="list open conflicts with 'ouro sync status'",
        )
    from ouro.arc.paths import arc_lock

    path = conflicts_dir(bundle) / f"{conflict_id}.json"
    with arc_lock(bundle, "sync resolve"):  # an arc/ file: serialized with sync's merge
        try:
            record = jsonio.loads(path.read_bytes())
        except FileNotFoundError:
            raise NotFound(
                f"no sync conflict {conflict_id} in {CONFLICTS_DIR}/",
                hint="list open conflicts with 'ouro sync status'",
            ) from None
        if record.get("resolved"):
            raise Conflict(f"sync conflict {conflict_id} is already resolved", hint="nothing to do")
        record["resolved"] = True
        record["resolvedAt"] = utc_now_iso()
        atomic_write_json(path, record)
    return {"id": conflict_id, "path": record.get("path"), "resolved": True}


def add_sync_habit(bundle: Bundle, *, cadence: str | None = None) -> dict[str, Any]:
    config = state.require_config(bundle)
    require_own_repository(bundle)
    chosen = cadence or str(config.get("interval") or state.DEFAULT_INTERVAL)
    from ouro.habits.cadence import parse_cadence

    parse_cadence(chosen)
    path = bundle.habits / f"{SYNC_HABIT}.yaml"
    if path.exists():
        raise Conflict(
            f"habits/{SYNC_HABIT}.yaml already exists",
            hint="edit it by hand, or delete it and run 'ouro sync habit' again",
        )
    atomic_write_text(path, SYNC_HABIT_TEMPLATE.format(cadence=chosen))
    return {"habit": SYNC_HABIT, "locator": f"habits/{SYNC_HABIT}.yaml", "cadence": chosen}
