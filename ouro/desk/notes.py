"""Notes: ``desk/_record/notes/<slug>.md`` and the manifest ``notes/.index.json``.

Contract:
- Front matter: title, tags, created, updated (``docs/record.md``). The title
  is kept as written; the slug comes from its NFKC form. Writing a note with
  the title of an existing note (same NFKC text) replaces its body and tags
  and keeps ``created``; a different title that slugs alike ("C++ tips" and
  "C tips") gets the next free file (``c-tips-2.md``), never the other's.
- The manifest ``{"notes": [{slug, title, tags, updated, hash}]}`` lists every
  note under ``notes/`` (a note in a subfolder such as ``journal/`` has the
  slug ``journal/<name>``), sorted by slug, ``hash`` = ``hash_file`` of the
  note (null for a note past ``DOC_LIMIT``, which no reader reads). It is rewritten atomically under
  ``state/locks/notes.lock`` after each note write; a missing or unreadable
  manifest is regenerated from the note files. A note file or folder behind a
  symlink leading outside the bundle is never read: it is left out and
  reported as a problem (``ouro.store.guard.Inside``).
"""

from __future__ import annotations

import unicodedata
from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.desk.docs import read_doc, refreshed_meta, write_doc
from ouro.desk.names import MAX_SLUG, require_slug
from ouro.desk.tasks import check_title
from ouro.desk.tips import clean_tags
from ouro.errors import CorruptFile, InvalidInput
from ouro.models.clock import utc_now_iso
from ouro.models.hashing import hash_file
from ouro.store import jsonio
from ouro.store.atomic import atomic_write_json
from ouro.store.bounded import DOC_LIMIT, file_bytes
from ouro.store.guard import Inside
from ouro.store.lock import FileLock

NOTE_KEYS = ("title", "tags", "created", "updated")


def notes_dir(bundle: Bundle) -> Path:
    return bundle.record / "notes"


def manifest_path(bundle: Bundle) -> Path:
    return notes_dir(bundle) / ".index.json"


def _entry(slug: str, meta: dict[str, Any], path: Path) -> dict[str, Any]:
    tags = meta.get("tags")
    try:  # a note past DOC_LIMIT is refused by every reader: never hashed either
        digest: str | None = hash_file(path, limit=DOC_LIMIT)
    except OSError:
        digest = None
    return {
        "slug": slug,
        "title": meta.get("title"),
        "tags": tags if isinstance(tags, list) else [],
        "updated": meta.get("updated"),
        "hash": digest,
    }


def scan(bundle: Bundle) -> tuple[list[dict[str, Any]], list[str]]:
    entries: list[dict[str, Any]] = []
    problems: list[str] = []
    root = notes_dir(bundle)
    # never a note behind a symlink leading outside the bundle: reported, not read
    for path in Inside(bundle.root).files(root, ".md", problems):
        rel = path.relative_to(root)
        try:
            meta, _ = read_doc(path, source=bundle.locator(path))
        except CorruptFile as exc:
            problems.append(exc.message)
            meta = {}
        # A note in a subfolder (e.g. journal/ from a migration) keeps its folder in the slug.
        entries.append(_entry(rel.with_suffix("").as_posix(), meta, path))
    return entries, problems


def regenerate_manifest(bundle: Bundle) -> tuple[list[dict[str, Any]], list[str]]:
    """Rebuild ``notes/.index.json`` from the note files; returns (entries, problems)."""
    with FileLock(bundle.lock_path("notes"), purpose="notes manifest"):
        entries, problems = scan(bundle)
        atomic_write_json(manifest_path(bundle), {"notes": entries})
    return entries, problems


def read_manifest(bundle: Bundle) -> list[dict[str, Any]] | None:
    """The manifest entries, or None when missing/unreadable (or behind a symlink
    leading outside the bundle: never read). Pure."""
    path = manifest_path(bundle)
    if not Inside(bundle.root).path(path):
        return None
    try:
        data = jsonio.loads(file_bytes(path))  # a FIFO, a huge file: unreadable
    except (OSError, jsonio.JSONDecodeError):
        return None
    notes = data.get("notes") if isinstance(data, dict) else None
    if not isinstance(notes, list) or not all(
        isinstance(e, dict) and isinstance(e.get("slug"), str) for e in notes
    ):
        return None
    return notes


def title_key(title: str) -> str:
    """What makes two titles the same note: NFKC, one space between words."""
    return " ".join(unicodedata.normalize("NFKC", title).split())


def _note_file(bundle: Bundle, title: str) -> Path:
    """The file of the note titled ``title``: its existing file, else a free one.

    The slug is made from the NFKC form (so ``ＲＥＬＥＡＳＥ`` slugs as ``release``).
    ``slug.md``, ``slug-2.md``, ... are tried in turn: the first whose title is
    the same note is it; the first that does not exist is where a new note
    goes. So "C++ tips" never overwrites "C tips" although both slug to
    ``c-tips``. Caller holds the notes lock.
    """
    key = title_key(title)
    base = require_slug(key, field="title")
    folder = notes_dir(bundle)
    n = 1
    while True:
        slug = base if n == 1 else f"{base[: MAX_SLUG - len(str(n)) - 1].rstrip('-')}-{n}"
        path = folder / f"{slug}.md"
        if not path.exists():
            return path
        meta, _ = read_doc(path, source=bundle.locator(path))
        existing = meta.get("title")
        if isinstance(existing, str) and title_key(existing) == key:
            return path
        n += 1


def write_note(
    bundle: Bundle, title: str, body: str, *, tags: list[str] | None = None
) -> tuple[Path, dict[str, Any], bool]:
    """Create or update the note for ``title``; returns (path, front matter, created)."""
    clean = check_title(title)
    if "\x00" in clean:
        raise InvalidInput("title: contains NUL", hint="write the title as plain text")
    if not body.strip() or "\x00" in body:
        raise InvalidInput(
            "body: the note is empty or contains NUL",
            hint="pass the body with --body-file FILE or on stdin",
        )
    tag_list = clean_tags(tags or [])
    require_slug(title_key(clean), field="title")  # refuse before the lock file exists
    now = utc_now_iso()
    with FileLock(bundle.lock_path("notes"), purpose="notes write"):
        path = _note_file(bundle, clean)
        slug = path.stem
        fields = {"title": clean, "tags": tag_list}
        meta, created = refreshed_meta(path, bundle.locator(path), fields, NOTE_KEYS, now)
        write_doc(path, meta, body)
        entries = read_manifest(bundle)
        if entries is None:
            entries, _problems = scan(bundle)
        else:
            entries = [e for e in entries if e["slug"] != slug]
            entries.append(_entry(slug, meta, path))
            entries.sort(key=lambda e: str(e["slug"]))
        atomic_write_json(manifest_path(bundle), {"notes": entries})
    return path, meta, created
