"""Reading the sentinel ledger (``history/YYYY-MM-DD.jsonl``) newest first.

``history_page(bundle, skip=, limit=)`` returns ledger lines (one per receipt:
verdict, ready, gauntlet score and not-passing checks, signals, anchor, drills)
with their ledger locator. Pure: the ledger is only read, never refreshed.
"""

from __future__ import annotations

from typing import Any

from ouro.bundle import Bundle
from ouro.sentinel import paths
from ouro.store.daylog import newest_first


def history_page(bundle: Bundle, *, skip: int = 0, limit: int = 50) -> dict[str, Any]:
    """Ledger lines ``skip .. skip+limit`` from the newest; errors stay visible."""

    def keep(line: dict[str, Any]) -> bool:
        return isinstance(line.get("id"), str) and isinstance(line.get("generatedAt"), str)

    try:
        page = newest_first(
            paths.history_dir(bundle), bundle.root, skip=skip, limit=limit, keep=keep
        )
    except OSError as exc:
        return {
            "lines": [],
            "more": False,
            "badLines": 0,
            "outside": [],
            "error": f"cannot read ({exc})",
        }
    lines = [
        {**line, "historyLocator": paths.history_locator(name[:-6], line["id"])}
        for line, name in page.rows
    ]
    error = f"{paths.HISTORY_DIR}/ is missing" if page.missing else None
    return {
        "lines": lines,
        "more": page.more,
        "badLines": page.bad,
        "outside": page.outside,
        "error": error,
    }
