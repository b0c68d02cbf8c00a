"""Tips: ``desk/_meta/tips/<slug>.md`` (front matter title, tags, created, updated).

The slug comes from the title; writing a tip whose title slugs to an existing
tip updates it (``created`` kept, ``updated`` bumped) under the desk lock.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ouro.bundle import Bundle
from ouro.desk.docs import read_doc
from ouro.errors import CorruptFile, InvalidInput
from ouro.store.guard import Inside

TIP_KEYS = ("title", "tags", "created", "updated")


def clean_tags(tags: list[str]) -> list[str]:
    out: list[str] = []
    for tag in tags:
        clean = " ".join(tag.split()).lower()
        if not clean or len(clean) > 64:
            raise InvalidInput(f"tag: {tag!r} must be 1..64 characters", hint="use short tags")
        if clean not in out:
            out.append(clean)
    return out


def tips_dir(bundle: Bundle) -> Path:
    return bundle.desk / "_meta" / "tips"


def add_tip(
    bundle: Bundle, title: str, *, body: str = "", tags: list[str] | None = None
) -> tuple[Path, dict[str, Any], bool]:
    """Write a tip; returns (path, front matter, created)."""
    # writer-only imports: orient lists lessons without the task machinery
    from ouro.desk.docs import refreshed_meta, write_doc
    from ouro.desk.names import require_slug
    from ouro.desk.tasks import check_title
    from ouro.models.clock import utc_now_iso
    from ouro.store.lock import FileLock

    clean = check_title(title)
    tag_list = clean_tags(tags or [])
    path = tips_dir(bundle) / f"{require_slug(clean, field='title')}.md"
    now = utc_now_iso()
    with FileLock(bundle.lock_path("desk"), purpose="tip add"):
        fields = {"title": clean, "tags": tag_list}
        meta, created = refreshed_meta(path, bundle.locator(path), fields, TIP_KEYS, now)
        write_doc(path, meta, body)
    return path, meta, created


def list_tips(bundle: Bundle, *, tag: str | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """Tips sorted by slug (optionally only those with ``tag``), and problems. Pure."""
    items: list[dict[str, Any]] = []
    problems: list[str] = []
    want = tag.strip().lower() if tag else None
    # none behind a symlink leading outside the bundle: reported, never opened
    for path in Inside(bundle.root).files(tips_dir(bundle), ".md", problems, deep=False):
        locator = bundle.locator(path)
        try:
            meta, _ = read_doc(path, source=locator)
        except CorruptFile as exc:
            problems.append(exc.message)
            continue
        tags = meta.get("tags") or []
        if want is not None and want not in tags:
            continue
        items.append(
            {
                "slug": path.stem,
                "title": meta.get("title"),
                "tags": tags,
                "updated": meta.get("updated"),
                "locator": locator,
            }
        )
    return items, problems
