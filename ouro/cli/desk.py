"""``ouro diary rebuild-entities`` and ``ouro notes rebuild-manifest``: regenerate
a derived Desk file from its sources (after a git merge or a hand edit)."""

from __future__ import annotations

from typing import Any


def rebuild_entities() -> dict[str, Any]:
    """Regenerate desk/_record/diary/entities.json from facts.jsonl."""
    from ouro.cli.common import bundle_from
    from ouro.derived import after_write
    from ouro.desk.record import entities_path, rebuild_entities

    bundle = bundle_from()
    result = rebuild_entities(bundle)
    after_write(bundle, [entities_path(bundle)])
    return result


def rebuild_manifest() -> dict[str, Any]:
    """Regenerate desk/_record/notes/.index.json from the note files."""
    from ouro.cli.common import bundle_from
    from ouro.derived import after_write
    from ouro.desk.notes import manifest_path, regenerate_manifest

    bundle = bundle_from()
    entries, problems = regenerate_manifest(bundle)
    after_write(bundle, [manifest_path(bundle)])
    return {"notes": len(entries), "problems": problems}
