"""Featured: ``desk/_meta/featured.md`` lists the tracks, tasks, notes and
lessons orientation shows first (front matter ``tracks: [...]``, ``tasks:
[...]``, ``notes: [<slug>...]``, ``lessons: [<slug>...]``; body kept). A note
is ``desk/_record/notes/<slug>.md``, a lesson ``desk/_meta/tips/<slug>.md``.

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
KEYS = ("tracks", "tasks", "notes", "lessons")
#: where a featured note / lesson slug lives, and the locator prefix it may be given as
DOC_HOMES = {"notes": "desk/_record/notes/", "lessons": "desk/_meta/tips/"}
#: the file's locator (spelt out: a symlink there must not be resolved to name it)
FEATURED = "desk/_meta/featured.md"


def featured_path(bundle: Bundle) -> Path:
    return bundle.desk / "_meta" / "featured.md"


def read_featured(bundle: Bundle) -> dict[str, list[str]]:
    """``{"tracks": [...], "tasks": [...], "notes": [...], "lessons": [...]}``; a missing
    file is empty. Pure."""
    from ouro.store.guard import Inside, outside

    path = featured_path(bundle)
    if not path.exists():
        return {key: [] for key in KEYS}
    if not Inside(bundle.root).path(path):
        raise CorruptFile(outside(FEATURED))
    meta, _ = read_doc(path, source=FEATURED)
    return {key: _str_list(meta.get(key), key, FEATURED) for key in KEYS}


def doc_slug(bundle: Bundle, key: str, given: str, *, must_exist: bool) -> str:
    """The slug of a note or lesson named by slug or locator, checked to exist."""
    from ouro.errors import InvalidInput, NotFound

    home = DOC_HOMES[key]
    slug = given.strip().removeprefix(home).removesuffix(".md")
    parts = slug.split("/")
    if not slug or any(p in ("", ".", "..") or p.startswith(".") for p in parts) or "\x00" in slug:
        raise InvalidInput(f"{key[:-1]}: {given!r} is not a slug", hint=f"name a file in {home}")
    if must_exist and not (bundle.root / f"{home}{slug}.md").is_file():
        what = "note" if key == "notes" else "lesson"
        raise NotFound(
            f"{key[:-1]}: no {what} {home}{slug}.md",
            hint="'ouro notes write' adds a note"
            if key == "notes"
            else "'ouro desk tip add' adds a lesson",
        )
    return slug


def _str_list(value: Any, key: str, source: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise CorruptFile(
            f"{source}: '{key}' must be a list of names", hint=f"fix the '{key}:' line by hand"
        )
    return list(value)


def feature(
    bundle: Bundle,
    *,
    tracks: list[str],
    tasks: list[str],
    notes: list[str] | None = None,
    lessons: list[str] | None = None,
    remove: bool = False,
) -> dict[str, list[str]]:
    # writer-only imports: orient reads the list without the task machinery
    from ouro.desk.tasks import find_task
    from ouro.desk.tracks import require_track, track_dir
    from ouro.store.lock import FileLock

    notes, lessons = notes or [], lessons or []
    if not tracks and not tasks and not notes and not lessons:
        return read_featured(bundle)  # nothing to change: a pure read
    names = [
        require_track(bundle, t).name if not remove else track_dir(bundle, t).name for t in tracks
    ]
    ids = [find_task(bundle, t).id if not remove or not t.startswith("t-") else t for t in tasks]
    docs = {
        key: [doc_slug(bundle, key, g, must_exist=not remove) for g in given]
        for key, given in (("notes", notes), ("lessons", lessons))
    }
    path = featured_path(bundle)
    with FileLock(bundle.lock_path("desk"), purpose="feature"):
        if path.exists():
            meta, body = read_doc(path, source=bundle.locator(path))
        else:
            meta, body = {}, DEFAULT_BODY
        current = read_featured(bundle)
        for key, given in (("tracks", names), ("tasks", ids), *docs.items()):
            items = current[key]
            for item in given:
                if remove and item in items:
                    items.remove(item)
                elif not remove and item not in items:
                    items.append(item)
            meta[key] = items
        for key in ("notes", "lessons"):
            if not meta.get(key):
                meta.pop(key, None)  # a file that never featured one keeps its shape
        write_doc(path, ordered(meta, ("tracks", "tasks")), body)
        return {key: current[key] for key in KEYS}
