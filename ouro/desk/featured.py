"""Featured: ``desk/_meta/featured.md`` lists the tracks and tasks orientation
shows first (front matter ``tracks: [...]``, ``tasks: [...]``; body kept).

Entries are added in order, at most once each; ``remove`` takes them out.
Changes happen under the desk lock with an atomic replace.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.desk.docs import ordered, read_doc, write_doc
from ouro.errors import CorruptFile

DEFAULT_BODY = "# Featured\n"


def featured_path(bundle: Bundle) -> Path:
    return bundle.desk / "_meta" / "featured.md"


def read_featured(bundle: Bundle) -> dict[str, list[str]]:
    """``{"tracks": [...], "tasks": [...]}``; a missing file is empty. Pure."""
    path = featured_path(bundle)
    if not path.exists():
        return {"tracks": [], "tasks": []}
    source = bundle.locator(path)
    meta, _ = read_doc(path, source=source)
    return {key: _str_list(meta.get(key), key, source) for key in ("tracks", "tasks")}


def _str_list(value: Any, key: str, source: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CorruptFile(
            f"{source}: '{key}' must be a list of names", hint=f"fix the '{key}:' line by hand"
        )
    return list(value)


def feature(
    bundle: Bundle, *, tracks: list[str], tasks: list[str], remove: bool = False
) -> dict[str, list[str]]:
    # writer-only imports: orient reads the list without the task machinery
    from ouro.desk.tasks import find_task
    from ouro.desk.tracks import require_track, track_dir
    from ouro.store.lock import FileLock

    if not tracks and not tasks:
        return read_featured(bundle)  # nothing to change: a pure read
    names = [
        require_track(bundle, t).name if not remove else track_dir(bundle, t).name for t in tracks
    ]
    ids = [find_task(bundle, t).id if not remove or not t.startswith("t-") else t for t in tasks]
    path = featured_path(bundle)
    with FileLock(bundle.lock_path("desk"), purpose="feature"):
        if path.exists():
            meta, body = read_doc(path, source=bundle.locator(path))
        else:
            meta, body = {}, DEFAULT_BODY
        current = read_featured(bundle)
        for key, given in (("tracks", names), ("tasks", ids)):
            items = current[key]
            for item in given:
                if remove and item in items:
                    items.remove(item)
                elif not remove and item not in items:
                    items.append(item)
            meta[key] = items
        write_doc(path, ordered(meta, ("tracks", "tasks")), body)
        return {"tracks": current["tracks"], "tasks": current["tasks"]}
