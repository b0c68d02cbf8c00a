"""Orientation provider: open sync conflicts and a failed sync, read from files only.

Pure and deterministic (no clock): an unchanged bundle renders the same lines.
A task or claim a merge could not combine is shown with where both versions
are kept; a task claimed on two machines at once is shown as a double claim.
"""

from __future__ import annotations

from ouro.bundle import Bundle
from ouro.errors import OuroError
from ouro.orient_types import OrientItem
from ouro.sync import state

SECTION = "sync"
MORE = "ouro sync status"


def sync_items(bundle: Bundle) -> list[OrientItem]:
    items: list[OrientItem] = []
    try:
        config = state.read_config(bundle)
        last = state.read_status(bundle) if config is not None else None
    except OuroError as exc:
        return [OrientItem(SECTION, 0, f"sync state unknown ({exc.message})", None, MORE)]
    if last and last.get("lastResult") == "failed":
        items.append(
            OrientItem(
                SECTION,
                0,
                f"last sync failed at {last.get('lastAttemptAt')}: {last.get('lastError')}",
                None,
                MORE,
            )
        )
    conflicts, problems = state.open_conflicts(bundle)
    for record in conflicts:
        kind = record.get("kind")
        if kind == "double-claim":
            holders = " and ".join(
                str(h.get("agent")) for h in (record.get("doubleClaim") or {}).get("holders", [])
            )
            text = f"double claim on {record.get('path')}: held by {holders} on two machines"
        else:
            text = f"sync conflict in {record.get('path')} ({kind}): kept {record.get('kept')}"
        items.append(
            OrientItem(
                SECTION,
                0,
                f"{text}; both versions kept; after checking, 'ouro sync resolve {record.get('id')}'",
                str(record.get("recordPath") or f"{state.CONFLICTS_DIR}/{record.get('id')}.json"),
                MORE,
            )
        )
    items += [OrientItem(SECTION, 0, f"sync conflicts unknown ({p})", None, MORE) for p in problems]
    return items
