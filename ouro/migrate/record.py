"""What the migration asks of the Desk record and the index once files are in place.

Contract: the Desk owns its derived files -- ``entities.json`` (rebuilt from
facts.jsonl) and the notes manifest -- so the migration calls the Desk's own
rebuilders instead of writing them itself. The index is a cache: it is rebuilt
after migrating by the rebuilder the caller passes in (``ouro migrate`` passes
``ouro.index.sync.rebuild``: the index sits above the domains, so the migration
never imports it); if that fails the migration still stands and the result says
the index is stale and how to repair it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ouro.bundle import Bundle
from ouro.errors import OuroError

#: rebuilds the index from the files and returns its report (``indexed``,
#: ``problems``): ``ouro.index.sync.rebuild``, passed in by the front end
IndexRebuild = Callable[[Bundle], Any]


def rebuild_entities(bundle: Bundle) -> None:
    from ouro.desk.record import rebuild_entities as desk_rebuild

    desk_rebuild(bundle)


def regenerate_manifest(bundle: Bundle) -> list[str]:
    """Rebuild ``desk/_record/notes/.index.json``; returns the problems found."""
    from ouro.desk.notes import manifest_path
    from ouro.desk.notes import regenerate_manifest as desk_regenerate
    from ouro.migrate.tidy import clear_temps
    from ouro.store.lock import FileLock

    # A regeneration killed mid-replace on an earlier try left its temp file;
    # every manifest writer holds the notes lock, so no live temp matches.
    with FileLock(bundle.lock_path("notes"), purpose="migrate notes manifest"):
        clear_temps(manifest_path(bundle))
    _entries, problems = desk_regenerate(bundle)
    return problems


def rebuild_index(bundle: Bundle, rebuild: IndexRebuild) -> dict[str, Any]:
    try:
        report = rebuild(bundle)
    except OuroError as exc:
        return {"state": "stale", "reason": exc.message, "hint": "run 'ouro index rebuild'"}
    return {"state": "fresh", "indexed": report.indexed, "problems": len(report.problems)}
